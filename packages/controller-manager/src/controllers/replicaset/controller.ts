/**
 * ReplicaSet controller (kubernetes pkg/controller/replicaset): keeps the number
 * of active pods owned by each ReplicaSet at spec.replicas.
 *
 * - Pods are created from the template in slow-start batches (1, 2, 4, ...) so a
 *   failing create does not flood the server; deletions take the least valuable
 *   pods first (unscheduled, pending, not ready, newest).
 * - Orphan pods matching the selector are adopted; owned pods that stop matching
 *   are released.
 * - Expectations: after creating or deleting N pods the ReplicaSet is not synced
 *   again until the informer has seen those N events (or 5 minutes pass), so a
 *   slow watch never causes double creates.
 * - Status (replicas, fullyLabeled, ready, available, observedGeneration) is
 *   written through the status subresource when it changes.
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound, jsonEqual, rfc3339, selectorFromLabelSelector, selectorFromSet } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { controllerRef, isPodAvailable, isPodReady } from '@kubeling/component-helpers';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { Expectations } from './expectations.js';
import { slowStartBatch } from './slow-start.js';

type Obj = Record<string, any>;
export const BURST_REPLICAS = 500;

export interface OwnerKind {
  apiVersion: string;
  kind: string;
}

const isActive = (p: KubeObject) => {
  const phase = (p.status as Obj | undefined)?.phase;
  return !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
};

/** Order for deletion: the pod to delete first sorts first (controller.ActivePods). */
export function deletionOrder(a: KubeObject, b: KubeObject): number {
  const sa = a.spec as Obj | undefined;
  const sb = b.spec as Obj | undefined;
  const scheduled = (x: Obj | undefined) => (x?.nodeName ? 1 : 0);
  if (scheduled(sa) !== scheduled(sb)) return scheduled(sa) - scheduled(sb);
  const rank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
  const pa = rank[(a.status as Obj | undefined)?.phase ?? 'Pending'] ?? 0;
  const pb = rank[(b.status as Obj | undefined)?.phase ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  const ra = isPodReady(a) ? 1 : 0;
  const rb = isPodReady(b) ? 1 : 0;
  if (ra !== rb) return ra - rb;
  const restarts = (p: KubeObject) => ((p.status as Obj | undefined)?.containerStatuses ?? []).reduce((n: number, c: Obj) => n + (c.restartCount ?? 0), 0);
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  // newer pods first
  return Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '');
}

/** The pod a ReplicaSet creates from its template. */
export function podFromTemplate(rs: KubeObject, owner: OwnerKind): KubeObject {
  const tpl = ((rs.spec as Obj).template ?? {}) as Obj;
  const meta = tpl.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: rs.metadata.name!, uid: rs.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: structuredClone(tpl.spec ?? {}),
  };
}

export class ReplicaSetController extends QueueController {
  readonly name = 'replicaset';
  private rsInformer!: Informer;
  private podInformer!: Informer;
  readonly expectations = new Expectations();
  private readonly owner: OwnerKind = { apiVersion: 'apps/v1', kind: 'ReplicaSet' };

  init(): void {
    this.rsInformer = this.ctx.informers.informer({ path: '/apis/apps/v1/replicasets' });
    this.podInformer = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.rsInformer.addEventHandler({
      add: (rs) => this.queue.add(keyOf(rs)),
      update: (_o, rs) => this.queue.add(keyOf(rs)),
      delete: (rs) => {
        this.expectations.delete(keyOf(rs));
        this.queue.add(keyOf(rs));
      },
    });
    this.podInformer.addEventHandler({
      add: (pod) => {
        if (pod.metadata.deletionTimestamp) return this.podDeleted(pod);
        const rsKey = this.ownerKey(pod);
        if (rsKey) {
          this.expectations.creationObserved(rsKey);
          this.queue.add(rsKey);
        } else this.enqueueMatching(pod);
      },
      update: (old, pod) => {
        const oldKey = this.ownerKey(old);
        const newKey = this.ownerKey(pod);
        if (pod.metadata.deletionTimestamp && !old.metadata.deletionTimestamp) {
          this.podDeleted(pod);
          return;
        }
        if (oldKey && oldKey !== newKey) this.queue.add(oldKey);
        if (newKey) this.queue.add(newKey);
        else if (!jsonEqual(old.metadata.labels, pod.metadata.labels) || !newKey) this.enqueueMatching(pod);
      },
      delete: (pod) => this.podDeleted(pod),
    });
  }

  private podDeleted(pod: KubeObject): void {
    const rsKey = this.ownerKey(pod);
    if (!rsKey) return;
    this.expectations.deletionObserved(rsKey, keyOf(pod));
    this.queue.add(rsKey);
  }

  private ownerKey(pod: KubeObject): string | undefined {
    const ref = controllerRef(pod);
    if (!ref || ref.kind !== this.owner.kind) return undefined;
    const rs = this.rsInformer.store.get(`${pod.metadata.namespace}/${ref.name}`);
    if (!rs || rs.metadata.uid !== ref.uid) return undefined;
    return keyOf(rs);
  }

  private enqueueMatching(pod: KubeObject): void {
    for (const rs of this.rsInformer.store.byIndex('namespace', pod.metadata.namespace ?? '')) {
      try {
        if (selectorFromLabelSelector((rs.spec as Obj).selector).matches(pod.metadata.labels)) this.queue.add(keyOf(rs));
      } catch {
        // invalid selectors never match
      }
    }
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const rs = this.rsInformer.store.get(key);
    if (!rs) {
      this.expectations.delete(key);
      return;
    }
    const spec = rs.spec as Obj;
    const selector = selectorFromLabelSelector(spec.selector);
    const ns = rs.metadata.namespace!;
    const pods = this.podInformer.store.byIndex('namespace', ns);
    // Claim: owned pods that still match, adopt matching orphans, release the rest.
    const owned: KubeObject[] = [];
    for (const p of pods) {
      const ref = controllerRef(p);
      const matches = selector.matches(p.metadata.labels);
      if (ref && ref.uid === rs.metadata.uid) {
        if (matches) owned.push(p);
        else if (!rs.metadata.deletionTimestamp) await this.release(p, rs);
      } else if (!ref && matches && !rs.metadata.deletionTimestamp && !p.metadata.deletionTimestamp) {
        if (await this.adopt(p, rs)) owned.push(p);
      }
    }
    const active = owned.filter(isActive);
    let manageError: unknown;
    if (this.expectations.satisfied(key) && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(active, rs, key);
      } catch (e) {
        manageError = e;
      }
    }
    await this.updateStatus(rs, owned, active, manageError);
    if (manageError) throw manageError;
    const minReady = spec.minReadySeconds ?? 0;
    const now = Date.now();
    if (minReady > 0 && active.some((p) => isPodReady(p) && !isPodAvailable(p, minReady, now))) return { requeueAfterMs: minReady * 1000 };
  }

  private async manageReplicas(active: KubeObject[], rs: KubeObject, key: string): Promise<void> {
    const want = (rs.spec as Obj).replicas ?? 1;
    const diff = active.length - want;
    const base = `/api/v1/namespaces/${rs.metadata.namespace}/pods`;
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, count);
      const events = this.ctx.recorder('replicaset-controller');
      const { succeeded, skipped } = await slowStartBatch(count, 1, async () => {
        try {
          const pod = await this.ctx.client.post<KubeObject>(base, podFromTemplate(rs, this.owner));
          void events.event({ ...rs, kind: this.owner.kind, apiVersion: this.owner.apiVersion }, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
        } catch (e) {
          void events.event({ ...rs, kind: this.owner.kind, apiVersion: this.owner.apiVersion }, 'Warning', 'FailedCreate', `Error creating: ${(e as Error).message}`);
          throw e;
        }
      });
      // Creates that never happened will not be observed either.
      for (let i = 0; i < skipped + (count - succeeded - skipped); i++) this.expectations.creationObserved(key);
      if (succeeded < count) throw new Error(`created ${succeeded} of ${count} pods`);
    } else if (diff > 0) {
      const victims = [...active].sort(deletionOrder).slice(0, Math.min(diff, BURST_REPLICAS));
      this.expectations.expectDeletions(key, victims.map(keyOf));
      await Promise.all(
        victims.map(async (p) => {
          try {
            await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } });
            void this.ctx.recorder('replicaset-controller').event({ ...rs, kind: this.owner.kind, apiVersion: this.owner.apiVersion }, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
          } catch (e) {
            this.expectations.deletionObserved(key, keyOf(p));
            if (!isNotFound(e)) throw e;
          }
        }),
      );
    }
  }

  private async adopt(pod: KubeObject, rs: KubeObject): Promise<boolean> {
    const patch = {
      metadata: {
        ownerReferences: [{ apiVersion: this.owner.apiVersion, kind: this.owner.kind, name: rs.metadata.name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }],
        uid: pod.metadata.uid,
      },
    };
    try {
      await this.ctx.client.patch(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, patch, 'application/strategic-merge-patch+json');
      return true;
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) return false;
      throw e;
    }
  }

  private async release(pod: KubeObject, rs: KubeObject): Promise<void> {
    const patch = { metadata: { ownerReferences: [{ $patch: 'delete', uid: rs.metadata.uid }], uid: pod.metadata.uid } };
    try {
      await this.ctx.client.patch(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, patch, 'application/strategic-merge-patch+json');
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async updateStatus(rs: KubeObject, owned: KubeObject[], active: KubeObject[], manageError: unknown): Promise<void> {
    const spec = rs.spec as Obj;
    const minReady = spec.minReadySeconds ?? 0;
    const now = Date.now();
    const templateLabels = spec.template?.metadata?.labels ?? {};
    const fullSel = selectorFromSet(templateLabels);
    const old = (rs.status ?? {}) as Obj;
    const conditions = ((old.conditions ?? []) as Obj[]).filter((c) => c.type !== 'ReplicaFailure');
    if (manageError) {
      const prev = ((old.conditions ?? []) as Obj[]).find((c) => c.type === 'ReplicaFailure');
      conditions.push({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: String((manageError as Error).message ?? manageError), lastTransitionTime: prev?.lastTransitionTime ?? rfc3339() });
    }
    const status: Obj = {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) => fullSel.matches(p.metadata.labels)).length,
      readyReplicas: active.filter(isPodReady).length,
      availableReplicas: active.filter((p) => isPodAvailable(p, minReady, now)).length,
      terminatingReplicas: owned.filter((p) => p.metadata.deletionTimestamp).length,
      observedGeneration: rs.metadata.generation ?? 1,
      ...(conditions.length ? { conditions } : {}),
    };
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas']) if (status[k] === 0) delete status[k];
    if (jsonEqual(status, old)) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}/status`, { ...rs, status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(keyOf(rs));
    }
  }
}
