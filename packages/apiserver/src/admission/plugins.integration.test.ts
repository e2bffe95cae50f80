/** Admission plugins against a real etcd: LimitRanger, ResourceQuota under concurrency, DefaultTolerationSeconds. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
  for (const ns of ['limits', 'quota']) await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
after(async () => {
  await env?.stop();
});

const pod = (name: string, resources?: object) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }] },
});

test('DefaultTolerationSeconds adds 300 s not-ready/unreachable tolerations unless the pod has its own', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/limits/pods', pod('tol'));
  assert.deepEqual(
    r.body.spec.tolerations.map((t: any) => [t.key, t.effect, t.tolerationSeconds]),
    [
      ['node.kubernetes.io/not-ready', 'NoExecute', 300],
      ['node.kubernetes.io/unreachable', 'NoExecute', 300],
    ],
  );
  const own = await request(env.url, 'POST', '/api/v1/namespaces/limits/pods', {
    ...pod('tol2'),
    spec: { ...pod('x').spec, tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }] },
  });
  assert.deepEqual(
    own.body.spec.tolerations.map((t: any) => t.tolerationSeconds),
    [5, 300],
  );
});

test('a LimitRange default lands in a created pod; a pod outside min/max is refused and nothing is written', async () => {
  await request(env.url, 'POST', '/api/v1/namespaces/limits/limitranges', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'defaults' },
    spec: {
      limits: [{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' }, min: { cpu: '50m' }, max: { memory: '1Gi' } }],
    },
  });
  const r = await request(env.url, 'POST', '/api/v1/namespaces/limits/pods', pod('defaulted'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } });
  assert.match(
    r.body.metadata.annotations['kubernetes.io/limit-ranger'],
    /^LimitRanger plugin set: cpu limit for container c; memory limit for container c; cpu request for container c/,
  );
  const big = await request(env.url, 'POST', '/api/v1/namespaces/limits/pods', pod('big', { limits: { memory: '2Gi' }, requests: { cpu: '10m' } }));
  assert.equal(big.status, 403);
  assert.equal(
    big.body.message,
    'pods "big" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
  );
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/limits/pods/big')).status, 404);
});

test('a ResourceQuota of 3 pods admits exactly 3 of 10 concurrent creates, and usage returns on delete', async () => {
  await request(env.url, 'POST', '/api/v1/namespaces/quota/resourcequotas', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'three' },
    spec: { hard: { pods: '3', 'requests.cpu': '10' } },
  });
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => request(env.url, 'POST', '/api/v1/namespaces/quota/pods', pod(`p${i}`, { requests: { cpu: '100m' } }))),
  );
  assert.equal(results.filter((r) => r.status === 201).length, 3, results.map((r) => r.status).join(','));
  const refused = results.filter((r) => r.status === 403);
  assert.equal(refused.length, 7);
  assert.match(refused[0]!.body.message, /^pods "p\d" is forbidden: exceeded quota: three, requested: pods=1, used: pods=3, limited: pods=3$/);
  const list = (await request(env.url, 'GET', '/api/v1/namespaces/quota/pods')).body.items;
  assert.equal(list.length, 3);
  const q = (await request(env.url, 'GET', '/api/v1/namespaces/quota/resourcequotas/three')).body;
  assert.deepEqual(q.status.used, { pods: '3', 'requests.cpu': '300m' });
  await request(env.url, 'DELETE', `/api/v1/namespaces/quota/pods/${list[0].metadata.name}`);
  let again = 0;
  for (let i = 0; i < 50 && again !== 201; i++) {
    again = (await request(env.url, 'POST', '/api/v1/namespaces/quota/pods', pod(`again-${i}`, { requests: { cpu: '100m' } }))).status;
    if (again !== 201) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(again, 201, 'a freed slot is usable again');
});
