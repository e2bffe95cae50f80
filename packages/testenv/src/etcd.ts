/**
 * A throwaway etcd for tests and benchmarks: random loopback ports, a temporary
 * data directory, started as a child process and always stopped by PID (and its
 * data removed) by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdProcess {
  endpoint: string;
  /** PID of the running process (changes with `restart`). */
  pid: number;
  dataDir: string;
  /** SIGKILLs etcd, keeping its data (for outage tests). */
  kill(): Promise<void>;
  /** Starts etcd again on the same ports and data, after `kill`. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Polls `fn` until it answers a truthy value, and answers that value; a throw
 * counts as not yet. `onPoll` runs before each try (a stand-in that moves the
 * world on, say).
 */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, onPoll?: () => Promise<void>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (onPoll) await onPoll();
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.pid && tryKill(child.pid, 'SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.pid) tryKill(child.pid, 'SIGTERM');
  });
}

function tryKill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export interface StartEtcdOptions {
  binary?: string;
  name?: string;
  maxRequestBytes?: number;
  /** Where the data directory is made (the system's temporary directory unless given). */
  dataRoot?: string;
  /** How often health is polled while etcd starts (50 ms). */
  pollMs?: number;
  /** Let the process exit while etcd runs (whoever sets this stops etcd at exit). */
  unref?: boolean;
  /** More flags for etcd. */
  extraArgs?: string[];
}

export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdProcess> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(opts.dataRoot ?? tmpdir(), 'kubeling-etcd-'));
  const name = opts.name ?? 'testenv';
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  let stderr = '';
  const launch = (): ChildProcess => {
    const c = spawn(
      opts.binary ?? 'etcd',
      [
        `--name=${name}`,
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${name}=${peer}`,
        '--logger=zap',
        '--log-level=error',
        '--snapshot-count=100000',
        ...(opts.maxRequestBytes ? [`--max-request-bytes=${opts.maxRequestBytes}`] : []),
        ...(opts.extraArgs ?? []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' } },
    );
    c.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    if (opts.unref) {
      c.unref();
      (c.stderr as unknown as { unref(): void }).unref();
    }
    return c;
  };
  let child = launch();
  const healthy = () =>
    waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`etcd exited: ${stderr}`);
        const res = await fetch(`${client}/health`);
        return res.ok;
      },
      15_000,
      'etcd to become healthy',
      opts.pollMs,
    );
  const stop = async () => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await healthy();
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  const proc: EtcdProcess = {
    endpoint: client,
    pid: child.pid!,
    dataDir,
    kill: async () => {
      const c = child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      if (c.pid) tryKill(c.pid, 'SIGKILL');
      await exited;
    },
    restart: async () => {
      child = launch();
      proc.pid = child.pid!;
      await healthy();
    },
    stop,
  };
  return proc;
}

export interface EtcdCluster {
  endpoints: string[];
  members: { name: string; endpoint: string; child: ChildProcess }[];
  /** SIGKILLs one member (the rest keep quorum). */
  kill(i: number): Promise<void>;
  stop(): Promise<void>;
}

/** A throwaway etcd cluster of `n` members on loopback ports, for HA tests. */
export async function startEtcdCluster(n = 3, opts: { binary?: string } = {}): Promise<EtcdCluster> {
  const dataRoot = mkdtempSync(join(tmpdir(), 'kubeling-etcd-cluster-'));
  const ports = await Promise.all(Array.from({ length: n }, async () => [await freePort(), await freePort()] as const));
  const names = ports.map((_, i) => `m${i}`);
  const initial = ports.map(([, peer], i) => `${names[i]}=http://127.0.0.1:${peer}`).join(',');
  const token = `kubeling-${Date.now().toString(36)}`;
  const members = ports.map(([client, peer], i) => {
    const endpoint = `http://127.0.0.1:${client}`;
    const child = spawn(
      opts.binary ?? 'etcd',
      [
        `--name=${names[i]}`,
        `--data-dir=${join(dataRoot, names[i]!)}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=${initial}`,
        `--initial-cluster-token=${token}`,
        '--initial-cluster-state=new',
        '--logger=zap',
        '--log-level=error',
        '--heartbeat-interval=50',
        '--election-timeout=500',
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    return { name: names[i]!, endpoint, child };
  });
  const stop = async () => {
    for (const m of members) await stopChild(m.child);
    rmSync(dataRoot, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => (await Promise.all(members.map((m) => fetch(`${m.endpoint}/health`).then((r) => r.ok)))).every(Boolean),
      30_000,
      'the etcd cluster to become healthy',
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    endpoints: members.map((m) => m.endpoint),
    members,
    kill: async (i) => {
      const c = members[i]!.child;
      if (c.pid) tryKill(c.pid, 'SIGKILL');
      await new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(undefined) : c.once('exit', r)));
    },
    stop,
  };
}

/**
 * Runs `fn` every `periodMs` (after the previous run ends, errors ignored)
 * until `stop()`; a run in flight when it is stopped schedules nothing more.
 */
export function repeat(fn: () => Promise<unknown>, periodMs: number): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (!stopped)
      timer = setTimeout(
        () =>
          void fn()
            .catch(() => undefined)
            .finally(tick),
        periodMs,
      );
  };
  tick();
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
