/**
 * What a Deployment needs, decided from what the listers hold (upstream's
 * syncDeployment: getNewReplicaSet, rolloutRolling / rolloutRecreate,
 * cleanupDeployment, syncRolloutStatus): the ReplicaSets it adopts, the new
 * ReplicaSet to create, the scaling of new and old ones, the old ones past
 * revisionHistoryLimit to delete, and the status. No I/O here: the controller
 * carries the plan out in order.
 */
import type { appsv1 } from '@kubeling/api';
import { jsonEqual, rfc3339, selectorFromLabelSelector } from '@kubeling/apimachinery';
import { controllerRef } from '@kubeling/component-helpers';
import type { Deployment, Pod, PodTemplateSpec, ReplicaSet } from '../kinds.js';
import { podTemplateHash, resolveFenceposts } from './util.js';

export const REVISION = 'deployment.kubernetes.io/revision';
export const DESIRED = 'deployment.kubernetes.io/desired-replicas';
export const MAX = 'deployment.kubernetes.io/max-replicas';
export const HASH_LABEL = 'pod-template-hash';

/** The Deployment's annotations a new ReplicaSet carries (upstream's skipCopyAnnotation list left out). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  'deployment.kubernetes.io/revision',
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);
const copiedAnnotations = (d: Deployment): Record<string, string> =>
  Object.fromEntries(Object.entries(d.metadata.annotations ?? {}).filter(([k]) => !NOT_COPIED.has(k)));
/** A ReplicaSet's revision, an int64 as upstream parses it (0 when absent or not a number). */
export const revisionOf = (rs: ReplicaSet): bigint => {
  const v = rs.metadata.annotations?.[REVISION] ?? '';
  return /^-?\d+$/.test(v) ? BigInt(v) : 0n;
};
const specReplicas = (rs: ReplicaSet): number => rs.spec?.replicas ?? 0;
const available = (rs: ReplicaSet): number => rs.status?.availableReplicas ?? 0;

/** Drops nulls and empty objects, which Go's decoding treats as absent (creationTimestamp: null). */
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null || x === undefined) continue;
      out[k] = pruneNulls(x);
    }
    return out;
  }
  return v;
}

/** The template without the pod-template-hash label, for comparisons. */
export function templateWithoutHash(t: PodTemplateSpec | undefined): PodTemplateSpec {
  const c = pruneNulls(structuredClone(t ?? {})) as PodTemplateSpec;
  if (c.metadata?.labels) {
    delete c.metadata.labels[HASH_LABEL];
    if (!Object.keys(c.metadata.labels).length) delete c.metadata.labels;
  }
  return c;
}

/** Whether the ReplicaSet runs the Deployment's current template. */
export const runsTemplate = (rs: ReplicaSet, d: Deployment): boolean =>
  jsonEqual(templateWithoutHash(rs.spec?.template), templateWithoutHash(d.spec?.template));

/**
 * The ReplicaSets a Deployment claims, in the listers' order: those it
 * controls, and orphans its selector matches (to adopt). Deployments do not
 * release ReplicaSets.
 */
export function claimReplicaSets(d: Deployment, replicaSets: readonly ReplicaSet[]): { rs: ReplicaSet; action: 'own' | 'adopt' }[] {
  const selector = selectorFromLabelSelector(d.spec?.selector);
  const claims: { rs: ReplicaSet; action: 'own' | 'adopt' }[] = [];
  for (const rs of replicaSets) {
    const ref = controllerRef(rs);
    if (ref?.uid === d.metadata.uid) claims.push({ rs, action: 'own' });
    else if (!ref && selector.matches(rs.metadata.labels) && !rs.metadata.deletionTimestamp) claims.push({ rs, action: 'adopt' });
  }
  return claims;
}

/** The ReplicaSet a Deployment creates for its current template: `<name>-<hash>`, labelled and selecting by the hash. */
export function newReplicaSet(d: Deployment, replicas: number, revision: bigint, maxSurge: number): ReplicaSet {
  const spec = d.spec;
  const hash = podTemplateHash(spec?.template, d.status?.collisionCount ?? 0);
  const tpl = structuredClone(spec?.template ?? {});
  tpl.metadata = { ...(tpl.metadata ?? {}), labels: { ...(tpl.metadata?.labels ?? {}), [HASH_LABEL]: hash } };
  const desired = spec?.replicas ?? 1;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace!,
      labels: { ...(spec?.template?.metadata?.labels ?? {}), [HASH_LABEL]: hash },
      annotations: { ...copiedAnnotations(d), [REVISION]: String(revision), [DESIRED]: String(desired), [MAX]: String(desired + maxSurge) },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name!, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      replicas,
      minReadySeconds: spec?.minReadySeconds ?? 0,
      selector: { ...spec?.selector, matchLabels: { ...(spec?.selector?.matchLabels ?? {}), [HASH_LABEL]: hash } },
      template: tpl,
    },
  };
}

export interface DeploymentInput {
  deployment: Deployment;
  /** The ReplicaSets the Deployment owns once claiming is done. */
  replicaSets: readonly ReplicaSet[];
  /** The namespace's pods: Recreate waits for the old ReplicaSets' pods to be gone. */
  pods: readonly Pod[];
  now: number;
}

export interface ScaleAction {
  rs: ReplicaSet;
  from: number;
  to: number;
}

export interface DeploymentPlan {
  /** A ReplicaSet for the current template, to create first; the rest of the plan counts it as created. */
  createReplicaSet?: ReplicaSet;
  /** A rollback made an old ReplicaSet new again: it gets the next revision. */
  reviseReplicaSet?: { rs: ReplicaSet; revision: string };
  /** The revision annotation the Deployment is to carry, when it does not yet. */
  deploymentRevision?: string;
  /** ReplicaSets to scale, in order; each also gets `scaleAnnotations`. */
  scale: ScaleAction[];
  /** desired-replicas and max-replicas, as every scaled ReplicaSet carries them. */
  scaleAnnotations: Record<string, string>;
  /** Old, scaled-down ReplicaSets beyond revisionHistoryLimit, oldest revision first. */
  deleteReplicaSets: ReplicaSet[];
  /** The status to write; undefined when the current one stands. */
  status?: appsv1.DeploymentStatus;
  /** Whether the rollout is complete. */
  complete: boolean;
  requeueAfterMs?: number;
}

export function reconcileDeployment(input: DeploymentInput): DeploymentPlan {
  const d = input.deployment;
  const spec = d.spec;
  const owned = [...input.replicaSets];
  const template = templateWithoutHash(spec?.template);
  let newRS = owned.find((rs) => jsonEqual(templateWithoutHash(rs.spec?.template), template));
  const olds = owned.filter((rs) => rs !== newRS);
  // BigInts: Math.max would not take them.
  let maxOldRevision = 0n;
  for (const r of olds.map(revisionOf)) if (r > maxOldRevision) maxOldRevision = r;
  const replicas = spec?.replicas ?? 1;
  const strategy = spec?.strategy ?? {};
  const { maxSurge, maxUnavailable } = resolveFenceposts(strategy, replicas);
  const plan: DeploymentPlan = {
    scale: [],
    scaleAnnotations: { [DESIRED]: String(replicas), [MAX]: String(replicas + maxSurge) },
    deleteReplicaSets: [],
    complete: false,
  };
  const scale = (rs: ReplicaSet, from: number, to: number) => plan.scale.push({ rs, from, to });
  const finish = (progressing: boolean) => {
    const { status, complete } = deploymentStatus(d, newRS, owned, maxUnavailable, progressing, input.now);
    if (!jsonEqual(status, d.status ?? {})) plan.status = status;
    plan.complete = complete;
  };

  if (spec?.paused) {
    // Paused: only scale what exists.
    if (newRS && !olds.some((r) => specReplicas(r) > 0) && specReplicas(newRS) !== replicas) scale(newRS, specReplicas(newRS), replicas);
    finish(false);
    return plan;
  }

  // A scaling event (an active ReplicaSet was sized for another replica count): only resize, proportionally (sync/scale).
  if (owned.some((r) => specReplicas(r) > 0 && r.metadata.annotations?.[DESIRED] !== undefined && Number(r.metadata.annotations[DESIRED]) !== replicas)) {
    scaleForReplicas(d, newRS, olds, replicas, maxSurge, scale);
    finish(false);
    return plan;
  }

  if (!newRS) {
    const recreate = strategy.type === 'Recreate';
    const initial =
      olds.length === 0 ? replicas : recreate ? 0 : Math.max(0, Math.min(replicas, replicas + maxSurge - olds.reduce((n, r) => n + specReplicas(r), 0)));
    newRS = newReplicaSet(d, initial, maxOldRevision + 1n, maxSurge);
    plan.createReplicaSet = newRS;
    owned.push(newRS);
  } else if (revisionOf(newRS) <= maxOldRevision || d.metadata.annotations?.[REVISION] !== String(revisionOf(newRS))) {
    const rev = revisionOf(newRS) <= maxOldRevision ? maxOldRevision + 1n : revisionOf(newRS);
    if (rev !== revisionOf(newRS)) {
      plan.reviseReplicaSet = { rs: newRS, revision: String(rev) };
      newRS = { ...newRS, metadata: { ...newRS.metadata, annotations: { ...newRS.metadata.annotations, [REVISION]: String(rev) } } };
    }
  }
  if (d.metadata.annotations?.[REVISION] !== String(revisionOf(newRS))) plan.deploymentRevision = String(revisionOf(newRS));

  // Replicas of old ReplicaSets after their unavailable replicas are scaled away; the rest of the pass counts with these.
  const planned = new Map<ReplicaSet, number>();
  const replicasOf = (rs: ReplicaSet) => planned.get(rs) ?? specReplicas(rs);
  if (strategy.type === 'Recreate') {
    for (const old of olds) if (specReplicas(old) > 0) scale(old, specReplicas(old), 0);
    const oldPodsRunning = olds.some((old) => input.pods.some((p) => controllerRef(p)?.uid === old.metadata.uid));
    if (!oldPodsRunning && specReplicas(newRS) !== replicas) scale(newRS, specReplicas(newRS), replicas);
  } else {
    rollingUpdate(newRS, olds, replicas, maxSurge, maxUnavailable, planned, scale);
  }

  const limit = spec?.revisionHistoryLimit ?? 10;
  const idle = olds
    .filter((r) => replicasOf(r) === 0 && (r.status?.replicas ?? 0) === 0 && !r.metadata.deletionTimestamp)
    .sort((a, b) => (revisionOf(a) < revisionOf(b) ? -1 : revisionOf(a) > revisionOf(b) ? 1 : 0));
  plan.deleteReplicaSets = idle.slice(0, Math.max(0, idle.length - limit));

  finish(true);
  if (!plan.complete && spec?.progressDeadlineSeconds) plan.requeueAfterMs = Math.min(spec.progressDeadlineSeconds * 1000, 10_000);
  return plan;
}

const created = (r: ReplicaSet) => Date.parse(r.metadata.creationTimestamp ?? '') || 0;

/**
 * A Deployment's replica count changed mid-rollout (DeploymentController.scale):
 * a lone active (or else the newest) ReplicaSet takes the whole count; a
 * saturated new one leaves the old ones at 0; otherwise, under RollingUpdate,
 * what the change adds or removes is spread over the active ReplicaSets in
 * proportion to their size against the max-replicas they were sized for, the
 * rounding leftover going to the largest.
 */
function scaleForReplicas(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  olds: ReplicaSet[],
  replicas: number,
  maxSurge: number,
  scale: (rs: ReplicaSet, from: number, to: number) => void,
): void {
  const all = [...(newRS ? [newRS] : []), ...olds];
  const active = all.filter((r) => specReplicas(r) > 0);
  const lone = active.length === 1 ? active[0] : active.length === 0 ? (newRS ?? [...olds].sort((a, b) => created(b) - created(a))[0]) : undefined;
  if (lone) {
    if (specReplicas(lone) !== replicas) scale(lone, specReplicas(lone), replicas);
    return;
  }
  const saturated =
    newRS &&
    specReplicas(newRS) === replicas &&
    Number(newRS.metadata.annotations?.[DESIRED]) === replicas &&
    (newRS.status?.availableReplicas ?? 0) === replicas;
  if (saturated) {
    for (const old of olds) if (specReplicas(old) > 0) scale(old, specReplicas(old), 0);
    return;
  }
  if (d.spec?.strategy?.type === 'Recreate') return;
  const allowed = replicas > 0 ? replicas + maxSurge : 0;
  const toAdd = allowed - active.reduce((n, r) => n + specReplicas(r), 0);
  // Larger first; among equals the newer first when growing, the older first when shrinking.
  active.sort(
    (a, b) =>
      specReplicas(b) - specReplicas(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)) || a.metadata.name!.localeCompare(b.metadata.name!),
  );
  const size = new Map<ReplicaSet, number>();
  let added = 0;
  for (const rs of active) {
    let proportion = 0;
    if (toAdd !== 0 && toAdd !== added) {
      let fraction: number;
      if (replicas === 0) fraction = -specReplicas(rs);
      else {
        const before = Number(rs.metadata.annotations?.[MAX]) || (d.status?.replicas ?? 0);
        fraction = before ? Math.round((specReplicas(rs) * allowed) / before) - specReplicas(rs) : 0;
      }
      proportion = toAdd > 0 ? Math.min(fraction, toAdd - added) : Math.max(fraction, toAdd - added);
    }
    size.set(rs, specReplicas(rs) + proportion);
    added += proportion;
  }
  active.forEach((rs, i) => {
    let to = size.get(rs)!;
    if (i === 0 && toAdd !== 0) to = Math.max(0, to + toAdd - added);
    if (to !== specReplicas(rs)) scale(rs, specReplicas(rs), to);
  });
}

/**
 * RollingUpdate: the new ReplicaSet grows within maxSurge; otherwise old ones
 * shrink, first by their unavailable replicas, then by available ones as far
 * as maxUnavailable allows, oldest ReplicaSet first.
 */
function rollingUpdate(
  newRS: ReplicaSet,
  olds: ReplicaSet[],
  replicas: number,
  maxSurge: number,
  maxUnavailable: number,
  planned: Map<ReplicaSet, number>,
  scale: (rs: ReplicaSet, from: number, to: number) => void,
): void {
  const all = [newRS, ...olds];
  const total = all.reduce((n, r) => n + specReplicas(r), 0);
  const newReplicas = specReplicas(newRS);
  if (newReplicas < replicas) {
    const maxTotal = replicas + maxSurge;
    if (total < maxTotal) {
      const next = Math.min(replicas, newReplicas + (maxTotal - total));
      if (next > newReplicas) {
        scale(newRS, newReplicas, next);
        return;
      }
    }
  } else if (newReplicas > replicas) {
    scale(newRS, newReplicas, replicas);
    return;
  }
  const oldsActive = olds
    .filter((r) => specReplicas(r) > 0)
    .sort((a, b) => Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? ''));
  if (!oldsActive.length) return;
  const minAvailable = replicas - maxUnavailable;
  const newUnavailable = newReplicas - available(newRS);
  let maxScaledDown = total - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return;
  const replicasOf = (rs: ReplicaSet) => planned.get(rs) ?? specReplicas(rs);
  // First the old replicas that are not available anyway.
  for (const old of oldsActive) {
    if (maxScaledDown <= 0) break;
    const unhealthy = replicasOf(old) - available(old);
    if (unhealthy <= 0) continue;
    const down = Math.min(unhealthy, maxScaledDown);
    scale(old, replicasOf(old), replicasOf(old) - down);
    planned.set(old, replicasOf(old) - down);
    maxScaledDown -= down;
  }
  // Then available ones, keeping minAvailable.
  const availableNow = all.reduce((n, r) => n + available(r), 0);
  let budget = Math.min(availableNow - minAvailable, maxScaledDown);
  for (const old of oldsActive) {
    if (budget <= 0) break;
    const down = Math.min(replicasOf(old), budget);
    if (down <= 0) continue;
    scale(old, replicasOf(old), replicasOf(old) - down);
    budget -= down;
  }
}

/**
 * The Deployment's status from its ReplicaSets' (`all`; `newRS` the one for
 * the current template) and whether the rollout is complete: the counts, and
 * the Available and Progressing conditions (Progressing turns
 * ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds).
 */
export function deploymentStatus(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  all: readonly ReplicaSet[],
  maxUnavailable: number,
  progressing: boolean,
  now: number,
): { status: appsv1.DeploymentStatus; complete: boolean } {
  const spec = d.spec;
  const old = d.status ?? {};
  const replicas = spec?.replicas ?? 1;
  const sum = (f: 'replicas' | 'readyReplicas' | 'availableReplicas') => all.reduce((n, r) => n + (r.status?.[f] ?? 0), 0);
  const observedGeneration = d.metadata.generation ?? 1;
  const status: appsv1.DeploymentStatus = {
    observedGeneration,
    replicas: sum('replicas'),
    updatedReplicas: newRS ? (newRS.status?.replicas ?? 0) : 0,
    readyReplicas: sum('readyReplicas'),
    availableReplicas: sum('availableReplicas'),
    unavailableReplicas: Math.max(0, sum('replicas') - sum('availableReplicas')),
  };
  if (old.collisionCount) status.collisionCount = old.collisionCount;
  for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const) if (status[k] === 0) delete status[k];
  const nowIso = rfc3339(new Date(now));
  const conds: appsv1.DeploymentCondition[] = (old.conditions ?? []).map((c) => ({ ...c }));
  const setCond = (type: string, s: string, reason: string, message: string) => {
    const cur = conds.find((c) => c.type === type);
    if (cur && cur.status === s && cur.reason === reason && cur.message === message) return;
    const transition = cur && cur.status === s ? cur.lastTransitionTime : nowIso;
    const next: appsv1.DeploymentCondition = {
      type,
      status: s,
      lastUpdateTime: nowIso,
      ...(transition !== undefined ? { lastTransitionTime: transition } : {}),
      reason,
      message,
    };
    if (cur) Object.assign(cur, next);
    else conds.push(next);
  };
  const isAvailable = (status.availableReplicas ?? 0) >= replicas - maxUnavailable;
  setCond(
    'Available',
    isAvailable ? 'True' : 'False',
    isAvailable ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
    isAvailable ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
  );
  const complete =
    !!newRS &&
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (d.metadata.generation ?? 1) <= observedGeneration;
  const rsName = newRS?.metadata.name ?? '';
  if (spec?.paused) {
    setCond('Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused');
  } else if (complete) {
    setCond('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`);
  } else if (progressing) {
    const prog = conds.find((c) => c.type === 'Progressing');
    const deadline = spec?.progressDeadlineSeconds;
    const changed = !jsonEqual({ ...status, conditions: undefined }, { ...old, conditions: undefined });
    if (prog && prog.reason === 'ProgressDeadlineExceeded' && !changed) {
      // stays exceeded until something moves
    } else if (!changed && prog && deadline && now - Date.parse(prog.lastUpdateTime ?? nowIso) > deadline * 1000) {
      setCond('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`);
    } else if (changed || !prog || prog.reason === 'NewReplicaSetAvailable') {
      const reason = prog && prog.reason !== 'NewReplicaSetAvailable' ? 'ReplicaSetUpdated' : 'NewReplicaSetCreated';
      setCond(
        'Progressing',
        'True',
        reason,
        reason === 'NewReplicaSetCreated' ? `Created new replica set "${rsName}"` : `ReplicaSet "${rsName}" is progressing.`,
      );
    }
  }
  status.conditions = conds;
  return { status, complete };
}
