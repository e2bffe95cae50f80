/**
 * From the replica count the metrics propose to the one the autoscaler sets
 * (kubernetes pkg/controller/podautoscaler/horizontal.go: normalizeDesiredReplicas,
 * normalizeDesiredReplicasWithBehaviors and their helpers), as functions of an
 * autoscaler's remembered history and the clock:
 *
 * - without a behavior: the highest recommendation of the downscale
 *   stabilization window, then min/max and a scale-up limit of max(2×, 4);
 * - with one: the recommendations of both stabilization windows bound the
 *   change (scale up to the lowest recent one, down to the highest), then the
 *   scale-up and scale-down policies (Pods / Percent per period, the Max or
 *   Min of them, or Disabled) over the scale events of their periods, then
 *   min/max.
 *
 * Each returns the count and the AbleToScale / ScalingLimited conditions with
 * upstream's reasons and messages. `AutoscalerHistory` is mutated as upstream
 * mutates its per-HPA maps: recommendations and scale events are appended, or
 * replace one that has aged out.
 */
import type { autoscalingv2 } from '@kubeling/api';

type Rules = autoscalingv2.HPAScalingRules;

export interface TimestampedRecommendation {
  recommendation: number;
  timestamp: number;
}

export interface ScaleEvent {
  /** Absolute value. */
  replicaChange: number;
  timestamp: number;
  outdated: boolean;
}

/** What the controller remembers of one autoscaler between syncs (lost on restart, as upstream's). */
export interface AutoscalerHistory {
  recommendations: TimestampedRecommendation[];
  scaleUpEvents: ScaleEvent[];
  scaleDownEvents: ScaleEvent[];
}

export const newHistory = (): AutoscalerHistory => ({ recommendations: [], scaleUpEvents: [], scaleDownEvents: [] });

export interface ConditionUpdate {
  type: 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  conditions: ConditionUpdate[];
}

const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;

const READY_FOR_NEW_SCALE: ConditionUpdate = {
  type: 'AbleToScale',
  status: 'True',
  reason: 'ReadyForNewScale',
  message: 'recommended size matches current size',
};

const limited = (replicas: number, before: number, reason: string, message: string): ConditionUpdate => ({
  type: 'ScalingLimited',
  status: replicas === before ? 'False' : 'True',
  reason,
  message,
});

/** Puts `rec` in place of the sample `old` says aged out, or appends it. */
function record(history: AutoscalerHistory, oldIndex: number, rec: number, now: number): void {
  const sample = { recommendation: rec, timestamp: now };
  if (oldIndex >= 0) history.recommendations[oldIndex] = sample;
  else history.recommendations.push(sample);
}

/** stabilizeRecommendation: the highest recommendation of the last `windowMs`, this one included. */
export function stabilizeRecommendation(history: AutoscalerHistory, desired: number, windowMs: number, now: number): number {
  let max = desired;
  let oldIndex = -1;
  const cutoff = now - windowMs;
  history.recommendations.forEach((r, i) => {
    if (r.timestamp < cutoff) oldIndex = i;
    else if (r.recommendation > max) max = r.recommendation;
  });
  record(history, oldIndex, desired, now);
  return max;
}

/** calculateScaleUpLimit: at most double, or 4, whichever is more. */
export const scaleUpLimit = (current: number): number => Math.trunc(Math.max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM));

/** convertDesiredReplicasWithRules: min/max and the scale-up limit, with the ScalingLimited reason and message. */
export function convertDesiredReplicasWithRules(
  current: number,
  desired: number,
  min: number,
  max: number,
): { replicas: number; reason: string; message: string } {
  const upLimit = scaleUpLimit(current);
  const [maxAllowed, reason, message] =
    max > upLimit
      ? [upLimit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
      : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
  if (desired < min) return { replicas: min, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
  if (desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

/** normalizeDesiredReplicas: an autoscaler without `spec.behavior`. */
export function normalizeDesiredReplicas(
  history: AutoscalerHistory,
  now: number,
  downscaleStabilizationMs: number,
  current: number,
  prenormalized: number,
  min: number,
  max: number,
): Normalized {
  const stabilized = stabilizeRecommendation(history, prenormalized, downscaleStabilizationMs, now);
  const able: ConditionUpdate =
    stabilized !== prenormalized
      ? {
          type: 'AbleToScale',
          status: 'True',
          reason: 'ScaleDownStabilized',
          message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
        }
      : READY_FOR_NEW_SCALE;
  const c = convertDesiredReplicasWithRules(current, stabilized, min, max);
  return { replicas: c.replicas, conditions: [able, limited(c.replicas, stabilized, c.reason, c.message)] };
}

/** getReplicasChangePerPeriod: the replicas the events of the last `periodSeconds` changed. */
export function replicasChangePerPeriod(periodSeconds: number, events: readonly ScaleEvent[], now: number): number {
  const cutoff = now - periodSeconds * 1000;
  return events.reduce((sum, e) => (e.timestamp > cutoff ? sum + e.replicaChange : sum), 0);
}

/** The replicas at the start of a policy's period: now's, less what scaled up and plus what scaled down within it. */
const periodStart = (current: number, period: number, up: readonly ScaleEvent[], down: readonly ScaleEvent[], now: number) =>
  current - replicasChangePerPeriod(period, up, now) + replicasChangePerPeriod(period, down, now);

/** calculateScaleUpLimitWithScalingRules: the most replicas the scale-up policies allow now. */
export function scaleUpLimitWithRules(current: number, up: readonly ScaleEvent[], down: readonly ScaleEvent[], rules: Rules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  for (const p of rules.policies ?? []) {
    const start = periodStart(current, p.periodSeconds, up, down, now);
    // Percent rounds up: a small percentage of few pods would never add one otherwise.
    const proposed = p.type === 'Pods' ? start + p.value : p.type === 'Percent' ? Math.ceil(start * (1 + p.value / 100)) : 0;
    result = pickMin ? Math.min(result, proposed) : Math.max(result, proposed);
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors: the fewest replicas the scale-down policies allow now. */
export function scaleDownLimitWithRules(current: number, up: readonly ScaleEvent[], down: readonly ScaleEvent[], rules: Rules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pickMin = rules.selectPolicy === 'Min';
  let result = pickMin ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  for (const p of rules.policies ?? []) {
    const start = periodStart(current, p.periodSeconds, up, down, now);
    const proposed = p.type === 'Pods' ? start - p.value : p.type === 'Percent' ? Math.trunc(start * (1 - p.value / 100)) : 0;
    // The least change ('Min') is the highest count on the way down.
    result = pickMin ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** The behavior the controller works with: both directions set, scale down's window from the controller's flag when unset. */
export interface EffectiveBehavior {
  scaleUp: Rules & { stabilizationWindowSeconds: number };
  scaleDown: Rules & { stabilizationWindowSeconds: number };
}

/** stabilizeRecommendationWithBehaviors: bound the change by the recommendations of both windows. */
export function stabilizeWithBehaviors(history: AutoscalerHistory, b: EffectiveBehavior, current: number, desired: number, now: number) {
  const upCutoff = now - b.scaleUp.stabilizationWindowSeconds * 1000;
  const downCutoff = now - b.scaleDown.stabilizationWindowSeconds * 1000;
  let upRec = desired;
  let downRec = desired;
  let oldIndex = -1;
  history.recommendations.forEach((r, i) => {
    if (r.timestamp > upCutoff) upRec = Math.min(r.recommendation, upRec);
    if (r.timestamp > downCutoff) downRec = Math.max(r.recommendation, downRec);
    if (r.timestamp < upCutoff && r.timestamp < downCutoff) oldIndex = i;
  });
  const recommendation = Math.min(Math.max(current, upRec), downRec);
  record(history, oldIndex, desired, now);
  return desired >= current
    ? { recommendation, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
    : {
        recommendation,
        reason: 'ScaleDownStabilized',
        message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
      };
}

/** convertDesiredReplicasWithBehaviorRate: the policies' limits and min/max, with the ScalingLimited reason and message. */
export function convertWithBehaviorRate(
  history: AutoscalerHistory,
  b: EffectiveBehavior,
  current: number,
  desired: number,
  min: number,
  max: number,
  now: number,
): { replicas: number; reason: string; message: string } {
  if (desired > current) {
    const upLimit = Math.max(scaleUpLimitWithRules(current, history.scaleUpEvents, history.scaleDownEvents, b.scaleUp, now), current);
    const [maxAllowed, reason, message] =
      max > upLimit
        ? [upLimit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
        : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
    if (desired > maxAllowed) return { replicas: maxAllowed, reason, message };
  } else if (desired < current) {
    const downLimit = Math.min(scaleDownLimitWithRules(current, history.scaleUpEvents, history.scaleDownEvents, b.scaleDown, now), current);
    const [minAllowed, reason, message] =
      min < downLimit
        ? [downLimit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate']
        : [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
    if (desired < minAllowed) return { replicas: minAllowed, reason, message };
  }
  return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

/** maybeInitScaleDownStabilizationWindow, and the defaults a behavior read from an older object may lack. */
export function effectiveBehavior(b: autoscalingv2.HorizontalPodAutoscalerBehavior, downscaleStabilizationMs: number): EffectiveBehavior {
  const up = b.scaleUp ?? {};
  const down = b.scaleDown ?? {};
  return {
    scaleUp: { selectPolicy: 'Max', ...up, stabilizationWindowSeconds: up.stabilizationWindowSeconds ?? 0 },
    scaleDown: { selectPolicy: 'Max', ...down, stabilizationWindowSeconds: down.stabilizationWindowSeconds ?? Math.trunc(downscaleStabilizationMs / 1000) },
  };
}

/** normalizeDesiredReplicasWithBehaviors. */
export function normalizeWithBehaviors(
  history: AutoscalerHistory,
  now: number,
  b: EffectiveBehavior,
  current: number,
  prenormalized: number,
  min: number,
  max: number,
): Normalized {
  const s = stabilizeWithBehaviors(history, b, current, prenormalized, now);
  const able: ConditionUpdate =
    s.recommendation !== prenormalized ? { type: 'AbleToScale', status: 'True', reason: s.reason, message: s.message } : READY_FOR_NEW_SCALE;
  const c = convertWithBehaviorRate(history, b, current, s.recommendation, min, max, now);
  return { replicas: c.replicas, conditions: [able, limited(c.replicas, s.recommendation, c.reason, c.message)] };
}

const longestPeriod = (rules: Rules | undefined) => Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds));

/** storeScaleEvent: remembers a rescale for the policies' periods (only with a behavior, as nothing else reads them). */
export function storeScaleEvent(
  history: AutoscalerHistory,
  b: autoscalingv2.HorizontalPodAutoscalerBehavior | undefined,
  prev: number,
  next: number,
  now: number,
): void {
  if (!b) return;
  const up = next > prev;
  const events = up ? history.scaleUpEvents : history.scaleDownEvents;
  const cutoff = now - longestPeriod(up ? b.scaleUp : b.scaleDown) * 1000;
  for (const e of events) if (e.timestamp < cutoff) e.outdated = true;
  const event: ScaleEvent = { replicaChange: Math.abs(next - prev), timestamp: now, outdated: false };
  let reuse = -1;
  events.forEach((e, i) => {
    if (e.outdated) reuse = i;
  });
  if (reuse >= 0) events[reuse] = event;
  else events.push(event);
}
