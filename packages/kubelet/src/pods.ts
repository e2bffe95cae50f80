/**
 * Pod sync (kubernetes pkg/kubelet/kuberuntime SyncPod, as the seeds walk it):
 * the sandbox first (its IP is the pod IP), volumes, then init containers one
 * by one — each must succeed — then the app containers: pull the image as the
 * pull policy says, create, start, run the postStart hook. Exited containers
 * restart as the restart policy says, after an exponential back-off (10 s
 * doubling to 5 min, CrashLoopBackOff); failed pulls back off the same way
 * (ErrImagePull, then ImagePullBackOff). Deletion runs preStop hooks, stops
 * containers with the grace period (SIGTERM, then SIGKILL), removes the
 * sandbox, and deletes the pod for good.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import type { EventRecorder, RestClient } from '@kubeling/client';
import { podRequests, requiredNodeAffinityMatches } from '@kubeling/component-helpers';
import { CriError, parseImageRef, type ContainerStatus, type CriRuntime, type PodSandboxConfig, type PortMapping } from '@kubeling/cri';
import type { Logger } from 'pino';
import { qosClass } from '@kubeling/component-helpers';
import { ConfigError, containerEnv, expand, pullPolicy, type EnvSources, type Obj } from './podutil.js';
import { ProbeManager } from './probes.js';
import { containerStatus, podConditions, podPhase, type ContainerView, type Waiting } from './status.js';
import { containerMounts, prepareVolumes, volumeRefreshMs } from './volumes.js';

export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';

const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;

export interface PodManagerOptions {
  nodeName: string;
  nodeIP: string;
  rootDir: string;
  client: RestClient;
  runtime: CriRuntime;
  recorder: EventRecorder;
  log: Logger;
  /** The node's allocatable (cpu in millicores) for admission and resourceFieldRef. */
  allocatable: () => Record<string, number>;
  nodeLabels: () => Record<string, string>;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

interface Backoff {
  delay: number;
  until: number;
}

const terminalPhase = (p: string | undefined) => p === 'Succeeded' || p === 'Failed';

export class PodManager {
  readonly probes: ProbeManager;
  private readonly pods = new Map<string, KubeObject>();
  private readonly workers = new Map<string, { running: boolean; again: boolean; timer?: NodeJS.Timeout | undefined; due?: number | undefined }>();
  private readonly backoffs = new Map<string, Backoff>();
  private readonly waiting = new Map<string, Waiting>();
  private readonly lastStatus = new Map<string, Obj>();
  private readonly admitted = new Set<string>();
  private readonly terminating = new Set<string>();
  private readonly finished = new Set<string>();
  private readonly volumesReady = new Map<string, string>();
  /** When each pod's volumes are due to be written again (tokens, configMaps, secrets). */
  private readonly volumesDue = new Map<string, number>();
  private runtimeName = 'kubeling';
  private closed = false;

  constructor(private readonly o: PodManagerOptions) {
    this.probes = new ProbeManager(o.runtime, {
      changed: (uid) => this.trigger(uid),
      failed: (uid, container, kind, output) => {
        const pod = this.pods.get(uid);
        if (pod) void o.recorder.event(pod, 'Warning', 'Unhealthy', `${kind[0]!.toUpperCase()}${kind.slice(1)} probe failed: ${output}`);
      },
      kill: (uid, id, container, kind) => void this.killUnhealthy(uid, id, container, kind),
    });
  }

  async init(): Promise<void> {
    this.runtimeName = (await this.o.runtime.version()).runtime_name || 'kubeling';
  }

  close(): void {
    this.closed = true;
    this.probes.stopAll();
    for (const w of this.workers.values()) if (w.timer) clearTimeout(w.timer);
  }

  // ---- bookkeeping from the informer ------------------------------------------------

  upsert(pod: KubeObject): void {
    const uid = pod.metadata.uid!;
    this.pods.set(uid, pod);
    this.trigger(uid);
  }

  remove(pod: KubeObject): void {
    // The pod is gone from the apiserver: whatever still runs is stopped by housekeeping.
    this.pods.delete(pod.metadata.uid!);
    this.trigger(pod.metadata.uid!);
  }

  podByName(namespace: string, name: string): KubeObject | undefined {
    for (const p of this.pods.values()) if (p.metadata.namespace === namespace && p.metadata.name === name) return p;
    return undefined;
  }

  get podCount(): number {
    return this.pods.size;
  }

  allPods(): KubeObject[] {
    return [...this.pods.values()];
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
      if (!this.pods.has(uid) && !w.timer) this.workers.delete(uid);
    })();
  }

  // ---- runtime views ------------------------------------------------------------------

  private async sandboxesOf(uid: string) {
    const list = await this.o.runtime.listPodSandbox({ label_selector: { [LABEL_POD_UID]: uid } });
    return list.sort((a, b) => Number(BigInt(b.created_at) - BigInt(a.created_at)));
  }

  private async containersOf(sandboxIds: string[]): Promise<Map<string, ContainerStatus[]>> {
    const byName = new Map<string, ContainerStatus[]>();
    for (const sb of sandboxIds) {
      for (const c of await this.o.runtime.listContainers({ pod_sandbox_id: sb })) {
        const st = await this.o.runtime.containerStatus(c.id).catch(() => undefined);
        if (!st) continue;
        const list = byName.get(st.metadata.name) ?? [];
        list.push(st);
        byName.set(st.metadata.name, list);
      }
    }
    for (const list of byName.values()) list.sort((a, b) => b.metadata.attempt - a.metadata.attempt);
    return byName;
  }

  // ---- the sync ---------------------------------------------------------------------

  private async sync(uid: string): Promise<void> {
    const pod = this.pods.get(uid);
    if (!pod) return this.cleanupOrphan(uid);
    if (pod.metadata.deletionTimestamp) return this.terminate(pod);
    if (this.finished.has(uid) || terminalPhase((pod.status as Obj | undefined)?.phase)) return this.stopFinished(pod);
    if (!this.admitted.has(uid)) {
      const why = this.admit(pod);
      if (why) return this.reject(pod, why.reason, why.message);
      this.admitted.add(uid);
    }
    const spec = pod.spec as Obj;
    const sandboxes = await this.sandboxesOf(uid);
    let sandbox = sandboxes.find((s) => s.state === 'SANDBOX_READY');
    const sbConfig = this.sandboxConfig(pod, sandboxes.length);
    if (!sandbox) {
      const hadContainers = sandboxes.length > 0;
      if (hadContainers) {
        for (const s of sandboxes) await this.o.runtime.stopPodSandbox(s.id).catch(() => undefined);
        void this.o.recorder.event(pod, 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      }
      mkdirSync(sbConfig.log_directory!, { recursive: true });
      const id = await this.o.runtime.runPodSandbox(sbConfig);
      sandbox = (await this.sandboxesOf(uid)).find((s) => s.id === id)!;
    }
    const sbStatus = await this.o.runtime.podSandboxStatus(sandbox.id);
    const podIP = sbStatus.network?.ip ?? '';
    const podDir = join(this.o.rootDir, 'pods', uid);
    const sources = this.envSources();
    if (this.volumesReady.get(uid) !== sandbox.id || Date.now() >= (this.volumesDue.get(uid) ?? Infinity)) {
      try {
        await prepareVolumes(pod, podDir, sources, this.o.nodeIP, podIP);
        this.volumesReady.set(uid, sandbox.id);
        const refresh = volumeRefreshMs(pod);
        if (refresh !== undefined) {
          this.volumesDue.set(uid, Date.now() + refresh);
          this.trigger(uid, refresh);
        }
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        void this.o.recorder.event(pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${e.message}`);
        await this.writeStatus(pod, sandbox.id, podIP, await this.containersOf([sandbox.id]));
        this.trigger(uid, 2000);
        return;
      }
    }
    const volumes = await prepareVolumesMap(pod, podDir);
    const containers = await this.containersOf([sandbox.id]);
    const policy = spec.restartPolicy ?? 'Always';

    // Init containers, in order; each must succeed before the next.
    let initDone = true;
    for (const ic of (spec.initContainers ?? []) as Obj[]) {
      const insts = containers.get(ic.name) ?? [];
      const cur = insts[0];
      if (cur?.state === 'CONTAINER_EXITED' && cur.exit_code === 0) continue;
      initDone = false;
      if (cur?.state === 'CONTAINER_RUNNING' || cur?.state === 'CONTAINER_CREATED') break;
      if (cur?.state === 'CONTAINER_EXITED') {
        if (policy === 'Never') break; // the pod has failed
        if (this.inBackoff(pod, ic.name, 'crash')) break;
      }
      await this.startContainer(pod, ic, cur ? cur.metadata.attempt + 1 : 0, sandbox.id, sbConfig, podIP, volumes, true);
      break;
    }
    if (initDone) {
      for (const c of spec.containers as Obj[]) {
        const insts = containers.get(c.name) ?? [];
        const cur = insts[0];
        if (cur?.state === 'CONTAINER_RUNNING') {
          this.waiting.delete(`${uid}/${c.name}`);
          this.probes.add(uid, podIP, c, cur.id);
          continue;
        }
        if (cur?.state === 'CONTAINER_CREATED') continue;
        if (cur?.state === 'CONTAINER_EXITED') {
          const restart = policy === 'Always' || (policy === 'OnFailure' && cur.exit_code !== 0);
          if (!restart) continue;
          if (this.inBackoff(pod, c.name, 'crash', cur)) continue;
        }
        await this.startContainer(pod, c, cur ? cur.metadata.attempt + 1 : 0, sandbox.id, sbConfig, podIP, volumes, false);
      }
    }
    const after = await this.containersOf([sandbox.id]);
    this.probes.retain(uid, new Set([...after.values()].flatMap((l) => l.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id))));
    const status = await this.writeStatus(pod, sandbox.id, podIP, after);
    if (terminalPhase(status.phase)) {
      this.finished.add(uid);
      await this.stopFinished(pod);
    }
  }

  private envSources(): EnvSources {
    const get = async (path: string) => {
      try {
        return await this.o.client.get(path);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    };
    return {
      configMap: (ns, name) => get(`/api/v1/namespaces/${ns}/configmaps/${name}`),
      secret: (ns, name) => get(`/api/v1/namespaces/${ns}/secrets/${name}`),
      token: async (pod, sa, audience, expirationSeconds) => {
        try {
          const res = await this.o.client.post<{ status: { token: string } }>(`/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`, {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: { ...(audience ? { audiences: [audience] } : {}), expirationSeconds, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid } },
          });
          return res.status.token;
        } catch (e) {
          throw new ConfigError(`failed to fetch token: ${(e as Error).message}`);
        }
      },
    };
  }

  private sandboxConfig(pod: KubeObject, attempt: number): PodSandboxConfig {
    const spec = pod.spec as Obj;
    const { name, namespace, uid } = pod.metadata as { name: string; namespace: string; uid: string };
    const ports = ((spec.containers ?? []) as Obj[]).flatMap((c) => ((c.ports ?? []) as Obj[]).map((p) => ({ protocol: p.protocol ?? 'TCP', container_port: p.containerPort, host_port: p.hostPort ?? 0, host_ip: p.hostIP ?? '' })));
    return {
      metadata: { name, uid, namespace, attempt },
      hostname: spec.hostname ?? name,
      log_directory: join(this.o.rootDir, 'logs', 'pods', `${namespace}_${name}_${uid}`),
      port_mappings: ports as PortMapping[],
      labels: { [LABEL_POD_UID]: uid, [LABEL_POD_NAME]: name, [LABEL_POD_NAMESPACE]: namespace },
      annotations: {},
    };
  }

  private admit(pod: KubeObject): { reason: string; message: string } | undefined {
    const spec = pod.spec as Obj;
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: this.o.nodeName, labels: this.o.nodeLabels() } } as KubeObject;
    if (!requiredNodeAffinityMatches(spec, node)) return { reason: 'NodeAffinity', message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
    const alloc = this.o.allocatable();
    const used: Record<string, number> = {};
    let count = 0;
    for (const [uid, p] of this.pods) {
      if (uid === pod.metadata.uid || !this.admitted.has(uid) || this.finished.has(uid)) continue;
      count++;
      for (const [k, v] of Object.entries(podRequests(p.spec as Obj))) used[k] = (used[k] ?? 0) + v;
    }
    if (count + 1 > (alloc.pods ?? 110)) return { reason: 'OutOfpods', message: 'Pod was rejected: Node didn\'t have enough resource: pods' };
    for (const [k, v] of Object.entries(podRequests(spec))) {
      if (v <= 0) continue;
      const free = (alloc[k] ?? 0) - (used[k] ?? 0);
      if (v > free) return { reason: `Out${k}`, message: `Pod was rejected: Node didn't have enough resource: ${k}, requested: ${v}, used: ${used[k] ?? 0}, capacity: ${alloc[k] ?? 0}` };
    }
    return undefined;
  }

  private async reject(pod: KubeObject, reason: string, message: string): Promise<void> {
    this.finished.add(pod.metadata.uid!);
    void this.o.recorder.event(pod, 'Warning', reason, message);
    await this.patchStatus(pod, { phase: 'Failed', reason, message, startTime: (pod.status as Obj | undefined)?.startTime ?? rfc3339() });
  }

  /**
   * Whether a restart must wait (CrashLoopBackOff); records the waiting reason
   * while it does. The first restart is immediate; each start after that
   * doubles the delay.
   */
  private inBackoff(pod: KubeObject, container: string, kind: 'crash', _exited?: ContainerStatus): boolean {
    const key = `${pod.metadata.uid}/${container}/${kind}`;
    const b = this.backoffs.get(key);
    const now = Date.now();
    if (!b || b.until <= now) return false;
    const { name, namespace, uid } = pod.metadata;
    const wkey = `${uid}/${container}`;
    if (this.waiting.get(wkey)?.reason !== 'CrashLoopBackOff') void this.o.recorder.event(pod, 'Warning', 'BackOff', `Back-off restarting failed container ${container} in pod ${name}_${namespace}(${uid})`);
    this.waiting.set(wkey, { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(b.delay / 1000)}s restarting failed container=${container} pod=${name}_${namespace}(${uid})` });
    this.trigger(pod.metadata.uid!, b.until - now + 10);
    return true;
  }

  private bumpBackoff(pod: KubeObject, container: string, kind: 'crash' | 'pull'): Backoff {
    const key = `${pod.metadata.uid}/${container}/${kind}`;
    const prev = this.backoffs.get(key);
    const initial = this.o.backoffInitialMs ?? BACKOFF_INITIAL_MS;
    const delay = prev ? Math.min(prev.delay * 2, this.o.backoffMaxMs ?? BACKOFF_MAX_MS) : initial;
    const b = { delay, until: Date.now() + delay };
    this.backoffs.set(key, b);
    return b;
  }

  private async ensureImage(pod: KubeObject, c: Obj, sbConfig: PodSandboxConfig): Promise<boolean> {
    const uid = pod.metadata.uid!;
    const image = String(c.image ?? '');
    if (!parseImageRef(image)) {
      this.waiting.set(`${uid}/${c.name}`, { reason: 'InvalidImageName', message: `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format` });
      void this.o.recorder.event(pod, 'Warning', 'InspectFailed', `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`);
      return false;
    }
    const policy = pullPolicy(c);
    const present = await this.o.runtime.imageStatus({ image });
    if (present && policy !== 'Always') {
      if (!this.backoffs.has(`${uid}/${c.name}/pulled`)) {
        this.backoffs.set(`${uid}/${c.name}/pulled`, { delay: 0, until: 0 });
        void this.o.recorder.event(pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      }
      return true;
    }
    if (policy === 'Never') {
      this.waiting.set(`${uid}/${c.name}`, { reason: 'ErrImageNeverPull', message: `Container image "${image}" is not present with pull policy of Never` });
      void this.o.recorder.event(pod, 'Warning', 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`);
      return false;
    }
    const pullKey = `${uid}/${c.name}/pull`;
    const b = this.backoffs.get(pullKey);
    if (b && b.until > Date.now()) {
      this.waiting.set(`${uid}/${c.name}`, { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` });
      void this.o.recorder.event(pod, 'Normal', 'BackOff', `Back-off pulling image "${image}"`);
      this.trigger(uid, b.until - Date.now() + 10);
      return false;
    }
    void this.o.recorder.event(pod, 'Normal', 'Pulling', `Pulling image "${image}"`);
    const t0 = Date.now();
    try {
      await this.o.runtime.pullImage({ image }, sbConfig);
    } catch (e) {
      const msg = (e as Error).message;
      this.bumpBackoff(pod, c.name, 'pull');
      this.waiting.set(`${uid}/${c.name}`, { reason: 'ErrImagePull', message: msg });
      void this.o.recorder.event(pod, 'Warning', 'Failed', `Failed to pull image "${image}": ${msg}`);
      void this.o.recorder.event(pod, 'Warning', 'Failed', 'Error: ErrImagePull');
      this.trigger(uid, (this.backoffs.get(pullKey)?.delay ?? 1000) + 10);
      return false;
    }
    this.backoffs.delete(pullKey);
    void this.o.recorder.event(pod, 'Normal', 'Pulled', `Successfully pulled image "${image}" in ${Date.now() - t0}ms`);
    return true;
  }

  private async startContainer(pod: KubeObject, c: Obj, attempt: number, sandboxId: string, sbConfig: PodSandboxConfig, podIP: string, volumes: Map<string, string>, init: boolean): Promise<void> {
    const uid = pod.metadata.uid!;
    const wkey = `${uid}/${c.name}`;
    if (!(await this.ensureImage(pod, c, sbConfig))) return;
    let env: Record<string, string>;
    let mounts;
    try {
      env = await containerEnv(pod, c, this.envSources(), this.o.nodeIP, podIP, this.o.allocatable());
      mounts = containerMounts(c, volumes);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      this.waiting.set(wkey, { reason: 'CreateContainerConfigError', message: e.message });
      void this.o.recorder.event(pod, 'Warning', 'Failed', `Error: ${e.message}`);
      this.trigger(uid, 5000);
      return;
    }
    const command = ((c.command ?? []) as string[]).map((s) => expand(s, env));
    const args = ((c.args ?? []) as string[]).map((s) => expand(s, env));
    let id: string;
    try {
      id = await this.o.runtime.createContainer(
        sandboxId,
        {
          metadata: { name: c.name, attempt },
          image: { image: c.image },
          command,
          args,
          working_dir: c.workingDir ?? '',
          stdin: !!c.stdin,
          stdin_once: !!c.stdinOnce,
          tty: !!c.tty,
          envs: Object.entries(env).map(([key, value]) => ({ key, value: Buffer.from(value) })),
          mounts,
          labels: { [LABEL_CONTAINER_NAME]: c.name, [LABEL_POD_UID]: uid, [LABEL_POD_NAME]: pod.metadata.name!, [LABEL_POD_NAMESPACE]: pod.metadata.namespace! },
          annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
          log_path: `${c.name}/${attempt}.log`,
        },
        sbConfig,
      );
    } catch (e) {
      this.waiting.set(wkey, { reason: 'CreateContainerError', message: (e as Error).message });
      void this.o.recorder.event(pod, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      this.trigger(uid, 5000);
      return;
    }
    void this.o.recorder.event(pod, 'Normal', 'Created', `Created container ${c.name}`);
    try {
      await this.o.runtime.startContainer(id);
    } catch (e) {
      this.bumpBackoff(pod, c.name, 'crash');
      void this.o.recorder.event(pod, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      this.trigger(uid, 100);
      return;
    }
    this.waiting.delete(wkey);
    void this.o.recorder.event(pod, 'Normal', 'Started', `Started container ${c.name}`);
    if (attempt > 0) this.bumpBackoff(pod, c.name, 'crash');
    if (c.lifecycle?.postStart && !init) {
      const err = await this.runHook(c.lifecycle.postStart, id, podIP, c);
      if (err) {
        void this.o.recorder.event(pod, 'Warning', 'FailedPostStartHook', `PostStartHook failed: ${err}`);
        await this.o.runtime.stopContainer(id, (pod.spec as Obj).terminationGracePeriodSeconds ?? 30).catch(() => undefined);
        this.trigger(uid, 100);
        return;
      }
    }
    if (!init) this.probes.add(uid, podIP, c, id);
  }

  /** Runs a lifecycle hook; returns the error text or undefined. */
  private async runHook(hook: Obj, containerId: string, podIP: string, c: Obj): Promise<string | undefined> {
    try {
      if (hook.exec) {
        const r = await this.o.runtime.execSync(containerId, hook.exec.command ?? [], 30);
        return r.exit_code === 0 ? undefined : `command '${(hook.exec.command ?? []).join(' ')}' exited with ${r.exit_code}: ${Buffer.from(r.stderr ?? '').toString()}`;
      }
      if (hook.httpGet) {
        const h = hook.httpGet;
        const port = typeof h.port === 'number' ? h.port : ((c.ports ?? []) as Obj[]).find((p) => p.name === h.port)?.containerPort ?? Number(h.port);
        const res = await fetch(`${(h.scheme ?? 'HTTP').toLowerCase()}://${h.host || podIP}:${port}${h.path ?? '/'}`, { signal: AbortSignal.timeout(30_000) });
        await res.arrayBuffer().catch(() => undefined);
        return res.status < 400 ? undefined : `HTTP lifecycle hook (${h.path ?? '/'}) for Container "${c.name}" returned status ${res.status}`;
      }
      if (hook.sleep) {
        await new Promise((r) => setTimeout(r, (hook.sleep.seconds ?? 0) * 1000));
      }
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  private async killUnhealthy(uid: string, id: string, container: string, kind: string): Promise<void> {
    const pod = this.pods.get(uid);
    if (!pod) return;
    void this.o.recorder.event(pod, 'Normal', 'Killing', `Container ${container} failed ${kind} probe, will be restarted`);
    await this.o.runtime.stopContainer(id, (pod.spec as Obj).terminationGracePeriodSeconds ?? 30).catch(() => undefined);
    this.trigger(uid);
  }

  // ---- status -----------------------------------------------------------------------

  private views(pod: KubeObject, list: Obj[], containers: Map<string, ContainerStatus[]>, init: boolean): ContainerView[] {
    const uid = pod.metadata.uid!;
    const policy = (pod.spec as Obj).restartPolicy ?? 'Always';
    return list.map((c) => {
      const instances = containers.get(c.name) ?? [];
      const cur = instances[0];
      const running = cur?.state === 'CONTAINER_RUNNING';
      const started = running && this.probes.result(uid, cur.id, 'startup', c);
      const ready = running && started && this.probes.result(uid, cur.id, 'readiness', c);
      const exitedFinal = cur?.state === 'CONTAINER_EXITED' && (policy === 'Never' || (policy === 'OnFailure' && cur.exit_code === 0) || (init && cur.exit_code === 0));
      const waiting = this.waiting.get(`${uid}/${c.name}`);
      return { name: c.name, image: c.image, instances, ...(waiting && !running ? { waiting } : {}), ready, started, final: exitedFinal || this.finished.has(uid) };
    });
  }

  private imageName = (ref: string, spec: string) => {
    const r = parseImageRef(spec);
    if (!ref) return r?.full ?? spec;
    return r ? `${r.repository}@${ref}` : ref;
  };

  private async writeStatus(pod: KubeObject, _sandboxId: string, podIP: string, containers: Map<string, ContainerStatus[]>): Promise<Obj> {
    const spec = pod.spec as Obj;
    const initViews = this.views(pod, spec.initContainers ?? [], containers, true);
    const appViews = this.views(pod, spec.containers ?? [], containers, false);
    // App containers wait for init containers with PodInitializing.
    const initPending = initViews.some((v) => !(v.instances[0]?.state === 'CONTAINER_EXITED' && v.instances[0].exit_code === 0));
    if (initPending) for (const v of appViews) if (!v.instances.length) v.waiting ??= { reason: 'PodInitializing' };
    const init = initViews.map((v) => containerStatus(v, this.runtimeName, this.imageName));
    const app = appViews.map((v) => containerStatus(v, this.runtimeName, this.imageName));
    const phase = podPhase(spec, init, app);
    const old = (pod.status ?? {}) as Obj;
    const status: Obj = {
      phase,
      conditions: podConditions(old.conditions ?? [], !!podIP, init, app, phase),
      hostIP: this.o.nodeIP,
      hostIPs: [{ ip: this.o.nodeIP }],
      ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
      startTime: old.startTime ?? rfc3339(),
      ...(init.length ? { initContainerStatuses: init } : {}),
      containerStatuses: app,
      qosClass: qosClass(spec),
    };
    await this.patchStatus(pod, status);
    return status;
  }

  private async patchStatus(pod: KubeObject, status: Obj): Promise<void> {
    const uid = pod.metadata.uid!;
    const cur = (pod.status ?? {}) as Obj;
    const merged = { ...cur, ...status };
    if (jsonEqual(this.lastStatus.get(uid), merged) || jsonEqual(cur, merged)) return;
    try {
      const res = await this.o.client.patch<KubeObject>(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, { metadata: { uid }, status }, 'application/merge-patch+json');
      this.lastStatus.set(uid, merged);
      if (this.pods.get(uid)?.metadata.resourceVersion === pod.metadata.resourceVersion) this.pods.set(uid, res);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  // ---- stopping ---------------------------------------------------------------------

  /** A finished pod keeps nothing running. */
  private async stopFinished(pod: KubeObject): Promise<void> {
    for (const sb of await this.sandboxesOf(pod.metadata.uid!)) {
      if (sb.state === 'SANDBOX_READY') await this.o.runtime.stopPodSandbox(sb.id).catch(() => undefined);
    }
  }

  private async terminate(pod: KubeObject): Promise<void> {
    const uid = pod.metadata.uid!;
    if (this.terminating.has(uid)) return;
    this.terminating.add(uid);
    try {
      const spec = pod.spec as Obj;
      const grace = pod.metadata.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
      const deadline = Date.now() + grace * 1000;
      const sandboxes = await this.sandboxesOf(uid);
      const podIP = sandboxes[0] ? ((await this.o.runtime.podSandboxStatus(sandboxes[0].id).catch(() => undefined))?.network?.ip ?? '') : '';
      const containers = await this.containersOf(sandboxes.map((s) => s.id));
      const all = [...(spec.containers ?? []), ...(spec.initContainers ?? [])] as Obj[];
      await Promise.all(
        [...containers.values()]
          .map((l) => l[0]!)
          .filter((c) => c.state === 'CONTAINER_RUNNING')
          .map(async (c) => {
            const specC = all.find((x) => x.name === c.metadata.name) ?? {};
            if (specC.lifecycle?.preStop) {
              const err = await Promise.race([this.runHook(specC.lifecycle.preStop, c.id, podIP, specC), new Promise<string>((r) => setTimeout(() => r('timed out'), Math.max(0, deadline - Date.now())))]);
              if (err) void this.o.recorder.event(pod, 'Warning', 'FailedPreStopHook', `PreStopHook failed: ${err}`);
            }
            void this.o.recorder.event(pod, 'Normal', 'Killing', `Stopping container ${c.metadata.name}`);
            // Upstream gives at least 2 s after a hook that used up the period.
            const left = Math.max(Math.ceil((deadline - Date.now()) / 1000), grace > 0 ? 2 : 0);
            await this.o.runtime.stopContainer(c.id, left).catch(() => undefined);
          }),
      );
      for (const sb of sandboxes) await this.o.runtime.stopPodSandbox(sb.id).catch(() => undefined);
      this.probes.retain(uid);
      const final = await this.containersOf(sandboxes.map((s) => s.id));
      this.finished.add(uid);
      if (this.pods.has(uid)) await this.writeStatus(pod, '', '', final).catch(() => undefined);
      for (const sb of sandboxes) await this.o.runtime.removePodSandbox(sb.id).catch(() => undefined);
      try {
        await this.o.client.delete(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } });
      } catch (e) {
        if (!isNotFound(e) && !(e as { status?: { code?: number } }).status?.code) throw e;
      }
    } finally {
      this.terminating.delete(uid);
    }
  }

  /** Whatever still runs for a pod the apiserver no longer has is stopped and removed. */
  private async cleanupOrphan(uid: string): Promise<void> {
    for (const sb of await this.sandboxesOf(uid)) await this.o.runtime.removePodSandbox(sb.id).catch(() => undefined);
    this.probes.retain(uid);
    for (const k of [...this.backoffs.keys()]) if (k.startsWith(`${uid}/`)) this.backoffs.delete(k);
    for (const k of [...this.waiting.keys()]) if (k.startsWith(`${uid}/`)) this.waiting.delete(k);
    this.lastStatus.delete(uid);
    this.admitted.delete(uid);
    this.finished.delete(uid);
    this.volumesReady.delete(uid);
    this.volumesDue.delete(uid);
  }

  /** Sandboxes of pods this kubelet no longer knows (after a restart, or deleted meanwhile). */
  async housekeeping(): Promise<void> {
    for (const sb of await this.o.runtime.listPodSandbox()) {
      const uid = sb.labels?.[LABEL_POD_UID];
      if (uid && !this.pods.has(uid) && !this.workers.get(uid)?.running) this.trigger(uid);
    }
  }
}

/** The prepared volume directories (names → host paths) without touching their contents. */
async function prepareVolumesMap(pod: KubeObject, podDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const v of ((pod.spec as Obj).volumes ?? []) as Obj[]) out.set(v.name, v.hostPath ? v.hostPath.path : join(podDir, 'volumes', v.name));
  return out;
}

export { CriError };
