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
 *
 * The decisions are `reconcile.ts`'s; this class reads the listers, keeps the
 * expectations and does the I/O. ReplicationControllers run through the same
 * class (as upstream's replication manager wraps the ReplicaSet controller):
 * a `Flavour` says where the objects live and turns one into a ReplicaSet.
 */
import { isConflict, isNotFound, jsonEqual, selectorFromLabelSelector } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { enqueueOn } from '../handlers.js';
import type { Pod, ReplicaSet } from '../kinds.js';
import { adoptPod, releasePod } from '../claim.js';
import { QueueController } from '../queue-controller.js';
import { Expectations } from './expectations.js';
import { claimPods, reconcileReplicaSet, REPLICASET_KIND, replicaSetStatus, statusChanged, type OwnerKind, type ReplicaSetPlan } from './reconcile.js';
import { slowStartBatch } from './slow-start.js';

/** Which kind the controller keeps: where it is listed, its status path, and how it reads as a ReplicaSet. */
export interface Flavour {
  name: string;
  /** The events' source component. */
  component: string;
  owner: OwnerKind;
  /** The collection across namespaces. */
  path: string;
  /** The collection in a namespace (status is written below it). */
  namespacedPath(ns: string): string;
  asReplicaSet(obj: ReplicaSet): ReplicaSet;
  /** The status as this kind has it (fields the kind lacks dropped). */
  status(s: NonNullable<ReplicaSet['status']>): NonNullable<ReplicaSet['status']>;
}

export const REPLICASET_FLAVOUR: Flavour = {
  name: 'replicaset',
  component: 'replicaset-controller',
  owner: REPLICASET_KIND,
  path: '/apis/apps/v1/replicasets',
  namespacedPath: (ns) => `/apis/apps/v1/namespaces/${ns}/replicasets`,
  asReplicaSet: (rs) => rs,
  status: (s) => s,
};

/** core/v1 ReplicationControllers: an equality selector, and no terminatingReplicas in status. */
export const REPLICATIONCONTROLLER_FLAVOUR: Flavour = {
  name: 'replicationcontroller',
  component: 'replication-controller',
  owner: { apiVersion: 'v1', kind: 'ReplicationController' },
  path: '/api/v1/replicationcontrollers',
  namespacedPath: (ns) => `/api/v1/namespaces/${ns}/replicationcontrollers`,
  asReplicaSet: (rc) => {
    const sel = rc.spec?.selector as Record<string, string> | undefined;
    return { ...rc, spec: { ...rc.spec, selector: { matchLabels: { ...(sel ?? {}) } } } };
  },
  status: ({ terminatingReplicas: _, ...s }) => s,
};

export class ReplicaSetController extends QueueController {
  readonly name: string;
  private rsInformer!: Informer<ReplicaSet>;
  private podInformer!: Informer<Pod>;
  readonly expectations = new Expectations();
  private readonly owner: OwnerKind;

  constructor(
    ctx: ConstructorParameters<typeof QueueController>[0],
    private readonly flavour: Flavour = REPLICASET_FLAVOUR,
  ) {
    super(ctx);
    this.name = flavour.name;
    this.owner = flavour.owner;
  }

  init(): void {
    this.rsInformer = this.ctx.informers.informer<ReplicaSet>({ path: this.flavour.path });
    this.podInformer = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    // A deleted ReplicaSet's expectations go before its key is queued.
    this.rsInformer.addEventHandler({ delete: (rs) => this.expectations.delete(keyOf(rs)) });
    enqueueOn(this.rsInformer, this.queue);
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

  private podDeleted(pod: Pod): void {
    const rsKey = this.ownerKey(pod);
    if (!rsKey) return;
    this.expectations.deletionObserved(rsKey, keyOf(pod));
    this.queue.add(rsKey);
  }

  private ownerKey(pod: Pod): string | undefined {
    const ref = controllerRef(pod);
    if (!ref || ref.kind !== this.owner.kind) return undefined;
    const rs = this.rsInformer.store.get(`${pod.metadata.namespace}/${ref.name}`);
    if (!rs || rs.metadata.uid !== ref.uid) return undefined;
    return keyOf(rs);
  }

  private enqueueMatching(pod: Pod): void {
    for (const rs of this.rsInformer.store.byIndex('namespace', pod.metadata.namespace ?? '')) {
      try {
        if (selectorFromLabelSelector(this.flavour.asReplicaSet(rs).spec?.selector).matches(pod.metadata.labels)) this.queue.add(keyOf(rs));
      } catch {
        // invalid selectors never match
      }
    }
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const stored = this.rsInformer.store.get(key);
    if (!stored) {
      this.expectations.delete(key);
      return;
    }
    const rs = this.flavour.asReplicaSet(stored);
    // Claim: owned pods that still match, adopt matching orphans, release the rest.
    const owned: Pod[] = [];
    for (const { pod, action } of claimPods(rs, this.podInformer.store.byIndex('namespace', rs.metadata.namespace!))) {
      if (action === 'own') owned.push(pod);
      else if (action === 'release') await this.release(pod, rs);
      else if (await this.adopt(pod, rs)) owned.push(pod);
    }
    const plan = reconcileReplicaSet({ rs, owned, expectationsSatisfied: this.expectations.satisfied(key), now: Date.now(), owner: this.owner });
    let manageError: unknown;
    try {
      await this.manageReplicas(plan, rs, key);
    } catch (e) {
      manageError = e;
    }
    const computed = manageError ? replicaSetStatus(rs, owned, Date.now(), manageError) : plan.status;
    const status = computed && this.flavour.status(computed);
    if (status && statusChanged(status, rs)) await this.writeStatus(stored, status);
    if (manageError) throw manageError;
    if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
  }

  private async manageReplicas(plan: ReplicaSetPlan, rs: ReplicaSet, key: string): Promise<void> {
    const base = `/api/v1/namespaces/${rs.metadata.namespace}/pods`;
    const events = this.ctx.recorder(this.flavour.component);
    const ref = { ...rs, kind: this.owner.kind, apiVersion: this.owner.apiVersion };
    if (plan.create > 0) {
      const count = plan.create;
      this.expectations.expectCreations(key, count);
      const { succeeded, skipped } = await slowStartBatch(count, 1, async () => {
        try {
          const pod = await this.ctx.client.post<Pod>(base, plan.template);
          void events.event(ref, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`);
        } catch (e) {
          void events.event(ref, 'Warning', 'FailedCreate', `Error creating: ${(e as Error).message}`);
          throw e;
        }
      });
      // Creates that never happened will not be observed either.
      for (let i = 0; i < skipped + (count - succeeded - skipped); i++) this.expectations.creationObserved(key);
      if (succeeded < count) throw new Error(`created ${succeeded} of ${count} pods`);
    } else if (plan.delete.length) {
      this.expectations.expectDeletions(key, plan.delete.map(keyOf));
      await Promise.all(
        plan.delete.map(async (p) => {
          try {
            await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } });
            void events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
          } catch (e) {
            this.expectations.deletionObserved(key, keyOf(p));
            if (!isNotFound(e)) throw e;
          }
        }),
      );
    }
  }

  private adopt(pod: Pod, rs: ReplicaSet): Promise<boolean> {
    return adoptPod(this.ctx.client, pod, rs, this.owner);
  }

  private release(pod: Pod, rs: ReplicaSet): Promise<void> {
    return releasePod(this.ctx.client, pod, rs.metadata.uid!);
  }

  private async writeStatus(rs: ReplicaSet, status: NonNullable<ReplicaSet['status']>): Promise<void> {
    try {
      await this.ctx.client.put(`${this.flavour.namespacedPath(rs.metadata.namespace!)}/${rs.metadata.name}/status`, { ...rs, status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(keyOf(rs));
    }
  }
}
