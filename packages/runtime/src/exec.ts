/**
 * Commands in a running container of the `process` backend, and attaching to
 * it: ExecSync runs a command in the container's directory with its
 * environment and collects its output (killing its process group at the
 * timeout); an Exec session does the same for the streaming server, with
 * containerd's wording when the command cannot start; an attach session joins
 * the container's own stdio. Callers check that the container is running.
 */
import { spawn } from 'node:child_process';
import { CriError, type ExecRequest, type ExecSyncResponse } from '@kubeling/cri';
import { commandExists, enterArgv } from './isolation.js';
import { exitCode, signalGroup, type Attacher, type Ctr } from './process.js';
import type { ExecSession } from './streaming.js';

/**
 * What runs `cmd` in the container: the command itself, or for an isolated
 * container `nsenter` into its namespaces; an Error when the command is not
 * there (checked first, as runc does, since nsenter would start regardless).
 */
function execArgv(c: Ctr, named: string[]): string[] | Error {
  // A program of the image (`/agnhost dns-suffix`) runs what stands for it, as the container's own command does.
  const stand = c.binaries?.[named[0]!];
  const cmd = stand ? [...stand, ...named.slice(1)] : named;
  const iso = c.isolation;
  if (!iso) return cmd;
  if (!commandExists(cmd[0]!, c.env.PATH, iso.root)) return Object.assign(new Error('executable file not found in $PATH'), { code: 'ENOENT' });
  const pid = iso.initPid;
  if (pid === undefined || !c.proc) return new Error('container is not running');
  return enterArgv(iso.tools, iso.root, pid, cmd);
}

/** Runs `cmd` to its end; a command that cannot start exits 126, a timeout rejects. */
export function execSync(c: Ctr, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
  const argv = execArgv(c, cmd);
  if (argv instanceof Error) return Promise.resolve({ stdout: Buffer.alloc(0), stderr: Buffer.from(`exec: "${cmd[0]}": ${argv.message}`), exit_code: 126 });
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0]!, argv.slice(1), { cwd: c.cwd, env: c.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout!.on('data', (b: Buffer) => out.push(b));
    p.stderr!.on('data', (b: Buffer) => err.push(b));
    const timer =
      timeoutSeconds > 0
        ? setTimeout(() => {
            signalGroup(p.pid!, 'SIGKILL');
            reject(new CriError(4, `command ${JSON.stringify(cmd)} timed out`));
          }, timeoutSeconds * 1000)
        : undefined;
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

/** What containerd and runc report for an exec whose command cannot start. */
const execFailed = (req: ExecRequest, e: Error): string =>
  `Internal error occurred: error executing command in container: failed to exec in container: OCI runtime exec failed: exec failed: unable to start container process: exec: "${req.cmd[0]}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'executable file not found in $PATH' : e.message}: unknown`;

/** An exec session that never started. */
function failedSession(req: ExecRequest, e: Error): ExecSession {
  return { onStdout: () => undefined, onStderr: () => undefined, exited: Promise.resolve(execFailed(req, e)), kill: () => undefined };
}

/** Runs an exec for the streaming server: a process in the container's directory with its environment. */
export function execSession(c: Ctr, req: ExecRequest): ExecSession {
  const argv = execArgv(c, req.cmd);
  const p =
    argv instanceof Error
      ? undefined
      : spawn(argv[0]!, argv.slice(1), { cwd: c.cwd, env: c.env, stdio: [req.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
  if (!p) return failedSession(req, argv as Error);
  p.stdin?.on('error', () => undefined);
  const exited = new Promise<number | string>((resolve) => {
    p.once('error', (e) => resolve(execFailed(req, e)));
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
      signalGroup(p.pid, 'SIGKILL');
    },
  };
}

/**
 * Joins a connection to the container's own stdio: its output from now on,
 * its stdin when the container has one (closed after the first attach with
 * stdinOnce). Leaving detaches; the container goes on.
 */
export function attachSession(c: Ctr): ExecSession {
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
