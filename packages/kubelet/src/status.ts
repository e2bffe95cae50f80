/**
 * The pod status the kubelet reports (kubernetes pkg/kubelet/kubelet_pods.go
 * generateAPIPodStatus, getPhase): container states from the runtime, the
 * phase, and the PodReadyToStartContainers / Initialized / ContainersReady /
 * Ready conditions with upstream's reasons and messages.
 */
import { rfc3339 } from '@kubeling/apimachinery';
import { nanosToDate, type ContainerStatus } from '@kubeling/cri';
import type { ContainerState, ContainerStateTerminated, ContainerStatus as PodContainerStatus, PodCondition, PodSpec } from './kinds.js';

export interface Waiting {
  reason: string;
  message?: string;
}

/** What the sync knows about one container of the spec. */
export interface ContainerView {
  name: string;
  image: string;
  /** Newest instance first. */
  instances: ContainerStatus[];
  waiting?: Waiting;
  ready: boolean;
  started: boolean;
  /** Whether an exited instance will not be restarted. */
  final: boolean;
}

const t = (n: string | number) => {
  const d = nanosToDate(n);
  return d ? rfc3339(d) : undefined;
};

function terminated(c: ContainerStatus, runtime: string): ContainerStateTerminated {
  return {
    exitCode: c.exit_code,
    reason: c.reason || (c.exit_code === 0 ? 'Completed' : 'Error'),
    ...(c.message ? { message: c.message } : {}),
    ...(t(c.started_at) ? { startedAt: t(c.started_at) } : {}),
    ...(t(c.finished_at) ? { finishedAt: t(c.finished_at) } : {}),
    containerID: `${runtime}://${c.id}`,
  };
}

export function containerStatus(v: ContainerView, runtime: string, imageName: (ref: string, spec: string) => string): PodContainerStatus {
  const [cur, prev] = v.instances;
  const out: PodContainerStatus = {
    name: v.name,
    image: imageName('', v.image),
    imageID: '',
    ready: false,
    restartCount: cur ? cur.metadata.attempt : 0,
    started: false,
  };
  if (cur) {
    out.imageID = imageName(cur.image_ref, v.image);
    out.containerID = `${runtime}://${cur.id}`;
  }
  let lastState: ContainerState = {};
  if (cur?.state === 'CONTAINER_RUNNING') {
    out.state = { running: { startedAt: t(cur.started_at) } };
    out.ready = v.ready;
    out.started = v.started;
    if (prev?.state === 'CONTAINER_EXITED') lastState = { terminated: terminated(prev, runtime) };
  } else if (cur?.state === 'CONTAINER_EXITED' && (v.final || !v.waiting)) {
    out.state = { terminated: terminated(cur, runtime) };
    if (prev?.state === 'CONTAINER_EXITED') lastState = { terminated: terminated(prev, runtime) };
  } else {
    out.state = { waiting: { reason: v.waiting?.reason ?? 'ContainerCreating', ...(v.waiting?.message ? { message: v.waiting.message } : {}) } };
    if (cur?.state === 'CONTAINER_EXITED') lastState = { terminated: terminated(cur, runtime) };
  }
  out.lastState = lastState;
  return out;
}

/** getPhase: from the init and app container statuses and the restart policy. */
export function podPhase(spec: PodSpec, init: PodContainerStatus[], app: PodContainerStatus[]): string {
  const policy = spec.restartPolicy ?? 'Always';
  let pendingInit = false;
  for (const s of init) {
    const term = s.state?.terminated;
    if (term && term.exitCode === 0) continue;
    if (term && term.exitCode !== 0 && policy === 'Never') return 'Failed';
    pendingInit = true;
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of app) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    }
  }
  if (pendingInit) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'OnFailure') return 'Running';
    return 'Failed';
  }
  return 'Pending';
}

/** The four kubelet-owned conditions, keeping transition times that did not change. */
export function podConditions(
  old: PodCondition[],
  sandboxReady: boolean,
  init: PodContainerStatus[],
  app: PodContainerStatus[],
  phase: string,
): PodCondition[] {
  const now = rfc3339();
  const prev = new Map(old.map((c) => [c.type, c]));
  const cond = (type: string, ok: boolean, reason?: string, message?: string): PodCondition => {
    const p = prev.get(type);
    const status = ok ? 'True' : 'False';
    return {
      type,
      status,
      lastProbeTime: null,
      lastTransitionTime: p && p.status === status ? p.lastTransitionTime : now,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    };
  };
  const incompleteInit = init.filter((s) => !(s.state?.terminated?.exitCode === 0)).map((s) => s.name);
  const unready = app.filter((s) => !s.ready).map((s) => s.name);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const initialized = incompleteInit.length === 0 || phase === 'Succeeded';
  const containersReady = unready.length === 0 && !done;
  const notReadyReason = done ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMsg = done ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const out = [
    cond('PodReadyToStartContainers', sandboxReady),
    cond(
      'Initialized',
      initialized,
      initialized ? undefined : 'ContainersNotInitialized',
      initialized ? undefined : `containers with incomplete status: [${incompleteInit.join(' ')}]`,
    ),
    cond('Ready', containersReady, containersReady ? undefined : notReadyReason, containersReady ? undefined : notReadyMsg),
    cond('ContainersReady', containersReady, containersReady ? undefined : notReadyReason, containersReady ? undefined : notReadyMsg),
  ];
  const scheduled = prev.get('PodScheduled');
  if (scheduled) out.push(scheduled);
  for (const c of old) if (!['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].includes(c.type)) out.push(c);
  return out;
}
