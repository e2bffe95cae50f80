/**
 * TTL-after-finished controller (kubernetes pkg/controller/ttlafterfinished):
 * a finished Job (a Complete or Failed condition that is True) with
 * `spec.ttlSecondsAfterFinished` is deleted that many seconds after it
 * finished, its pods with it (propagationPolicy Foreground, as upstream, so
 * the Job is gone only once its pods are). Before deleting, the Job is read
 * again from the API server: a TTL changed meanwhile is honoured. The deletion
 * carries the Job's uid as a precondition, so a Job recreated under the same
 * name is not touched.
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { ControllerContext } from '../../context.js';
import { enqueueOn } from '../handlers.js';
import type { Job } from '../kinds.js';
import { QueueController } from '../queue-controller.js';

/** When the Job finished (the lastTransitionTime of its True Complete or Failed condition), or undefined when it has not. */
export function finishedAt(job: Job): number | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') {
      const t = Date.parse(c.lastTransitionTime ?? '');
      if (!Number.isFinite(t)) throw new Error(`unable to find the time when the Job ${job.metadata.namespace}/${job.metadata.name} finished`);
      return t;
    }
  }
  return undefined;
}

/** needsCleanup: finished, with a TTL, and not being deleted already. */
export const needsCleanup = (job: Job): boolean =>
  !job.metadata.deletionTimestamp && typeof job.spec?.ttlSecondsAfterFinished === 'number' && finishedAt(job) !== undefined;

/** How long until the Job's TTL expires (≤ 0: expired); undefined when it needs no cleanup. */
export function ttlLeft(job: Job, now: number): number | undefined {
  if (!needsCleanup(job)) return undefined;
  return finishedAt(job)! + job.spec!.ttlSecondsAfterFinished! * 1000 - now;
}

export class TTLAfterFinishedController extends QueueController {
  readonly name = 'ttl-after-finished';
  private jobs!: Informer<Job>;

  constructor(
    ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    super(ctx);
  }

  init(): void {
    this.jobs = this.ctx.informers.informer<Job>({ path: '/apis/batch/v1/jobs' });
    enqueueOn(this.jobs, this.queue, { on: ['add', 'update'], keys: (j) => (needsCleanup(j) ? `${j.metadata.namespace}/${j.metadata.name}` : undefined) });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const job = this.jobs.store.get(key);
    if (!job) return;
    const left = ttlLeft(job, this.now());
    if (left === undefined) return;
    if (left > 0) return { requeueAfterMs: left };
    // The cached Job may be stale: its TTL may have changed. Decide on the API server's copy.
    const [ns, name] = key.split('/') as [string, string];
    let fresh: Job;
    try {
      fresh = await this.ctx.client.get<Job>(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    const freshLeft = ttlLeft(fresh, this.now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) return { requeueAfterMs: freshLeft };
    try {
      await this.ctx.client.delete(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata.uid },
      });
      this.ctx.log.info({ controller: this.name, key }, 'cleaned up finished job');
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
