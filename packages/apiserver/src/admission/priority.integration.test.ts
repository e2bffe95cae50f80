/** The Priority admission plugin against a real etcd: classes resolve to integers, mistakes are Forbidden. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

test('system classes exist; a named class sets priority and preemptionPolicy', async () => {
  const sys = await request(env.url, 'GET', '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical');
  assert.equal(sys.body.value, 2000001000);
  await request(env.url, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'high' },
    value: 1000,
    preemptionPolicy: 'Never',
  });
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('p-high', { priorityClassName: 'high' }));
  assert.equal(r.status, 201);
  assert.equal(r.body.spec.priority, 1000);
  assert.equal(r.body.spec.preemptionPolicy, 'Never');
  const plain = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('p-plain'));
  assert.equal(plain.body.spec.priority, 0);
  assert.equal(plain.body.spec.preemptionPolicy, 'PreemptLowerPriority');
});

test('a globalDefault class applies to pods that name none', async () => {
  await request(env.url, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'default-prio' },
    value: 7,
    globalDefault: true,
  });
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('p-default'));
  assert.equal(r.body.spec.priority, 7);
  assert.equal(r.body.spec.priorityClassName, 'default-prio');
  await request(env.url, 'DELETE', '/apis/scheduling.k8s.io/v1/priorityclasses/default-prio');
});

test('an unknown class or a contradicting integer is Forbidden and writes nothing', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('p-missing', { priorityClassName: 'nope' }));
  assert.equal(r.status, 403);
  assert.equal(r.body.message, 'pods "p-missing" is forbidden: no PriorityClass with name nope was found');
  const bad = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('p-int', { priorityClassName: 'high', priority: 5 }));
  assert.equal(bad.status, 403);
  assert.match(bad.body.message, /the integer value of priority \(5\) must not be provided in pod spec; priority admission controller computed 1000/);
  for (const n of ['p-missing', 'p-int']) assert.equal((await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${n}`)).status, 404);
});
