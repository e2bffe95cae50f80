/**
 * What a StatefulSet needs, decided from what the listers hold (upstream's
 * StatefulSetControl.UpdateStatefulSet): the pods to create (by ordinal, from
 * which revision, with their claims) and to delete, in the order they are to
 * happen, the status, and the revisions to prune; and the claims of existing
 * pods to make or re-own (claims.ts). Under OrderedReady the plan holds at most
 * one pod change, and none while a lower ordinal is not yet Running and Ready;
 * under Parallel, every change at once. No I/O here.
 */
import type { appsv1 } from '@kubeling/api';
import { jsonEqual, selectorFromLabelSelector } from '@kubeling/apimachinery';
import { isPodAvailable, isPodReady } from '@kubeling/component-helpers';
import type { PersistentVolumeClaim as StoredClaim } from '../storage.js';
import { claimOwnerRefs, claimOwnerUpToDate, claimsForPod, podClaimIsDeleting, podClaimIsStale } from './claims.js';
import { REVISION_HASH_LABEL, revisionName, revisionsToPrune, revisionTemplate } from '../history.js';
import { podPhase, type ControllerRevision, type PersistentVolumeClaim, type Pod, type PodSpec, type PodTemplateSpec, type StatefulSet } from '../kinds.js';

const HASH = REVISION_HASH_LABEL;
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** The ordinal in a pod name `<set>-<n>`, or undefined for other names. */
export const ordinalOf = (set: string, pod: Pod): number | undefined => {
  const n = pod.metadata.name ?? '';
  const rest = n.startsWith(`${set}-`) ? n.slice(set.length + 1) : '';
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
};
const finished = (p: Pod) => ['Succeeded', 'Failed'].includes(podPhase(p) ?? '');
const runningAndReady = (p: Pod) => podPhase(p) === 'Running' && isPodReady(p);

export interface StatefulSetInput {
  set: StatefulSet;
  /** The pods the set controls. */
  pods: readonly Pod[];
  /** The set's ControllerRevisions. */
  revisions: readonly ControllerRevision[];
  /** The claims of the set's namespace, by name. */
  claims?: ReadonlyMap<string, StoredClaim>;
  now: number;
}

export type StatefulSetAction =
  /** Create the claims (kept if they exist), then the pod. */
  { type: 'create'; ordinal: number; pod: Pod; claims: PersistentVolumeClaim[] } | { type: 'delete'; pod: Pod };

export interface StatefulSetPlan {
  /** The revision of the current template (`<set>-<hash>`), which the controller makes sure exists. */
  updateRevision: string;
  /** Pod changes, in order. */
  actions: StatefulSetAction[];
  /** Before them: claims of existing pods to make (a Pending pod's missing ones) and to re-own (the retention policy). */
  claimCreates: { podName: string; claim: PersistentVolumeClaim }[];
  claimUpdates: StoredClaim[];
  /** Revisions past revisionHistoryLimit that no pod uses. */
  pruneRevisions: ControllerRevision[];
  /** The status to write; undefined when the current one stands. */
  status?: appsv1.StatefulSetStatus;
  /** A changed status with ready pods not yet available for minReadySeconds: look again then. */
  requeueAfterMs?: number;
}

export function reconcileStatefulSet(input: StatefulSetInput): StatefulSetPlan {
  const { set, revisions: revs, now } = input;
  const existing = input.claims ?? new Map<string, StoredClaim>();
  const spec = set.spec;
  const name = set.metadata.name!;
  const selector = selectorFromLabelSelector(spec?.selector);
  const replicas = spec?.replicas ?? 1;
  const start = spec?.ordinals?.start ?? 0;
  const parallel = spec?.podManagementPolicy === 'Parallel';
  const rolling = (spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  const partition = rolling ? (spec?.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
  const updateRevision = revisionName(set, spec?.template ?? {});
  const status0 = set.status;
  let currentRevision = status0?.currentRevision || updateRevision;
  const templateOf = (rev: string): PodTemplateSpec => {
    if (rev === updateRevision) return spec?.template ?? {};
    return revisionTemplate(revs.find((x) => x.metadata.name === rev)) ?? spec?.template ?? {};
  };
  const pods = input.pods.filter((p) => selector.matches(p.metadata.labels));
  const byOrdinal = new Map<number, Pod>();
  for (const p of pods) {
    const i = ordinalOf(name, p);
    if (i !== undefined) byOrdinal.set(i, p);
  }

  const newPod = (i: number): StatefulSetAction => {
    // Pods below the partition keep the current revision while an update rolls.
    const rev = rolling && i - start < partition ? currentRevision : updateRevision;
    const tpl = structuredClone(templateOf(rev));
    const podName = `${name}-${i}`;
    const podSpec: PodSpec = { ...(tpl.spec ?? {}), hostname: podName, ...(spec?.serviceName ? { subdomain: spec.serviceName } : {}) };
    // The claims the pod mounts; those missing are made first, owned as the retention policy says.
    const claims: PersistentVolumeClaim[] = [];
    for (const [template, claim] of claimsForPod(set, podName)) {
      const claimName = claim.metadata!.name!;
      if (!existing.has(claimName)) {
        const ownerReferences = claimOwnerRefs(claim, set, { name: podName }, i);
        claims.push({ ...claim, metadata: { ...claim.metadata, ...(ownerReferences.length ? { ownerReferences } : {}) } });
      }
      const volume = { name: template, persistentVolumeClaim: { claimName } };
      podSpec.volumes = [...(podSpec.volumes ?? []).filter((v) => v.name !== template), volume];
    }
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: podName,
        labels: { ...(tpl.metadata?.labels ?? {}), [HASH]: rev, [POD_NAME_LABEL]: podName, [POD_INDEX_LABEL]: String(i) },
        ...(tpl.metadata?.annotations ? { annotations: tpl.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid: set.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: podSpec,
    };
    return { type: 'create', ordinal: i, pod, claims };
  };

  const actions: StatefulSetAction[] = [];
  (() => {
    const wanted = Array.from({ length: replicas }, (_, k) => start + k);
    // Failed or finished pods are replaced.
    for (const i of wanted) {
      const p = byOrdinal.get(i);
      if (p && finished(p) && !p.metadata.deletionTimestamp) {
        actions.push({ type: 'delete', pod: p });
        if (!parallel) return;
      }
    }
    // Create the missing ones in order (all at once when Parallel), waiting under OrderedReady.
    for (const i of wanted) {
      const p = byOrdinal.get(i);
      if (!p) {
        // A claim still owned by an earlier pod of this name, or being deleted, has to go first.
        if (podClaimIsStale(set, { name: `${name}-${i}` }, existing) || podClaimIsDeleting(set, `${name}-${i}`, existing)) {
          if (!parallel) return;
          continue;
        }
        actions.push(newPod(i));
        if (!parallel) return;
        continue;
      }
      if (!parallel && (p.metadata.deletionTimestamp || !runningAndReady(p))) return;
    }
    // Scale down from the highest ordinal, one at a time under OrderedReady.
    const condemned = [...byOrdinal.entries()].filter(([i]) => !wanted.includes(i)).sort(([a], [b]) => b - a);
    // The unhealthy pod of the lowest ordinal: under OrderedReady, no other unhealthy pod is deleted before it is healthy.
    const firstUnhealthy = [...byOrdinal.entries()].sort(([a], [b]) => a - b).find(([, p]) => p.metadata.deletionTimestamp || !runningAndReady(p))?.[1];
    for (const [, p] of condemned) {
      if (p.metadata.deletionTimestamp) {
        if (!parallel) return;
        continue;
      }
      if (!parallel && !runningAndReady(p) && p !== firstUnhealthy) return;
      actions.push({ type: 'delete', pod: p });
      if (!parallel) return;
    }
    if (!rolling) return;
    // RollingUpdate: from the highest ordinal down to the partition, one pod at a time.
    for (const i of [...wanted].reverse()) {
      if (i - start < partition) break;
      const p = byOrdinal.get(i);
      // Created in this pass (Parallel): not ready yet, so nothing more rolls.
      if (!p) return;
      if (p.metadata.labels?.[HASH] === updateRevision) {
        if (p.metadata.deletionTimestamp || !runningAndReady(p)) return;
        continue;
      }
      if (!p.metadata.deletionTimestamp) actions.push({ type: 'delete', pod: p });
      return;
    }
  })();

  const live = pods.filter((p) => !p.metadata.deletionTimestamp);
  const updated = live.filter((p) => p.metadata.labels?.[HASH] === updateRevision).length;
  const ready = live.filter(isPodReady).length;
  // Once every pod runs the update revision it becomes the current one.
  if (updated === replicas && live.length === replicas && ready === replicas) currentRevision = updateRevision;
  const status: appsv1.StatefulSetStatus = {
    observedGeneration: set.metadata.generation ?? 1,
    replicas: live.length,
    readyReplicas: ready,
    currentReplicas: live.filter((p) => p.metadata.labels?.[HASH] === currentRevision).length,
    updatedReplicas: updated,
    currentRevision,
    updateRevision,
    collisionCount: 0,
    availableReplicas: live.filter((p) => isPodAvailable(p, spec?.minReadySeconds ?? 0, now)).length,
  };
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (status[k] === 0) delete status[k];
  const inUse = new Set([currentRevision, updateRevision, ...live.map((p) => p.metadata.labels?.[HASH] ?? '')]);
  const plan: StatefulSetPlan = {
    updateRevision,
    actions,
    ...existingPodClaims(set, byOrdinal, existing),
    pruneRevisions: revisionsToPrune(revs, inUse, spec?.revisionHistoryLimit ?? 10),
  };
  if (!jsonEqual(status, status0 ?? {})) {
    plan.status = status;
    if ((spec?.minReadySeconds ?? 0) > 0 && (status.availableReplicas ?? 0) < ready) plan.requeueAfterMs = 1000;
  }
  return plan;
}

/**
 * The claims of the pods that exist: a Pending pod's missing claims are made
 * again (createMissingPersistentVolumeClaims), and every existing claim gets
 * the owner references the retention policy asks for — a condemned pod's
 * claim is re-owned before the pod goes.
 */
function existingPodClaims(
  set: StatefulSet,
  byOrdinal: ReadonlyMap<number, Pod>,
  existing: ReadonlyMap<string, StoredClaim>,
): Pick<StatefulSetPlan, 'claimCreates' | 'claimUpdates'> {
  const claimCreates: StatefulSetPlan['claimCreates'] = [];
  const claimUpdates: StoredClaim[] = [];
  for (const [ordinal, pod] of byOrdinal) {
    const ref = { name: pod.metadata.name!, uid: pod.metadata.uid };
    for (const claim of claimsForPod(set, ref.name).values()) {
      const cur = existing.get(claim.metadata!.name!);
      if (!cur) {
        if (podPhase(pod) === 'Pending' && !pod.metadata.deletionTimestamp) {
          const ownerReferences = claimOwnerRefs(claim, set, ref, ordinal);
          claimCreates.push({
            podName: ref.name,
            claim: { ...claim, metadata: { ...claim.metadata, ...(ownerReferences.length ? { ownerReferences } : {}) } },
          });
        }
        continue;
      }
      if (claimOwnerUpToDate(cur, set, ref, ordinal)) continue;
      const next = structuredClone(cur);
      const ownerReferences = claimOwnerRefs(cur, set, ref, ordinal);
      if (ownerReferences.length) next.metadata.ownerReferences = ownerReferences;
      else delete next.metadata.ownerReferences;
      claimUpdates.push(next);
    }
  }
  return { claimCreates, claimUpdates };
}
