/**
 * The local cluster's state directory (`.kubeling/` in the checkout, ignored by
 * git): what `npm run up` started (PIDs, ports), logs, etcd data, kubeconfig.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout: the folder with pnpm-workspace.yaml above this module (run from scripts/ or its build in scripts/dist/). */
export const ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'pnpm-workspace.yaml')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();
export const STATE = join(ROOT, '.kubeling');
export const LOGS = join(STATE, 'logs');
export const STATE_FILE = join(STATE, 'cluster.json');
export const KUBECONFIG = join(STATE, 'kubeconfig');

export interface Component {
  name: string;
  pid: number;
  /** URL of its health endpoint. */
  health?: string;
}

export interface ClusterState {
  etcdEndpoint: string;
  apiserverURL: string;
  components: Component[];
  /** Set once `npm run up` has started everything; a cluster without it was left half-made. */
  complete?: boolean;
}

export function readState(): ClusterState | undefined {
  if (!existsSync(STATE_FILE)) return undefined;
  try {
    return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

export function writeState(s: ClusterState): void {
  mkdirSync(STATE, { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(s, null, 2) + '\n');
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function healthy(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  // A unix socket (the runtime's CRI endpoint) is healthy once it exists.
  if (url.startsWith('unix://')) return existsSync(url.slice('unix://'.length));
  // A file the component writes once it is ready (the containerd node's endpoint).
  if (url.startsWith('file://')) return existsSync(url.slice('file://'.length));
  if (url.startsWith('https://')) {
    // The apiserver's certificate is signed by the cluster CA; the controller-manager's and the
    // scheduler's secure ports serve self-signed ones, which a health probe does not verify.
    const caFile = join(STATE, 'pki', 'ca.crt');
    const ca = existsSync(caFile) ? readFileSync(caFile) : undefined;
    const selfSigned = !url.includes('/readyz');
    return new Promise((resolve) => {
      const req = httpsGet(url, { ...(ca ? { ca } : {}), ...(selfSigned ? { rejectUnauthorized: false } : {}), timeout: 2000 }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.on('timeout', () => req.destroy());
    });
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}
