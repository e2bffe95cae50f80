/**
 * Deployment controller (kubernetes pkg/controller/deployment): one ReplicaSet
 * per distinct pod template, named `<deployment>-<pod-template-hash>` and labelled
 * with `pod-template-hash`, owned by the Deployment.
 *
 * - RollingUpdate scales the new ReplicaSet up and the old ones down within
 *   maxSurge / maxUnavailable; Recreate scales the old ones to zero and waits for
 *   their pods to go before scaling the new one up.
 * - Revisions: `deployment.kubernetes.io/revision` on ReplicaSets and the
 *   Deployment; a template equal to an old ReplicaSet's (`rollout undo`) makes that
 *   ReplicaSet new again with the next revision. Old ReplicaSets beyond
 *   revisionHistoryLimit are deleted.
 * - `paused` stops rollouts (scaling still happens); progressDeadlineSeconds
 *   turns Progressing False with ProgressDeadlineExceeded.
 * - Status: observedGeneration, replicas, updated/ready/available/unavailable,
 *   conditions Available and Progressing — what `kubectl rollout status` reads.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isConflict, isNotFound, jsonEqual, rfc3339, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { controllerRef } from '@kubeling/component-helpers';
import { podTemplateHash, resolveFenceposts } from './util.js';

type Obj = Record<string, any>;

const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX = 'deployment.kubernetes.io/max-replicas';
const HASH_LABEL = 'pod-template-hash';

/** The Deployment's annotations a new ReplicaSet carries (upstream's skipCopyAnnotation list left out). */
const NOT_COPIED = new Set(['kubectl.kubernetes.io/last-applied-configuration', 'deployment.kubernetes.io/revision', 'deployment.kubernetes.io/revision-history', 'deployment.kubernetes.io/desired-replicas', 'deployment.kubernetes.io/max-replicas', 'deprecated.deployment.rollback.to']);
const copiedAnnotations = (d: KubeObject): Record<string, string> => Object.fromEntries(Object.entries(d.metadata.annotations ?? {}).filter(([k]) => !NOT_COPIED.has(k)));
const revisionOf = (rs: KubeObject) => Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
const specReplicas = (rs: KubeObject) => ((rs.spec as Obj).replicas ?? 0) as number;
const st = (rs: KubeObject) => (rs.status ?? {}) as Obj;

/** Drops nulls and empty objects, which Go's decoding treats as absent (creationTimestamp: null). */
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (v && typeof v === 'object') {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null || x === undefined) continue;
      out[k] = pruneNulls(x);
    }
    return out;
  }
  return v;
}

/** The template without the pod-template-hash label, for comparisons. */
function templateWithoutHash(t: Obj | undefined): Obj {
  const c = pruneNulls(structuredClone(t ?? {})) as Obj;
  if (c.metadata?.labels) {
    delete c.metadata.labels[HASH_LABEL];
    if (!Object.keys(c.metadata.labels).length) delete c.metadata.labels;
  }
  return c;
}

export class DeploymentController extends QueueController {
  readonly name = 'deployment';
  private deps!: Informer;
  private rss!: Informer;
  private pods!: Informer;

  init(): void {
    this.deps = this.ctx.informers.informer({ path: '/apis/apps/v1/deployments' });
    this.rss = this.ctx.informers.informer({ path: '/apis/apps/v1/replicasets' });
    this.pods = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.deps.addEventHandler({ add: (d) => this.queue.add(keyOf(d)), update: (_o, d) => this.queue.add(keyOf(d)), delete: (d) => this.queue.add(keyOf(d)) });
    const rsChanged = (rs: KubeObject) => {
      const ref = controllerRef(rs);
      if (ref?.kind === 'Deployment') this.queue.add(`${rs.metadata.namespace}/${ref.name}`);
      else this.enqueueMatching(rs);
    };
    this.rss.addEventHandler({ add: rsChanged, update: (_o, rs) => rsChanged(rs), delete: rsChanged });
    // Recreate waits for old pods to be gone.
    this.pods.addEventHandler({
      delete: (pod) => {
        const ref = controllerRef(pod);
        if (ref?.kind !== 'ReplicaSet') return;
        const rs = this.rss.store.get(`${pod.metadata.namespace}/${ref.name}`);
        if (rs) rsChanged(rs);
      },
    });
  }

  private enqueueMatching(rs: KubeObject): void {
    for (const d of this.deps.store.byIndex('namespace', rs.metadata.namespace ?? '')) {
      try {
        if (selectorFromLabelSelector((d.spec as Obj).selector).matches(rs.metadata.labels)) this.queue.add(keyOf(d));
      } catch {
        // never matches
      }
    }
  }

  private rsPath(ns: string, name?: string): string {
    return `/apis/apps/v1/namespaces/${ns}/replicasets${name ? `/${name}` : ''}`;
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const d = this.deps.store.get(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const spec = d.spec as Obj;
    const ns = d.metadata.namespace!;
    const selector = selectorFromLabelSelector(spec.selector);
    // Claim ReplicaSets: controlled ones, plus matching orphans.
    const owned: KubeObject[] = [];
    for (const rs of this.rss.store.byIndex('namespace', ns)) {
      const ref = controllerRef(rs);
      if (ref?.uid === d.metadata.uid) owned.push(rs);
      else if (!ref && selector.matches(rs.metadata.labels) && !rs.metadata.deletionTimestamp) {
        try {
          const adopted = await this.ctx.client.patch<KubeObject>(
            this.rsPath(ns, rs.metadata.name),
            { metadata: { uid: rs.metadata.uid, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }] } },
            'application/strategic-merge-patch+json',
          );
          owned.push(adopted);
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
    }
    const template = templateWithoutHash(spec.template);
    let newRS = owned.find((rs) => jsonEqual(templateWithoutHash((rs.spec as Obj).template), template));
    const olds = owned.filter((rs) => rs !== newRS);
    const maxOldRevision = Math.max(0, ...olds.map(revisionOf));
    const replicas: number = spec.replicas ?? 1;
    const strategy = spec.strategy ?? {};
    const { maxSurge, maxUnavailable } = resolveFenceposts(strategy, replicas);

    if (spec.paused) {
      // Paused: only scale what exists.
      if (newRS && !olds.some((r) => specReplicas(r) > 0) && specReplicas(newRS) !== replicas) await this.scale(newRS, replicas, d, maxSurge);
      await this.syncStatus(d, newRS, owned, maxUnavailable, false);
      return;
    }

    if (!newRS) {
      const recreate = strategy.type === 'Recreate';
      const initial = olds.length === 0 ? replicas : recreate ? 0 : Math.max(0, Math.min(replicas, replicas + maxSurge - olds.reduce((n, r) => n + specReplicas(r), 0)));
      newRS = await this.createNewRS(d, initial, maxOldRevision + 1, maxSurge);
      if (!newRS) return { requeueAfterMs: 200 };
      owned.push(newRS);
    } else if (revisionOf(newRS) <= maxOldRevision || d.metadata.annotations?.[REVISION] !== String(revisionOf(newRS))) {
      // A rollback made an old ReplicaSet new again: it gets the next revision.
      const rev = revisionOf(newRS) <= maxOldRevision ? maxOldRevision + 1 : revisionOf(newRS);
      if (rev !== revisionOf(newRS)) {
        newRS = await this.annotateRS(newRS, { [REVISION]: String(rev) });
      }
    }
    await this.setDeploymentRevision(d, String(revisionOf(newRS)));

    if (strategy.type === 'Recreate') {
      for (const old of olds) if (specReplicas(old) > 0) await this.scale(old, 0, d, maxSurge);
      const oldPodsRunning = olds.some((old) => this.pods.store.byIndex('namespace', ns).some((p) => controllerRef(p)?.uid === old.metadata.uid));
      if (!oldPodsRunning && specReplicas(newRS) !== replicas) await this.scale(newRS, replicas, d, maxSurge);
    } else {
      await this.rollingUpdate(d, newRS, olds, replicas, maxSurge, maxUnavailable);
    }
    await this.cleanup(d, olds);
    const done = await this.syncStatus(d, newRS, owned, maxUnavailable, true);
    if (!done && spec.progressDeadlineSeconds) return { requeueAfterMs: Math.min(spec.progressDeadlineSeconds * 1000, 10_000) };
  }

  private async rollingUpdate(d: KubeObject, newRS: KubeObject, olds: KubeObject[], replicas: number, maxSurge: number, maxUnavailable: number): Promise<void> {
    const all = [newRS, ...olds];
    const total = all.reduce((n, r) => n + specReplicas(r), 0);
    // Scale the new ReplicaSet up within maxSurge.
    const newReplicas = specReplicas(newRS);
    if (newReplicas < replicas) {
      const maxTotal = replicas + maxSurge;
      if (total < maxTotal) {
        const next = Math.min(replicas, newReplicas + (maxTotal - total));
        if (next > newReplicas) {
          await this.scale(newRS, next, d, maxSurge);
          return;
        }
      }
    } else if (newReplicas > replicas) {
      await this.scale(newRS, replicas, d, maxSurge);
      return;
    }
    // Scale old ReplicaSets down as far as availability allows.
    const oldsActive = olds.filter((r) => specReplicas(r) > 0).sort((a, b) => Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? ''));
    if (!oldsActive.length) return;
    const minAvailable = replicas - maxUnavailable;
    const newUnavailable = specReplicas(newRS) - (st(newRS).availableReplicas ?? 0);
    const allPods = all.reduce((n, r) => n + specReplicas(r), 0);
    let maxScaledDown = allPods - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return;
    // First the old replicas that are not available anyway.
    for (const old of oldsActive) {
      if (maxScaledDown <= 0) break;
      const unhealthy = specReplicas(old) - (st(old).availableReplicas ?? 0);
      if (unhealthy <= 0) continue;
      const down = Math.min(unhealthy, maxScaledDown);
      await this.scale(old, specReplicas(old) - down, d, maxSurge);
      old.spec = { ...(old.spec as Obj), replicas: specReplicas(old) - down };
      maxScaledDown -= down;
    }
    // Then available ones, keeping minAvailable.
    const available = all.reduce((n, r) => n + (st(r).availableReplicas ?? 0), 0);
    let budget = Math.min(available - minAvailable, maxScaledDown);
    for (const old of oldsActive) {
      if (budget <= 0) break;
      const down = Math.min(specReplicas(old), budget);
      if (down <= 0) continue;
      await this.scale(old, specReplicas(old) - down, d, maxSurge);
      budget -= down;
    }
  }

  private async createNewRS(d: KubeObject, replicas: number, revision: number, maxSurge: number): Promise<KubeObject | undefined> {
    const spec = d.spec as Obj;
    const collisionCount = (d.status as Obj | undefined)?.collisionCount ?? 0;
    const hash = podTemplateHash(spec.template, collisionCount);
    const tpl = structuredClone(spec.template ?? {});
    tpl.metadata = { ...(tpl.metadata ?? {}), labels: { ...(tpl.metadata?.labels ?? {}), [HASH_LABEL]: hash } };
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        labels: { ...(spec.template?.metadata?.labels ?? {}), [HASH_LABEL]: hash },
        annotations: { ...copiedAnnotations(d), [REVISION]: String(revision), [DESIRED]: String(spec.replicas ?? 1), [MAX]: String((spec.replicas ?? 1) + maxSurge) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name!, uid: d.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        replicas,
        minReadySeconds: spec.minReadySeconds ?? 0,
        selector: { ...spec.selector, matchLabels: { ...(spec.selector?.matchLabels ?? {}), [HASH_LABEL]: hash } },
        template: tpl,
      },
    };
    try {
      const created = await this.ctx.client.post<KubeObject>(this.rsPath(d.metadata.namespace!), rs);
      void this.ctx.recorder('deployment-controller').event({ ...d, kind: 'Deployment', apiVersion: 'apps/v1' }, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${rs.metadata.name} from 0 to ${replicas}`);
      return created;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      // Same name, different template (or another owner): a hash collision. Bump collisionCount and retry.
      const existing = this.rss.store.get(`${d.metadata.namespace}/${rs.metadata.name}`);
      if (existing && controllerRef(existing)?.uid === d.metadata.uid && jsonEqual(templateWithoutHash((existing.spec as Obj).template), templateWithoutHash(spec.template))) return existing;
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`, { ...d, status: { ...(d.status as Obj), collisionCount: collisionCount + 1 } }).catch(() => undefined);
      return undefined;
    }
  }

  private async scale(rs: KubeObject, replicas: number, d: KubeObject, maxSurge: number): Promise<void> {
    const dr = (d.spec as Obj).replicas ?? 1;
    const from = specReplicas(rs);
    if (from !== replicas) {
      void this.ctx
        .recorder('deployment-controller')
        .event({ ...d, kind: 'Deployment', apiVersion: 'apps/v1' }, 'Normal', 'ScalingReplicaSet', `Scaled ${replicas > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${replicas}`);
    }
    await this.ctx.client.patch(
      this.rsPath(rs.metadata.namespace!, rs.metadata.name),
      { metadata: { annotations: { [DESIRED]: String(dr), [MAX]: String(dr + maxSurge) } }, spec: { replicas } },
      'application/merge-patch+json',
    );
  }

  private async annotateRS(rs: KubeObject, ann: Record<string, string>): Promise<KubeObject> {
    return this.ctx.client.patch<KubeObject>(this.rsPath(rs.metadata.namespace!, rs.metadata.name), { metadata: { annotations: ann } }, 'application/merge-patch+json');
  }

  private async setDeploymentRevision(d: KubeObject, rev: string): Promise<void> {
    if (d.metadata.annotations?.[REVISION] === rev) return;
    await this.ctx.client.patch(`/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`, { metadata: { annotations: { [REVISION]: rev } } }, 'application/merge-patch+json');
  }

  /** Deletes old, scaled-down ReplicaSets beyond revisionHistoryLimit, oldest revision first. */
  private async cleanup(d: KubeObject, olds: KubeObject[]): Promise<void> {
    const limit = (d.spec as Obj).revisionHistoryLimit ?? 10;
    const idle = olds.filter((r) => specReplicas(r) === 0 && (st(r).replicas ?? 0) === 0 && !r.metadata.deletionTimestamp).sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      try {
        await this.ctx.client.delete(this.rsPath(rs.metadata.namespace!, rs.metadata.name), { propagationPolicy: 'Background', preconditions: { uid: rs.metadata.uid } });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }

  /** Writes status when it changed; returns whether the rollout is complete. */
  private async syncStatus(d: KubeObject, newRS: KubeObject | undefined, all: KubeObject[], maxUnavailable: number, progressing: boolean): Promise<boolean> {
    const spec = d.spec as Obj;
    const old = (d.status ?? {}) as Obj;
    const replicas: number = spec.replicas ?? 1;
    const sum = (f: string) => all.reduce((n, r) => n + (st(r)[f] ?? 0), 0);
    const status: Obj = {
      observedGeneration: d.metadata.generation ?? 1,
      replicas: sum('replicas'),
      updatedReplicas: newRS ? (st(newRS).replicas ?? 0) : 0,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: sum('availableReplicas'),
    };
    status.unavailableReplicas = Math.max(0, sum('replicas') - status.availableReplicas);
    if (old.collisionCount) status.collisionCount = old.collisionCount;
    for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']) if (status[k] === 0) delete status[k];
    const now = rfc3339();
    const conds = ((old.conditions ?? []) as Obj[]).map((c) => ({ ...c }));
    const setCond = (type: string, s: string, reason: string, message: string) => {
      const cur = conds.find((c) => c.type === type);
      if (cur && cur.status === s && cur.reason === reason && cur.message === message) return;
      const next = { type, status: s, lastUpdateTime: now, lastTransitionTime: cur && cur.status === s ? cur.lastTransitionTime : now, reason, message };
      if (cur) Object.assign(cur, next);
      else conds.push(next);
    };
    const available = (status.availableReplicas ?? 0) >= replicas - maxUnavailable;
    setCond('Available', available ? 'True' : 'False', available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', available ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.');
    const complete =
      !!newRS && (status.updatedReplicas ?? 0) === replicas && (status.replicas ?? 0) === replicas && (status.availableReplicas ?? 0) === replicas && (d.metadata.generation ?? 1) <= status.observedGeneration;
    const rsName = newRS?.metadata.name ?? '';
    if (spec.paused) {
      setCond('Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused');
    } else if (complete) {
      setCond('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`);
    } else if (progressing) {
      const prog = conds.find((c) => c.type === 'Progressing');
      const deadline = spec.progressDeadlineSeconds;
      const changed = !jsonEqual({ ...status, conditions: undefined }, { ...old, conditions: undefined });
      if (prog && prog.reason === 'ProgressDeadlineExceeded' && !changed) {
        // stays exceeded until something moves
      } else if (!changed && prog && deadline && Date.now() - Date.parse(prog.lastUpdateTime ?? now) > deadline * 1000) {
        setCond('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`);
      } else if (changed || !prog || prog.reason === 'NewReplicaSetAvailable') {
        const reason = prog && prog.reason !== 'NewReplicaSetAvailable' ? 'ReplicaSetUpdated' : 'NewReplicaSetCreated';
        setCond('Progressing', 'True', reason, reason === 'NewReplicaSetCreated' ? `Created new replica set "${rsName}"` : `ReplicaSet "${rsName}" is progressing.`);
      }
    }
    status.conditions = conds;
    if (jsonEqual(status, old)) return complete;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`, { ...d, status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(keyOf(d));
    }
    return complete;
  }
}
