/**
 * StatefulSet controller (kubernetes pkg/controller/statefulset): pods with
 * stable names `<set>-<ordinal>` (hostname and the governing Service as
 * subdomain), created and removed in order under OrderedReady — one at a time,
 * each Running and Ready before the next, scale-down from the highest ordinal —
 * or all at once under Parallel. Each template version is a ControllerRevision
 * `<set>-<hash>` (the pods' `controller-revision-hash`); RollingUpdate replaces
 * pods from the highest ordinal down to the partition, one at a time, and pods
 * below the partition are (re)made from the current revision. Claims from
 * volumeClaimTemplates are created as PersistentVolumeClaims `<claim>-<pod>`
 * before their pod, kept across pod deletion, and owned by the set or a
 * condemned pod as `persistentVolumeClaimRetentionPolicy` says (claims.ts).
 *
 * The decisions are `reconcile.ts`'s; this class reads the listers and does the
 * I/O, in the plan's order.
 */
import { isAlreadyExists, isConflict, isNotFound } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { controllerKey, enqueueOn } from '../handlers.js';
import { deleteRevisions, ensureRevision } from '../history.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod, StatefulSet } from '../kinds.js';
import type { PersistentVolumeClaim as StoredClaim } from '../storage.js';
import { QueueController } from '../queue-controller.js';
import { reconcileStatefulSet, type StatefulSetAction } from './reconcile.js';

export class StatefulSetController extends QueueController {
  readonly name = 'statefulset';
  private sets!: Informer<StatefulSet>;
  private pods!: Informer<Pod>;
  private revisions!: Informer<ControllerRevision>;
  private claims!: Informer<StoredClaim>;

  init(): void {
    this.sets = this.ctx.informers.informer<StatefulSet>({ path: '/apis/apps/v1/statefulsets' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.revisions = this.ctx.informers.informer<ControllerRevision>({ path: '/apis/apps/v1/controllerrevisions' });
    enqueueOn(this.sets, this.queue, { on: ['add', 'update'] });
    this.claims = this.ctx.informers.informer<StoredClaim>({ path: '/api/v1/persistentvolumeclaims' });
    enqueueOn(this.pods, this.queue, { keys: controllerKey('StatefulSet') });
    // A claim gone (say, collected with its pod) may unblock a pod waiting on it: the namespace's sets look again.
    enqueueOn(this.claims, this.queue, { on: ['delete'], keys: (c) => this.sets.store.byIndex('namespace', c.metadata.namespace ?? '').map((s) => keyOf(s)) });
  }

  private owned<T extends Pod | ControllerRevision>(set: StatefulSet, informer: Informer<T>): T[] {
    return informer.store.byIndex('namespace', set.metadata.namespace ?? '').filter((o) => controllerRef(o)?.uid === set.metadata.uid);
  }

  async reconcile(key: string): Promise<void> {
    const set = this.sets.store.get(key);
    if (!set || set.metadata.deletionTimestamp) return;
    const ns = set.metadata.namespace!;
    const revisions = this.owned(set, this.revisions);
    await ensureRevision(this.ctx.client, set, 'StatefulSet', set.spec?.template ?? {}, revisions, (n) => n);
    const claims = new Map(this.claims.store.byIndex('namespace', ns).map((c) => [c.metadata.name!, c]));
    const plan = reconcileStatefulSet({ set, pods: this.owned(set, this.pods), revisions, claims, now: Date.now() });
    for (const { podName, claim } of plan.claimCreates) await this.createClaim(set, claim, podName);
    for (const claim of plan.claimUpdates) {
      try {
        await this.ctx.client.put(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim.metadata.name}`, claim);
      } catch (e) {
        if (isNotFound(e)) continue;
        if (!isConflict(e)) throw e;
        // A condemned pod goes only once its claims are owned as the policy says: again with the newer claim.
        this.queue.addAfter(key, 100);
        return;
      }
    }
    for (const action of plan.actions) await this.act(set, action);
    await deleteRevisions(this.ctx.client, ns, plan.pruneRevisions);
    if (!plan.status) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${ns}/statefulsets/${set.metadata.name}/status`, { ...set, status: plan.status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.addAfter(key, 100);
    }
    // Waiting on minReadySeconds: look again when the pods could be available.
    if (plan.requeueAfterMs !== undefined) this.queue.addAfter(key, plan.requeueAfterMs);
  }

  /** createPersistentVolumeClaims: an existing claim is kept; events as upstream's recordClaimEvent. */
  private async createClaim(set: StatefulSet, claim: PersistentVolumeClaim, podName: string): Promise<void> {
    const claimName = claim.metadata?.name;
    const event = (type: 'Normal' | 'Warning', reason: string, message: string) =>
      void this.ctx.recorder('statefulset-controller').event({ ...set, kind: 'StatefulSet', apiVersion: 'apps/v1' }, type, reason, message);
    try {
      await this.ctx.client.post(`/api/v1/namespaces/${set.metadata.namespace}/persistentvolumeclaims`, claim);
      event('Normal', 'SuccessfulCreate', `create Claim ${claimName} Pod ${podName} in StatefulSet ${set.metadata.name} success`);
    } catch (e) {
      if (isAlreadyExists(e)) return;
      event(
        'Warning',
        'FailedCreate',
        `create Claim ${claimName} for Pod ${podName} in StatefulSet ${set.metadata.name} failed error: ${(e as Error).message}`,
      );
      throw e;
    }
  }

  private async act(set: StatefulSet, action: StatefulSetAction): Promise<void> {
    const ns = set.metadata.namespace!;
    const name = set.metadata.name!;
    const base = `/api/v1/namespaces/${ns}/pods`;
    const event = (reason: string, message: string) =>
      void this.ctx.recorder('statefulset-controller').event({ ...set, kind: 'StatefulSet', apiVersion: 'apps/v1' }, 'Normal', reason, message);
    if (action.type === 'delete') {
      const p = action.pod;
      await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).then(
        () => event('SuccessfulDelete', `delete Pod ${p.metadata.name} in StatefulSet ${name} successful`),
        (e) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        },
      );
      return;
    }
    for (const claim of action.claims) await this.createClaim(set, claim, action.pod.metadata.name!);
    try {
      await this.ctx.client.post(base, action.pod);
      event('SuccessfulCreate', `create Pod ${action.pod.metadata.name} in StatefulSet ${name} successful`);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}
