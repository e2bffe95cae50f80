/**
 * What a ReplicaSet needs, decided from what the listers hold
 * (upstream's syncReplicaSet / manageReplicas): which pods it claims, how many
 * it creates and which it deletes, and the status it reports. No I/O here: the
 * controller carries the decisions out.
 */
import type { appsv1 } from '@kubeling/api';
import { jsonEqual, rfc3339, selectorFromLabelSelector, selectorFromSet } from '@kubeling/apimachinery';
import { controllerRef, isPodAvailable, isPodReady } from '@kubeling/component-helpers';
import { containerStatuses, podPhase, type Pod, type ReplicaSet } from '../kinds.js';

/** At most this many pods are created or deleted in one sync (upstream's burstReplicas). */
export const BURST_REPLICAS = 500;

export interface OwnerKind {
  apiVersion: string;
  kind: string;
}

export const REPLICASET_KIND: OwnerKind = { apiVersion: 'apps/v1', kind: 'ReplicaSet' };

/** Not terminating and not finished (controller.FilterActivePods). */
export const isActive = (p: Pod): boolean => {
  const phase = podPhase(p);
  return !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
};

/** Order for deletion: the pod to delete first sorts first (controller.ActivePods). */
export function deletionOrder(a: Pod, b: Pod): number {
  const scheduled = (p: Pod) => (p.spec?.nodeName ? 1 : 0);
  if (scheduled(a) !== scheduled(b)) return scheduled(a) - scheduled(b);
  const rank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
  const pa = rank[podPhase(a) ?? 'Pending'] ?? 0;
  const pb = rank[podPhase(b) ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  const ra = isPodReady(a) ? 1 : 0;
  const rb = isPodReady(b) ? 1 : 0;
  if (ra !== rb) return ra - rb;
  const restarts = (p: Pod) => containerStatuses(p).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  // newer pods first
  return Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '');
}

/** The pod a ReplicaSet creates from its template. */
export function podFromTemplate(rs: ReplicaSet, owner: OwnerKind): Pod {
  const tpl = rs.spec?.template ?? {};
  const meta = tpl.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [
        { apiVersion: owner.apiVersion, kind: owner.kind, name: rs.metadata.name!, uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: structuredClone(tpl.spec ?? {}),
  };
}

/** What claiming does with one pod: keep it (owned and matching), adopt it (a matching orphan), release it (owned, no longer matching). */
export interface Claim {
  pod: Pod;
  action: 'own' | 'adopt' | 'release';
}

/**
 * The claims over the namespace's pods, in the listers' order
 * (ControllerRefManager.ClaimPods): nothing is adopted or released by a
 * ReplicaSet being deleted, and terminating orphans are left alone.
 */
/** What claiming reads of the owner: its identity, whether it is being deleted, and its selector. */
export type Claimer = { metadata: ReplicaSet['metadata']; spec?: { selector?: NonNullable<ReplicaSet['spec']>['selector'] } | undefined };

export function claimPods(rs: Claimer, pods: readonly Pod[]): Claim[] {
  const selector = selectorFromLabelSelector(rs.spec?.selector);
  const deleting = !!rs.metadata.deletionTimestamp;
  const claims: Claim[] = [];
  for (const pod of pods) {
    const ref = controllerRef(pod);
    const matches = selector.matches(pod.metadata.labels);
    if (ref && ref.uid === rs.metadata.uid) {
      if (matches) claims.push({ pod, action: 'own' });
      else if (!deleting) claims.push({ pod, action: 'release' });
    } else if (!ref && matches && !deleting && !pod.metadata.deletionTimestamp) {
      claims.push({ pod, action: 'adopt' });
    }
  }
  return claims;
}

export interface ReplicaSetInput {
  rs: ReplicaSet;
  /** The pods the ReplicaSet owns once claiming is done, in the listers' order. */
  owned: readonly Pod[];
  /** Whether the informer has seen every creation and deletion asked for before (expectations). */
  expectationsSatisfied: boolean;
  now: number;
  owner?: OwnerKind;
}

export interface ReplicaSetPlan {
  /** How many pods to create from `template` (at most BURST_REPLICAS). */
  create: number;
  template: Pod;
  /** The pods to delete, least valuable first (at most BURST_REPLICAS). */
  delete: Pod[];
  /** The status to write when creating and deleting succeed; undefined when the current one stands. */
  status?: appsv1.ReplicaSetStatus;
  /** Pods ready but not yet available for minReadySeconds: look again then. */
  requeueAfterMs?: number;
}

export function reconcileReplicaSet(input: ReplicaSetInput): ReplicaSetPlan {
  const { rs, owned, now } = input;
  const owner = input.owner ?? REPLICASET_KIND;
  const active = owned.filter(isActive);
  const plan: ReplicaSetPlan = { create: 0, template: podFromTemplate(rs, owner), delete: [] };
  if (input.expectationsSatisfied && !rs.metadata.deletionTimestamp) {
    const diff = active.length - (rs.spec?.replicas ?? 1);
    if (diff < 0) plan.create = Math.min(-diff, BURST_REPLICAS);
    else if (diff > 0) plan.delete = [...active].sort(deletionOrder).slice(0, Math.min(diff, BURST_REPLICAS));
  }
  const status = replicaSetStatus(rs, owned, now);
  if (statusChanged(status, rs)) plan.status = status;
  const minReady = rs.spec?.minReadySeconds ?? 0;
  if (minReady > 0 && active.some((p) => isPodReady(p) && !isPodAvailable(p, minReady, now))) plan.requeueAfterMs = minReady * 1000;
  return plan;
}

/**
 * The status the owned pods give: counts of the active ones, the terminating
 * ones, and a ReplicaFailure condition while creating or deleting fails
 * (keeping its transition time while it lasts). Zero counts are left out.
 */
export function replicaSetStatus(rs: ReplicaSet, owned: readonly Pod[], now: number, manageError?: unknown): appsv1.ReplicaSetStatus {
  const minReady = rs.spec?.minReadySeconds ?? 0;
  const active = owned.filter(isActive);
  const fullSel = selectorFromSet(rs.spec?.template?.metadata?.labels ?? {});
  const old = rs.status;
  const conditions = (old?.conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
  if (manageError) {
    const prev = (old?.conditions ?? []).find((c) => c.type === 'ReplicaFailure');
    conditions.push({
      type: 'ReplicaFailure',
      status: 'True',
      reason: 'FailedCreate',
      message: String((manageError as Error).message ?? manageError),
      lastTransitionTime: prev?.lastTransitionTime ?? rfc3339(new Date(now)),
    });
  }
  const status: appsv1.ReplicaSetStatus = {
    replicas: active.length,
    fullyLabeledReplicas: active.filter((p) => fullSel.matches(p.metadata.labels)).length,
    readyReplicas: active.filter(isPodReady).length,
    availableReplicas: active.filter((p) => isPodAvailable(p, minReady, now)).length,
    terminatingReplicas: owned.filter((p) => p.metadata.deletionTimestamp).length,
    observedGeneration: rs.metadata.generation ?? 1,
    ...(conditions.length ? { conditions } : {}),
  };
  for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas'] as const) if (status[k] === 0) delete status[k];
  return status;
}

/** Whether `status` differs from what the ReplicaSet reports now. */
export const statusChanged = (status: appsv1.ReplicaSetStatus, rs: ReplicaSet): boolean => !jsonEqual(status, rs.status ?? {});
