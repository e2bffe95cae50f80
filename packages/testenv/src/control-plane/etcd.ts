/**
 * The one etcd a test run shares. Every control plane keeps its keys under a
 * prefix of its own (upstream's --etcd-prefix), so many of them live in one
 * etcd and each cleans up by deleting its prefix.
 *
 * Which etcd:
 * - `KUBELING_ETCD_ENDPOINTS` (comma-separated URLs) when set: a runner's
 *   global setup started one and handed it to its workers this way;
 * - otherwise one started on first use by this process and stopped when it exits.
 *
 * The binary is `KUBELING_ETCD_BINARY`, else `etcd` on PATH; when neither is
 * there and the process may install packages (root with apt-get), Debian's
 * etcd-server is installed as `npm run up` does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { startEtcd } from '../etcd.js';

/** The variable a global setup sets so that worker processes use its etcd. */
export const ETCD_ENDPOINTS_ENV = 'KUBELING_ETCD_ENDPOINTS';

/** An etcd this process runs. */
export interface EtcdServer {
  endpoint: string;
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
}

let owned: Promise<EtcdServer> | undefined;

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const f = join(dir, name);
    try {
      accessSync(f, constants.X_OK);
      return f;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The etcd binary to run, installing Debian's when none is found and installing is possible. */
export function etcdBinary(): string {
  const given = process.env.KUBELING_ETCD_BINARY;
  if (given) return given;
  const found = onPath('etcd');
  if (found) return found;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && onPath('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update', '-q'], { stdio: 'ignore', env });
    execFileSync('apt-get', ['install', '-y', '-q', 'etcd-server'], { stdio: 'ignore', env });
    const installed = onPath('etcd');
    if (installed) return installed;
  }
  throw new Error('etcd was not found: put an etcd binary (3.4 or later) on PATH or name it in KUBELING_ETCD_BINARY (on Debian: apt-get install etcd-server)');
}

/**
 * Flags for a one-member etcd that lives as long as a test run: it elects
 * itself within tens of milliseconds instead of etcd's default second.
 */
export const TEST_ETCD_FLAGS = ['--heartbeat-interval=10', '--election-timeout=100'];

/** A memory-backed directory for etcd's data when the machine has one: fsync there costs nothing. */
export function etcdDataRoot(): string | undefined {
  const shm = '/dev/shm';
  try {
    accessSync(shm, constants.W_OK);
    return shm;
  } catch {
    return undefined;
  }
}

/** etcd as testenv runs it: the binary found, data in memory when possible, a quick election. */
export function startTestEtcd(o: { unref?: boolean } = {}): Promise<EtcdServer> {
  const root = etcdDataRoot();
  return startEtcd({ binary: etcdBinary(), name: 'kubeling-testenv', pollMs: 5, extraArgs: TEST_ETCD_FLAGS, ...o, ...(root ? { dataRoot: root } : {}) });
}

/**
 * Starts an etcd owned by this process (the global setups call this); the
 * same one for every later call. It is stopped by `stopEtcdServer()` or when
 * the process exits.
 */
export function startEtcdServer(): Promise<EtcdServer> {
  if (!owned) {
    const root = etcdDataRoot();
    owned = startEtcd({
      binary: etcdBinary(),
      name: 'kubeling-testenv',
      pollMs: 5,
      unref: true,
      extraArgs: TEST_ETCD_FLAGS,
      ...(root ? { dataRoot: root } : {}),
    });
    owned.then(
      (e) =>
        // A process that exits without stopping it still takes etcd (and its data) along.
        process.once('exit', () => {
          try {
            process.kill(e.pid, 'SIGKILL');
          } catch {
            // already gone
          }
          if (existsSync(e.dataDir)) rmSync(e.dataDir, { recursive: true, force: true });
        }),
      () => {
        owned = undefined;
      },
    );
  }
  return owned;
}

/** Stops the etcd this process started, if any. */
export async function stopEtcdServer(): Promise<void> {
  const o = owned;
  owned = undefined;
  if (o) await (await o).stop();
}

/** The endpoints of the shared etcd: the one a global setup named, or this process's own. */
export async function etcdEndpoints(): Promise<string[]> {
  const fromEnv = process.env[ETCD_ENDPOINTS_ENV];
  if (fromEnv) return fromEnv.split(',').filter(Boolean);
  return [(await startEtcdServer()).endpoint];
}
