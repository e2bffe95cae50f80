/**
 * Job controller (kubernetes pkg/controller/job, NonIndexed completion mode):
 * runs up to `parallelism` pods at once until `completions` have succeeded;
 * failed pods are replaced after an exponential back-off (10 s doubling, at most
 * 6 min) until more than `backoffLimit` have failed; `activeDeadlineSeconds`
 * bounds the whole run. Finished Jobs get Complete (with SuccessCriteriaMet) or
 * Failed (with FailureTarget) conditions, and their remaining pods are deleted.
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { controllerRef, isPodReady } from '@kubeling/component-helpers';
import { slowStartBatch } from '../replicaset/slow-start.js';

type Obj = Record<string, any>;
const BACKOFF_BASE_MS = 10_000;
const BACKOFF_MAX_MS = 6 * 60_000;

const phase = (p: KubeObject) => (p.status as Obj | undefined)?.phase as string | undefined;
const condTrue = (j: KubeObject, type: string) => ((j.status as Obj | undefined)?.conditions ?? []).some((c: Obj) => c.type === type && c.status === 'True');

function lastFailureTime(pods: KubeObject[]): number {
  let t = 0;
  for (const p of pods) {
    for (const c of ((p.status as Obj | undefined)?.containerStatuses ?? []) as Obj[]) {
      const f = Date.parse(c.state?.terminated?.finishedAt ?? '');
      if (Number.isFinite(f)) t = Math.max(t, f);
    }
    const cond = ((p.status as Obj | undefined)?.conditions ?? []).find((c: Obj) => c.type === 'Ready');
    const f = Date.parse(cond?.lastTransitionTime ?? '');
    if (Number.isFinite(f)) t = Math.max(t, f);
  }
  return t;
}

export class JobController extends QueueController {
  readonly name = 'job';
  private jobs!: Informer;
  private pods!: Informer;

  init(): void {
    this.jobs = this.ctx.informers.informer({ path: '/apis/batch/v1/jobs' });
    this.pods = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.jobs.addEventHandler({ add: (j) => this.queue.add(keyOf(j)), update: (_o, j) => this.queue.add(keyOf(j)) });
    const podChanged = (p: KubeObject) => {
      const ref = controllerRef(p);
      if (ref?.kind === 'Job') this.queue.add(`${p.metadata.namespace}/${ref.name}`);
    };
    this.pods.addEventHandler({ add: podChanged, update: (_o, p) => podChanged(p), delete: podChanged });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const job = this.jobs.store.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const spec = job.spec as Obj;
    const ns = job.metadata.namespace!;
    const pods = this.pods.store.byIndex('namespace', ns).filter((p) => controllerRef(p)?.uid === job.metadata.uid);
    const active = pods.filter((p) => !p.metadata.deletionTimestamp && phase(p) !== 'Succeeded' && phase(p) !== 'Failed');
    const succeeded = pods.filter((p) => phase(p) === 'Succeeded').length;
    const failedPods = pods.filter((p) => phase(p) === 'Failed');
    const prev = (job.status ?? {}) as Obj;
    // Counts never go down: pods of a finished job may be deleted later.
    const succeededTotal = Math.max(succeeded, prev.succeeded ?? 0);
    const failed = Math.max(failedPods.length, prev.failed ?? 0);
    const now = Date.now();
    const startTime: string = prev.startTime ?? rfc3339();
    const finished = condTrue(job, 'Complete') || condTrue(job, 'Failed');
    const status: Obj = { ...prev, startTime };
    const conditions: Obj[] = [...(prev.conditions ?? [])];
    const addCond = (type: string, reason: string, message: string) => {
      if (!conditions.some((c) => c.type === type)) conditions.push({ type, status: 'True', lastProbeTime: rfc3339(), lastTransitionTime: rfc3339(), reason, message });
    };
    let requeue: number | undefined;
    if (!finished && !spec.suspend) {
      const completions: number | undefined = spec.completions;
      const parallelism: number = spec.parallelism ?? 1;
      const deadline = spec.activeDeadlineSeconds ? Date.parse(startTime) + spec.activeDeadlineSeconds * 1000 : undefined;
      let failure: [string, string] | undefined;
      if (failed > (spec.backoffLimit ?? 6)) failure = ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
      else if (deadline !== undefined && now >= deadline) failure = ['DeadlineExceeded', 'Job was active longer than specified deadline'];
      const complete = completions !== undefined ? succeededTotal >= completions : succeededTotal > 0 && active.length === 0;
      if (failure) {
        await this.deletePods(active, ns);
        addCond('FailureTarget', failure[0], failure[1]);
        addCond('Failed', failure[0], failure[1]);
        void this.ctx.recorder('job-controller').event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, 'Warning', failure[0], failure[1]);
      } else if (complete) {
        await this.deletePods(active, ns);
        addCond('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods');
        addCond('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
        status.completionTime = rfc3339();
        void this.ctx.recorder('job-controller').event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, 'Normal', 'Completed', 'Job completed');
      } else {
        const want = completions !== undefined ? Math.min(parallelism, completions - succeededTotal) : succeededTotal > 0 ? 0 : parallelism;
        if (active.length < want) {
          const wait = failed > 0 ? Math.min(BACKOFF_BASE_MS * 2 ** (failed - 1), BACKOFF_MAX_MS) - (now - lastFailureTime(failedPods)) : 0;
          if (wait > 0) requeue = wait;
          else await this.createPods(job, want - active.length);
        } else if (active.length > want) {
          await this.deletePods(active.slice(0, active.length - want), ns);
        }
        if (deadline !== undefined) requeue = Math.min(requeue ?? Infinity, Math.max(deadline - now, 0) + 10);
      }
    }
    status.active = finished ? 0 : active.length;
    status.succeeded = succeededTotal;
    status.failed = failed;
    status.ready = active.filter(isPodReady).length;
    status.terminating = pods.filter((p) => p.metadata.deletionTimestamp).length;
    if (conditions.length) status.conditions = conditions;
    for (const k of ['active', 'succeeded', 'failed']) if (status[k] === 0) delete status[k];
    if (!jsonEqual(status, prev)) {
      try {
        await this.ctx.client.put(`/apis/batch/v1/namespaces/${ns}/jobs/${job.metadata.name}/status`, { ...job, status });
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.queue.addAfter(key, 100);
      }
    }
    if (requeue !== undefined && Number.isFinite(requeue)) return { requeueAfterMs: requeue };
  }

  private async createPods(job: KubeObject, n: number): Promise<void> {
    const tpl = ((job.spec as Obj).template ?? {}) as Obj;
    const { succeeded } = await slowStartBatch(n, 1, async () => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          generateName: `${job.metadata.name}-`,
          labels: { ...(tpl.metadata?.labels ?? {}) },
          ...(tpl.metadata?.annotations ? { annotations: { ...tpl.metadata.annotations } } : {}),
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name!, uid: job.metadata.uid!, controller: true, blockOwnerDeletion: true }],
        },
        spec: structuredClone(tpl.spec ?? {}),
      };
      const created = await this.ctx.client.post<KubeObject>(`/api/v1/namespaces/${job.metadata.namespace}/pods`, pod);
      void this.ctx.recorder('job-controller').event({ ...job, kind: 'Job', apiVersion: 'batch/v1' }, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
    });
    if (succeeded < n) throw new Error(`created ${succeeded} of ${n} pods`);
  }

  private async deletePods(pods: KubeObject[], ns: string): Promise<void> {
    await Promise.all(
      pods.map((p) =>
        this.ctx.client.delete(`/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).catch((e) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }),
      ),
    );
  }
}
