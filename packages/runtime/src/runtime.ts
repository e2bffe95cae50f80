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
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { dirname, join } from 'node:path';
import {
  CriError,
  CriLogWriter,
  GRPC_NOT_FOUND,
  GRPC_UNKNOWN,
  nowNanos,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerState,
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
  type PodSandboxStatus,
  type RuntimeCondition,
} from '@kubeling/cri';
import { catalogImage, imageId, parseImageRef } from './images.js';
import { StreamingServer, type ExecSession, type StreamRequest } from './streaming.js';

export interface RuntimeOptions {
  backend: 'process' | 'hollow';
  /** Directory for per-container roots. */
  root: string;
  /** Pod IPs come from here, e.g. 127.2.0.0/16 (must be inside 127.0.0.0/8). */
  podCIDR: string;
}

interface Sandbox {
  id: string;
  config: PodSandboxConfig;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: string;
  ip: string;
  pause?: ChildProcess | undefined;
}

interface Ctr {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  imageRef: string;
  state: ContainerState;
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  reason: string;
  message: string;
  logPath: string;
  rootDir: string;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  proc?: ChildProcess | undefined;
  exited?: Promise<void>;
  /** Connections attached to the container's stdio. */
  attachers: Set<Attacher>;
}

interface Attacher {
  stdout?: (b: Buffer) => void;
  stderr?: (b: Buffer) => void;
}

const newId = () => randomBytes(32).toString('hex');

/** A process's exit code as a shell reports it: its own, or 128 + the signal that ended it. */
const exitCode = (code: number | null, signal: NodeJS.Signals | null): number => code ?? 128 + (signal ? ((osConstants.signals as Record<string, number>)[signal] ?? 0) : 0);

function ipToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}
const intToIp = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

export class IpPool {
  private readonly base: number;
  private readonly size: number;
  private readonly used = new Set<number>();
  private next = 2;

  constructor(cidr: string) {
    const [ip, bits] = cidr.split('/');
    const n = Number(bits);
    if (!ip || !(n >= 8 && n <= 30) || ipToInt(ip) >>> 24 !== 127) throw new Error(`pod CIDR ${cidr} must be a /8–/30 inside 127.0.0.0/8`);
    this.size = 2 ** (32 - n);
    this.base = ipToInt(ip) - (ipToInt(ip) % this.size);
  }

  allocate(): string {
    for (let i = 0; i < this.size - 3; i++) {
      const off = ((this.next - 2 + i) % (this.size - 3)) + 2;
      if (!this.used.has(off)) {
        this.used.add(off);
        this.next = off + 1;
        return intToIp(this.base + off);
      }
    }
    throw new CriError(GRPC_UNKNOWN, 'no pod IPs left in the pod CIDR');
  }

  release(ip: string): void {
    this.used.delete(ipToInt(ip) - this.base);
  }
}

function matchLabels(want: Record<string, string> | undefined, have: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(want ?? {})) if (have?.[k] !== v) return false;
  return true;
}

const envValue = (v: Buffer | string | Uint8Array): string => (typeof v === 'string' ? v : Buffer.from(v).toString('utf8'));

export class KubelingRuntime implements CriRuntime {
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly containers = new Map<string, Ctr>();
  private readonly images = new Map<string, Image>();
  private readonly ips: IpPool;
  private readonly streaming = new StreamingServer((r) => (r.kind === 'exec' ? this.startExec(r.req) : this.startAttach(r.req)));

  constructor(private readonly o: RuntimeOptions) {
    this.ips = new IpPool(o.podCIDR);
    mkdirSync(o.root, { recursive: true });
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

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    if (!config?.metadata?.name) throw new CriError(3, 'sandbox config must have metadata');
    const id = newId();
    const sb: Sandbox = { id, config, state: 'SANDBOX_READY', createdAt: nowNanos(), ip: this.ips.allocate() };
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
    await Promise.all([...this.containers.values()].filter((c) => c.sandboxId === id && c.state === 'CONTAINER_RUNNING').map((c) => this.stopContainer(c.id, 0)));
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
      runtime_handler: '',
    };
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return [...this.sandboxes.values()]
      .filter((s) => (!filter?.id || s.id === filter.id) && (!filter?.state || s.state === filter.state.state) && matchLabels(filter?.label_selector, s.config.labels))
      .map((s) => ({ id: s.id, metadata: s.config.metadata, state: s.state, created_at: s.createdAt, labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {}, runtime_handler: '' }));
  }

  // ---- containers -----------------------------------------------------------------

  async createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const sb = this.sandbox(sandboxId);
    if (sb.state !== 'SANDBOX_READY') throw new CriError(9, `sandbox ${sandboxId} is not ready`);
    const ref = parseImageRef(config.image?.image ?? '');
    const img = ref ? this.images.get(imageId(ref)) : undefined;
    if (!ref || !img) throw new CriError(GRPC_NOT_FOUND, `failed to get image "${config.image?.image}": image not found`);
    const cat = catalogImage(ref)!;
    const id = newId();
    const rootDir = join(this.o.root, sandboxId.slice(0, 12), `${config.metadata.name}-${config.metadata.attempt}`);
    mkdirSync(rootDir, { recursive: true });
    for (const m of config.mounts ?? []) {
      const link = join(rootDir, m.container_path);
      mkdirSync(dirname(link), { recursive: true });
      try {
        symlinkSync(m.host_path, link);
      } catch {
        // already linked (same attempt recreated)
      }
    }
    const command = config.command?.length ? config.command : cat.entrypoint;
    const args = config.command?.length ? (config.args ?? []) : config.args?.length ? config.args : cat.cmd;
    const env: Record<string, string> = { ...cat.env };
    for (const kv of config.envs ?? []) env[kv.key] = envValue(kv.value);
    env.POD_IP = sb.ip;
    env.HOSTNAME = sandboxConfig?.hostname || sb.config.hostname || sb.config.metadata.name;
    env.KUBELING_ROOT = rootDir;
    const port = (sb.config.port_mappings ?? [])[0]?.container_port;
    if (cat.repository.endsWith('/nginx') && port && !env.NGINX_PORT) env.NGINX_PORT = String(port);
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
      argv: [...command, ...args],
      env,
      cwd: config.working_dir || rootDir,
      attachers: new Set(),
    });
    return id;
  }

  private ctr(id: string): Ctr {
    const c = this.containers.get(id);
    if (!c) throw new CriError(GRPC_NOT_FOUND, `an error occurred when try to find container "${id}": not found`);
    return c;
  }

  private exited(c: Ctr, code: number, reason: string, message = ''): void {
    c.state = 'CONTAINER_EXITED';
    c.exitCode = code;
    c.finishedAt = nowNanos();
    c.reason = reason;
    c.message = message;
  }

  async startContainer(id: string): Promise<void> {
    const c = this.ctr(id);
    if (c.state !== 'CONTAINER_CREATED') throw new CriError(9, `container ${id} is in ${c.state} state`);
    if (this.o.backend === 'hollow') {
      c.state = 'CONTAINER_RUNNING';
      c.startedAt = nowNanos();
      return;
    }
    if (!c.argv.length) {
      this.exited(c, 128, 'StartError', 'failed to create containerd task: no command specified: unknown');
      throw new CriError(GRPC_UNKNOWN, c.message);
    }
    const log = new CriLogWriter(c.logPath);
    const proc = spawn(c.argv[0]!, c.argv.slice(1), { cwd: c.cwd, env: c.env, detached: true, stdio: [c.config.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    proc.stdin?.on('error', () => undefined);
    const spawned = new Promise<Error | undefined>((resolve) => {
      proc.once('spawn', () => resolve(undefined));
      proc.once('error', (e) => resolve(e));
    });
    const err = await spawned;
    if (err) {
      const msg = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `exec: "${c.argv[0]}": executable file not found in $PATH` : err.message;
      this.exited(c, 128, 'StartError', `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: ${msg}: unknown`);
      await log.close();
      throw new CriError(GRPC_UNKNOWN, c.message);
    }
    c.proc = proc;
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = nowNanos();
    log.follow(proc.stdout!, 'stdout');
    log.follow(proc.stderr!, 'stderr');
    // Attached connections see the output too (the log writer reads it as text).
    proc.stdout!.on('data', (d: string | Buffer) => c.attachers.forEach((a) => a.stdout?.(Buffer.from(d))));
    proc.stderr!.on('data', (d: string | Buffer) => c.attachers.forEach((a) => a.stderr?.(Buffer.from(d))));
    c.exited = new Promise((resolve) => {
      proc.once('close', (code, signal) => {
        const exit = exitCode(code, signal);
        this.exited(c, exit, exit === 0 ? 'Completed' : 'Error');
        c.proc = undefined;
        void log.close().then(resolve);
      });
    });
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    const c = this.ctr(id);
    if (c.state === 'CONTAINER_CREATED') {
      this.exited(c, 0, '', '');
      return;
    }
    if (c.state !== 'CONTAINER_RUNNING') return;
    if (this.o.backend === 'hollow') {
      this.exited(c, 143, 'Error');
      return;
    }
    const proc = c.proc;
    if (!proc?.pid) return;
    const group = (sig: NodeJS.Signals) => {
      try {
        process.kill(-proc.pid!, sig);
      } catch {
        // gone
      }
    };
    group(timeoutSeconds > 0 ? 'SIGTERM' : 'SIGKILL');
    if (timeoutSeconds > 0) {
      const killer = setTimeout(() => group('SIGKILL'), timeoutSeconds * 1000);
      await c.exited;
      clearTimeout(killer);
    } else await c.exited;
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
      .filter((c) => (!filter?.id || c.id === filter.id) && (!filter?.pod_sandbox_id || c.sandboxId === filter.pod_sandbox_id) && (!filter?.state || c.state === filter.state.state) && matchLabels(filter?.label_selector, c.config.labels))
      .map((c) => ({ id: c.id, pod_sandbox_id: c.sandboxId, metadata: c.config.metadata, image: c.config.image, image_ref: c.imageRef, state: c.state, created_at: c.createdAt, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} }));
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

  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    const c = this.ctr(id);
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError(9, `container ${id} is not running`);
    if (this.o.backend === 'hollow') return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exit_code: 0 };
    if (!cmd.length) throw new CriError(3, 'cmd must not be empty');
    return new Promise((resolve, reject) => {
      const p = spawn(cmd[0]!, cmd.slice(1), { cwd: c.cwd, env: c.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      p.stdout!.on('data', (b: Buffer) => out.push(b));
      p.stderr!.on('data', (b: Buffer) => err.push(b));
      const timer = timeoutSeconds > 0 ? setTimeout(() => {
        try {
          process.kill(-p.pid!, 'SIGKILL');
        } catch {
          // gone
        }
        reject(new CriError(4, `command ${JSON.stringify(cmd)} timed out`));
      }, timeoutSeconds * 1000) : undefined;
      p.once('error', (e) => {
        if (timer) clearTimeout(timer);
        resolve({ stdout: Buffer.alloc(0), stderr: Buffer.from(`exec: "${cmd[0]}": ${e.message}`), exit_code: 126 });
      });
      p.once('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), exit_code: exitCode(code, signal) });
      });
    });
  }

  async exec(req: ExecRequest): Promise<{ url: string }> {
    const c = this.ctr(req.container_id);
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError(9, `container ${req.container_id} is not running`);
    if (!req.cmd?.length) throw new CriError(3, 'cmd must not be empty');
    if (!req.stdin && !req.stdout && !req.stderr) throw new CriError(3, 'one of stdin, stdout, or stderr must be set');
    return { url: await this.streaming.url({ kind: 'exec', req }) };
  }

  async attach(req: AttachRequest): Promise<{ url: string }> {
    const c = this.ctr(req.container_id);
    if (c.state !== 'CONTAINER_RUNNING') throw new CriError(9, `container ${req.container_id} is not running`);
    if (!req.stdin && !req.stdout && !req.stderr) throw new CriError(3, 'one of stdin, stdout, and stderr must be set');
    return { url: await this.streaming.url({ kind: 'attach', req } satisfies StreamRequest) };
  }

  /**
   * Joins a connection to the container's own stdio: its output from now on,
   * its stdin when the container has one (closed after the first attach with
   * stdinOnce). Leaving detaches; the container goes on.
   */
  private startAttach(req: AttachRequest): ExecSession {
    const c = this.ctr(req.container_id);
    if (c.state !== 'CONTAINER_RUNNING') throw new Error(`container ${req.container_id} is not running`);
    const mine: Attacher = {};
    c.attachers.add(mine);
    const exited = (c.exited ?? new Promise<void>(() => undefined)).then(() => 0);
    return {
      stdin: (b) => c.proc?.stdin?.write(b),
      endStdin: () => {
        if (c.config.stdin_once) c.proc?.stdin?.end();
      },
      onStdout: (cb) => (mine.stdout = cb),
      onStderr: (cb) => (mine.stderr = cb),
      exited,
      kill: () => {
        c.attachers.delete(mine);
        if (c.config.stdin_once) c.proc?.stdin?.end();
      },
    };
  }

  /** Runs an exec for the streaming server: a process in the container's directory with its environment. */
  private startExec(req: ExecRequest): ExecSession {
    const c = this.ctr(req.container_id);
    if (c.state !== 'CONTAINER_RUNNING') throw new Error(`container ${req.container_id} is not running`);
    if (this.o.backend === 'hollow') {
      return { onStdout: () => undefined, onStderr: () => undefined, exited: Promise.resolve(0), kill: () => undefined };
    }
    const p = spawn(req.cmd[0]!, req.cmd.slice(1), { cwd: c.cwd, env: c.env, stdio: [req.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
    p.stdin?.on('error', () => undefined);
    const exited = new Promise<number | string>((resolve) => {
      p.once('error', (e) =>
        // What containerd and runc report for a command that cannot start.
        resolve(`Internal error occurred: error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: "${req.cmd[0]}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'executable file not found in $PATH' : e.message}: unknown`),
      );
      p.once('close', (code, signal) => resolve(exitCode(code, signal)));
    });
    return {
      stdin: (b) => p.stdin?.write(b),
      endStdin: () => p.stdin?.end(),
      onStdout: (cb) => p.stdout!.on('data', cb),
      onStderr: (cb) => p.stderr!.on('data', cb),
      exited,
      kill: () => {
        if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
        try {
          process.kill(-p.pid, 'SIGKILL');
        } catch {
          // gone
        }
      },
    };
  }

  // ---- images ---------------------------------------------------------------------

  async listImages(): Promise<Image[]> {
    return [...this.images.values()];
  }

  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    const ref = parseImageRef(image?.image ?? '');
    if (!ref) {
      // An id asks by id.
      return [...this.images.values()].find((i) => i.id === image?.image);
    }
    return this.images.get(imageId(ref));
  }

  async pullImage(image: ImageSpec): Promise<string> {
    const name = image?.image ?? '';
    const ref = parseImageRef(name);
    if (!ref) throw new CriError(GRPC_UNKNOWN, `failed to pull and unpack image "${name}": invalid reference format`);
    const cat = catalogImage(ref);
    if (!cat) {
      throw new CriError(GRPC_UNKNOWN, `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": ${ref.full}: not found`);
    }
    const id = imageId(ref);
    const cur = this.images.get(id);
    const tags = new Set([...(cur?.repo_tags ?? []), ...(ref.tag ? [`${ref.repository}:${ref.tag}`] : [])]);
    this.images.set(id, { id, repo_tags: [...tags], repo_digests: [`${ref.repository}@${id}`], size: cat.size, username: '', spec: { image: id }, pinned: cat.repository.endsWith('/pause') });
    return id;
  }

  async removeImage(image: ImageSpec): Promise<void> {
    const img = await this.imageStatus(image);
    if (img) this.images.delete(img.id);
  }

  /** Stops every process (the runtime is going away). */
  async shutdown(): Promise<void> {
    this.streaming.close();
    for (const sb of [...this.sandboxes.values()]) await this.stopPodSandbox(sb.id);
  }
}
