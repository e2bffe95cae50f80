/**
 * Writing pod status (kubernetes pkg/kubelet/status/status_manager.go): the
 * kubelet's view of each container — the runtime's instances, the probes'
 * results, why it waits — turned into the API status by `status.ts`, and
 * merge-patched onto the pod's status subresource only when it differs from
 * what the pod has and from what this kubelet last wrote. A pod deleted
 * meanwhile (404) is not an error.
 */
import { isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import { qosClass } from '@kubeling/component-helpers';
import { parseImageRef, type ContainerStatus } from '@kubeling/cri';
import { ephemeralContainers } from './ephemeral.js';
import type { Container, ContainerStatus as PodContainerStatus, Pod, PodStatus } from './kinds.js';
import type { PodDeps } from './pod-state.js';
import { containerStatus, podConditions, podPhase, type ContainerView } from './status.js';
import { terminationMessage } from './termination-message.js';

export class StatusManager {
  /** The runtime's name in container ids (`<runtime>://<id>`). */
  runtimeName = 'kubeling';
  /** Per pod, the status as last written (the pod's status with the patch applied), compared as JSON. */
  private readonly lastStatus = new Map<string, object>();
  /** Termination messages of exited instances, by `<pod uid>/<container id>`. */
  private readonly messages = new Map<string, string>();

  constructor(private readonly d: PodDeps) {}

  /** Computes the pod's status from the runtime's containers and patches it; returns what it computed. */
  async write(
    pod: Pod,
    podIP: string,
    containers: Map<string, ContainerStatus[]>,
    /** A phase the kubelet decided on (a pod past its deadline), with its reason and message. */
    decided?: { phase: string; reason: string; message: string },
  ): Promise<PodStatus> {
    const spec = pod.spec;
    const initViews = this.views(pod, spec.initContainers ?? [], containers, true);
    const appViews = this.views(pod, spec.containers ?? [], containers, false);
    // In a pod with init containers, a container not created yet (init or app) waits with PodInitializing (convertToAPIContainerStatuses).
    if (initViews.length) for (const v of [...initViews, ...appViews]) if (!v.instances.length) v.waiting ??= { reason: 'PodInitializing' };
    const init = initViews.map((v) => containerStatus(v, this.runtimeName, imageName));
    // An init container that completed is ready.
    for (const s of init) if (s.state?.terminated?.exitCode === 0) s.ready = true;
    const app = appViews.map((v) => containerStatus(v, this.runtimeName, imageName));
    const ephemeral = this.ephemeralStatuses(pod, containers);
    const phase = decided?.phase ?? podPhase(spec, init, app);
    const old = pod.status ?? {};
    const status: PodStatus = {
      phase,
      ...(decided ? { reason: decided.reason, message: decided.message } : {}),
      conditions: podConditions(old.conditions ?? [], !!podIP, init, app, phase),
      hostIP: this.d.o.nodeIP,
      hostIPs: [{ ip: this.d.o.nodeIP }],
      ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
      startTime: old.startTime ?? rfc3339(),
      ...(init.length ? { initContainerStatuses: init } : {}),
      containerStatuses: app,
      ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
      qosClass: qosClass(spec),
    };
    await this.patch(pod, status);
    return status;
  }

  /** Merge-patches `status` onto the pod's status unless nothing would change. */
  async patch(pod: Pod, status: PodStatus): Promise<void> {
    const uid = pod.metadata.uid!;
    const cur = pod.status ?? {};
    const merged = { ...cur, ...status };
    if (jsonEqual(this.lastStatus.get(uid), merged) || jsonEqual(cur, merged)) return;
    try {
      const res = await this.d.o.client.patch<Pod>(
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
        { metadata: { uid }, status },
        'application/merge-patch+json',
      );
      this.lastStatus.set(uid, merged);
      const pods = this.d.state.pods;
      if (pods.get(uid)?.metadata.resourceVersion === pod.metadata.resourceVersion) pods.set(uid, res);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  forget(uid: string): void {
    this.lastStatus.delete(uid);
    for (const k of this.messages.keys()) if (k.startsWith(`${uid}/`)) this.messages.delete(k);
  }

  /** An exited container's termination message, read once per instance. */
  private message(uid: string, c: Container, exited: ContainerStatus): string {
    const key = `${uid}/${exited.id}`;
    let m = this.messages.get(key);
    if (m === undefined) {
      m = terminationMessage(this.d.o.rootDir, uid, c, exited);
      this.messages.set(key, m);
    }
    return m;
  }

  /**
   * Ephemeral containers' statuses: never ready, never restarted (an exited
   * one stays terminated), no `started` (no probe runs for them), and those not
   * created yet wait — PodInitializing when the pod has init containers, as
   * upstream's convertToAPIContainerStatuses says for non-init containers.
   */
  private ephemeralStatuses(pod: Pod, containers: Map<string, ContainerStatus[]>): PodContainerStatus[] {
    const uid = pod.metadata.uid!;
    const hasInit = (pod.spec.initContainers ?? []).length > 0;
    return ephemeralContainers(pod).map((c) => {
      const instances = containers.get(c.name) ?? [];
      const running = instances[0]?.state === 'CONTAINER_RUNNING';
      const waiting = this.d.state.waiting.get(`${uid}/${c.name}`) ?? (hasInit && !instances.length ? { reason: 'PodInitializing' } : undefined);
      const { started: _started, ...st } = containerStatus(
        { name: c.name, image: c.image ?? '', instances, ...(waiting && !running ? { waiting } : {}), ready: false, started: false, final: true },
        this.runtimeName,
        imageName,
      );
      return st;
    });
  }

  private views(pod: Pod, list: Container[], containers: Map<string, ContainerStatus[]>, init: boolean): ContainerView[] {
    const uid = pod.metadata.uid!;
    const { probes, state } = this.d;
    const policy = pod.spec.restartPolicy ?? 'Always';
    return list.map((c) => {
      // Exited instances carry their termination message.
      const instances = (containers.get(c.name) ?? []).map((i) =>
        i.state === 'CONTAINER_EXITED' && !i.message ? { ...i, message: this.message(uid, c, i) } : i,
      );
      const cur = instances[0];
      const running = cur?.state === 'CONTAINER_RUNNING';
      const started = running && probes.result(uid, cur.id, 'startup', c);
      const ready = running && started && probes.result(uid, cur.id, 'readiness', c);
      const exitedFinal =
        cur?.state === 'CONTAINER_EXITED' && (policy === 'Never' || (policy === 'OnFailure' && cur.exit_code === 0) || (init && cur.exit_code === 0));
      const waiting = state.waiting.get(`${uid}/${c.name}`);
      return {
        name: c.name,
        image: c.image ?? '',
        instances,
        ...(waiting && !running ? { waiting } : {}),
        ready,
        started,
        final: exitedFinal || state.finished.has(uid),
      };
    });
  }
}

/** The image a status reports: the spec's reference normalised, or the repository at the runtime's digest. */
function imageName(ref: string, spec: string): string {
  const r = parseImageRef(spec);
  if (!ref) return r?.full ?? spec;
  return r ? `${r.repository}@${ref}` : ref;
}
