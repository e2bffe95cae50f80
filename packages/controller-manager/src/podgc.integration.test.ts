/**
 * Pod GC against a real etcd and apiserver: a pod bound to a node that does
 * not exist is marked Failed with DisruptionTarget (DeletionByPodGC) and
 * deleted after the quarantine; terminated pods beyond the threshold go,
 * oldest first; pods on a live node stay.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { readWatch, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['podgc', 'serviceaccount'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    podGC: { periodMs: 200, quarantineMs: 500, terminatedThreshold: 2 },
  });
  await mgr.start();
  await waitFor(
    async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    10_000,
    'default ServiceAccount',
  );
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

const pod = (name: string, nodeName?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
});
const exists = async (name: string) => (await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).status === 200;

test('a pod on a node that does not exist is marked Failed (DeletionByPodGC) and removed; one on a live node stays', async () => {
  assert.equal((await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })).status, 201);
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('alive', 'n1'))).status, 201);
  const created = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('orphan', 'ghost'));
  assert.equal(created.status, 201);
  const seen = await readWatch(
    `${env.url}/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name%3Dorphan&resourceVersion=${created.body.metadata.resourceVersion}`,
    (ev) => ev.type === 'DELETED',
    15_000,
  );
  const failed = seen.find((e) => e.type === 'MODIFIED' && e.object.status?.phase === 'Failed');
  assert.ok(failed, 'marked Failed before deletion');
  assert.deepEqual(
    failed.object.status.conditions
      .filter((c: Record<string, string>) => c.type === 'DisruptionTarget')
      .map((c: Record<string, string>) => [c.status, c.reason]),
    [['True', 'DeletionByPodGC']],
  );
  assert.equal(await exists('orphan'), false);
  assert.equal(await exists('alive'), true);
});

test('terminated pods beyond the threshold go, oldest first', async () => {
  for (const name of ['t1', 't2', 't3', 't4']) {
    const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod(name, 'n1'));
    assert.equal(r.status, 201);
    r.body.status = { phase: 'Succeeded' };
    assert.equal((await request(env.url, 'PUT', `/api/v1/namespaces/default/pods/${name}/status`, r.body)).status, 200);
    await new Promise((res) => setTimeout(res, 1100)); // creation timestamps have second resolution
  }
  await waitFor(async () => !(await exists('t1')) && !(await exists('t2')), 10_000, 'the two oldest to go');
  assert.equal(await exists('t3'), true);
  assert.equal(await exists('t4'), true);
});
