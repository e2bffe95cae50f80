/**
 * The replica calculator of the horizontal pod autoscaler (kubernetes
 * pkg/controller/podautoscaler/replica_calculator.go and metrics/utilization.go),
 * as pure functions of the pods, their metrics and the clock:
 *
 * - pods being deleted or terminal are ignored; pending pods, and (for cpu)
 *   pods not ready or still in their cpu initialization period without a full
 *   metric window since they became ready, are "unready"; running pods without
 *   a metric are "missing";
 * - the usage ratio over the ready pods decides; within the tolerance nothing
 *   changes;
 * - otherwise, when some pods are missing or unready, the ratio is taken again
 *   assuming the missing pods use 100% of their request (the target, for plain
 *   metrics) on a scale down and 0 on a scale up, and unready pods 0 on a
 *   scale up; a result inside the tolerance or in the other direction keeps
 *   the current count.
 *
 * Values are milli-units (Quantity.MilliValue), as upstream computes them.
 * Errors carry upstream's messages; callers wrap them as upstream does.
 */
import { milliValue } from '@kubeling/apimachinery';
import type { Pod } from '../kinds.js';

/** One pod's metric: its value (milli-units), when it was measured and over how long (ms). */
export interface PodMetric {
  value: number;
  timestamp: number;
  windowMs: number;
}

/** Metrics by pod name. */
export type PodMetricsInfo = Map<string, PodMetric>;

/** The usage ratio band inside which nothing changes: [1 - scaleDown, 1 + scaleUp]. */
export interface Tolerances {
  scaleDown: number;
  scaleUp: number;
}

export const isWithin = (t: Tolerances, ratio: number): boolean => 1 - t.scaleDown <= ratio && ratio <= 1 + t.scaleUp;

/** What decides which pods' cpu samples count (--horizontal-pod-autoscaler-cpu-initialization-period, -initial-readiness-delay). */
export interface PodTiming {
  now: number;
  cpuInitializationPeriodMs: number;
  delayOfInitialReadinessStatusMs: number;
}

export interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

const ms = (t: string | undefined): number | undefined => (t ? Date.parse(t) : undefined);

/** groupPods. */
export function groupPods(pods: readonly Pod[], metrics: PodMetricsInfo, resource: string, timing: PodTiming): PodGroups {
  const out: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata.name!;
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') {
      out.ignored.add(name);
      continue;
    }
    if (phase === 'Pending') {
      out.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      out.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
      const start = ms(pod.status?.startTime);
      let unready: boolean;
      if (!ready || start === undefined) unready = true;
      else {
        const transition = ms(ready.lastTransitionTime) ?? 0;
        if (start + timing.cpuInitializationPeriodMs > timing.now) {
          // Still initializing: the sample counts once the pod is ready and a whole window was measured since.
          unready = ready.status === 'False' || metric.timestamp < transition + metric.windowMs;
        } else {
          // Unready and never ready yet (it became unready within the initial readiness delay).
          unready = ready.status === 'False' && start + timing.delayOfInitialReadinessStatusMs > transition;
        }
      }
      if (unready) {
        out.unready.add(name);
        continue;
      }
    }
    out.readyPodCount++;
  }
  return out;
}

/**
 * calculateRequests: each pod's request of `resource` (milli), the named
 * container's alone when `container` is set; restartable init containers
 * (sidecars) count. Throws when a container has no request.
 */
export function calculateRequests(pods: readonly Pod[], container: string, resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
    let request = 0;
    let found = false;
    for (const c of containers) {
      if (container === '' || container === c.name) {
        const q = (c.resources?.requests as Record<string, string | number> | undefined)?.[resource];
        if (q === undefined) throw new Error(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name}`);
        request += milliValue(q);
      }
      if (container === c.name) {
        found = true;
        break;
      }
    }
    if (container !== '' && !found) throw new Error(`container ${container} not found in Pod ${pod.metadata.name}`);
    out.set(pod.metadata.name!, request);
  }
  return out;
}

/**
 * GetResourceUtilizationRatio: the ratio of the average utilization (percent of
 * request, truncated as Go's integer division) to the target, the utilization,
 * and the raw average value. Metrics of pods without a request are skipped.
 */
export function resourceUtilizationRatio(
  metrics: PodMetricsInfo,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [pod, m] of metrics) {
    const r = requests.get(pod);
    if (r === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += r;
    entries++;
  }
  if (requestsTotal === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entries) };
}

/** GetMetricUsageRatio: the average value's ratio to the target, and the average (truncated). */
export function metricUsageRatio(metrics: PodMetricsInfo, targetUsage: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

const withoutPods = (metrics: PodMetricsInfo, ...sets: Set<string>[]) => {
  const out: PodMetricsInfo = new Map(metrics);
  for (const s of sets) for (const p of s) out.delete(p);
  return out;
};

const NO_PODS = 'no pods returned by selector while calculating replica count';
const NO_METRICS = 'did not receive metrics for targeted pods (pods might be unready)';

/**
 * The part GetResourceReplicas and calcPlainMetricReplicas share: the first
 * estimate over ready pods, then the second one with missing and unready pods
 * filled in. `ratioOf` computes a ratio over a metrics map; `fillMissing` is
 * what a missing pod is assumed to use on a scale down.
 */
function replicasFromRatio(
  currentReplicas: number,
  tolerances: Tolerances,
  groups: PodGroups,
  metrics: PodMetricsInfo,
  ratio: number,
  ratioOf: (m: PodMetricsInfo) => number,
  fillMissing: (pod: string) => number,
): number {
  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (isWithin(tolerances, ratio)) return currentReplicas;
    return Math.ceil(ratio * groups.readyPodCount);
  }
  const filled: PodMetricsInfo = new Map(metrics);
  if (groups.missing.size) {
    for (const pod of groups.missing) {
      if (ratio < 1) filled.set(pod, { value: fillMissing(pod), timestamp: 0, windowMs: 0 });
      else if (ratio > 1) filled.set(pod, { value: 0, timestamp: 0, windowMs: 0 });
    }
  }
  if (scaleUpWithUnready) for (const pod of groups.unready) filled.set(pod, { value: 0, timestamp: 0, windowMs: 0 });
  const newRatio = ratioOf(filled);
  // Inside the tolerance, or the filled-in pods would turn the direction round: keep the count.
  if (isWithin(tolerances, newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1)) return currentReplicas;
  const next = Math.ceil(newRatio * filled.size);
  if ((newRatio < 1 && next > currentReplicas) || (newRatio > 1 && next < currentReplicas)) return currentReplicas;
  return next;
}

export interface ResourceReplicasInput {
  currentReplicas: number;
  /** Percent of request. */
  targetUtilization: number;
  resource: string;
  /** '' for the whole pod. */
  container: string;
  tolerances: Tolerances;
  pods: readonly Pod[];
  metrics: PodMetricsInfo;
  timing: PodTiming;
}

/** GetResourceReplicas (after the metrics are read): the count, the utilization (percent) and the raw average (milli). */
export function resourceReplicas(i: ResourceReplicasInput): { replicas: number; utilization: number; rawUtilization: number } {
  if (!i.pods.length) throw new Error(NO_PODS);
  const groups = groupPods(i.pods, i.metrics, i.resource, i.timing);
  const metrics = withoutPods(i.metrics, groups.ignored, groups.unready);
  if (!metrics.size) throw new Error(NO_METRICS);
  const requests = calculateRequests(i.pods, i.container, i.resource);
  const { ratio, utilization, rawAverage } = resourceUtilizationRatio(metrics, requests, i.targetUtilization);
  const replicas = replicasFromRatio(
    i.currentReplicas,
    i.tolerances,
    groups,
    metrics,
    ratio,
    (m) => resourceUtilizationRatio(m, requests, i.targetUtilization).ratio,
    (pod) => requests.get(pod) ?? 0,
  );
  return { replicas, utilization, rawUtilization: rawAverage };
}

export interface PlainReplicasInput {
  currentReplicas: number;
  /** The target average value per pod (milli). */
  targetUsage: number;
  /** The resource, for Resource metrics with an AverageValue target (cpu readiness rules); '' for Pods metrics. */
  resource: string;
  tolerances: Tolerances;
  pods: readonly Pod[];
  metrics: PodMetricsInfo;
  timing: PodTiming;
}

/** calcPlainMetricReplicas: the count and the average usage (milli). */
export function plainMetricReplicas(i: PlainReplicasInput): { replicas: number; usage: number } {
  if (!i.pods.length) throw new Error(NO_PODS);
  const groups = groupPods(i.pods, i.metrics, i.resource, i.timing);
  const metrics = withoutPods(i.metrics, groups.ignored, groups.unready);
  if (!metrics.size) throw new Error(NO_METRICS);
  const { ratio, usage } = metricUsageRatio(metrics, i.targetUsage);
  const replicas = replicasFromRatio(
    i.currentReplicas,
    i.tolerances,
    groups,
    metrics,
    ratio,
    (m) => metricUsageRatio(m, i.targetUsage).ratio,
    () => i.targetUsage,
  );
  return { replicas, usage };
}

/** Pods Running and Ready (getReadyPodsCount); throws when the selector matches none. */
export function readyPodsCount(pods: readonly Pod[]): number {
  if (!pods.length) throw new Error(NO_PODS);
  return pods.filter((p) => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

const INT32_MAX = 2 ** 31 - 1;

/** getUsageRatioReplicaCount: Object and External Value targets scale the ready pods by the ratio. */
export function usageRatioReplicaCount(currentReplicas: number, ratio: number, tolerances: Tolerances, pods: readonly Pod[]): number {
  if (currentReplicas === 0) return Math.ceil(ratio);
  if (isWithin(tolerances, ratio)) return currentReplicas;
  return Math.min(INT32_MAX, Math.ceil(ratio * readyPodsCount(pods)));
}

/** GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas: total usage over a per-pod target. */
export function perPodReplicas(
  statusReplicas: number,
  targetAveragePerPod: number,
  totalUsage: number,
  tolerances: Tolerances,
): { replicas: number; usage: number } {
  let replicas = statusReplicas;
  const ratio = totalUsage / (targetAveragePerPod * statusReplicas);
  if (!isWithin(tolerances, ratio)) replicas = Math.min(INT32_MAX, Math.ceil(totalUsage / targetAveragePerPod));
  return { replicas, usage: statusReplicas === 0 ? 0 : Math.ceil(totalUsage / statusReplicas) };
}
