/**
 * Drives the real kubectl binaries against a test apiserver: a kubeconfig for the
 * server, a fresh --cache-dir per run, and the versioned binaries found beside
 * `kubectl` on PATH (kubectl.1.27 … kubectl.1.33) when present.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = join(dir, cmd);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/** Paths of the kubectl binaries: `default` plus each `1.NN` found beside it. */
export function kubectlBinaries(): Record<string, string> {
  const base = which('kubectl');
  if (!base) return {};
  const out: Record<string, string> = { default: base };
  let dir: string;
  try {
    dir = dirname(realpathSync(base));
  } catch {
    return out;
  }
  for (let minor = 27; minor <= 40; minor++) {
    const p = join(dir, `kubectl.1.${minor}`);
    if (existsSync(p)) out[`1.${minor}`] = p;
  }
  return out;
}

export class Kubectl {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly cacheDir: string;

  constructor(
    server: string,
    readonly binary: string,
    opts: { token?: string; namespace?: string; caPem?: string; certPem?: string; keyPem?: string } = {},
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'kubeling-kubectl-'));
    this.kubeconfig = join(this.dir, 'kubeconfig');
    this.cacheDir = join(this.dir, 'cache');
    writeFileSync(
      this.kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: test',
        '  cluster:',
        `    server: ${server}`,
        ...(opts.caPem ? [`    certificate-authority-data: ${Buffer.from(opts.caPem).toString('base64')}`] : []),
        'users:',
        '- name: test',
        opts.certPem && opts.keyPem
          ? `  user: {client-certificate-data: ${Buffer.from(opts.certPem).toString('base64')}, client-key-data: ${Buffer.from(opts.keyPem).toString('base64')}}`
          : `  user: ${opts.token ? `{token: ${opts.token}}` : '{}'}`,
        'contexts:',
        '- name: test',
        '  context: {cluster: test, user: test, namespace: ' + (opts.namespace ?? 'default') + '}',
        'current-context: test',
        '',
      ].join('\n'),
    );
  }

  private args(args: string[]): string[] {
    return [`--kubeconfig=${this.kubeconfig}`, `--cache-dir=${this.cacheDir}`, ...args];
  }

  run(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return new Promise((resolve) => {
      const child = execFile(
        this.binary,
        this.args(args),
        { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: '' } },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      if (opts.input !== undefined) child.stdin!.end(opts.input);
    });
  }

  /** Starts a long-running kubectl (e.g. `get -w`); the caller stops it. */
  spawn(args: string[]): { child: ChildProcess; output: () => string } {
    const child = spawn(this.binary, this.args(args), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return { child, output: () => out };
  }

  /** Writes a file in this kubectl's scratch directory and returns its path. */
  file(name: string, content: string): string {
    const p = join(this.dir, name);
    writeFileSync(p, content);
    return p;
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
