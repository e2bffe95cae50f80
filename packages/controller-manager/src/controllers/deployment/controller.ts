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
 *
 * The decisions are `reconcile.ts`'s; this class reads the listers and does the
 * I/O, in the plan's order.
 */
import { isAlreadyExists, isConflict, isNotFound, selectorFromLabelSelector } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { controllerKey, enqueueOn } from '../handlers.js';
import type { Deployment, Pod, ReplicaSet } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { claimReplicaSets, reconcileDeployment, REVISION, runsTemplate, type DeploymentPlan, type ScaleAction } from './reconcile.js';

export class DeploymentController extends QueueController {
  readonly name = 'deployment';
  private deps!: Informer<Deployment>;
  private rss!: Informer<ReplicaSet>;
  private pods!: Informer<Pod>;

  init(): void {
    this.deps = this.ctx.informers.informer<Deployment>({ path: '/apis/apps/v1/deployments' });
    this.rss = this.ctx.informers.informer<ReplicaSet>({ path: '/apis/apps/v1/replicasets' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    enqueueOn(this.deps, this.queue);
    // A ReplicaSet maps to its Deployment, any other to the Deployments whose selector matches it.
    const deploymentsOf = (rs: ReplicaSet) => controllerKey('Deployment')(rs) ?? this.matching(rs);
    enqueueOn(this.rss, this.queue, { keys: deploymentsOf });
    // Recreate waits for old pods to be gone.
    enqueueOn(this.pods, this.queue, {
      on: ['delete'],
      keys: (pod) => {
        const ref = controllerRef(pod);
        if (ref?.kind !== 'ReplicaSet') return undefined;
        const rs = this.rss.store.get(`${pod.metadata.namespace}/${ref.name}`);
        return rs ? deploymentsOf(rs) : undefined;
      },
    });
  }

  /** The Deployments whose selector matches an orphan ReplicaSet's labels. */
  private matching(rs: ReplicaSet): string[] {
    const keys: string[] = [];
    for (const d of this.deps.store.byIndex('namespace', rs.metadata.namespace ?? '')) {
      try {
        if (selectorFromLabelSelector(d.spec?.selector).matches(rs.metadata.labels)) keys.push(keyOf(d));
      } catch {
        // never matches
      }
    }
    return keys;
  }

  private rsPath(ns: string, name?: string): string {
    return `/apis/apps/v1/namespaces/${ns}/replicasets${name ? `/${name}` : ''}`;
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const d = this.deps.store.get(key);
    if (!d || d.metadata.deletionTimestamp) return;
    const ns = d.metadata.namespace!;
    // Claim ReplicaSets: controlled ones, plus matching orphans.
    const owned: ReplicaSet[] = [];
    for (const { rs, action } of claimReplicaSets(d, this.rss.store.byIndex('namespace', ns))) {
      if (action === 'own') {
        owned.push(rs);
        continue;
      }
      try {
        const adopted = await this.ctx.client.patch<ReplicaSet>(
          this.rsPath(ns, rs.metadata.name),
          {
            metadata: {
              uid: rs.metadata.uid,
              ownerReferences: [
                { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true },
              ],
            },
          },
          'application/strategic-merge-patch+json',
        );
        owned.push(adopted);
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
    const pods = this.pods.store.byIndex('namespace', ns);
    let plan = reconcileDeployment({ deployment: d, replicaSets: owned, pods, now: Date.now() });
    if (plan.createReplicaSet) {
      const made = await this.createNewRS(d, plan.createReplicaSet);
      if (!made) return { requeueAfterMs: 200 };
      // It was there already (the informer had not shown it): plan again with it.
      if (made !== plan.createReplicaSet) {
        plan = reconcileDeployment({
          deployment: d,
          replicaSets: [...owned.filter((rs) => rs.metadata.uid !== made.metadata.uid), made],
          pods,
          now: Date.now(),
        });
        if (plan.createReplicaSet) return { requeueAfterMs: 200 };
      }
    }
    await this.carryOut(d, plan);
    if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
  }

  /** Everything in the plan after the new ReplicaSet exists, in order. */
  private async carryOut(d: Deployment, plan: DeploymentPlan): Promise<void> {
    if (plan.reviseReplicaSet) {
      const { rs, revision } = plan.reviseReplicaSet;
      await this.ctx.client.patch(
        this.rsPath(rs.metadata.namespace!, rs.metadata.name),
        { metadata: { annotations: { [REVISION]: revision } } },
        'application/merge-patch+json',
      );
    }
    if (plan.deploymentRevision !== undefined) {
      await this.ctx.client.patch(
        `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`,
        { metadata: { annotations: { [REVISION]: plan.deploymentRevision } } },
        'application/merge-patch+json',
      );
    }
    for (const s of plan.scale) await this.scale(d, s, plan.scaleAnnotations);
    for (const rs of plan.deleteReplicaSets) {
      try {
        await this.ctx.client.delete(this.rsPath(rs.metadata.namespace!, rs.metadata.name), {
          propagationPolicy: 'Background',
          preconditions: { uid: rs.metadata.uid },
        });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
    if (!plan.status) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`, { ...d, status: plan.status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.add(keyOf(d));
    }
  }

  /**
   * Creates the new ReplicaSet. Returns it, or the one of that name already
   * there when it is this Deployment's for the same template; undefined on a
   * hash collision, after bumping collisionCount so the next name differs.
   */
  private async createNewRS(d: Deployment, rs: ReplicaSet): Promise<ReplicaSet | undefined> {
    try {
      await this.ctx.client.post<ReplicaSet>(this.rsPath(d.metadata.namespace!), rs);
      void this.ctx
        .recorder('deployment-controller')
        .event(
          { ...d, kind: 'Deployment', apiVersion: 'apps/v1' },
          'Normal',
          'ScalingReplicaSet',
          `Scaled up replica set ${rs.metadata.name} from 0 to ${rs.spec?.replicas}`,
        );
      return rs;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      // Same name, different template (or another owner): a hash collision. Bump collisionCount and retry.
      const existing = this.rss.store.get(`${d.metadata.namespace}/${rs.metadata.name}`);
      if (existing && controllerRef(existing)?.uid === d.metadata.uid && runsTemplate(existing, d)) return existing;
      const collisionCount = d.status?.collisionCount ?? 0;
      await this.ctx.client
        .put(`/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`, {
          ...d,
          status: { ...d.status, collisionCount: collisionCount + 1 },
        })
        .catch(() => undefined);
      return undefined;
    }
  }

  private async scale(d: Deployment, { rs, from, to }: ScaleAction, annotations: Record<string, string>): Promise<void> {
    if (from !== to) {
      void this.ctx
        .recorder('deployment-controller')
        .event(
          { ...d, kind: 'Deployment', apiVersion: 'apps/v1' },
          'Normal',
          'ScalingReplicaSet',
          `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`,
        );
    }
    await this.ctx.client.patch(
      this.rsPath(rs.metadata.namespace!, rs.metadata.name),
      { metadata: { annotations }, spec: { replicas: to } },
      'application/merge-patch+json',
    );
  }
}
