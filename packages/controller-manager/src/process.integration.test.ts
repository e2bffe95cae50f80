/**
 * The controller-manager as processes: killed mid-rollout and started again, it
 * finishes the rollout with no extra ReplicaSet or Pod; of two processes only the
 * leader acts, and the other takes over within the lease duration when the
 * leader is killed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually, nodeArgs, packageMain, repeat, request, startTestEnv, stopChild, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let kubelet: { stop(): void } | undefined;
const children: ChildProcess[] = [];
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function startManager(extra: string[] = []): ChildProcess {
  const child = spawn(process.execPath, nodeArgs(packageMain('controller-manager'), [`--master=${env.url}`, '--secure-port=0', '--log-level=warn', ...extra]), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

/** Pods become ready two seconds after this stand-in kubelet first sees them, so rollouts take a while. */
const firstSeen = new Map<string, number>();
async function fakeKubelet(): Promise<void> {
  const pods = (await request(env.url, 'GET', '/api/v1/pods')).body.items as any[];
  for (const p of pods) {
    if (p.status?.phase === 'Running' || p.metadata.deletionTimestamp) continue;
    const seen = firstSeen.get(p.metadata.uid) ?? Date.now();
    firstSeen.set(p.metadata.uid, seen);
    if (Date.now() - seen < 2000) continue;
    p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z/, 'Z') }] };
    await request(env.url, 'PUT', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}/status`, p);
  }
}

const get = async (path: string) => (await request(env.url, 'GET', path)).body;

before(async () => {
  env = await startTestEnv();
  kubelet = repeat(fakeKubelet, 100);
});
after(async () => {
  kubelet?.stop();
  for (const c of children) await stopChild(c);
  await env?.stop();
});

describe('controller-manager processes', () => {
  test('killed mid-rollout and restarted, it finishes with no extra ReplicaSet or Pod', async () => {
    let cm = startManager(['--leader-elect=false']);
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'roll' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'roll' } },
        strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: { metadata: { labels: { app: 'roll' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } },
      },
    });
    await eventually(async () => (await get('/apis/apps/v1/namespaces/default/deployments/roll')).status?.availableReplicas === 3);
    await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/roll',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    // Kill it as soon as the new ReplicaSet exists, before the rollout is done.
    await eventually(async () => (await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Droll')).items.length === 2, 20_000);
    cm.kill('SIGKILL');
    await new Promise((r) => cm.once('exit', r));
    // The old ReplicaSet still had pods: the rollout was in progress when the process died.
    const midRS = (await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Droll')).items as any[];
    const oldRS = midRS.find((r) => r.spec.template.spec.containers[0].image === 'v1');
    assert.ok(oldRS.spec.replicas > 0, 'the rollout was still in progress when killed');
    cm = startManager(['--leader-elect=false']);
    await eventually(async () => {
      const d = await get('/apis/apps/v1/namespaces/default/deployments/roll');
      return d.status?.observedGeneration === 2 && d.status.updatedReplicas === 3 && d.status.availableReplicas === 3 && d.status.replicas === 3;
    }, 30_000);
    const rss = (await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Droll')).items;
    assert.equal(rss.length, 2);
    await eventually(
      async () => (await get('/api/v1/namespaces/default/pods?labelSelector=app%3Droll')).items.filter((p: any) => !p.metadata.deletionTimestamp).length === 3,
    );
    const pods = (await get('/api/v1/namespaces/default/pods?labelSelector=app%3Droll')).items;
    assert.ok(pods.every((p: any) => p.spec.containers[0].image === 'v2'));
    cm.kill('SIGTERM');
    await new Promise((r) => cm.once('exit', r));
  });

  test('of two processes only the leader acts; killing it hands over once its lease runs out', async () => {
    const flags = [
      '--leader-elect=true',
      '--leader-elect-lease-duration=3s',
      '--leader-elect-renew-deadline=2s',
      '--leader-elect-retry-period=500ms',
      '--controllers=serviceaccount',
    ];
    const a = startManager(flags);
    const holderA = await eventually(
      async () => (await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).spec?.holderIdentity as string | undefined,
    );
    const b = startManager(flags);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).spec.holderIdentity, holderA);
    // The leader acts: a new namespace gets its default ServiceAccount.
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'le-1' } });
    await eventually(async () => (await request(env.url, 'GET', '/api/v1/namespaces/le-1/serviceaccounts/default')).status === 200);
    const leader = holderA.endsWith(`_${a.pid}`) ? a : b;
    const other = leader === a ? b : a;
    const renewedBeforeKill = Date.parse((await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).spec.renewTime);
    leader.kill('SIGKILL');
    const holderB = await eventually(async () => {
      const h = (await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).spec?.holderIdentity as string;
      return h && h !== holderA && h;
    }, 15_000);
    assert.ok(holderB.endsWith(`_${other.pid}`));
    // Not before the dead leader's lease ran out (its last renewal was at or after the one read above).
    const acquired = Date.parse((await get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).spec.acquireTime);
    assert.ok(acquired - renewedBeforeKill >= 2500, `taken over ${acquired - renewedBeforeKill} ms after the last renewal seen, within a 3 s lease`);
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'le-2' } });
    await eventually(async () => (await request(env.url, 'GET', '/api/v1/namespaces/le-2/serviceaccounts/default')).status === 200);
  });
});
