/**
 * docker-compose.yml for real: a Docker engine of the test's own (dockerd with
 * its own socket, data and exec roots, no default bridge), Debian's
 * docker-compose v1 building the image from the locally made root filesystem,
 * and the host's kubectl reaching the cluster through the published port —
 * nodes Ready, a Deployment Available, logs through the apiserver. Skipped
 * with the reason where there is no root, dockerd, docker-compose or kubectl.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, kubectlBinaries, stopChild, waitFor } from '@kubeling/testenv';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const kubectl = kubectlBinaries().default;

function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  for (const bin of ['/usr/sbin/dockerd', '/usr/bin/docker-compose'])
    if (!existsSync(bin)) return `${bin} is not installed (Debian's docker.io and docker-compose)`;
  if (!kubectl) return 'kubectl is not installed';
  if (!['/bin/busybox', '/usr/bin/busybox'].some((p) => existsSync(p))) return 'busybox is not installed (Debian busybox-static)';
  return undefined;
}
const skip = unavailable();

let dir: string;
let dockerd: ChildProcess | undefined;
let project: string;
let stateRel: string;
let port: number;
let env: NodeJS.ProcessEnv;
const ROOTFS = join(ROOT, '.kubeling', 'compose', 'rootfs.tar');
let hadRootfs = false;

function sh(cmd: string, args: string[], timeoutMs = 300_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}
const k = (...args: string[]) =>
  sh(kubectl!, [`--kubeconfig=${join(ROOT, stateRel, 'kubeconfig')}`, `--cache-dir=${join(dir, 'kube-cache')}`, ...args], 120_000);

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'kc-'));
  hadRootfs = existsSync(ROOTFS);
  project = `kubeling-test-${process.pid}`;
  stateRel = `.kubeling/compose-test-${process.pid}`;
  port = await freePort();
  const sock = join(dir, 'docker.sock');
  env = {
    ...process.env,
    DOCKER_HOST: `unix://${sock}`,
    KUBELING_COMPOSE_DIR: `./${stateRel}`,
    KUBELING_COMPOSE_PORT: String(port),
    COMPOSE_PROJECT_NAME: project,
    KUBECONFIG: '',
  };
  dockerd = spawn(
    '/usr/sbin/dockerd',
    [`--host=unix://${sock}`, `--data-root=${join(dir, 'data')}`, `--exec-root=${join(dir, 'exec')}`, `--pidfile=${join(dir, 'docker.pid')}`, '--bridge=none'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  dockerd.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  await waitFor(async () => (await sh('docker', ['version'], 10_000)).code === 0, 30_000, `dockerd (${log})`);
  // As `npm run compose:prepare`: the image runs the compiled components.
  const build = await sh(process.execPath, ['scripts/build.mjs']);
  assert.equal(build.code, 0, build.out);
  const prep = await sh(process.execPath, ['--conditions=kubeling-dist', 'scripts/dist/compose.js', `--dir=${join(ROOT, stateRel)}`, `--port=${port}`]);
  assert.equal(prep.code, 0, prep.out);
});

after(async () => {
  if (skip) return;
  const down = await sh('docker-compose', ['down', '-v', '--rmi', 'local'], 120_000);
  if (down.code !== 0) console.error(down.out);
  if (dockerd) await stopChild(dockerd, 20_000);
  rmSync(join(ROOT, stateRel), { recursive: true, force: true });
  if (!hadRootfs) rmSync(ROOTFS, { force: true });
  rmSync(dir, { recursive: true, force: true });
});

test('docker-compose up -d --build gives a cluster the host kubectl reaches: nodes Ready, a Deployment Available, logs', {
  skip: skip ?? false,
  timeout: 600_000,
}, async () => {
  const up = await sh('docker-compose', ['up', '-d', '--build'], 400_000);
  assert.equal(up.code, 0, up.out);
  const ps = await sh('docker-compose', ['ps']);
  for (const svc of ['etcd', 'apiserver', 'controller-manager', 'scheduler', 'metrics-server', 'kubelet-1', 'kubelet-2'])
    assert.match(ps.out, new RegExp(`${project}_${svc}_1 .*Up`), ps.out);
  await waitFor(
    async () => {
      const r = await k('get', 'nodes', '--no-headers');
      return r.code === 0 && (r.out.match(/\bReady\b/g) ?? []).length === 2;
    },
    90_000,
    'two Ready nodes',
  );
  const cfg = readFileSync(join(ROOT, stateRel, 'kubeconfig'), 'utf8');
  assert.match(cfg, new RegExp(`server: https://127\\.0\\.0\\.1:${port}`));
  const create = await k('create', 'deployment', 'web', '--image=busybox', '--replicas=2', '--', 'sh', '-c', 'echo hello from compose; sleep 3600');
  assert.equal(create.code, 0, create.out);
  const avail = await k('wait', '--for=condition=Available', 'deployment/web', '--timeout=90s');
  assert.equal(avail.code, 0, avail.out);
  const pods = JSON.parse((await k('get', 'pods', '-o', 'json')).out).items as { spec: { nodeName: string } }[];
  assert.equal(pods.length, 2);
  await waitFor(async () => /hello from compose/.test((await k('logs', 'deployment/web')).out), 30_000, 'logs through the apiserver and the kubelet');
  // The metrics server behind its APIService: two scrapes (15 s apart) and `kubectl top` has figures.
  await waitFor(
    async () => {
      const r = await k('top', 'nodes', '--no-headers');
      return r.code === 0 && r.out.trim().split('\n').length === 2;
    },
    120_000,
    'kubectl top nodes through the aggregation layer',
  );
});
