/**
 * Node lifecycle against a real apiserver: a node registered with
 * TaintNodesByCondition's not-ready taint loses it as soon as it posts Ready
 * (and its condition taints follow its conditions, not the monitor period); a
 * node whose lease stops being renewed becomes Ready=Unknown with the
 * unreachable taints; its pods are evicted per their tolerations.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager | undefined;

/** A manager running the node lifecycle controller with these monitor timings. */
async function startManager(nodeMonitorPeriodMs: number): Promise<ControllerManager> {
  await mgr?.stop();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['nodelifecycle', 'replicaset'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    nodeMonitorGracePeriodMs: 1500,
    nodeMonitorPeriodMs,
  });
  await mgr.start();
  return mgr;
}

before(async () => {
  // As kube-apiserver by default: new nodes are tainted not-ready until they are Ready.
  env = await startTestEnv({ server: { admission: { enable: ['TaintNodesByCondition'] } } });
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

const stamp = () => new Date().toISOString().replace(/\.\d+Z/, 'Z');
const condition = (type: string, status: string, reason: string) => ({ type, status, reason, lastHeartbeatTime: stamp(), lastTransitionTime: stamp() });
const taintsOf = async (name: string) =>
  ((await request(env.url, 'GET', `/api/v1/nodes/${name}`)).body.spec?.taints ?? []).map((t: any) => `${t.key}:${t.effect}`).sort();

test('condition taints follow node updates at once, not the monitor period', async () => {
  // A monitor pass only at start and then after a minute: whatever happens below is the event-driven pass.
  await startManager(60_000);
  // Registered as a kubelet does, with its first status: not ready yet.
  const created = await request(env.url, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'fresh' },
    status: { conditions: [condition('Ready', 'False', 'KubeletNotReady')] },
  });
  assert.equal(created.status, 201);
  assert.deepEqual(
    created.body.spec.taints.map((t: any) => `${t.key}:${t.effect}`),
    ['node.kubernetes.io/not-ready:NoSchedule'],
  );
  // As the kubelet posts it: a merge patch, which a concurrent taint write cannot make conflict.
  const postStatus = async (conditions: unknown[]) => {
    const res = await request(env.url, 'PATCH', '/api/v1/nodes/fresh/status', { status: { conditions } }, { contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 200);
  };
  const t0 = Date.now();
  await postStatus([condition('Ready', 'True', 'KubeletReady')]);
  await eventually(async () => (await taintsOf('fresh')).length === 0, 10_000);
  // Sooner than a default controller-manager's 5 s monitor period (this one's is a minute).
  const lifted = Date.now() - t0;
  assert.ok(lifted < 5000, `the not-ready taint went ${lifted} ms after Ready`);

  await postStatus([condition('Ready', 'True', 'KubeletReady'), condition('MemoryPressure', 'True', 'KubeletHasInsufficientMemory')]);
  await eventually(async () => (await taintsOf('fresh')).join() === 'node.kubernetes.io/memory-pressure:NoSchedule', 5000);

  // Cordoning taints unschedulable; uncordoning lifts it.
  const cordon = (unschedulable: boolean) =>
    request(env.url, 'PATCH', '/api/v1/nodes/fresh', { spec: { unschedulable } }, { contentType: 'application/merge-patch+json' });
  await cordon(true);
  await eventually(
    async () => (await taintsOf('fresh')).join() === 'node.kubernetes.io/memory-pressure:NoSchedule,node.kubernetes.io/unschedulable:NoSchedule',
    5000,
  );
  await cordon(false);
  await postStatus([condition('Ready', 'True', 'KubeletReady'), condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory')]);
  await eventually(async () => (await taintsOf('fresh')).length === 0, 5000);
  await request(env.url, 'DELETE', '/api/v1/nodes/fresh');
});

test('a silent node becomes Unknown and tainted; its pods are evicted as their tolerations say', async () => {
  await startManager(200);
  const now = new Date().toISOString();
  await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
  const node = (await request(env.url, 'GET', '/api/v1/nodes/n1')).body;
  await request(env.url, 'PUT', '/api/v1/nodes/n1/status', {
    ...node,
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          lastHeartbeatTime: now.replace(/\.\d+Z/, 'Z'),
          lastTransitionTime: now.replace(/\.\d+Z/, 'Z'),
        },
      ],
    },
  });
  await request(env.url, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'n1' },
    spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: now.replace('Z', '000Z') },
  });
  const pod = (name: string, tolerations: unknown[] = []) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName: 'n1', tolerations, containers: [{ name: 'c', image: 'nginx' }] },
  });
  // DefaultTolerationSeconds gives every pod 300 s; this one asks for none.
  await request(
    env.url,
    'POST',
    '/api/v1/namespaces/default/pods',
    pod('intolerant', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }]),
  );
  await request(
    env.url,
    'POST',
    '/api/v1/namespaces/default/pods',
    pod('patient', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }]),
  );
  await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('forever', [{ operator: 'Exists' }]));
  const n = await eventually(async () => {
    const x = (await request(env.url, 'GET', '/api/v1/nodes/n1')).body;
    return x.spec?.taints?.length === 2 && x;
  });
  const ready = n.status.conditions.find((c: any) => c.type === 'Ready');
  assert.equal(ready.status, 'Unknown');
  assert.equal(ready.reason, 'NodeStatusUnknown');
  assert.deepEqual(n.spec.taints.map((t: any) => `${t.key}:${t.effect}`).sort(), [
    'node.kubernetes.io/unreachable:NoExecute',
    'node.kubernetes.io/unreachable:NoSchedule',
  ]);
  const deleting = async (name: string) => !!(await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).body.metadata?.deletionTimestamp;
  await eventually(() => deleting('intolerant'), 5000);
  assert.equal(await deleting('patient'), false);
  await eventually(() => deleting('patient'), 6000);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await deleting('forever'), false);
});
