/**
 * What the scheduler writes when an attempt fails (upstream schedule_one.go
 * handleSchedulingFailure) or preempts (framework/preemption): the
 * FailedScheduling event, the PodScheduled=False condition — reason
 * Unschedulable when plugins rejected the pod, SchedulerError when something
 * failed — with the nominated node, and the eviction of preemption victims.
 */
import { isNotFound, rfc3339 } from '@kubeling/apimachinery';
import type { EventRecorder, RestClient } from '@kubeling/client';
import type { Logger } from 'pino';
import { podKey, type Pod } from './framework/types.js';
import { disruptionTargetPatch, type Candidate } from './preemption.js';

export type FailureReason = 'Unschedulable' | 'SchedulerError';

export interface FailureDeps {
  client: RestClient;
  recorder: EventRecorder;
  log: Logger;
}

export async function recordFailure(
  d: FailureDeps,
  pod: Pod,
  message: string,
  nominatedNode: string | undefined,
  reason: FailureReason = 'Unschedulable',
): Promise<void> {
  await d.recorder.event(pod, 'Warning', 'FailedScheduling', message);
  const status = pod.status ?? {};
  const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
  const old = (status.conditions ?? []).find((c) => c.type === 'PodScheduled');
  const changed = old?.status !== 'False' || old.reason !== reason || old.message !== message;
  const cond = changed
    ? {
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: old?.status === 'False' ? old.lastTransitionTime : rfc3339(),
        reason,
        message,
      }
    : old;
  // A merge patch of the status: `lastProbeTime: null` clears the field.
  const patch: { conditions?: unknown[]; nominatedNodeName?: string } = {};
  if (changed) patch.conditions = [...conditions, cond];
  if (nominatedNode && status.nominatedNodeName !== nominatedNode) patch.nominatedNodeName = nominatedNode;
  if (!Object.keys(patch).length) return;
  try {
    await d.client.patch(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, { status: patch }, 'application/merge-patch+json');
  } catch (e) {
    if (!isNotFound(e)) d.log.warn({ pod: podKey(pod), err: (e as Error).message }, 'updating pod condition failed');
  }
}

/** Deletes the victims (after marking them DisruptionTarget) so the preemptor can take their place. */
export async function evict(d: FailureDeps, preemptor: Pod, c: Candidate, schedulerName: string): Promise<void> {
  await Promise.all(
    c.victims.map(async (v) => {
      const { namespace, name } = v.pod.metadata;
      try {
        const patch = disruptionTargetPatch(v.pod, schedulerName);
        await d.client.patch(`/api/v1/namespaces/${namespace}/pods/${name}/status`, patch, 'application/merge-patch+json');
        await d.client.delete(`/api/v1/namespaces/${namespace}/pods/${name}`);
        void d.recorder.event(v.pod, 'Normal', 'Preempted', `Preempted by pod ${preemptor.metadata.uid} on node ${c.node}`);
      } catch (e) {
        if (!isNotFound(e)) d.log.warn({ pod: v.key, err: (e as Error).message }, 'preempting a victim failed');
      }
    }),
  );
}
