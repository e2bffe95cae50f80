/**
 * Stopping pods (kubernetes pkg/kubelet killPod, kuberuntime killContainer):
 * a deleted pod's running containers run their preStop hooks and are stopped
 * in parallel within the grace period (the deletion's, else the spec's, else
 * 30 s: SIGTERM, then SIGKILL), its sandboxes are stopped, its final status is
 * written, the sandboxes are removed, and the pod is deleted for good (grace
 * 0, precondition on its uid) once its volumes are torn down. A finished pod
 * keeps nothing running and no volume mounted; a pod the apiserver no longer
 * has loses its sandboxes, its volumes, its directory and all the kubelet kept
 * for it.
 * A container a liveness or startup probe gave up on is stopped to restart.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound } from '@kubeling/apimachinery';
import type { Pod } from './kinds.js';
import { unmountPodDir } from './volumes.js';
import { runHook } from './lifecycle.js';
import { containersOf, sandboxesOf, type PodDeps } from './pod-state.js';
import type { StatusManager } from './status-manager.js';

export class PodTerminator {
  private readonly terminating = new Set<string>();

  constructor(
    private readonly d: PodDeps,
    private readonly status: StatusManager,
  ) {}

  /** Runs once at a time per pod; a call while the pod is terminating returns at once. */
  async terminate(pod: Pod): Promise<void> {
    const { o, state, probes } = this.d;
    const uid = pod.metadata.uid!;
    if (this.terminating.has(uid)) return;
    this.terminating.add(uid);
    try {
      const spec = pod.spec;
      const grace = pod.metadata.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
      const deadline = Date.now() + grace * 1000;
      const sandboxes = await sandboxesOf(o.runtime, uid);
      const podIP = sandboxes[0] ? ((await o.runtime.podSandboxStatus(sandboxes[0].id).catch(() => undefined))?.network?.ip ?? '') : '';
      const containers = await containersOf(
        o.runtime,
        sandboxes.map((s) => s.id),
      );
      const all = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
      await Promise.all(
        [...containers.values()]
          .map((l) => l[0]!)
          .filter((c) => c.state === 'CONTAINER_RUNNING')
          .map(async (c) => {
            const specC = all.find((x) => x.name === c.metadata.name);
            const preStop = specC?.lifecycle?.preStop;
            if (specC && preStop) {
              const err = await Promise.race([
                runHook(o.runtime, preStop, c.id, podIP, specC),
                new Promise<string>((r) => setTimeout(() => r('timed out'), Math.max(0, deadline - Date.now()))),
              ]);
              if (err) void o.recorder.event(pod, 'Warning', 'FailedPreStopHook', `PreStopHook failed: ${err}`);
            }
            void o.recorder.event(pod, 'Normal', 'Killing', `Stopping container ${c.metadata.name}`);
            // Upstream gives at least 2 s after a hook that used up the period.
            const left = Math.max(Math.ceil((deadline - Date.now()) / 1000), grace > 0 ? 2 : 0);
            await o.runtime.stopContainer(c.id, left).catch(() => undefined);
          }),
      );
      for (const sb of sandboxes) await o.runtime.stopPodSandbox(sb.id).catch(() => undefined);
      probes.retain(uid);
      const final = await containersOf(
        o.runtime,
        sandboxes.map((s) => s.id),
      );
      state.finished.add(uid);
      if (state.pods.has(uid)) await this.status.write(pod, '', final).catch(() => undefined);
      for (const sb of sandboxes) await o.runtime.removePodSandbox(sb.id).catch(() => undefined);
      // Its volumes are unmounted before the pod goes for good; a volume that cannot be yet keeps it (the worker tries again).
      await o.volumes.tearDownPod(uid);
      try {
        await o.client.delete(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
      } catch (e) {
        if (!isNotFound(e) && !(e as { status?: { code?: number } }).status?.code) throw e;
      }
    } finally {
      this.terminating.delete(uid);
    }
  }

  /** A finished pod keeps nothing running, nor its volumes mounted. */
  async stopFinished(pod: Pod): Promise<void> {
    for (const sb of await sandboxesOf(this.d.o.runtime, pod.metadata.uid!)) {
      if (sb.state === 'SANDBOX_READY') await this.d.o.runtime.stopPodSandbox(sb.id).catch(() => undefined);
    }
    await this.d.o.volumes.tearDownPod(pod.metadata.uid!);
  }

  /**
   * Whatever still runs for a pod the apiserver no longer has is stopped and
   * removed; its volumes are torn down and its directory removed
   * (cleanupOrphanedPodDirs).
   */
  async cleanupOrphan(uid: string): Promise<void> {
    for (const sb of await sandboxesOf(this.d.o.runtime, uid)) await this.d.o.runtime.removePodSandbox(sb.id).catch(() => undefined);
    this.d.probes.retain(uid);
    this.d.state.forget(uid);
    this.status.forget(uid);
    await this.d.o.volumes.tearDownPod(uid);
    unmountPodDir(join(this.d.o.rootDir, 'pods', uid));
    rmSync(join(this.d.o.rootDir, 'pods', uid), { recursive: true, force: true });
  }

  /** A liveness or startup probe gave up: the container is stopped, and the sync starts it again. */
  async killUnhealthy(uid: string, id: string, container: string, kind: string): Promise<void> {
    const pod = this.d.state.pods.get(uid);
    if (!pod) return;
    void this.d.o.recorder.event(pod, 'Normal', 'Killing', `Container ${container} failed ${kind} probe, will be restarted`);
    await this.d.o.runtime.stopContainer(id, pod.spec.terminationGracePeriodSeconds ?? 30).catch(() => undefined);
    this.d.trigger(uid);
  }
}
