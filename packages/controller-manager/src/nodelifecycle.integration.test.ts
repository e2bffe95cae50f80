/**
 * Node lifecycle against a real apiserver: a node whose lease stops being renewed
 * becomes Ready=Unknown with the unreachable taints; its pods are evicted per
 * their tolerations, and a ReplicaSet's pod is replaced.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['nodelifecycle', 'replicaset'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    nodeMonitorGracePeriodMs: 1500,
    nodeMonitorPeriodMs: 200,
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

test('a silent node becomes Unknown and tainted; its pods are evicted as their tolerations say', async () => {
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
