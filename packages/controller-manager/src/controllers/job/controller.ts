/**
 * Job controller (kubernetes pkg/controller/job, NonIndexed completion mode):
 * runs up to `parallelism` pods at once until `completions` have succeeded;
 * failed pods are replaced after an exponential back-off (10 s doubling, at most
 * 6 min) until more than `backoffLimit` have failed; `activeDeadlineSeconds`
 * bounds the whole run. Finished Jobs get Complete (with SuccessCriteriaMet) or
 * Failed (with FailureTarget) conditions, and their remaining pods are deleted.
 *
 * The decisions are `reconcile.ts`'s; this class reads the listers and does the
 * I/O: deletions, creations (slow start), the event, the status.
 */
import { isConflict, isNotFound, selectorFromLabelSelector } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { controllerKey, enqueueOn } from '../handlers.js';
import type { Job, Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { claimPods } from '../replicaset/reconcile.js';
import { slowStartBatch } from '../replicaset/slow-start.js';
import { adoptPod, releasePod } from '../claim.js';
import { reconcileJob } from './reconcile.js';

export class JobController extends QueueController {
  readonly name = 'job';
  private jobs!: Informer<Job>;
  private pods!: Informer<Pod>;

  init(): void {
    this.jobs = this.ctx.informers.informer<Job>({ path: '/apis/batch/v1/jobs' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    enqueueOn(this.jobs, this.queue, { on: ['add', 'update'] });
    // A pod's Job, and for an orphan the Jobs whose selector matches it (they may adopt it); a Job that lost a pod too.
    enqueueOn(this.pods, this.queue, { keys: (p) => (controllerRef(p) ? controllerKey('Job')(p) : this.matching(p)), updateOld: true });
  }

  private matching(pod: Pod): string[] {
    if (pod.metadata.deletionTimestamp) return [];
    return this.jobs.store.byIndex('namespace', pod.metadata.namespace ?? '').flatMap((j) => {
      try {
        return selectorFromLabelSelector(j.spec?.selector).matches(pod.metadata.labels) ? [keyOf(j)] : [];
      } catch {
        return [];
      }
    });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const job = this.jobs.store.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const ns = job.metadata.namespace!;
    // Claim: owned pods that still match, matching orphans adopted, the rest released (ControllerRefManager).
    const pods: Pod[] = [];
    for (const { pod, action } of claimPods(job, this.pods.store.byIndex('namespace', ns))) {
      if (action === 'own') pods.push(pod);
      else if (action === 'release') await releasePod(this.ctx.client, pod, job.metadata.uid!);
      else if (await adoptPod(this.ctx.client, pod, job, { apiVersion: 'batch/v1', kind: 'Job' })) pods.push(pod);
    }
    const plan = reconcileJob({ job, pods, now: Date.now() });
    await this.deletePods(plan.delete, ns);
    if (plan.create > 0) await this.createPods(job, plan.template, plan.create);
    if (plan.event)
      void this.ctx.recorder('job-controller').event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, plan.event.type, plan.event.reason, plan.event.message);
    if (plan.status) {
      try {
        await this.ctx.client.put(`/apis/batch/v1/namespaces/${ns}/jobs/${job.metadata.name}/status`, { ...job, status: plan.status });
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.queue.addAfter(key, 100);
      }
    }
    if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
  }

  private async createPods(job: Job, pod: Pod, n: number): Promise<void> {
    const { succeeded } = await slowStartBatch(n, 1, async () => {
      const created = await this.ctx.client.post<Pod>(`/api/v1/namespaces/${job.metadata.namespace}/pods`, pod);
      void this.ctx
        .recorder('job-controller')
        .event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
    });
    if (succeeded < n) throw new Error(`created ${succeeded} of ${n} pods`);
  }

  private async deletePods(pods: readonly Pod[], ns: string): Promise<void> {
    await Promise.all(
      pods.map((p) =>
        this.ctx.client.delete(`/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).catch((e) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }),
      ),
    );
  }
}
