/**
 * One etcd for the test files of one `node --test` run. Node 20 runs a
 * `--import` preload in each test file's process but not in the runner, so
 * the files agree among themselves: the runner's PID names a folder, the
 * first file to make it starts a keeper process, and every file waits for the
 * endpoint the keeper writes there. The keeper runs etcd until the runner is
 * gone (however it ended), then stops etcd and removes the folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestEtcd, type EtcdServer } from './etcd.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const readPid = (f: string): number | undefined => {
  try {
    return Number(readFileSync(f, 'utf8')) || undefined;
  } catch {
    return undefined;
  }
};

/** The folder of a runner's etcd. */
export const runnerDir = (runnerPid: number): string => join(tmpdir(), `kubeling-testenv-runner-${runnerPid}`);

function spawnKeeper(runnerPid: number, dir: string): void {
  const self = fileURLToPath(import.meta.url);
  const source = self.endsWith('.ts');
  // Beside this module: keeper.ts in the sources, keeper.js when built or bundled.
  const keeper = join(self, '..', source ? 'keeper.ts' : 'keeper.js');
  const child = spawn(process.execPath, [...(source ? ['--import', 'tsx'] : []), keeper, String(runnerPid), dir], { detached: true, stdio: 'ignore' });
  writeFileSync(join(dir, 'keeper.pid'), String(child.pid));
  child.unref();
}

/** The endpoint of the etcd shared by the test files of runner `runnerPid`, starting it if this file is the first. */
export async function runnerEtcd(runnerPid: number, timeoutMs = 30_000): Promise<string> {
  const dir = runnerDir(runnerPid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      mkdirSync(dir);
      spawnKeeper(runnerPid, dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const endpoint = join(dir, 'endpoint');
      if (existsSync(endpoint)) return readFileSync(endpoint, 'utf8').trim();
      if (existsSync(join(dir, 'error'))) throw new Error(`the shared etcd did not start: ${readFileSync(join(dir, 'error'), 'utf8')}`);
      const keeper = readPid(join(dir, 'keeper.pid'));
      if (keeper !== undefined && !alive(keeper)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    // The keeper is gone without an endpoint, or never came: a folder left by an earlier run of the same PID.
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error('the shared etcd did not start');
}

/** The keeper's work: run etcd, publish its endpoint, and stop it when the runner is gone. */
export async function keep(runnerPid: number, dir: string): Promise<void> {
  let etcd: EtcdServer;
  try {
    etcd = await startTestEtcd();
  } catch (e) {
    writeFileSync(join(dir, 'error'), String((e as Error).message));
    process.exit(1);
  }
  writeFileSync(join(dir, 'endpoint.tmp'), etcd.endpoint);
  renameSync(join(dir, 'endpoint.tmp'), join(dir, 'endpoint'));
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  setInterval(() => {
    if (!alive(runnerPid)) void shutdown();
  }, 200);
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}
