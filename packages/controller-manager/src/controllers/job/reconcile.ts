/**
 * What a Job needs, decided from what the listers hold (upstream's syncJob,
 * NonIndexed completion mode): pods to create or delete for `parallelism` and
 * `completions`, the back-off after failures, the Failed condition past
 * `backoffLimit` or `activeDeadlineSeconds`, the Complete condition once
 * `completions` pods succeeded, and the status. No I/O here.
 */
import type { batchv1 } from '@kubeling/api';
import { jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import { isPodReady } from '@kubeling/component-helpers';
import { containerStatuses, podPhase, type Job, type Pod } from '../kinds.js';

export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_MAX_MS = 6 * 60_000;

const condTrue = (j: Job, type: string) => (j.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** When the last of these pods failed: their containers' finish times, or the Ready condition's last transition. */
function lastFailureTime(pods: readonly Pod[]): number {
  let t = 0;
  for (const p of pods) {
    for (const c of containerStatuses(p)) {
      const f = Date.parse(c.state?.terminated?.finishedAt ?? '');
      if (Number.isFinite(f)) t = Math.max(t, f);
    }
    const cond = (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
    const f = Date.parse(cond?.lastTransitionTime ?? '');
    if (Number.isFinite(f)) t = Math.max(t, f);
  }
  return t;
}

/** The pod a Job creates from its template. */
export function jobPod(job: Job): Pod {
  const tpl = job.spec?.template ?? {};
  return {
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
}

export interface JobInput {
  job: Job;
  /** The pods the Job controls. */
  pods: readonly Pod[];
  now: number;
}

export interface JobPlan {
  /** Pods to delete: all active ones when the Job ends, the surplus over parallelism otherwise. */
  delete: Pod[];
  /** How many pods to create from `template`. */
  create: number;
  template: Pod;
  /** The event recording how the Job ended, when it ends now. */
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
  /** The status to write; undefined when the current one stands. */
  status?: batchv1.JobStatus;
  /** Back-off to wait out before the next pod, or the active deadline to check. */
  requeueAfterMs?: number;
}

export function reconcileJob(input: JobInput): JobPlan {
  const { job, pods, now } = input;
  const spec = job.spec;
  const active = pods.filter((p) => !p.metadata.deletionTimestamp && podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed');
  const succeeded = pods.filter((p) => podPhase(p) === 'Succeeded').length;
  const failedPods = pods.filter((p) => podPhase(p) === 'Failed');
  const prev = job.status ?? {};
  // Counts never go down: pods of a finished job may be deleted later.
  const succeededTotal = Math.max(succeeded, prev.succeeded ?? 0);
  const failed = Math.max(failedPods.length, prev.failed ?? 0);
  const nowIso = rfc3339(new Date(now));
  const startTime = prev.startTime ?? nowIso;
  const finished = condTrue(job, 'Complete') || condTrue(job, 'Failed');
  const status: batchv1.JobStatus = { ...prev, startTime };
  const conditions: batchv1.JobCondition[] = [...(prev.conditions ?? [])];
  const addCond = (type: string, reason: string, message: string) => {
    if (!conditions.some((c) => c.type === type)) conditions.push({ type, status: 'True', lastProbeTime: nowIso, lastTransitionTime: nowIso, reason, message });
  };
  const plan: JobPlan = { delete: [], create: 0, template: jobPod(job) };
  let requeue: number | undefined;
  if (!finished && !spec?.suspend) {
    const completions = spec?.completions;
    const parallelism = spec?.parallelism ?? 1;
    const deadline = spec?.activeDeadlineSeconds ? Date.parse(startTime) + spec.activeDeadlineSeconds * 1000 : undefined;
    let failure: [string, string] | undefined;
    if (failed > (spec?.backoffLimit ?? 6)) failure = ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
    else if (deadline !== undefined && now >= deadline) failure = ['DeadlineExceeded', 'Job was active longer than specified deadline'];
    const complete = completions !== undefined ? succeededTotal >= completions : succeededTotal > 0 && active.length === 0;
    if (failure) {
      plan.delete = active;
      addCond('FailureTarget', failure[0], failure[1]);
      addCond('Failed', failure[0], failure[1]);
      plan.event = { type: 'Warning', reason: failure[0], message: failure[1] };
    } else if (complete) {
      plan.delete = active;
      addCond('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods');
      addCond('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods');
      status.completionTime = nowIso;
      plan.event = { type: 'Normal', reason: 'Completed', message: 'Job completed' };
    } else {
      const want = completions !== undefined ? Math.min(parallelism, completions - succeededTotal) : succeededTotal > 0 ? 0 : parallelism;
      if (active.length < want) {
        const wait = failed > 0 ? Math.min(BACKOFF_BASE_MS * 2 ** (failed - 1), BACKOFF_MAX_MS) - (now - lastFailureTime(failedPods)) : 0;
        if (wait > 0) requeue = wait;
        else plan.create = want - active.length;
      } else if (active.length > want) {
        plan.delete = active.slice(0, active.length - want);
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
  for (const k of ['active', 'succeeded', 'failed'] as const) if (status[k] === 0) delete status[k];
  if (!jsonEqual(status, prev)) plan.status = status;
  if (requeue !== undefined && Number.isFinite(requeue)) plan.requeueAfterMs = requeue;
  return plan;
}
