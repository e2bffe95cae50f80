/**
 * What a DaemonSet needs, decided from what the listers hold (upstream's
 * manage / rollingUpdate / updateDaemonSetStatus): a pod for each eligible node
 * that has none, deletions of extra pods, of pods on nodes no longer eligible
 * and of outdated pods (at most maxUnavailable unavailable at once), the
 * revisions to prune, and the status. No I/O here.
 */
import type { appsv1 } from '@kubeling/api';
import { jsonEqual, selectorFromLabelSelector } from '@kubeling/apimachinery';
import {
  doNotScheduleTaint,
  findUntoleratedTaint,
  isPodAvailable,
  isPodReady,
  requiredNodeAffinityMatches,
  type Toleration,
} from '@kubeling/component-helpers';
import { podTemplateHash } from '../deployment/util.js';
import { REVISION_HASH_LABEL, revisionName, revisionsToPrune } from '../history.js';
import type { ControllerRevision, DaemonSet, Node, NodeAffinityView, Pod, PodSpec } from '../kinds.js';

const HASH = REVISION_HASH_LABEL;

/** The tolerations upstream adds to every daemon pod. */
export const DAEMON_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

const affinityOf = (spec: PodSpec): NodeAffinityView | undefined => spec.affinity as NodeAffinityView | undefined;

/** Whether a pod template may run on a node (nodeSelector, required affinity, taints). */
export function nodeEligible(podSpec: PodSpec, node: Node): boolean {
  if (!requiredNodeAffinityMatches(podSpec, node)) return false;
  const tolerations: Toleration[] = [...(podSpec.tolerations ?? []), ...DAEMON_TOLERATIONS];
  return findUntoleratedTaint(node.spec?.taints ?? [], tolerations, doNotScheduleTaint) === undefined;
}

/** The node a daemon pod is for: its nodeName, or the matchFields pin. */
export function targetNode(pod: Pod): string | undefined {
  const spec = pod.spec ?? {};
  if (spec.nodeName) return spec.nodeName;
  for (const t of affinityOf(spec)?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of t.matchFields ?? []) if (f.key === 'metadata.name' && f.operator === 'In') return f.values?.[0];
  }
  return undefined;
}

/** The daemon pod for a node: the template pinned to the node by required node affinity, with the daemon tolerations. */
export function daemonPod(ds: DaemonSet, node: string, hash: string): Pod {
  const tpl = structuredClone(ds.spec?.template ?? {});
  const s: PodSpec = tpl.spec ?? {};
  const affinity = (s.affinity ?? {}) as NodeAffinityView;
  s.affinity = {
    ...affinity,
    nodeAffinity: {
      ...(affinity.nodeAffinity ?? {}),
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] },
    },
  };
  const have = s.tolerations ?? [];
  s.tolerations = [...have, ...DAEMON_TOLERATIONS.filter((t) => !have.some((h) => h.key === t.key && h.effect === t.effect))];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${ds.metadata.name}-`,
      labels: { ...(tpl.metadata?.labels ?? {}), [HASH]: hash },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name!, uid: ds.metadata.uid!, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: s,
  };
}

export interface DaemonSetInput {
  ds: DaemonSet;
  /** The pods the DaemonSet controls. */
  pods: readonly Pod[];
  nodes: readonly Node[];
  /** The DaemonSet's ControllerRevisions. */
  revisions: readonly ControllerRevision[];
  now: number;
  /** Whether failed pods on a node wait before being deleted again (upstream's failedPodsBackoff). */
  inFailedBackoff?: (node: string) => boolean;
}

export interface DaemonSetPlan {
  /** The current template's hash, which its pods and revision carry. */
  hash: string;
  /** A pod for each of these nodes, in order. */
  create: { node: string; pod: Pod }[];
  delete: Pod[];
  /** Revisions past revisionHistoryLimit that no pod uses. */
  pruneRevisions: ControllerRevision[];
  /** Nodes whose failed daemon pod is deleted now (their backoff steps on). */
  failedOn: string[];
  /** The status to write; undefined when the current one stands. */
  status?: appsv1.DaemonSetStatus;
}

export function reconcileDaemonSet(input: DaemonSetInput): DaemonSetPlan {
  const { ds, now } = input;
  const spec = ds.spec;
  const selector = selectorFromLabelSelector(spec?.selector);
  const hash = podTemplateHash(spec?.template);
  const minReady = spec?.minReadySeconds ?? 0;
  const podSpec = spec?.template?.spec ?? {};
  const ours = input.pods.filter((p) => selector.matches(p.metadata.labels) && !p.metadata.deletionTimestamp);
  // A failed daemon pod is deleted (a new one is made once it is gone), at most once per backoff step of its node.
  const failed = ours.filter((p) => p.status?.phase === 'Failed');
  const live = ours.filter((p) => p.status?.phase !== 'Failed');
  const failedOn: string[] = [];
  const failedToDelete: Pod[] = [];
  for (const p of failed) {
    const n = targetNode(p) ?? '';
    if (input.inFailedBackoff?.(n)) continue;
    if (!failedOn.includes(n)) failedOn.push(n);
    failedToDelete.push(p);
  }
  const waiting = new Set(failed.map((p) => targetNode(p) ?? ''));
  const byNode = new Map<string, Pod[]>();
  for (const p of live) {
    const n = targetNode(p) ?? '';
    byNode.set(n, [...(byNode.get(n) ?? []), p]);
  }
  const on = (n: Node) => byNode.get(n.metadata.name!) ?? [];
  const eligible = input.nodes.filter((n) => nodeEligible(podSpec, n));
  const eligibleNames = new Set(eligible.map((n) => n.metadata.name!));
  const create: DaemonSetPlan['create'] = [];
  const toDelete: Pod[] = [...failedToDelete];
  for (const n of eligible) {
    const here = on(n);
    if (!here.length && !waiting.has(n.metadata.name!)) create.push({ node: n.metadata.name!, pod: daemonPod(ds, n.metadata.name!, hash) });
    else if (here.length > 1) toDelete.push(...here.slice(1));
  }
  for (const [node, here] of byNode) if (!eligibleNames.has(node)) toDelete.push(...here);
  // RollingUpdate: replace outdated pods, at most maxUnavailable unavailable at once.
  if ((spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
    // As upstream's rollingUpdate: an outdated pod that is not available is replaced at once; available ones
    // only as far as maxUnavailable allows, nodes without an up-to-date available pod counting against it.
    const maxUnavailable = Number(spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1) || 1;
    let unavailable = 0;
    const replaceNow: Pod[] = [];
    const candidates: Pod[] = [];
    for (const n of eligible) {
      const here = on(n);
      const updated = here.find((p) => p.metadata.labels?.[HASH] === hash);
      const old = here.find((p) => p.metadata.labels?.[HASH] !== hash);
      if (!!updated === !!old) unavailable++;
      else if (updated) {
        if (!isPodAvailable(updated, minReady, now)) unavailable++;
      } else if (!isPodAvailable(old!, minReady, now)) {
        replaceNow.push(old!);
        unavailable++;
      } else if (unavailable < maxUnavailable) candidates.push(old!);
    }
    toDelete.push(...replaceNow, ...candidates.slice(0, Math.max(0, maxUnavailable - unavailable)));
  }
  const inUse = new Set([revisionName(ds, spec?.template ?? {}), ...live.map((p) => `${ds.metadata.name}-${p.metadata.labels?.[HASH] ?? ''}`)]);
  const plan: DaemonSetPlan = {
    hash,
    create,
    delete: toDelete,
    failedOn,
    pruneRevisions: revisionsToPrune(input.revisions, inUse, spec?.revisionHistoryLimit ?? 10),
  };

  const onEligible = eligible.filter((n) => on(n).length > 0);
  const first = (n: Node) => on(n)[0]!;
  const numberAvailable = onEligible.filter((n) => isPodAvailable(first(n), minReady, now)).length;
  const status: appsv1.DaemonSetStatus = {
    currentNumberScheduled: onEligible.length,
    numberMisscheduled: [...byNode.keys()].filter((n) => !eligibleNames.has(n)).length,
    desiredNumberScheduled: eligible.length,
    numberReady: onEligible.filter((n) => isPodReady(first(n))).length,
    observedGeneration: ds.metadata.generation ?? 1,
    updatedNumberScheduled: onEligible.filter((n) => first(n).metadata.labels?.[HASH] === hash).length,
    numberAvailable,
    numberUnavailable: Math.max(0, eligible.length - numberAvailable),
  };
  for (const k of ['numberAvailable', 'numberUnavailable', 'updatedNumberScheduled'] as const) if (status[k] === 0) delete status[k];
  if (!jsonEqual(status, ds.status ?? {})) plan.status = status;
  return plan;
}
