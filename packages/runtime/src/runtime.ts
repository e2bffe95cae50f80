/**
 * kubeling's container runtime, the CRI semantics without containers:
 *
 * - `process` backend: a sandbox is a pause process (`sleep infinity`) plus an
 *   IP from the pod CIDR inside 127.0.0.0/8; a container is a host process group
 *   running the command (image entrypoint/cmd when the pod gives none) with the
 *   container's env, `POD_IP` and `HOSTNAME`, its output in a CRI log file, and
 *   the exit code reported as the process ended (128+signal when killed, so 143
 *   after a SIGTERM it did not catch). Mounts are exposed as symlinks under the
 *   container's root directory (`$KUBELING_ROOT`), where it runs by default.
 * - `hollow` backend: the same bookkeeping with no processes; containers run at
 *   once and stay running until stopped, for scale tests.
 *
 * State lives in memory: the kubelet may restart and find everything through
 * ListPodSandbox/ListContainers; a runtime restart forgets it (its processes
 * are stopped with it).
 *
 * This class keeps the bookkeeping of sandboxes and containers; a container's
 * process is `process.ts`, exec and attach `exec.ts` (streamed by
 * `streaming.ts`), images `images.ts`, pod IPs `ippool.ts`, usage `stats.ts`
 * (measured from /proc for processes, synthetic for the hollow backend).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  CriError,
  GRPC_NOT_FOUND,
  nowNanos,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerStats,
  type ContainerStatsFilter,
  type ContainerStatus,
  type CriRuntime,
  type AttachRequest,
  type ExecRequest,
  type ExecSyncResponse,
  type Image,
  type ImageSpec,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStats,
  type PodSandboxStatsFilter,
  type PodSandboxStatus,
  type RuntimeCondition,
} from '@kubeling/cri';
import { attachSession, execSession, execSync } from './exec.js';
import { catalogImage, fillDirectoryRoot, ImageStore, parseImageRef } from './images.js';
import { isolateContainer, probeIsolation, sharedHostMounts, type IsolationTools } from './isolation.js';
import { IpPool } from './ippool.js';
import { hasProcess, markExited, startProcess, stopProcess, type Ctr } from './process.js';
import { StatsCollector, type SandboxInfo } from './stats.js';
import { StreamingServer, type ExecSession, type StreamRequest } from './streaming.js';

export interface RuntimeOptions {
  backend: 'process' | 'hollow';
  /** Directory for per-container roots. */
  root: string;
  /** Pod IPs come from here, e.g. 127.2.0.0/16 (must be inside 127.0.0.0/8). */
  podCIDR: string;
  /**
   * Containers in namespaces of their own (`isolation.ts`): the default when
   * the runtime is root and the host allows it; false runs them as plain host
   * processes in their directory (the rootless mode).
   */
  isolation?: boolean;
}

interface Sandbox {
  id: string;
  config: PodSandboxConfig;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: string;
  ip: string;
  /** The RuntimeClass handler it was made with (empty: the default). */
  handler: string;
  pause?: ChildProcess | undefined;
}

const newId = () => randomBytes(32).toString('hex');

/** The RuntimeClass handler name this runtime answers to (besides the default, empty one). */
export const RUNTIME_HANDLER = 'kubeling';

function matchLabels(want: Record<string, string> | undefined, have: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(want ?? {})) if (have?.[k] !== v) return false;
  return true;
}

const envValue = (v: Buffer | string | Uint8Array): string => (typeof v === 'string' ? v : Buffer.from(v).toString('utf8'));

export class KubelingRuntime implements CriRuntime {
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly containers = new Map<string, Ctr>();
  private readonly images = new ImageStore();
  private readonly ips: IpPool;
  private readonly stats: StatsCollector;
  private readonly streaming = new StreamingServer((r) => (r.kind === 'exec' ? this.startExec(r.req) : this.startAttach(r.req)));

  private readonly isolation: IsolationTools | undefined;
  /** The host's mounts an isolated container sees (read-only). */
  private readonly sharedMounts: string[];

  constructor(private readonly o: RuntimeOptions) {
    this.ips = new IpPool(o.podCIDR);
    this.stats = new StatsCollector(o.backend);
    mkdirSync(o.root, { recursive: true });
    this.isolation = o.backend === 'process' && o.isolation !== false ? probeIsolation(o.root) : undefined;
    // The cluster's own state (this runtime's and the kubelet's directories) stays out of containers' view.
    this.sharedMounts = this.isolation ? sharedHostMounts(dirname(dirname(resolve(o.root)))) : [];
  }

  /** Whether containers run in namespaces of their own. */
  get isolated(): boolean {
    return !!this.isolation;
  }

  async version() {
    return { version: '0.1.0', runtime_name: 'kubeling', runtime_version: `0.1.0-${this.o.backend}`, runtime_api_version: 'v1' };
  }

  async status(): Promise<RuntimeCondition[]> {
    return [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: true, reason: '', message: '' },
    ];
  }

  // ---- sandboxes ------------------------------------------------------------------

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = ''): Promise<string> {
    if (!config?.metadata?.name) throw new CriError(3, 'sandbox config must have metadata');
    // The one handler this runtime has, by its empty (default) name or its own; containerd words a missing one so.
    if (runtimeHandler !== '' && runtimeHandler !== RUNTIME_HANDLER) {
      throw new CriError(2, `failed to get sandbox runtime: no runtime for "${runtimeHandler}" is configured`);
    }
    const id = newId();
    const sb: Sandbox = { id, config, state: 'SANDBOX_READY', createdAt: nowNanos(), ip: this.ips.allocate(), handler: runtimeHandler };
    if (this.o.backend === 'process') {
      sb.pause = spawn('sleep', ['infinity'], { stdio: 'ignore', detached: true });
      sb.pause.on('exit', () => {
        if (this.sandboxes.get(id)?.pause === sb.pause) sb.state = 'SANDBOX_NOTREADY';
      });
      sb.pause.unref();
    }
    this.sandboxes.set(id, sb);
    return id;
  }

  private sandbox(id: string): Sandbox {
    const sb = this.sandboxes.get(id);
    if (!sb) throw new CriError(GRPC_NOT_FOUND, `an error occurred when try to find sandbox: not found: ${id}`);
    return sb;
  }

  async stopPodSandbox(id: string): Promise<void> {
    const sb = this.sandboxes.get(id);
    if (!sb) return;
    await Promise.all(
      [...this.containers.values()].filter((c) => c.sandboxId === id && c.state === 'CONTAINER_RUNNING').map((c) => this.stopContainer(c.id, 0)),
    );
    if (sb.pause && sb.pause.exitCode === null) {
      const p = sb.pause;
      sb.pause = undefined;
      try {
        p.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    if (sb.state === 'SANDBOX_READY') this.ips.release(sb.ip);
    sb.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(id: string): Promise<void> {
    const sb = this.sandboxes.get(id);
    if (!sb) return;
    await this.stopPodSandbox(id);
    for (const c of [...this.containers.values()]) if (c.sandboxId === id) await this.removeContainer(c.id);
    this.sandboxes.delete(id);
  }

  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    const sb = this.sandbox(id);
    return {
      id,
      metadata: sb.config.metadata,
      state: sb.state,
      created_at: sb.createdAt,
      network: { ip: sb.state === 'SANDBOX_READY' ? sb.ip : '', additional_ips: [] },
      labels: sb.config.labels ?? {},
      annotations: sb.config.annotations ?? {},
      runtime_handler: sb.handler,
    };
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return [...this.sandboxes.values()]
      .filter(
        (s) =>
          (!filter?.id || s.id === filter.id) && (!filter?.state || s.state === filter.state.state) && matchLabels(filter?.label_selector, s.config.labels),
      )
      .map((s) => ({
        id: s.id,
        metadata: s.config.metadata,
        state: s.state,
        created_at: s.createdAt,
        labels: s.config.labels ?? {},
        annotations: s.config.annotations ?? {},
        runtime_handler: s.handler,
      }));
  }

  // ---- containers -----------------------------------------------------------------

  async createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const sb = this.sandbox(sandboxId);
    if (sb.state !== 'SANDBOX_READY') throw new CriError(9, `sandbox ${sandboxId} is not ready`);
    const ref = parseImageRef(config.image?.image ?? '');
    const img = ref ? this.images.get(ref) : undefined;
    if (!ref || !img) throw new CriError(GRPC_NOT_FOUND, `failed to get image "${config.image?.image}": image not found`);
    const cat = catalogImage(ref)!;
    const id = newId();
    const rootDir = join(this.o.root, sandboxId.slice(0, 12), `${config.metadata.name}-${config.metadata.attempt}`);
    mkdirSync(rootDir, { recursive: true });
    // The sandbox's resolver configuration and hostname, where a container's root has them (etc/resolv.conf, etc/hostname).
    const files = this.o.backend !== 'hollow' ? writeSandboxFiles(rootDir, sb.config) : {};
    const iso = this.isolation;
    if (!iso) fillDirectoryRoot(rootDir, cat.copies, config.mounts ?? []);
    let command = config.command?.length ? config.command : cat.entrypoint;
    // A command naming a program of the image runs what stands for it here.
    const argv0 = command[0] !== undefined && cat.binaries?.[command[0]] ? command[0] : undefined;
    if (argv0) command = [...cat.binaries![argv0]!, ...command.slice(1)];
    const args = config.command?.length ? (config.args ?? []) : config.args?.length ? config.args : cat.cmd;
    const env: Record<string, string> = { ...cat.env };
    for (const kv of config.envs ?? []) env[kv.key] = envValue(kv.value);
    env.POD_IP = sb.ip;
    const hostname = sandboxConfig?.hostname || sb.config.hostname || sb.config.metadata.name;
    env.HOSTNAME = hostname;
    // Without namespaces, paths are relative to the container's directory, which the command is told.
    if (!iso) env.KUBELING_ROOT = rootDir;
    // The image path the command named, for a program that prints how it was started.
    if (argv0) env.KUBELING_ARGV0 = argv0;
    const port = (sb.config.port_mappings ?? [])[0]?.container_port;
    if ((cat.repository.endsWith('/nginx') || cat.repository.endsWith('/httpd')) && port && !env.NGINX_PORT) env.NGINX_PORT = String(port);
    let argv = [...command, ...args];
    let isolation: Ctr['isolation'];
    if (iso)
      ({ argv, isolation } = isolateContainer(iso, this.sharedMounts, {
        dir: rootDir,
        hostname,
        config,
        files,
        argv,
        env,
        imageFiles: cat.files,
        imageCopies: cat.copies,
      }));
    const logDir = sb.config.log_directory ?? '';
    const logPath = config.log_path ? (logDir ? join(logDir, config.log_path) : config.log_path) : '';
    this.containers.set(id, {
      id,
      sandboxId,
      config,
      imageRef: img.id,
      state: 'CONTAINER_CREATED',
      createdAt: nowNanos(),
      startedAt: '0',
      finishedAt: '0',
      exitCode: 0,
      reason: '',
      message: '',
      logPath,
      rootDir,
      argv,
      env,
      cwd: iso ? rootDir : config.working_dir || rootDir,
      attachers: new Set(),
      isolation,
      binaries: cat.binaries,
    });
    return id;
  }

  private ctr(id: string): Ctr {
    const c = this.containers.get(id);
    if (!c) throw new CriError(GRPC_NOT_FOUND, `an error occurred when try to find container "${id}": not found`);
    return c;
  }

  async startContainer(id: string): Promise<void> {
    const c = this.ctr(id);
    if (c.state !== 'CONTAINER_CREATED') throw new CriError(9, `container ${id} is in ${c.state} state`);
    if (this.o.backend === 'hollow') {
      c.state = 'CONTAINER_RUNNING';
      c.startedAt = nowNanos();
      return;
    }
    await startProcess(c);
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    const c = this.ctr(id);
    if (c.state === 'CONTAINER_CREATED') {
      markExited(c, 0, '', '');
      return;
    }
    if (c.state !== 'CONTAINER_RUNNING') return;
    if (this.o.backend === 'hollow') {
      markExited(c, 143, 'Error');
      return;
    }
    await stopProcess(c, timeoutSeconds);
  }

  async removeContainer(id: string): Promise<void> {
    const c = this.containers.get(id);
    if (!c) return;
    if (c.state === 'CONTAINER_RUNNING') await this.stopContainer(id, 0);
    rmSync(c.rootDir, { recursive: true, force: true });
    this.containers.delete(id);
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return [...this.containers.values()]
      .filter(
        (c) =>
          (!filter?.id || c.id === filter.id) &&
          (!filter?.pod_sandbox_id || c.sandboxId === filter.pod_sandbox_id) &&
          (!filter?.state || c.state === filter.state.state) &&
          matchLabels(filter?.label_selector, c.config.labels),
      )
      .map((c) => ({
        id: c.id,
        pod_sandbox_id: c.sandboxId,
        metadata: c.config.metadata,
        image: c.config.image,
        image_ref: c.imageRef,
        state: c.state,
        created_at: c.createdAt,
        labels: c.config.labels ?? {},
        annotations: c.config.annotations ?? {},
      }));
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    const c = this.ctr(id);
    return {
      id,
      metadata: c.config.metadata,
      state: c.state,
      created_at: c.createdAt,
      started_at: c.startedAt,
      finished_at: c.finishedAt,
      exit_code: c.exitCode,
      image: c.config.image,
      image_ref: c.imageRef,
      reason: c.reason,
      message: c.message,
      labels: c.config.labels ?? {},
      annotations: c.config.annotations ?? {},
      mounts: c.config.mounts ?? [],
      log_path: c.logPath,
    };
  }

  /** Running for exec and attach: with its process still there (hollow containers have none). */
  private running(c: Ctr): boolean {
    return this.o.backend === 'hollow' ? c.state === 'CONTAINER_RUNNING' : hasProcess(c);
  }

  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const c = this.ctr(id);
    if (!this.running(c)) throw new CriError(9, `container ${id} is not running`);
    if (this.o.backend === 'hollow') return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exit_code: 0 };
    if (!cmd.length) throw new CriError(3, 'cmd must not be empty');
    return execSync(c, cmd, timeoutSeconds);
  }

  async exec(req: ExecRequest): Promise<{ url: string }> {
    const c = this.ctr(req.container_id);
    if (!this.running(c)) throw new CriError(9, `container ${req.container_id} is not running`);
    if (!req.cmd?.length) throw new CriError(3, 'cmd must not be empty');
    if (!req.stdin && !req.stdout && !req.stderr) throw new CriError(3, 'one of stdin, stdout, or stderr must be set');
    return { url: await this.streaming.url({ kind: 'exec', req }) };
  }

  async attach(req: AttachRequest): Promise<{ url: string }> {
    const c = this.ctr(req.container_id);
    if (!this.running(c)) throw new CriError(9, `container ${req.container_id} is not running`);
    if (!req.stdin && !req.stdout && !req.stderr) throw new CriError(3, 'one of stdin, stdout, and stderr must be set');
    return { url: await this.streaming.url({ kind: 'attach', req } satisfies StreamRequest) };
  }

  /** Joins a connection to the container's own stdio (see `attachSession`). */
  private startAttach(req: AttachRequest): ExecSession {
    const c = this.ctr(req.container_id);
    if (!this.running(c)) throw new Error(`container ${req.container_id} is not running`);
    return attachSession(c);
  }

  /** Runs an exec for the streaming server: a process in the container's directory with its environment. */
  private startExec(req: ExecRequest): ExecSession {
    const c = this.ctr(req.container_id);
    if (!this.running(c)) throw new Error(`container ${req.container_id} is not running`);
    if (this.o.backend === 'hollow') {
      return { onStdout: () => undefined, onStderr: () => undefined, exited: Promise.resolve(0), kill: () => undefined };
    }
    return execSession(c, req);
  }

  // ---- stats (stats.ts) ------------------------------------------------------------

  async containerStats(id: string): Promise<ContainerStats> {
    return this.stats.containers([this.ctr(id)])[0]!;
  }

  /** Running containers only, as CRI defines ListContainerStats. */
  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    const ctrs = [...this.containers.values()].filter(
      (c) =>
        c.state === 'CONTAINER_RUNNING' &&
        (!filter?.id || c.id === filter.id) &&
        (!filter?.pod_sandbox_id || c.sandboxId === filter.pod_sandbox_id) &&
        matchLabels(filter?.label_selector, c.config.labels),
    );
    return this.stats.containers(ctrs);
  }

  private sandboxInfo(s: Sandbox): SandboxInfo {
    return { id: s.id, metadata: s.config.metadata, labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, pausePid: s.pause?.pid };
  }

  async podSandboxStats(id: string): Promise<PodSandboxStats> {
    return this.stats.sandboxes([this.sandboxInfo(this.sandbox(id))], [...this.containers.values()])[0]!;
  }

  /** Ready sandboxes only: a stopped one has no process left to measure. */
  async listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
    const sbs = [...this.sandboxes.values()].filter(
      (s) => s.state === 'SANDBOX_READY' && (!filter?.id || s.id === filter.id) && matchLabels(filter?.label_selector, s.config.labels),
    );
    return this.stats.sandboxes(
      sbs.map((s) => this.sandboxInfo(s)),
      [...this.containers.values()],
    );
  }

  // ---- images ---------------------------------------------------------------------

  async listImages(): Promise<Image[]> {
    return this.images.list();
  }

  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    return this.images.status(image);
  }

  async pullImage(image: ImageSpec): Promise<string> {
    return this.images.pull(image);
  }

  async removeImage(image: ImageSpec): Promise<void> {
    this.images.remove(image);
  }

  /** Stops every process (the runtime is going away). */
  async shutdown(): Promise<void> {
    this.streaming.close();
    for (const sb of [...this.sandboxes.values()]) await this.stopPodSandbox(sb.id);
  }
}

/**
 * etc/resolv.conf from the sandbox's DNS configuration (when it has one) and
 * etc/hostname, under a container's root. Returns them by the path a
 * container sees them at.
 */
function writeSandboxFiles(rootDir: string, config: PodSandboxConfig): Record<string, string> {
  mkdirSync(join(rootDir, 'etc'), { recursive: true });
  const files: Record<string, string> = {};
  const dns = config.dns_config;
  if (dns && (dns.servers?.length || dns.searches?.length || dns.options?.length)) {
    const lines = [...(dns.searches?.length ? [`search ${dns.searches.join(' ')}`] : []), ...(dns.servers ?? []).map((s) => `nameserver ${s}`)];
    if (dns.options?.length) lines.push(`options ${dns.options.join(' ')}`);
    writeFileSync((files['/etc/resolv.conf'] = join(rootDir, 'etc', 'resolv.conf')), `${lines.join('\n')}\n`);
  }
  writeFileSync((files['/etc/hostname'] = join(rootDir, 'etc', 'hostname')), `${config.hostname || config.metadata.name}\n`);
  return files;
}
