/**
 * The kubelet's pods (kubernetes pkg/kubelet pod_workers.go): the pods the
 * informer gives, and a worker per pod that syncs it whenever something about
 * it changes — the informer, the runtime relist, a probe, a back-off or a
 * volume refresh coming due. Syncs of one pod never overlap; a trigger during
 * a sync runs it once more after. A failed sync is logged and retried after a
 * second. Each sync does one of four things: a pod the apiserver no longer has
 * is cleaned up, a deleted pod is terminated (`pod-termination.ts`), a
 * finished pod is kept stopped, and any other pod is synced towards its spec
 * (`pod-sync.ts`), which writes its status (`status-manager.ts`).
 */
import type { KubeObject } from '@kubeling/api';
import { CriError } from '@kubeling/cri';
import { asPod, type Pod } from './kinds.js';
import { LABEL_POD_UID, PodState, terminalPhase, type PodDeps, type PodManagerOptions } from './pod-state.js';
import { PodSyncer } from './pod-sync.js';
import { PodTerminator } from './pod-termination.js';
import { ProbeManager } from './probes.js';
import { StatusManager } from './status-manager.js';

export { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID, type PodManagerOptions } from './pod-state.js';

interface Worker {
  running: boolean;
  again: boolean;
  timer?: NodeJS.Timeout | undefined;
  due?: number | undefined;
}

export class PodManager {
  readonly probes: ProbeManager;
  private readonly state: PodState;
  private readonly workers = new Map<string, Worker>();
  private readonly status: StatusManager;
  private readonly termination: PodTerminator;
  private readonly syncer: PodSyncer;
  private closed = false;

  constructor(private readonly o: PodManagerOptions) {
    this.state = new PodState(o.backoffInitialMs, o.backoffMaxMs);
    this.probes = new ProbeManager(o.runtime, {
      changed: (uid) => this.trigger(uid),
      failed: (uid, _container, kind, output) => {
        const pod = this.state.pods.get(uid);
        if (pod) void o.recorder.event(pod, 'Warning', 'Unhealthy', `${kind[0]!.toUpperCase()}${kind.slice(1)} probe failed: ${output}`);
      },
      kill: (uid, id, container, kind) => void this.termination.killUnhealthy(uid, id, container, kind),
    });
    const deps: PodDeps = { o, state: this.state, probes: this.probes, trigger: (uid, delayMs) => this.trigger(uid, delayMs) };
    this.status = new StatusManager(deps);
    this.termination = new PodTerminator(deps, this.status);
    this.syncer = new PodSyncer(deps, this.status, this.termination);
  }

  async init(): Promise<void> {
    this.status.runtimeName = (await this.o.runtime.version()).runtime_name || 'kubeling';
  }

  close(): void {
    this.closed = true;
    this.probes.stopAll();
    for (const w of this.workers.values()) if (w.timer) clearTimeout(w.timer);
  }

  // ---- bookkeeping from the informer ------------------------------------------------

  upsert(obj: KubeObject): void {
    const pod = asPod(obj);
    const uid = pod.metadata.uid!;
    this.state.pods.set(uid, pod);
    this.trigger(uid);
  }

  remove(pod: KubeObject): void {
    // The pod is gone from the apiserver: whatever still runs is stopped by housekeeping.
    this.state.pods.delete(pod.metadata.uid!);
    this.trigger(pod.metadata.uid!);
  }

  podByName(namespace: string, name: string): Pod | undefined {
    for (const p of this.state.pods.values()) if (p.metadata.namespace === namespace && p.metadata.name === name) return p;
    return undefined;
  }

  get podCount(): number {
    return this.state.pods.size;
  }

  allPods(): Pod[] {
    return [...this.state.pods.values()];
  }

  /** Runs (or re-runs) the pod's worker; syncs of one pod never overlap. */
  trigger(uid: string, delayMs = 0): void {
    if (this.closed) return;
    let w = this.workers.get(uid);
    if (!w) this.workers.set(uid, (w = { running: false, again: false }));
    if (delayMs > 0) {
      const due = Date.now() + delayMs;
      if (w.timer && w.due !== undefined && w.due <= due) return;
      if (w.timer) clearTimeout(w.timer);
      w.due = due;
      w.timer = setTimeout(() => {
        const cur = this.workers.get(uid);
        if (cur) {
          cur.timer = undefined;
          cur.due = undefined;
        }
        this.trigger(uid);
      }, delayMs);
      w.timer.unref();
      return;
    }
    if (w.running) {
      w.again = true;
      return;
    }
    w.running = true;
    void (async () => {
      do {
        w.again = false;
        try {
          await this.sync(uid);
        } catch (e) {
          this.o.log.warn({ pod: uid, err: (e as Error).message }, 'pod sync failed');
          if (!this.closed) this.trigger(uid, 1000);
        }
      } while (w.again && !this.closed);
      w.running = false;
      if (!this.state.pods.has(uid) && !w.timer) this.workers.delete(uid);
    })();
  }

  private async sync(uid: string): Promise<void> {
    const pod = this.state.pods.get(uid);
    if (!pod) return this.termination.cleanupOrphan(uid);
    if (pod.metadata.deletionTimestamp) return this.termination.terminate(pod);
    if (this.state.finished.has(uid) || terminalPhase(pod.status?.phase)) return this.termination.stopFinished(pod);
    return this.syncer.sync(pod);
  }

  /**
   * Sandboxes and pod directories of pods this kubelet no longer knows (after
   * a restart, or deleted meanwhile), and staged volumes no pod uses.
   */
  async housekeeping(): Promise<void> {
    const orphan = (uid: string) => !this.state.pods.has(uid) && !this.workers.get(uid)?.running;
    for (const sb of await this.o.runtime.listPodSandbox()) {
      const uid = sb.labels?.[LABEL_POD_UID];
      if (uid && orphan(uid)) this.trigger(uid);
    }
    await this.o.volumes.cleanupOrphans((uid) => !orphan(uid));
  }
}

export { CriError };
