/**
 * A container of the `process` backend: its record, and the host process
 * group that runs it. Starting spawns the command detached (its own process
 * group) with the container's env and directory, stdin piped when the
 * container has one, and stdout/stderr into the CRI log file and to whatever
 * is attached. A command that cannot start exits at once with 128 and
 * containerd's StartError wording. Stopping signals the whole group: SIGTERM,
 * then SIGKILL after the timeout (at once for a timeout of 0). The exit code
 * is the process's own, or 128 + the signal that ended it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { CriError, CriLogWriter, GRPC_UNKNOWN, nowNanos, type ContainerConfig, type ContainerState } from '@kubeling/cri';
import { commandExists, waitForInit, type ContainerRoot, type IsolationTools } from './isolation.js';

/** A connection attached to a container's stdio. */
export interface Attacher {
  stdout?: (b: Buffer) => void;
  stderr?: (b: Buffer) => void;
}

export interface Ctr {
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
  /** The image's programs by path (`/agnhost`) and what stands for each here: a command or an exec naming one runs that. */
  binaries?: Record<string, string[]> | undefined;
  /** Set when the container runs in namespaces of its own (`isolation.ts`): `argv` starts it there, `command` is what it runs. */
  isolation?: { tools: IsolationTools; root: ContainerRoot; command: string[]; initPid?: number | undefined } | undefined;
}

/** What runc says of a command that is not there. */
export const NOT_FOUND = (cmd: string) => `exec: "${cmd}": executable file not found in $PATH`;

/** A process's exit code as a shell reports it: its own, or 128 + the signal that ended it. */
export const exitCode = (code: number | null, signal: NodeJS.Signals | null): number =>
  code ?? 128 + (signal ? ((osConstants.signals as Record<string, number>)[signal] ?? 0) : 0);

/** Signals a detached process's whole group; one already gone is no error. */
export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // gone
  }
}

export function markExited(c: Ctr, code: number, reason: string, message = ''): void {
  c.state = 'CONTAINER_EXITED';
  c.exitCode = code;
  c.finishedAt = nowNanos();
  c.reason = reason;
  c.message = message;
}

/** Running, with a process to attach to or exec in: not so between its process's end and the exit being reported. */
export const hasProcess = (c: Ctr): boolean => c.state === 'CONTAINER_RUNNING' && c.proc !== undefined;

/** Runs a created container's command; throws (a CriError) when it cannot start, leaving the container exited. */
export async function startProcess(c: Ctr): Promise<void> {
  const iso = c.isolation;
  if (!(iso?.command ?? c.argv).length) {
    markExited(c, 128, 'StartError', 'failed to create containerd task: no command specified: unknown');
    throw new CriError(GRPC_UNKNOWN, c.message);
  }
  if (iso && !commandExists(iso.command[0]!, c.env.PATH, iso.root)) return startFailed(c, NOT_FOUND(iso.command[0]!));
  const log = new CriLogWriter(c.logPath);
  const proc = spawn(c.argv[0]!, c.argv.slice(1), { cwd: c.cwd, env: c.env, detached: true, stdio: [c.config.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  proc.stdin?.on('error', () => undefined);
  const spawned = new Promise<Error | undefined>((resolve) => {
    proc.once('spawn', () => resolve(undefined));
    proc.once('error', (e) => resolve(e));
  });
  const err = await spawned;
  if (err) {
    await log.close();
    return startFailed(c, (err as NodeJS.ErrnoException).code === 'ENOENT' ? NOT_FOUND(c.argv[0]!) : err.message);
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
      // Gone at once: nothing attaches to it or execs in it from now on (`hasProcess`).
      c.proc = undefined;
      const exit = exitCode(code, signal);
      // Exited once its output is all in the log, as containerd reports an exit after draining the IO.
      void log.close().then(() => {
        markExited(c, exit, exit === 0 ? 'Completed' : 'Error');
        resolve();
      });
    });
  });
  // Started once its namespaces are made and PID 1 runs in them (exec enters them from then on).
  if (iso) iso.initPid = await waitForInit(proc.pid!, () => c.proc !== proc);
}

/** A container whose command could not start: exited 128 with containerd's StartError wording. */
function startFailed(c: Ctr, msg: string): never {
  markExited(
    c,
    128,
    'StartError',
    `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: ${msg}: unknown`,
  );
  throw new CriError(GRPC_UNKNOWN, c.message);
}

/** Stops a running container's process group and waits for it to exit (and its log to close). */
export async function stopProcess(c: Ctr, timeoutSeconds: number): Promise<void> {
  const proc = c.proc;
  // Its process gone already, its exit is on the way (the log closing).
  if (!proc?.pid) return c.exited;
  const pid = proc.pid;
  signalGroup(pid, timeoutSeconds > 0 ? 'SIGTERM' : 'SIGKILL');
  if (timeoutSeconds > 0) {
    const killer = setTimeout(() => signalGroup(pid, 'SIGKILL'), timeoutSeconds * 1000);
    await c.exited;
    clearTimeout(killer);
  } else await c.exited;
}
