/**
 * CronJob controller (kubernetes pkg/controller/cronjob, v2): at each scheduled
 * time (cron-parser evaluates the schedule, in `timeZone` when set) creates a Job
 * from `jobTemplate` named `<cronjob>-<scheduled minutes since epoch>`, honouring
 * `suspend`, `startingDeadlineSeconds` and `concurrencyPolicy` (Allow, Forbid,
 * Replace); keeps `status.active`, `lastScheduleTime`, `lastSuccessfulTime`; and
 * deletes finished Jobs beyond the history limits, oldest first.
 */
import { CronExpressionParser } from 'cron-parser';
import type { batchv1 } from '@kubeling/api';
import { isAlreadyExists, isConflict, isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { controllerKey, enqueueOn } from '../handlers.js';
import type { CronJob, Job } from '../kinds.js';
import { QueueController } from '../queue-controller.js';

const finished = (j: Job): 'Complete' | 'Failed' | undefined => {
  for (const c of j.status?.conditions ?? []) if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  return undefined;
};

/** The most recent schedule time at or before `now`, and the next one after it. */
export function scheduleTimes(schedule: string, timeZone: string | undefined, now: Date): { last: Date; next: Date } {
  const expr = schedule.replace(/^(CRON_)?TZ=\S+\s+/, '');
  const tz = timeZone ?? /^(?:CRON_)?TZ=(\S+)/.exec(schedule)?.[1] ?? 'UTC';
  const last = CronExpressionParser.parse(expr, { currentDate: new Date(now.getTime() + 1), tz })
    .prev()
    .toDate();
  const next = CronExpressionParser.parse(expr, { currentDate: now, tz }).next().toDate();
  return { last, next };
}

export class CronJobController extends QueueController {
  readonly name = 'cronjob';
  private cronjobs!: Informer<CronJob>;
  private jobs!: Informer<Job>;

  constructor(
    ctx: ConstructorParameters<typeof QueueController>[0],
    private readonly now: () => Date = () => new Date(),
  ) {
    super(ctx);
  }

  init(): void {
    this.cronjobs = this.ctx.informers.informer<CronJob>({ path: '/apis/batch/v1/cronjobs' });
    this.jobs = this.ctx.informers.informer<Job>({ path: '/apis/batch/v1/jobs' });
    enqueueOn(this.cronjobs, this.queue, { on: ['add', 'update'] });
    enqueueOn(this.jobs, this.queue, { keys: controllerKey('CronJob') });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const cj = this.cronjobs.store.get(key);
    if (!cj || cj.metadata.deletionTimestamp || !cj.spec) return;
    const spec = cj.spec;
    const ns = cj.metadata.namespace!;
    const owned = this.jobs.store.byIndex('namespace', ns).filter((j) => controllerRef(j)?.uid === cj.metadata.uid);
    const active = owned.filter((j) => !finished(j) && !j.metadata.deletionTimestamp);
    const prev = cj.status ?? {};
    const status: batchv1.CronJobStatus = { ...prev };
    const now = this.now();
    let times: { last: Date; next: Date };
    try {
      times = scheduleTimes(spec.schedule, spec.timeZone, now);
    } catch (e) {
      void this.ctx
        .recorder('cronjob-controller')
        .event(
          { ...cj, kind: 'CronJob', apiVersion: 'batch/v1' },
          'Warning',
          'UnparseableSchedule',
          `unparseable schedule: ${spec.schedule}: ${(e as Error).message}`,
        );
      return;
    }
    const lastScheduled = Date.parse(prev.lastScheduleTime ?? cj.metadata.creationTimestamp ?? '');
    const due = times.last.getTime() > lastScheduled;
    const tooLate = spec.startingDeadlineSeconds !== undefined && now.getTime() - times.last.getTime() > spec.startingDeadlineSeconds * 1000;
    const events = this.ctx.recorder('cronjob-controller');
    const ref = { ...cj, kind: 'CronJob', apiVersion: 'batch/v1' };
    if (due && !spec.suspend && !tooLate) {
      let skip = false;
      if (spec.concurrencyPolicy === 'Forbid' && active.length) skip = true;
      if (spec.concurrencyPolicy === 'Replace') {
        for (const j of active) {
          await this.ctx.client.delete(`/apis/batch/v1/namespaces/${ns}/jobs/${j.metadata.name}`, { propagationPolicy: 'Background' }).catch((e) => {
            if (!isNotFound(e)) throw e;
          });
          void events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted job ${j.metadata.name}`);
        }
      }
      if (!skip) {
        const scheduledMinutes = Math.floor(times.last.getTime() / 60_000);
        const name = `${cj.metadata.name}-${scheduledMinutes}`;
        const tpl = spec.jobTemplate ?? {};
        const job = {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: {
            name,
            namespace: ns,
            labels: { ...(tpl.metadata?.labels ?? {}) },
            annotations: { ...(tpl.metadata?.annotations ?? {}), 'batch.kubernetes.io/cronjob-scheduled-timestamp': rfc3339(times.last) },
            ownerReferences: [
              { apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name!, uid: cj.metadata.uid!, controller: true, blockOwnerDeletion: true },
            ],
          },
          spec: structuredClone(tpl.spec ?? {}),
        };
        try {
          await this.ctx.client.post(`/apis/batch/v1/namespaces/${ns}/jobs`, job);
          void events.event(ref, 'Normal', 'SuccessfulCreate', `Created job ${name}`);
        } catch (e) {
          if (!isAlreadyExists(e)) throw e;
        }
        status.lastScheduleTime = rfc3339(times.last);
      }
    }
    // Status: active jobs, last success; history limits.
    const stillActive = this.jobs.store
      .byIndex('namespace', ns)
      .filter((j) => controllerRef(j)?.uid === cj.metadata.uid && !finished(j) && !j.metadata.deletionTimestamp);
    status.active = stillActive.map((j) => ({
      kind: 'Job',
      namespace: ns,
      name: j.metadata.name!,
      uid: j.metadata.uid!,
      apiVersion: 'batch/v1',
      resourceVersion: j.metadata.resourceVersion!,
    }));
    if (!status.active?.length) delete status.active;
    const done = owned
      .filter((j) => finished(j))
      .sort((a, b) => Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? ''));
    const succeededJobs = done.filter((j) => finished(j) === 'Complete');
    const lastOk = succeededJobs
      .map((j) => j.status?.completionTime)
      .filter((t): t is string => !!t)
      .sort()
      .pop();
    if (lastOk) status.lastSuccessfulTime = lastOk;
    const prune = async (jobs: Job[], limit: number) => {
      for (const j of jobs.slice(0, Math.max(0, jobs.length - limit))) {
        await this.ctx.client.delete(`/apis/batch/v1/namespaces/${ns}/jobs/${j.metadata.name}`, { propagationPolicy: 'Background' }).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
      }
    };
    await prune(succeededJobs, spec.successfulJobsHistoryLimit ?? 3);
    await prune(
      done.filter((j) => finished(j) === 'Failed'),
      spec.failedJobsHistoryLimit ?? 1,
    );
    if (!jsonEqual(status, prev)) {
      try {
        await this.ctx.client.put(`/apis/batch/v1/namespaces/${ns}/cronjobs/${cj.metadata.name}/status`, { ...cj, status });
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.queue.addAfter(key, 100);
      }
    }
    return { requeueAfterMs: Math.max(100, times.next.getTime() - now.getTime() + 50) };
  }
}
