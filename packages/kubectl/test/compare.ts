/**
 * Runs the real kubectl (1.33 when installed beside `kubectl` on PATH, else
 * that `kubectl`) and ours against one CannedServer with the same kubeconfig,
 * each with its own discovery cache, so a test can assert they print the same.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { run } from '../src/cli.js';
import type { CannedServer } from './canned-server.js';

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function findKubectl(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = join(dir, 'kubectl');
    if (!dir || !existsSync(p)) continue;
    const versioned = join(dirname(realpathSync(p)), 'kubectl.1.33');
    return existsSync(versioned) ? versioned : p;
  }
  return undefined;
}

/** The real kubectl to compare with, or undefined (then only our output is checked). */
export const realKubectl: string | undefined = findKubectl();

export class Both {
  private readonly dir: string;
  private readonly kubeconfig: string;

  constructor(readonly server: CannedServer) {
    this.dir = mkdtempSync(join(tmpdir(), 'kubectl-both-'));
    this.kubeconfig = join(this.dir, 'kubeconfig');
    writeFileSync(
      this.kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${server.url}"}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: x\n`,
    );
  }

  async ours(args: string[]): Promise<Result> {
    let stdout = '';
    let stderr = '';
    const code = await run(['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.dir, 'ours'), ...args], {
      out: (s) => (stdout += s),
      err: (s) => (stderr += s),
      env: { HOME: this.dir },
    });
    return { code, stdout, stderr };
  }

  /** The real kubectl's result, or undefined when none is installed. */
  theirs(args: string[]): Promise<Result | undefined> {
    const bin = realKubectl;
    if (!bin) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      execFile(
        bin,
        [`--kubeconfig=${this.kubeconfig}`, `--cache-dir=${join(this.dir, 'theirs')}`, ...args],
        { timeout: 30_000, env: { ...process.env, KUBECONFIG: '', HOME: this.dir } },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
