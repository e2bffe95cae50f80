/**
 * One sync of one HorizontalPodAutoscaler (kubernetes pkg/controller/podautoscaler/horizontal.go
 * reconcileAutoscaler, computeReplicasForMetrics, setStatus, updateStatusIfNeeded):
 * read the target's scale, bring the count inside [minReplicas, maxReplicas]
 * or compute what the metrics want (the highest proposal of the metrics that
 * could be computed), normalize it (stabilization, policies, limits), write the
 * scale when it changes, then the status — only when it changed — with the
 * AbleToScale, ScalingActive and ScalingLimited conditions.
 *
 * Everything outside the process comes through `AutoscalerDeps`, so tests
 * drive it with plain functions. The per-autoscaler history (recommendations,
 * scale events) and the selectors of the autoscalers seen are kept here.
 */
import type { autoscalingv2 } from '@kubeling/api';
import { jsonEqual, type LabelSelector, parseLabelSelector, parseQuantity, rfc3339 } from '@kubeling/apimachinery';
import type { Pod } from '../kinds.js';
import { computeReplicasForMetric, MetricError, type MetricContext } from './compute.js';
import type { MetricsSource } from './metrics.js';
import {
  type AutoscalerHistory,
  type ConditionUpdate,
  effectiveBehavior,
  newHistory,
  normalizeDesiredReplicas,
  normalizeWithBehaviors,
  storeScaleEvent,
} from './normalize.js';

/** An autoscaler as the informer holds it: stored objects have their name, namespace and (defaulted) spec. */
export type HPA = autoscalingv2.HorizontalPodAutoscaler & {
  metadata: { name: string; namespace: string };
  spec: NonNullable<autoscalingv2.HorizontalPodAutoscaler['spec']>;
};
type MetricStatus = autoscalingv2.MetricStatus;

/** The autoscaling/v1 Scale of a target, as its scale subresource answers it. */
export interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec: { replicas?: number };
  status: { replicas?: number; selector?: string };
}

/** The controller's tunables (kube-controller-manager's --horizontal-pod-autoscaler-* flags). */
export interface AutoscalerSettings {
  tolerance: number;
  downscaleStabilizationMs: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

export interface AutoscalerDeps {
  now(): number;
  settings: AutoscalerSettings;
  metrics: MetricsSource;
  /** Resolves the target (kind → resource) and reads its scale; throws with the reason it cannot. */
  getScale(namespace: string, ref: autoscalingv2.CrossVersionObjectReference): Promise<Scale>;
  /** Writes the target's spec.replicas (a lost race is retried with a fresh read). */
  setScale(namespace: string, ref: autoscalingv2.CrossVersionObjectReference, scale: Scale, replicas: number): Promise<void>;
  /** The pods of a namespace the selector matches (from the informer). */
  listPods(namespace: string, selector: LabelSelector): Pod[];
  /** PUTs the status subresource. */
  updateStatus(hpa: HPA): Promise<void>;
  event(hpa: HPA, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

const errText = (e: unknown) => String((e as Error)?.message ?? e);

/** setConditionInList: the transition time moves only when the status does. */
export function setCondition(hpa: HPA, c: ConditionUpdate, now: number): void {
  const status = (hpa.status ??= { desiredReplicas: 0 });
  const list = (status.conditions ??= []);
  let cur = list.find((x) => x.type === c.type);
  if (!cur) list.push((cur = { type: c.type, status: '' }));
  if (cur.status !== c.status) cur.lastTransitionTime = rfc3339(new Date(now));
  cur.status = c.status;
  cur.reason = c.reason;
  cur.message = c.message;
}

/** The status as the API would hand it back: unset, null and empty lists alike (Semantic.DeepEqual on the typed status). */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(canonical) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const c = canonical(x);
      if (c !== undefined && c !== null) out[k] = c;
    }
    return out;
  }
  return v;
}

export class Autoscaler {
  private readonly histories = new Map<string, AutoscalerHistory>();
  /** The scale selector of every autoscaler synced, by key (upstream's selector tracker). */
  private readonly selectors = new Map<string, { namespace: string; selector: LabelSelector }>();

  constructor(private readonly deps: AutoscalerDeps) {}

  /** An autoscaler is gone: its history and selector go too. */
  forget(key: string): void {
    this.histories.delete(key);
    this.selectors.delete(key);
  }

  history(key: string): AutoscalerHistory {
    let h = this.histories.get(key);
    if (!h) this.histories.set(key, (h = newHistory()));
    return h;
  }

  private condition(hpa: HPA, c: ConditionUpdate): void {
    setCondition(hpa, c, this.deps.now());
  }

  private async updateStatusIfNeeded(original: unknown, hpa: HPA): Promise<void> {
    if (jsonEqual(canonical(original), canonical(hpa.status))) return;
    try {
      await this.deps.updateStatus(hpa);
    } catch (e) {
      this.deps.event(hpa, 'Warning', 'FailedUpdateStatus', errText(e));
      throw new Error(`failed to update status for ${hpa.metadata.name}: ${errText(e)}`);
    }
  }

  /** setStatus: the status is rebuilt (observedGeneration is not kept, as in 1.33). */
  private setStatus(hpa: HPA, current: number, desired: number, metrics: MetricStatus[] | undefined, rescale: boolean): void {
    const prev = hpa.status;
    hpa.status = {
      currentReplicas: current,
      desiredReplicas: desired,
      ...(prev?.lastScaleTime ? { lastScaleTime: prev.lastScaleTime } : {}),
      ...(metrics ? { currentMetrics: metrics } : {}),
      ...(prev?.conditions ? { conditions: prev.conditions } : {}),
    };
    if (rescale) hpa.status.lastScaleTime = rfc3339(new Date(this.deps.now()));
  }

  /**
   * validateAndParseSelector: the scale's selector must be there, parse, and
   * select pods no other autoscaler's selector selects. Sets ScalingActive=False
   * (and records an event) when it does not.
   */
  private selectorOf(hpa: HPA, key: string, selector: string | undefined): { selector: LabelSelector; pods: Pod[] } {
    const fail = (reason: string, eventReason: string, eventMessage: string, message: string): never => {
      this.deps.event(hpa, 'Warning', eventReason, eventMessage);
      this.condition(hpa, { type: 'ScalingActive', status: 'False', reason, message });
      throw new Error(eventMessage);
    };
    if (!selector) return fail('InvalidSelector', 'SelectorRequired', 'selector is required', "the HPA target's scale is missing a selector");
    let parsed: LabelSelector;
    try {
      parsed = parseLabelSelector(selector);
    } catch (e) {
      const m = `couldn't convert selector into a corresponding internal selector object: ${errText(e)}`;
      return fail('InvalidSelector', 'InvalidSelector', m, m);
    }
    const ns = hpa.metadata.namespace;
    this.selectors.set(key, { namespace: ns, selector: parsed });
    const pods = this.deps.listPods(ns, parsed);
    const selecting = [...this.selectors]
      .filter(([, s]) => s.namespace === ns && pods.some((p) => s.selector.matches(p.metadata.labels)))
      .map(([k]) => k)
      .slice(0, 2);
    if (selecting.length > 1) {
      const m = `pods by selector ${selector} are controlled by more than one HPA (e.g. [${selecting.join(' ')}])`;
      return fail('AmbiguousSelector', 'AmbiguousSelector', m, m);
    }
    return { selector: parsed, pods };
  }

  /**
   * computeReplicasForMetrics: the highest count the metrics propose, or -1 with
   * the error when none (or, on the way down, not all) could be computed.
   */
  private async computeReplicasForMetrics(
    hpa: HPA,
    key: string,
    scale: Scale,
  ): Promise<{ replicas: number; metricName: string; statuses: MetricStatus[] | undefined; error?: Error }> {
    const { pods } = this.selectorOf(hpa, key, scale.status.selector);
    const specs = hpa.spec.metrics ?? [];
    const specReplicas = scale.spec.replicas ?? 0;
    const s = this.deps.settings;
    const ctx: MetricContext = {
      namespace: hpa.metadata.namespace,
      specReplicas,
      statusReplicas: scale.status.replicas ?? 0,
      pods,
      selector: scale.status.selector ?? '',
      tolerances: this.tolerances(hpa),
      timing: { now: this.deps.now(), cpuInitializationPeriodMs: s.cpuInitializationPeriodMs, delayOfInitialReadinessStatusMs: s.initialReadinessDelayMs },
      metrics: this.deps.metrics,
      warn: (reason, message) => this.deps.event(hpa, 'Warning', reason, message),
    };
    // A metric that fails leaves a status of no type, as upstream's zero MetricStatus.
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' as MetricStatus['type'] }));
    let replicas = 0;
    let metricName = '';
    let invalid = 0;
    let first: MetricError | undefined;
    for (const [i, spec] of specs.entries()) {
      try {
        const p = await computeReplicasForMetric(ctx, spec);
        statuses[i] = p.status;
        if (replicas === 0 || p.replicas > replicas) {
          replicas = p.replicas;
          metricName = p.metricName;
        }
      } catch (e) {
        const err =
          e instanceof MetricError
            ? e
            : new MetricError(errText(e), { type: 'ScalingActive', status: 'False', reason: 'FailedGetMetric', message: errText(e) });
        first ??= err;
        invalid++;
      }
    }
    const error = first ? new Error(`invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${first.message}`) : undefined;
    // All failed, or some failed and the others would scale down: do nothing (the failed ones might want more).
    if (invalid >= specs.length || (invalid > 0 && replicas < specReplicas)) {
      if (first) this.condition(hpa, first.condition);
      return { replicas: -1, metricName: '', statuses, error: error ?? new Error('no metrics') };
    }
    this.condition(hpa, {
      type: 'ScalingActive',
      status: 'True',
      reason: 'ValidMetricFound',
      message: `the HPA was able to successfully calculate a replica count from ${metricName}`,
    });
    return { replicas, metricName, statuses, ...(error ? { error } : {}) };
  }

  /** tolerancesForHpa: the controller's, as HPAConfigurableTolerance is off in 1.33 (a stored tolerance still counts). */
  private tolerances(hpa: HPA) {
    const t = { scaleUp: this.deps.settings.tolerance, scaleDown: this.deps.settings.tolerance };
    const b = hpa.spec.behavior;
    const num = (q: string | number | undefined) => (q === undefined ? undefined : parseQuantity(q));
    return { scaleUp: num(b?.scaleUp?.tolerance) ?? t.scaleUp, scaleDown: num(b?.scaleDown?.tolerance) ?? t.scaleDown };
  }

  /** reconcileAutoscaler. Throws what upstream's returns (logged by the caller; the key comes back next period anyway). */
  async reconcile(shared: HPA, key: string): Promise<void> {
    const hpa = structuredClone(shared);
    const original = structuredClone(hpa.status);
    const ref = hpa.spec.scaleTargetRef;
    const reference = `${ref.kind}/${hpa.metadata.namespace}/${ref.name}`;
    let scale: Scale;
    try {
      scale = await this.deps.getScale(hpa.metadata.namespace, ref);
    } catch (e) {
      this.deps.event(hpa, 'Warning', 'FailedGetScale', errText(e));
      this.condition(hpa, {
        type: 'AbleToScale',
        status: 'False',
        reason: 'FailedGetScale',
        message: `the HPA controller was unable to get the target's current scale: ${errText(e)}`,
      });
      await this.updateStatusIfNeeded(original, hpa).catch(() => undefined);
      throw new Error(`failed to query scale subresource for ${reference}: ${errText(e)}`);
    }
    this.condition(hpa, {
      type: 'AbleToScale',
      status: 'True',
      reason: 'SucceededGetScale',
      message: "the HPA controller was able to get the target's current scale",
    });
    const current = scale.spec.replicas ?? 0;
    const history = this.history(key);
    const now = this.deps.now();
    if (!history.recommendations.length) history.recommendations.push({ recommendation: current, timestamp: now });
    const min = hpa.spec.minReplicas ?? 1;
    const max = hpa.spec.maxReplicas;
    let desired = 0;
    let reason = '';
    let rescale = true;
    let statuses: MetricStatus[] | undefined;
    let retErr: Error | undefined;
    if (current === 0 && min !== 0) {
      rescale = false;
      this.condition(hpa, {
        type: 'ScalingActive',
        status: 'False',
        reason: 'ScalingDisabled',
        message: 'scaling is disabled since the replica count of the target is zero',
      });
    } else if (current > max) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      let r: Awaited<ReturnType<Autoscaler['computeReplicasForMetrics']>>;
      try {
        r = await this.computeReplicasForMetrics(hpa, key, scale);
      } catch (e) {
        r = { replicas: -1, metricName: '', statuses: undefined, error: e as Error };
      }
      statuses = r.statuses;
      if (r.replicas === -1) {
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false);
        await this.updateStatusIfNeeded(original, hpa).catch(() => undefined);
        this.deps.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', errText(r.error));
        throw new Error(`failed to compute desired number of replicas based on listed metrics for ${reference}: ${errText(r.error)}`);
      }
      retErr = r.error;
      let rescaleMetric = '';
      if (r.replicas > desired) {
        desired = r.replicas;
        rescaleMetric = r.metricName;
      }
      if (desired > current) reason = `${rescaleMetric} above target`;
      if (desired < current) reason = 'All metrics below target';
      const n = hpa.spec.behavior
        ? normalizeWithBehaviors(history, now, effectiveBehavior(hpa.spec.behavior, this.deps.settings.downscaleStabilizationMs), current, desired, min, max)
        : normalizeDesiredReplicas(history, now, this.deps.settings.downscaleStabilizationMs, current, desired, min, max);
      for (const c of n.conditions) this.condition(hpa, c);
      desired = n.replicas;
      rescale = desired !== current;
    }
    if (rescale) {
      try {
        await this.deps.setScale(hpa.metadata.namespace, ref, scale, desired);
      } catch (e) {
        this.deps.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${errText(e)}`);
        this.condition(hpa, {
          type: 'AbleToScale',
          status: 'False',
          reason: 'FailedUpdateScale',
          message: `the HPA controller was unable to update the target scale: ${errText(e)}`,
        });
        this.setStatus(hpa, current, hpa.status?.desiredReplicas ?? 0, statuses, false);
        await this.updateStatusIfNeeded(original, hpa).catch(() => undefined);
        throw new Error(`failed to rescale ${reference}: ${errText(e)}`);
      }
      this.condition(hpa, {
        type: 'AbleToScale',
        status: 'True',
        reason: 'SucceededRescale',
        message: `the HPA controller was able to update the target scale to ${desired}`,
      });
      this.deps.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      storeScaleEvent(history, hpa.spec.behavior, current, desired, now);
    } else {
      desired = current;
    }
    this.setStatus(hpa, current, desired, statuses, rescale);
    await this.updateStatusIfNeeded(original, hpa);
    if (retErr) throw retErr;
  }
}
