/**
 * The taints the node lifecycle controller owns, computed from a node
 * (kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go:
 * `nodeConditionToTaintKeyStatusMap`, `doNoScheduleTaintingPass`, and the
 * not-ready/unreachable NoExecute templates of `doNoExecuteTaintingPass`).
 *
 * The NoSchedule taints follow the node's conditions and `spec.unschedulable`
 * at once; the NoExecute ones follow its Ready condition on the monitor pass.
 * Both passes build a node's taints with these functions, so whichever writes
 * first, the other finds nothing left to change.
 */
import type { Taint } from '@kubeling/component-helpers';
import type { Node, NodeStatusView } from '../kinds.js';

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';
export const MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** Which condition, in which status, taints the node with which key. */
export const NODE_CONDITION_TO_TAINT_KEY: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: NOT_READY, Unknown: UNREACHABLE },
  MemoryPressure: { True: MEMORY_PRESSURE },
  DiskPressure: { True: DISK_PRESSURE },
  NetworkUnavailable: { True: NETWORK_UNAVAILABLE },
  PIDPressure: { True: PID_PRESSURE },
};

/** The NoSchedule keys this controller adds and removes (upstream's taintKeyToNodeConditionMap, and unschedulable). */
const NO_SCHEDULE_KEYS = new Set([NOT_READY, UNREACHABLE, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE, NETWORK_UNAVAILABLE, UNSCHEDULABLE]);

/** The NoExecute keys this controller adds and removes. */
const NO_EXECUTE_KEYS = new Set([NOT_READY, UNREACHABLE]);

const conditionsOf = (node: Node) => ((node.status ?? {}) as NodeStatusView).conditions ?? [];

/** MatchTaint: the same key and effect, whatever the value. */
const sameTaint = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;

/** The NoSchedule taints the node should carry: one per condition in a tainting status, and one when unschedulable. */
export function noScheduleTaints(node: Node): Taint[] {
  const want: Taint[] = [];
  for (const c of conditionsOf(node)) {
    const key = NODE_CONDITION_TO_TAINT_KEY[c.type]?.[c.status ?? ''];
    if (key && !want.some((t) => t.key === key)) want.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) want.push({ key: UNSCHEDULABLE, effect: 'NoSchedule' });
  return want;
}

/** The NoExecute key the node's Ready condition calls for: not-ready when False, unreachable when Unknown. */
export function noExecuteKey(node: Node): string | undefined {
  const ready = conditionsOf(node).find((c) => c.type === 'Ready')?.status;
  return ready === 'Unknown' ? UNREACHABLE : ready === 'False' ? NOT_READY : undefined;
}

/**
 * `taints` with those of `effect` among `owned` keys made exactly `want`:
 * the others are kept in place, a wanted one already there keeps its value and
 * timeAdded, a missing one is appended with timeAdded `now`.
 */
function reconcileOwned(taints: readonly Taint[], effect: string, owned: ReadonlySet<string>, want: readonly Taint[], now: string): Taint[] {
  const next = taints.filter((t) => t.effect !== effect || !owned.has(t.key) || want.some((w) => sameTaint(w, t)));
  for (const w of want) if (!next.some((t) => sameTaint(t, w))) next.push({ ...w, timeAdded: now });
  return next;
}

/** The node's taints with its condition NoSchedule taints brought up to date (the event-driven pass). */
export function withNoScheduleTaints(node: Node, now: string): Taint[] {
  return reconcileOwned(node.spec?.taints ?? [], 'NoSchedule', NO_SCHEDULE_KEYS, noScheduleTaints(node), now);
}

/** The node's taints with both its NoSchedule and its Ready NoExecute taints brought up to date (the monitor pass). */
export function withAllTaints(node: Node, now: string): Taint[] {
  const key = noExecuteKey(node);
  const noExecute = key ? [{ key, effect: 'NoExecute' }] : [];
  return reconcileOwned(withNoScheduleTaints(node, now), 'NoExecute', NO_EXECUTE_KEYS, noExecute, now);
}
