/**
 * Pod sync (kubernetes pkg/kubelet/kuberuntime SyncPod, as the seeds walk it):
 * admission first (node affinity, then the node's allocatable; a rejected pod
 * fails for good), then the claim volumes attached and mounted by the volume
 * manager (the pod waits, ContainerCreating, until they are), then the sandbox
 * (its IP is the pod IP), the other volumes, then init
 * containers one by one — each must succeed — then the app containers: pull
 * the image as the pull policy says, create, start, run the postStart hook,
 * start the probes. Ephemeral containers added to the pod start before the
 * init containers, once each, never restarted, without hooks or probes
 * (`ephemeral.ts`). Exited containers restart as the restart policy says,
 * after an exponential back-off (10 s doubling to 5 min, CrashLoopBackOff).
 * Each sync ends by writing the pod's status; a pod that reached a terminal
 * phase is stopped.
 */
import { runtimeHandlerOf, RuntimeClassNotFound } from './runtimeclass.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { isNotFound, rfc3339 } from '@kubeling/apimachinery';
import { podRequests, requiredNodeAffinityMatches } from '@kubeling/component-helpers';
import type { ContainerStatus, Mount, PodSandboxConfig, PortMapping } from '@kubeling/cri';
import { hostsFileContent, podDnsConfig, type ClusterDnsOptions } from './dns.js';
import { ensureImage } from './images.js';
import { terminationMessageMount } from './termination-message.js';
import { ephemeralContainers, ephemeralHistory } from './ephemeral.js';
import { podVolumes, type ConfigMap, type Container, type Pod, type Secret } from './kinds.js';
import { runHook } from './lifecycle.js';
import { runtimeSecurityContext, verifyRunAsNonRoot } from './security.js';
import {
  containersOf,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
  sandboxesOf,
  terminalPhase,
  type PodDeps,
} from './pod-state.js';
import type { PodTerminator } from './pod-termination.js';
import { ConfigError, containerEnv, expand, type EnvSources, type ServiceLike } from './podutil.js';
import type { StatusManager } from './status-manager.js';
import type { ClaimPaths } from './volumemanager/volume-manager.js';
import { containerMounts, prepareVolumes, volumeRefreshMs, type PodVolumePaths } from './volumes.js';

export class PodSyncer {
  constructor(
    private readonly d: PodDeps,
    private readonly status: StatusManager,
    private readonly termination: PodTerminator,
  ) {}

  /** Brings a live, admitted-or-not, unfinished pod one step closer to its spec. */
  async sync(pod: Pod): Promise<void> {
    const { o, state, probes } = this.d;
    const uid = pod.metadata.uid!;
    if (!state.admitted.has(uid)) {
      const why = this.admit(pod);
      if (why) return this.reject(pod, why.reason, why.message);
      state.admitted.add(uid);
    }
    const spec = pod.spec;
    // activeDeadlineSeconds (kubelet pastActiveDeadline): counted from the pod's start time.
    const startedAt = pod.status?.startTime ? Date.parse(pod.status.startTime) : Number.NaN;
    if (spec.activeDeadlineSeconds !== undefined && !Number.isNaN(startedAt)) {
      const left = startedAt + spec.activeDeadlineSeconds * 1000 - Date.now();
      if (left <= 0) return this.deadlineExceeded(pod);
      this.d.trigger(uid, left + 50);
    }
    const sandboxes = await sandboxesOf(o.runtime, uid);
    let sandbox = sandboxes.find((s) => s.state === 'SANDBOX_READY');
    // The claim volumes are attached and mounted before the sandbox (kubelet SyncPod: WaitForAttachAndMount).
    const claims = await o.volumes.waitForAttachAndMount(pod, !!sandbox);
    if (!claims) {
      const ip = sandbox ? ((await o.runtime.podSandboxStatus(sandbox.id).catch(() => undefined))?.network?.ip ?? '') : '';
      await this.status.write(pod, ip, sandbox ? await containersOf(o.runtime, [sandbox.id]) : new Map());
      return;
    }
    const sbConfig = this.sandboxConfig(pod, sandboxes.length);
    if (!sandbox) {
      const hadContainers = sandboxes.length > 0;
      if (hadContainers) {
        for (const s of sandboxes) await o.runtime.stopPodSandbox(s.id).catch(() => undefined);
        void o.recorder.event(pod, 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      }
      mkdirSync(sbConfig.log_directory!, { recursive: true });
      if (podDnsConfig(spec, pod.metadata.namespace ?? '', this.dnsOptions()).missingClusterDNS) {
        void o.recorder.event(
          pod,
          'Warning',
          'MissingClusterDNS',
          `pod: "${pod.metadata.name}_${pod.metadata.namespace}(${uid})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "${spec.dnsPolicy ?? 'ClusterFirst'}" policy. Falling back to "Default" policy.`,
        );
      }
      let id: string;
      try {
        id = await o.runtime.runPodSandbox(sbConfig, await runtimeHandlerOf(o.client, spec.runtimeClassName));
      } catch (e) {
        // kuberuntime createPodSandbox: the pod stays pending and the kubelet tries again.
        void o.recorder.event(pod, 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${(e as Error).message}`);
        this.d.trigger(uid, e instanceof RuntimeClassNotFound ? 10_000 : 2000);
        return;
      }
      sandbox = (await sandboxesOf(o.runtime, uid)).find((s) => s.id === id)!;
    }
    const sbStatus = await o.runtime.podSandboxStatus(sandbox.id);
    const podIP = sbStatus.network?.ip ?? '';
    const podDir = join(o.rootDir, 'pods', uid);
    const sources = this.envSources();
    if (state.volumesReady.get(uid) !== sandbox.id || Date.now() >= (state.volumesDue.get(uid) ?? Infinity)) {
      try {
        await prepareVolumes(pod, podDir, sources, o.nodeIP, podIP, claims.paths, o.allocatable());
        // The pod's /etc/hosts, mounted into each container (kubelet ensureHostsFile).
        mkdirSync(podDir, { recursive: true });
        writeFileSync(
          join(podDir, 'etc-hosts'),
          hostsFileContent(spec, pod.metadata.name ?? '', pod.metadata.namespace ?? '', podIP ? [podIP] : [], o.clusterDomain ?? ''),
        );
        state.volumesReady.set(uid, sandbox.id);
        const refresh = volumeRefreshMs(pod);
        if (refresh !== undefined) {
          state.volumesDue.set(uid, Date.now() + refresh);
          this.d.trigger(uid, refresh);
        }
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        void o.recorder.event(pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${e.message}`);
        await this.status.write(pod, podIP, await containersOf(o.runtime, [sandbox.id]));
        this.d.trigger(uid, 2000);
        return;
      }
    }
    const volumes = volumePaths(pod, podDir, claims);
    const containers = await containersOf(o.runtime, [sandbox.id]);
    const policy = spec.restartPolicy ?? 'Always';

    // Ephemeral containers start before init containers, so a pod whose initialisation is stuck can be debugged.
    const ephemeral = ephemeralContainers(pod);
    const earlier = await ephemeralHistory(o.runtime, ephemeral, sandboxes, sandbox.id);
    for (const ec of ephemeral) {
      // Never restarted: one that ran in any sandbox of the pod is done (kuberuntime computePodActions).
      if (containers.has(ec.name) || earlier.has(ec.name)) continue;
      await this.startContainer(pod, ec, 0, sandbox.id, sbConfig, podIP, volumes, 'ephemeral');
    }

    // Init containers, in order; each must succeed before the next.
    let initDone = true;
    for (const ic of spec.initContainers ?? []) {
      const insts = containers.get(ic.name) ?? [];
      const cur = insts[0];
      if (cur?.state === 'CONTAINER_EXITED' && cur.exit_code === 0) continue;
      initDone = false;
      if (cur?.state === 'CONTAINER_RUNNING' || cur?.state === 'CONTAINER_CREATED') break;
      if (cur?.state === 'CONTAINER_EXITED') {
        if (policy === 'Never') break; // the pod has failed
        if (this.inBackoff(pod, ic.name, 'crash')) break;
      }
      await this.startContainer(pod, ic, cur ? cur.metadata.attempt + 1 : 0, sandbox.id, sbConfig, podIP, volumes, 'init');
      break;
    }
    if (initDone) {
      for (const c of spec.containers ?? []) {
        const insts = containers.get(c.name) ?? [];
        const cur = insts[0];
        if (cur?.state === 'CONTAINER_RUNNING') {
          state.waiting.delete(`${uid}/${c.name}`);
          probes.add(uid, podIP, c, cur.id);
          continue;
        }
        if (cur?.state === 'CONTAINER_CREATED') continue;
        if (cur?.state === 'CONTAINER_EXITED') {
          const restart = policy === 'Always' || (policy === 'OnFailure' && cur.exit_code !== 0);
          if (!restart) continue;
          if (this.inBackoff(pod, c.name, 'crash', cur)) continue;
        }
        await this.startContainer(pod, c, cur ? cur.metadata.attempt + 1 : 0, sandbox.id, sbConfig, podIP, volumes, 'regular');
      }
    }
    const after = await containersOf(o.runtime, [sandbox.id]);
    for (const [name, list] of earlier) if (!after.has(name)) after.set(name, list);
    probes.retain(uid, new Set([...after.values()].flatMap((l) => l.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.id))));
    const status = await this.status.write(pod, podIP, after);
    if (terminalPhase(status.phase)) {
      state.finished.add(uid);
      await this.termination.stopFinished(pod);
    }
  }

  private envSources(): EnvSources {
    const { client } = this.d.o;
    const get = async <T>(path: string): Promise<T | undefined> => {
      try {
        return await client.get<T>(path);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    };
    return {
      configMap: (ns, name) => get<ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${name}`),
      secret: (ns, name) => get<Secret>(`/api/v1/namespaces/${ns}/secrets/${name}`),
      services: async (ns) => {
        const list = await client.get<{ items: ServiceLike[] }>(`/api/v1/namespaces/${ns}/services`).catch((e: Error) => {
          throw new ConfigError(`failed to list services when setting up env vars: ${e.message}`);
        });
        return { namespace: list.items ?? [], master: await get<ServiceLike>('/api/v1/namespaces/default/services/kubernetes') };
      },
      token: async (pod, sa, audience, expirationSeconds) => {
        try {
          const res = await client.post<{ status: { token: string } }>(`/api/v1/namespaces/${pod.metadata.namespace}/serviceaccounts/${sa}/token`, {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: {
              ...(audience ? { audiences: [audience] } : {}),
              expirationSeconds,
              boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, uid: pod.metadata.uid },
            },
          });
          return res.status.token;
        } catch (e) {
          throw new ConfigError(`failed to fetch token: ${(e as Error).message}`);
        }
      },
    };
  }

  private dnsOptions(): ClusterDnsOptions {
    const o = this.d.o;
    return { clusterDNS: o.clusterDNS ?? [], clusterDomain: o.clusterDomain ?? '', resolvConf: o.resolvConf ?? '/etc/resolv.conf' };
  }

  private sandboxConfig(pod: Pod, attempt: number): PodSandboxConfig {
    const spec = pod.spec;
    const { name, namespace, uid } = pod.metadata as { name: string; namespace: string; uid: string };
    const ports = (spec.containers ?? []).flatMap((c) =>
      (c.ports ?? []).map((p) => ({ protocol: p.protocol ?? 'TCP', container_port: p.containerPort, host_port: p.hostPort ?? 0, host_ip: p.hostIP ?? '' })),
    );
    const { config: dns } = podDnsConfig(spec, namespace, this.dnsOptions());
    return {
      metadata: { name, uid, namespace, attempt },
      hostname: spec.hostname ?? name,
      dns_config: dns,
      log_directory: join(this.d.o.rootDir, 'logs', 'pods', `${namespace}_${name}_${uid}`),
      port_mappings: ports as PortMapping[],
      labels: { [LABEL_POD_UID]: uid, [LABEL_POD_NAME]: name, [LABEL_POD_NAMESPACE]: namespace },
      annotations: {},
    };
  }

  private admit(pod: Pod): { reason: string; message: string } | undefined {
    const { o, state } = this.d;
    const spec = pod.spec;
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: o.nodeName, labels: o.nodeLabels() } } as KubeObject;
    if (!requiredNodeAffinityMatches(spec, node))
      return { reason: 'NodeAffinity', message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
    const alloc = o.allocatable();
    const used: Record<string, number> = {};
    let count = 0;
    for (const [uid, p] of state.pods) {
      if (uid === pod.metadata.uid || !state.admitted.has(uid) || state.finished.has(uid)) continue;
      count++;
      for (const [k, v] of Object.entries(podRequests(p.spec))) used[k] = (used[k] ?? 0) + v;
    }
    if (count + 1 > (alloc.pods ?? 110)) return { reason: 'OutOfpods', message: "Pod was rejected: Node didn't have enough resource: pods" };
    // Host ports another admitted pod holds (NodePorts): same protocol and port, on the same address or either on all.
    const held = [...state.pods]
      .filter(([uid]) => uid !== pod.metadata.uid && state.admitted.has(uid) && !state.finished.has(uid))
      .flatMap(([, p]) => hostPorts(p.spec));
    const clash = hostPorts(spec).some((w) =>
      held.some((h) => h.port === w.port && h.protocol === w.protocol && (h.ip === w.ip || h.ip === '0.0.0.0' || w.ip === '0.0.0.0')),
    );
    if (clash)
      return { reason: 'NodePorts', message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" };
    for (const [k, v] of Object.entries(podRequests(spec))) {
      if (v <= 0) continue;
      const free = (alloc[k] ?? 0) - (used[k] ?? 0);
      if (v > free)
        return {
          reason: `Out${k}`,
          message: `Pod was rejected: Node didn't have enough resource: ${k}, requested: ${v}, used: ${used[k] ?? 0}, capacity: ${alloc[k] ?? 0}`,
        };
    }
    return undefined;
  }

  /** Past its active deadline: the pod's containers are stopped and it fails with DeadlineExceeded. */
  private async deadlineExceeded(pod: Pod): Promise<void> {
    const { o, state } = this.d;
    const message = 'Pod was active on the node longer than the specified deadline';
    state.finished.add(pod.metadata.uid!);
    void o.recorder.event(pod, 'Warning', 'DeadlineExceeded', message);
    await this.termination.stopFinished(pod);
    const sandboxes = await sandboxesOf(o.runtime, pod.metadata.uid!);
    const sb = sandboxes[0];
    const ip = sb ? ((await o.runtime.podSandboxStatus(sb.id).catch(() => undefined))?.network?.ip ?? '') : '';
    await this.status.write(
      pod,
      ip,
      await containersOf(
        o.runtime,
        sandboxes.map((x) => x.id),
      ),
      { phase: 'Failed', reason: 'DeadlineExceeded', message },
    );
  }

  private async reject(pod: Pod, reason: string, message: string): Promise<void> {
    this.d.state.finished.add(pod.metadata.uid!);
    void this.d.o.recorder.event(pod, 'Warning', reason, message);
    await this.status.patch(pod, { phase: 'Failed', reason, message, startTime: pod.status?.startTime ?? rfc3339() });
  }

  /**
   * Whether a restart must wait (CrashLoopBackOff); records the waiting reason
   * while it does. The first restart is immediate; each start after that
   * doubles the delay.
   */
  private inBackoff(pod: Pod, container: string, kind: 'crash', _exited?: ContainerStatus): boolean {
    const { o, state } = this.d;
    const key = `${pod.metadata.uid}/${container}/${kind}`;
    const b = state.backoffs.get(key);
    const now = Date.now();
    if (!b || b.until <= now) return false;
    const { name, namespace, uid } = pod.metadata;
    const wkey = `${uid}/${container}`;
    if (state.waiting.get(wkey)?.reason !== 'CrashLoopBackOff')
      void o.recorder.event(pod, 'Warning', 'BackOff', `Back-off restarting failed container ${container} in pod ${name}_${namespace}(${uid})`);
    state.waiting.set(wkey, {
      reason: 'CrashLoopBackOff',
      message: `back-off ${Math.round(b.delay / 1000)}s restarting failed container=${container} pod=${name}_${namespace}(${uid})`,
    });
    this.d.trigger(pod.metadata.uid!, b.until - now + 10);
    return true;
  }

  private async startContainer(
    pod: Pod,
    c: Container,
    attempt: number,
    sandboxId: string,
    sbConfig: PodSandboxConfig,
    podIP: string,
    volumes: PodVolumePaths,
    kind: 'init' | 'regular' | 'ephemeral',
  ): Promise<void> {
    const { o, state, probes } = this.d;
    const uid = pod.metadata.uid!;
    const wkey = `${uid}/${c.name}`;
    if (!(await ensureImage(this.d, pod, c, sbConfig))) return;
    let env: Record<string, string>;
    let mounts: Mount[];
    try {
      verifyRunAsNonRoot(pod, c);
      env = await containerEnv(pod, c, this.envSources(), o.nodeIP, podIP, o.allocatable());
      mounts = containerMounts(c, volumes, env);
      // The managed /etc/hosts, unless the container mounts its own there (kubelet makeMounts).
      if (podIP && !mounts.some((m) => m.container_path === '/etc/hosts'))
        mounts.push({ container_path: '/etc/hosts', host_path: join(o.rootDir, 'pods', uid, 'etc-hosts'), readonly: false });
      const message = terminationMessageMount(o.rootDir, uid, c, attempt, mounts);
      if (message) mounts.push(message);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      state.waiting.set(wkey, { reason: 'CreateContainerConfigError', message: e.message });
      void o.recorder.event(pod, 'Warning', 'Failed', `Error: ${e.message}`);
      this.d.trigger(uid, 5000);
      return;
    }
    const command = (c.command ?? []).map((s) => expand(s, env));
    const args = (c.args ?? []).map((s) => expand(s, env));
    let id: string;
    try {
      id = await o.runtime.createContainer(
        sandboxId,
        {
          metadata: { name: c.name, attempt },
          // ensureImage has refused a container without an image.
          image: { image: c.image ?? '' },
          command,
          args,
          working_dir: c.workingDir ?? '',
          stdin: !!c.stdin,
          stdin_once: !!c.stdinOnce,
          tty: !!c.tty,
          envs: Object.entries(env).map(([key, value]) => ({ key, value: Buffer.from(value) })),
          mounts,
          labels: {
            [LABEL_CONTAINER_NAME]: c.name,
            [LABEL_POD_UID]: uid,
            [LABEL_POD_NAME]: pod.metadata.name!,
            [LABEL_POD_NAMESPACE]: pod.metadata.namespace!,
          },
          annotations: { 'io.kubernetes.container.restartCount': String(attempt) },
          log_path: `${c.name}/${attempt}.log`,
          linux: { security_context: runtimeSecurityContext(pod, c) },
        },
        sbConfig,
      );
    } catch (e) {
      state.waiting.set(wkey, { reason: 'CreateContainerError', message: (e as Error).message });
      void o.recorder.event(pod, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      this.d.trigger(uid, 5000);
      return;
    }
    void o.recorder.event(pod, 'Normal', 'Created', `Created container ${c.name}`);
    try {
      await o.runtime.startContainer(id);
    } catch (e) {
      state.bumpBackoff(uid, c.name, 'crash');
      void o.recorder.event(pod, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      this.d.trigger(uid, 100);
      return;
    }
    state.waiting.delete(wkey);
    void o.recorder.event(pod, 'Normal', 'Started', `Started container ${c.name}`);
    if (attempt > 0) state.bumpBackoff(uid, c.name, 'crash');
    const postStart = c.lifecycle?.postStart;
    if (postStart && kind === 'regular') {
      const err = await runHook(o.runtime, postStart, id, podIP, c);
      if (err) {
        void o.recorder.event(pod, 'Warning', 'FailedPostStartHook', `PostStartHook failed: ${err}`);
        await o.runtime.stopContainer(id, pod.spec.terminationGracePeriodSeconds ?? 30).catch(() => undefined);
        this.d.trigger(uid, 100);
        return;
      }
    }
    if (kind === 'regular') probes.add(uid, podIP, c, id);
  }
}

/** The prepared volume directories (names → host paths, and those mounted read-only) without touching their contents. */
function volumePaths(pod: Pod, podDir: string, claims: ClaimPaths): PodVolumePaths {
  const paths = new Map<string, string>();
  for (const v of podVolumes(pod)) paths.set(v.name, claims.paths.get(v.name) ?? (v.hostPath ? v.hostPath.path : join(podDir, 'volumes', v.name)));
  return { paths, readOnly: claims.readOnly };
}

/** The host ports a pod's containers ask for (hostIP "" is all addresses). */
function hostPorts(spec: Pod['spec']): { port: number; protocol: string; ip: string }[] {
  return (spec?.containers ?? []).flatMap((c) =>
    (c.ports ?? []).filter((p) => (p.hostPort ?? 0) > 0).map((p) => ({ port: p.hostPort!, protocol: p.protocol ?? 'TCP', ip: p.hostIP || '0.0.0.0' })),
  );
}
