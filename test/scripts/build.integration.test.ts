/**
 * The compiled components (`npm run build`, which `npm run up`, compose and the
 * benchmarks run first): every component's main compiles, and a control plane
 * of compiled processes — apiserver, controller-manager, scheduler, a runtime
 * and a kubelet — runs a Deployment's pod, with no TypeScript loader in any of them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, request, startEtcd, stopChild, waitFor, type EtcdProcess } from '@kubeling/testenv';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMPONENTS = ['apiserver', 'controller-manager', 'scheduler', 'runtime', 'kubelet', 'proxy'];

let etcd: EtcdProcess;
let dir: string;
let url: string;
const children: ChildProcess[] = [];

function start(pkg: string, args: string[]): ChildProcess {
  const c = spawn(process.execPath, ['--conditions=kubeling-dist', join('packages', pkg, 'dist', 'main.js'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(c);
  return c;
}

/** The command lines of a process and all its descendants. */
function commandLines(pid: number): string[] {
  const out = [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(...commandLines(Number(p)));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

before(async () => {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
  dir = mkdtempSync(join(tmpdir(), 'kubeling-built-'));
  etcd = await startEtcd();
});

after(async () => {
  for (const c of children.reverse()) await stopChild(c);
  await etcd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('every component has a compiled main', () => {
  for (const c of COMPONENTS) assert.ok(existsSync(join(ROOT, 'packages', c, 'dist', 'main.js')), `${c}: dist/main.js`);
});

test('compiled processes run a Deployment to a Running pod, without tsx', { timeout: 120_000 }, async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const api = start('apiserver', [`--etcd-servers=${etcd.endpoint}`, `--secure-port=${port}`, '--log-level=warn']);
  await waitFor(
    async () => {
      if (api.exitCode !== null) throw new Error(`apiserver exited with ${api.exitCode}`);
      return (await fetch(`${url}/readyz`).catch(() => undefined))?.ok ?? false;
    },
    60_000,
    'apiserver ready',
  );
  start('controller-manager', [`--master=${url}`, '--secure-port=0', '--log-level=warn', '--leader-elect=false']);
  start('scheduler', [`--master=${url}`, '--secure-port=0', '--log-level=warn', '--leader-elect=false']);
  const sock = join(dir, 'rt.sock');
  start('runtime', [`--listen=unix://${sock}`, `--root=${join(dir, 'rt')}`, '--pod-cidr=127.6.40.0/24']);
  await waitFor(async () => existsSync(sock), 60_000, 'runtime socket');
  const kport = await freePort();
  start('kubelet', [
    '--node-name=built-1',
    `--master=${url}`,
    `--container-runtime-endpoint=unix://${sock}`,
    `--root-dir=${join(dir, 'kubelet')}`,
    `--port=${kport}`,
    '--node-status-update-frequency=1',
    '--log-level=warn',
  ]);
  await waitFor(
    async () => {
      const n = (await request(url, 'GET', '/api/v1/nodes/built-1')).body;
      return n?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    60_000,
    'node Ready',
  );

  const dep = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'built' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'built' } },
      template: { metadata: { labels: { app: 'built' } }, spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] } },
    },
  };
  assert.equal((await request(url, 'POST', '/apis/apps/v1/namespaces/default/deployments', dep)).status, 201);
  await waitFor(
    async () => {
      const items = (await request(url, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dbuilt')).body.items as { status?: { phase?: string } }[];
      return items.some((p) => p.status?.phase === 'Running');
    },
    60_000,
    'a Running pod',
  );

  for (const c of children) {
    assert.equal(c.exitCode, null, `${c.spawnargs[2]} is running`);
    for (const line of commandLines(c.pid!)) assert.doesNotMatch(line, /tsx|esbuild/, line);
  }
});
