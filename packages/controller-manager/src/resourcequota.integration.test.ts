/**
 * ResourceQuota against a real etcd and apiserver, admission and the
 * resourcequota controller together, in the shape of the conformance tests
 * (test/e2e/apimachinery/resource_quota.go): status promptly calculated
 * (objects made before the quota included), the life of a secret, a
 * configMap, a service and a pod (charged at create, released promptly on
 * delete or when the pod turns terminal), scopes, count/<resource>.<group>,
 * update and delete of a quota, and the periodic resync repairing a wrong
 * status.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { EventRecorder, InformerFactory, RestClient } from '@kubeling/client';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import type { ControllerContext } from './context.js';
import { ResourceQuotaController } from './controllers/resourcequota/controller.js';

let env: TestEnv;
let client: RestClient;
let informers: InformerFactory;
const abort = new AbortController();
const RESYNC_MS = 2000;

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false }, { qps: 200, burst: 400 });
  informers = new InformerFactory(client);
  const ctx: ControllerContext = {
    client,
    informers,
    log: pino({ level: 'silent' }),
    recorder: (component) => new EventRecorder(client, { component }),
    workers: 2,
  };
  const rq = new ResourceQuotaController(ctx, { resyncPeriodMs: RESYNC_MS, discoveryRefreshMs: 1000, syncTimeoutMs: 5000 });
  rq.init();
  informers.start();
  await informers.waitForSync();
  void rq.run(abort.signal);
});
after(async () => {
  abort.abort();
  informers?.stop();
  client?.close();
  await env?.stop();
});

let nsCount = 0;
async function namespace(): Promise<string> {
  const ns = `quota-${++nsCount}`;
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  return ns;
}
const post = (path: string, body: object) => request(env.url, 'POST', path, body);
const quota = (name: string, hard: Record<string, string>, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name },
  spec: { hard, ...extra },
});
const used = async (ns: string, name: string): Promise<Record<string, string> | undefined> =>
  (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`)).body.status?.used;

/** Waits until the quota's status.used shows every name with the given value; answers how long it took. */
async function usedBecomes(ns: string, name: string, want: Record<string, string>, timeoutMs = 8000): Promise<number> {
  const t0 = Date.now();
  let last: Record<string, string> | undefined;
  try {
    await waitFor(
      async () => {
        last = await used(ns, name);
        return !!last && Object.entries(want).every(([k, v]) => last![k] === v);
      },
      timeoutMs,
      `quota ${ns}/${name} used ${JSON.stringify(want)}`,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last seen ${JSON.stringify(last)}`);
  }
  return Date.now() - t0;
}

const pod = (name: string, requests: Record<string, string> = {}, limits: Record<string, string> = {}, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests, limits } }], ...extra },
});

test('a quota’s status is promptly calculated, objects made before it included (resourcequotas, secrets, configmaps)', async () => {
  const ns = await namespace();
  for (const s of ['s1', 's2'])
    assert.equal((await post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: s } })).status, 201);
  const hard = {
    pods: '5',
    services: '10',
    'services.nodeports': '1',
    'services.loadbalancers': '1',
    replicationcontrollers: '10',
    resourcequotas: '1',
    cpu: '1',
    memory: '500Mi',
    configmaps: '2',
    secrets: '10',
    persistentvolumeclaims: '10',
    'requests.storage': '10Gi',
    'ephemeral-storage': '50Gi',
    'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '10',
    'count/replicasets.apps': '5',
    'requests.example.com/dongle': '3',
  };
  assert.equal((await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('test-quota', hard))).status, 201);
  const ms = await usedBecomes(ns, 'test-quota', { resourcequotas: '1', secrets: '2', configmaps: '0', pods: '0', 'count/replicasets.apps': '0', memory: '0' });
  assert.ok(ms < 5000, `calculated in ${ms} ms`);
  const q = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).body;
  assert.deepEqual(Object.keys(q.status.hard).sort(), Object.keys(hard).sort());
  assert.deepEqual(Object.keys(q.status.used).sort(), Object.keys(hard).sort());
  // A second quota is refused: the first one counts resourcequotas.
  const second = await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('second', { pods: '1' }));
  assert.equal(second.status, 403);
  assert.equal(
    second.body.message,
    'resourcequotas "second" is forbidden: exceeded quota: test-quota, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1',
  );
});

test('the life of a secret and of a configMap: charged at create, refused past hard, released promptly on delete', async () => {
  const ns = await namespace();
  assert.equal((await post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'old' } })).status, 201);
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('test-quota', { secrets: '2', configmaps: '1' }));
  await usedBecomes(ns, 'test-quota', { secrets: '1', configmaps: '0' });
  assert.equal((await post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'new' } })).status, 201);
  assert.equal((await used(ns, 'test-quota'))?.secrets, '2', 'admission charged the create');
  const over = await post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'too-many' } });
  assert.equal(over.status, 403);
  assert.equal(over.body.message, 'secrets "too-many" is forbidden: exceeded quota: test-quota, requested: secrets=1, used: secrets=2, limited: secrets=2');
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/secrets/new`)).status, 200);
  const released = await usedBecomes(ns, 'test-quota', { secrets: '1' });
  assert.ok(released < 3000, `released in ${released} ms`);
  assert.equal((await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })).status, 201);
  await usedBecomes(ns, 'test-quota', { configmaps: '1' });
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/cm`)).status, 200);
  await usedBecomes(ns, 'test-quota', { configmaps: '0' }, 3000);
});

test('the life of a service: node ports and load balancers by type, released on delete', async () => {
  const ns = await namespace();
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('test-quota', { services: '10', 'services.nodeports': '1', 'services.loadbalancers': '1' }));
  await usedBecomes(ns, 'test-quota', { services: '0', 'services.nodeports': '0' });
  const svc = (name: string, type: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { type, ports: [{ port: 80 }] } });
  assert.equal((await post(`/api/v1/namespaces/${ns}/services`, svc('np', 'NodePort'))).status, 201);
  await usedBecomes(ns, 'test-quota', { services: '1', 'services.nodeports': '1', 'services.loadbalancers': '0' });
  const second = await post(`/api/v1/namespaces/${ns}/services`, svc('np2', 'NodePort'));
  assert.equal(second.status, 403);
  assert.match(second.body.message, /exceeded quota: test-quota, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1$/);
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/services/np`)).status, 200);
  await usedBecomes(ns, 'test-quota', { services: '0', 'services.nodeports': '0' }, 3000);
});

test('the life of a pod: compute resources charged; released when it turns terminal, count/pods when it is deleted', async () => {
  const ns = await namespace();
  await post(
    `/api/v1/namespaces/${ns}/resourcequotas`,
    quota('test-quota', { pods: '5', 'count/pods': '5', cpu: '1', memory: '500Mi', 'ephemeral-storage': '50Gi', 'requests.example.com/dongle': '3' }),
  );
  await usedBecomes(ns, 'test-quota', { pods: '0', cpu: '0' });
  const requests = { cpu: '500m', memory: '252Mi', 'ephemeral-storage': '30Gi', 'example.com/dongle': '2' };
  assert.equal((await post(`/api/v1/namespaces/${ns}/pods`, pod('test-pod', requests, { 'example.com/dongle': '2' }))).status, 201);
  await usedBecomes(ns, 'test-quota', {
    pods: '1',
    'count/pods': '1',
    cpu: '500m',
    memory: '252Mi',
    'ephemeral-storage': '30Gi',
    'requests.example.com/dongle': '2',
  });
  const over = await post(`/api/v1/namespaces/${ns}/pods`, pod('fail-pod', { cpu: '600m', memory: '100Mi' }));
  assert.equal(over.status, 403);
  assert.match(over.body.message, /^pods "fail-pod" is forbidden: exceeded quota: test-quota, requested: cpu=600m, used: cpu=500m, limited: cpu=1$/);
  // Quotas on cpu and memory need every container to state them (upstream's backward-compatibility rule).
  const bare = await post(`/api/v1/namespaces/${ns}/pods`, pod('bare'));
  assert.equal(bare.status, 403);
  assert.equal(bare.body.message, 'pods "bare" is forbidden: failed quota: test-quota: must specify cpu for: c; memory for: c');
  const cur = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/pods/test-pod`)).body;
  cur.status = { ...cur.status, phase: 'Failed' };
  assert.equal((await request(env.url, 'PUT', `/api/v1/namespaces/${ns}/pods/test-pod/status`, cur)).status, 200);
  const ms = await usedBecomes(ns, 'test-quota', { pods: '0', 'count/pods': '1', cpu: '0', memory: '0', 'requests.example.com/dongle': '0' }, 3000);
  assert.ok(ms < 3000, `released in ${ms} ms`);
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/pods/test-pod`, { gracePeriodSeconds: 0 })).status, 200);
  await usedBecomes(ns, 'test-quota', { 'count/pods': '0' }, 3000);
});

test('scopes: Terminating and NotTerminating; BestEffort and NotBestEffort through a scopeSelector', async () => {
  const ns = await namespace();
  const compute = { pods: '5', 'requests.cpu': '1', 'requests.memory': '500Mi', 'limits.cpu': '2', 'limits.memory': '1Gi' };
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('terminating', compute, { scopes: ['Terminating'] }));
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('not-terminating', compute, { scopes: ['NotTerminating'] }));
  for (const q of ['terminating', 'not-terminating']) await usedBecomes(ns, q, { pods: '0' });
  const requests = { cpu: '500m', memory: '200Mi' };
  const limits = { cpu: '1', memory: '400Mi' };
  assert.equal((await post(`/api/v1/namespaces/${ns}/pods`, pod('long', requests, limits))).status, 201);
  assert.equal((await post(`/api/v1/namespaces/${ns}/pods`, pod('short', requests, limits, { activeDeadlineSeconds: 3600 }))).status, 201);
  const charged = { pods: '1', 'requests.cpu': '500m', 'requests.memory': '200Mi', 'limits.cpu': '1', 'limits.memory': '400Mi' };
  await usedBecomes(ns, 'not-terminating', charged);
  await usedBecomes(ns, 'terminating', charged);
  // Only the quotas whose scopes match a pod judge it: a pod without requests fails the NotTerminating one.
  const bare = await post(`/api/v1/namespaces/${ns}/pods`, pod('bare'));
  assert.equal(bare.status, 403);
  assert.equal(
    bare.body.message,
    'pods "bare" is forbidden: failed quota: not-terminating: must specify limits.cpu for: c; limits.memory for: c; requests.cpu for: c; requests.memory for: c',
  );
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/pods/short`, { gracePeriodSeconds: 0 })).status, 200);
  await usedBecomes(ns, 'terminating', { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' }, 3000);

  const ns2 = await namespace();
  const selector = (scopeName: string) => ({ scopeSelector: { matchExpressions: [{ scopeName, operator: 'Exists' }] } });
  await post(`/api/v1/namespaces/${ns2}/resourcequotas`, quota('besteffort', { pods: '5' }, selector('BestEffort')));
  await post(`/api/v1/namespaces/${ns2}/resourcequotas`, quota('not-besteffort', { pods: '5' }, selector('NotBestEffort')));
  assert.equal((await post(`/api/v1/namespaces/${ns2}/pods`, pod('be'))).status, 201);
  assert.equal((await post(`/api/v1/namespaces/${ns2}/pods`, pod('burstable', requests, limits))).status, 201);
  assert.equal((await post(`/api/v1/namespaces/${ns2}/pods`, pod('burstable-2', requests, limits))).status, 201);
  await usedBecomes(ns2, 'besteffort', { pods: '1' });
  await usedBecomes(ns2, 'not-besteffort', { pods: '2' });
});

test('count/<resource>.<group> of a discovered resource; update and delete of a quota', async () => {
  const ns = await namespace();
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('test-quota', { 'count/deployments.apps': '1', cpu: '1', memory: '500Mi' }));
  await usedBecomes(ns, 'test-quota', { 'count/deployments.apps': '0' });
  const deploy = (name: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  });
  assert.equal((await post(`/apis/apps/v1/namespaces/${ns}/deployments`, deploy('d1'))).status, 201);
  await usedBecomes(ns, 'test-quota', { 'count/deployments.apps': '1' });
  const over = await post(`/apis/apps/v1/namespaces/${ns}/deployments`, deploy('d2'));
  assert.equal(over.status, 403);
  assert.match(over.body.message, /^deployments.apps "d2" is forbidden: exceeded quota: test-quota/);
  assert.equal((await request(env.url, 'DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/d1`)).status, 200);
  await usedBecomes(ns, 'test-quota', { 'count/deployments.apps': '0' }, 3000);

  const cur = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).body;
  cur.spec.hard = { ...cur.spec.hard, cpu: '2', memory: '1Gi' };
  const updated = await request(env.url, 'PUT', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`, cur);
  assert.equal(updated.status, 200);
  assert.deepEqual([updated.body.spec.hard.cpu, updated.body.spec.hard.memory], ['2', '1Gi']);
  await waitFor(
    async () => (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).body.status?.hard?.memory === '1Gi',
    5000,
    'status.hard to follow spec.hard',
  );
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).status, 200);
  assert.equal((await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).status, 404);
});

test('the periodic resync repairs a status.used that is wrong', async () => {
  const ns = await namespace();
  await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
  await post(`/api/v1/namespaces/${ns}/resourcequotas`, quota('test-quota', { configmaps: '10' }));
  await usedBecomes(ns, 'test-quota', { configmaps: '1' });
  const cur = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/resourcequotas/test-quota`)).body;
  cur.status.used.configmaps = '7';
  assert.equal((await request(env.url, 'PUT', `/api/v1/namespaces/${ns}/resourcequotas/test-quota/status`, cur)).status, 200);
  // A status-only change is not an event the controller acts on: the resync finds it.
  await usedBecomes(ns, 'test-quota', { configmaps: '1' }, RESYNC_MS * 3);
});
