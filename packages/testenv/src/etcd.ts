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
  pid: number;
  dataDir: string;
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

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
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

export async function startEtcd(opts: { binary?: string; name?: string } = {}): Promise<EtcdProcess> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'kubeling-etcd-'));
  const name = opts.name ?? 'testenv';
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
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
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' } },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const stop = async () => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`etcd exited: ${stderr}`);
        const res = await fetch(`${client}/health`);
        return res.ok;
      },
      15_000,
      'etcd to become healthy',
    );
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  return { endpoint: client, pid: child.pid!, dataDir, stop };
}
