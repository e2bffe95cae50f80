/**
 * The scheduler as processes: two with leader election, only the Lease holder
 * binds; killing it hands over within the lease duration; health and metrics
 * answer on the secure port; a bad config file stops the process with a reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, getSelfSigned, nodeArgs, packageMain, request, startTestEnv, stopChild, waitFor, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
const children: ChildProcess[] = [];
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler';

function startScheduler(port: number, extra: string[] = []): ChildProcess {
  const child = spawn(
    process.execPath,
    nodeArgs(packageMain('scheduler'), [
      `--master=${env.url}`,
      `--secure-port=${port}`,
      '--log-level=warn',
      '--leader-elect-lease-duration=3s',
      '--leader-elect-renew-deadline=2s',
      '--leader-elect-retry-period=500ms',
      ...extra,
    ]),
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  children.push(child);
  return child;
}

before(async () => {
  env = await startTestEnv();
  await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'only' } });
  await request(
    env.url,
    'PATCH',
    '/api/v1/nodes/only/status',
    { status: { allocatable: { cpu: '8', memory: '16Gi', pods: '110' } } },
    { contentType: 'application/merge-patch+json' },
  );
});
after(async () => {
  for (const c of children) await stopChild(c);
  await env?.stop();
});

const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
const nodeOf = async (name: string) => (await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).body.spec?.nodeName;

test('two schedulers: the leader binds, reports metrics, and the other takes over when it dies', async () => {
  const [p1, p2] = [await freePort(), await freePort()];
  const s1 = startScheduler(p1);
  await waitFor(async () => !!(await request(env.url, 'GET', LEASE)).body.spec?.holderIdentity, 20_000, 'a leader');
  const s2 = startScheduler(p2);
  await waitFor(
    async () => (await getSelfSigned(`https://127.0.0.1:${p2}/healthz`).catch(() => ({ status: 0 }))).status === 200,
    20_000,
    'the second scheduler to serve health',
  );
  const holder = (await request(env.url, 'GET', LEASE)).body.spec.holderIdentity as string;
  assert.ok(holder.endsWith(`_${s1.pid}`), `leader ${holder} is the first process`);
  await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('first'));
  await waitFor(async () => (await nodeOf('first')) === 'only', 10_000, 'first bound');
  const metrics = (await getSelfSigned(`https://127.0.0.1:${p1}/metrics`)).text;
  assert.match(metrics, /scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} 1/);
  assert.match(metrics, /scheduler_pending_pods\{queue="active"\} 0/);
  assert.match(metrics, /scheduler_pod_scheduling_sli_duration_seconds_count\{attempts="1"\} 1/);
  assert.match(metrics, /leader_election_master_status\{name="kube-scheduler"\} 1/);
  assert.match((await getSelfSigned(`https://127.0.0.1:${p2}/metrics`)).text, /leader_election_master_status\{name="kube-scheduler"\} 0/);
  s1.kill('SIGKILL');
  const killedAt = Date.now();
  await waitFor(async () => ((await request(env.url, 'GET', LEASE)).body.spec.holderIdentity as string).endsWith(`_${s2.pid}`), 15_000, 'the second to lead');
  const handover = Date.now() - killedAt;
  assert.ok(handover < 3000 + 2000, `took over in ${handover} ms (lease 3 s)`);
  await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('second'));
  await waitFor(async () => (await nodeOf('second')) === 'only', 10_000, 'second bound by the new leader');
});

test('a bad --config file stops the scheduler with the reason', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sched-'));
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n',
    );
    const r = spawnSync(process.execPath, nodeArgs(packageMain('scheduler'), [`--master=${env.url}`, `--config=${file}`, '--secure-port=0']), {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /plugin "NoSuchPlugin" does not exist/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
