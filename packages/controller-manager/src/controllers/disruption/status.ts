/**
 * The decisions of the disruption controller (pkg/controller/disruption
 * disruption.go), as pure functions: how many pods a budget expects and wants
 * healthy, which evictions it still waits to see, how many pods are healthy,
 * and the status that follows. The only I/O, finding a controller's scale, is
 * the injected `findScale`.
 */
import type { KubeObject } from '@kubeling/api';
import { selectorFromLabelSelector } from '@kubeling/apimachinery';
import {
  controllerRef,
  isPodReady,
  updateDisruptionAllowedCondition,
  conditionsAreUpToDate,
  type PDBLike,
  type PDBStatusLike,
} from '@kubeling/component-helpers';

/**
 * How long after an eviction the controller waits to see the pod being
 * deleted before it counts it as healthy again (disruption.go DeletionTimeout).
 */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
/** After this long a DisruptionTarget condition on a pod that was not deleted is set to False (stalePodDisruptionTimeout). */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

/** A pod's controlling owner reference. */
export type OwnerRef = NonNullable<ReturnType<typeof controllerRef>>;

export interface ControllerScale {
  uid: string;
  scale: number;
}

/** The scale of the controller `ref` names, if it is one the finder knows and still the pod's (same uid). */
export type ScaleFinder = (ref: OwnerRef, namespace: string) => Promise<ControllerScale | undefined>;

/** intstr.GetScaledValueFromIntOrPercent; throws with upstream's message for a string that is no percentage. */
export function scaledValue(v: number | string, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  if (!v.endsWith('%')) throw new Error('invalid value for IntOrString: invalid type: string is not a percentage');
  const s = v.slice(0, -1);
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`invalid value for IntOrString: invalid value "${v}": strconv.Atoi: parsing "${s}": invalid syntax`);
  const p = Number(s);
  return roundUp ? Math.ceil((p * total) / 100) : Math.floor((p * total) / 100);
}

/** The pods a budget selects: its selector over the namespace's pods (an empty selector selects all of them in policy/v1). */
export function podsForPdb<P extends KubeObject>(pdb: PDBLike, pods: readonly P[]): P[] {
  const sel = selectorFromLabelSelector(pdb.spec?.selector);
  return pods.filter((p) => sel.matches(p.metadata.labels ?? {}));
}

/**
 * getExpectedScale: the sum of the scales of the pods' controllers. Pods
 * without a controller are `unmanaged` (reported, not counted); a controller no
 * finder knows is an error.
 */
export async function expectedScale(pods: readonly KubeObject[], findScale: ScaleFinder): Promise<{ expectedCount: number; unmanaged: string[] }> {
  const scales = new Map<string, number>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerRef(pod);
    if (!ref) {
      unmanaged.push(pod.metadata.name!);
      continue;
    }
    if (scales.has(ref.uid)) continue;
    const found = await findScale(ref, pod.metadata.namespace!);
    if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
    scales.set(found.uid, found.scale);
  }
  let expectedCount = 0;
  for (const s of scales.values()) expectedCount += s;
  return { expectedCount, unmanaged };
}

/**
 * getExpectedPodCount: with maxUnavailable, or a percentage minAvailable, the
 * controllers' scale is the expected count; with an integer minAvailable, the
 * pods that exist are.
 */
export async function expectedPodCount(
  pdb: PDBLike,
  pods: readonly KubeObject[],
  findScale: ScaleFinder,
): Promise<{ expectedCount: number; desiredHealthy: number; unmanaged: string[] }> {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const { expectedCount, unmanaged } = await expectedScale(pods, findScale);
    const maxUnavailable = scaledValue(spec.maxUnavailable, expectedCount, true);
    return { expectedCount, desiredHealthy: Math.max(0, expectedCount - maxUnavailable), unmanaged };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanaged: [] };
    const { expectedCount, unmanaged } = await expectedScale(pods, findScale);
    return { expectedCount, desiredHealthy: scaledValue(spec.minAvailable, expectedCount, true), unmanaged };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanaged: [] };
}

/**
 * buildDisruptedPodMap: the evictions still awaited — pods in the budget's
 * `disruptedPods` that exist, are not being deleted yet, and were evicted less
 * than DELETION_TIMEOUT_MS ago — with when to look again, and the pods whose
 * eviction never led to a deletion (`notDeleted`, for an event).
 */
export function buildDisruptedPodMap<P extends KubeObject>(
  pods: readonly P[],
  pdb: PDBLike,
  now: number,
): { disrupted: Record<string, string>; recheckAt: number | undefined; notDeleted: P[] } {
  const was = pdb.status?.disruptedPods ?? {};
  const disrupted: Record<string, string> = {};
  const notDeleted: P[] = [];
  let recheckAt: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = was[pod.metadata.name!];
    if (at === undefined) continue;
    const expected = Date.parse(at) + DELETION_TIMEOUT_MS;
    if (!(expected >= now)) {
      notDeleted.push(pod);
      continue;
    }
    if (recheckAt === undefined || expected < recheckAt) recheckAt = expected;
    disrupted[pod.metadata.name!] = at;
  }
  return { disrupted, recheckAt, notDeleted };
}

/** countHealthyPods: ready pods, not being deleted and not awaiting their eviction. */
export function countHealthyPods(pods: readonly KubeObject[], disrupted: Record<string, string>, now: number): number {
  let n = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = disrupted[pod.metadata.name!];
    if (at !== undefined && Date.parse(at) + DELETION_TIMEOUT_MS > now) continue;
    if (isPodReady(pod)) n++;
  }
  return n;
}

/**
 * updatePdbStatus: the new status, or undefined when the current one already
 * says all this. No disruption is allowed while the budget expects no pods
 * (its first pods may appear before it is recomputed).
 */
export function nextStatus(
  pdb: PDBLike,
  currentHealthy: number,
  desiredHealthy: number,
  expectedCount: number,
  disrupted: Record<string, string>,
  now = new Date(),
): PDBStatusLike | undefined {
  let disruptionsAllowed = currentHealthy - desiredHealthy;
  if (expectedCount <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
  const s = pdb.status ?? {};
  const generation = pdb.metadata.generation ?? 0;
  const samePods = JSON.stringify(Object.entries(s.disruptedPods ?? {}).sort()) === JSON.stringify(Object.entries(disrupted).sort());
  if (
    s.currentHealthy === currentHealthy &&
    s.desiredHealthy === desiredHealthy &&
    s.expectedPods === expectedCount &&
    s.disruptionsAllowed === disruptionsAllowed &&
    samePods &&
    (s.observedGeneration ?? 0) === generation &&
    conditionsAreUpToDate(pdb)
  )
    return undefined;
  const next: PDBStatusLike = {
    currentHealthy,
    desiredHealthy,
    expectedPods: expectedCount,
    disruptionsAllowed,
    disruptedPods: disrupted,
    observedGeneration: generation,
    conditions: structuredClone(s.conditions ?? []),
  };
  updateDisruptionAllowedCondition(next, now);
  return next;
}

/**
 * nonTerminatingPodHasStaleDisruptionCondition: a pod with a True
 * DisruptionTarget condition (not the kubelet's) that is neither being
 * deleted nor terminal has it set False once the timeout has passed; returns
 * how long until then, or undefined when the pod has no such condition.
 */
export function staleDisruptionIn(pod: KubeObject, now: number, timeoutMs = STALE_POD_DISRUPTION_TIMEOUT_MS): number | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const status = (pod.status ?? {}) as { phase?: string; conditions?: { type: string; status?: string; reason?: string; lastTransitionTime?: string }[] };
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return undefined;
  const c = (status.conditions ?? []).find((x) => x.type === 'DisruptionTarget');
  if (c?.status !== 'True' || c.reason === 'TerminationByKubelet') return undefined;
  return Math.max(0, Date.parse(c.lastTransitionTime ?? '') + timeoutMs - now || 0);
}
