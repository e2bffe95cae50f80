/**
 * Controllers and custom resources, against a real etcd and apiserver: the
 * garbage collector picks up a CRD created while it runs and collects custom
 * resources whose owner is gone, dependents of a custom resource, and honours
 * foreground deletion of one; a namespace holding custom resources finishes
 * deleting (its finalizer condition shown meanwhile); a quota counts
 * `count/foos.example.com`; the disruption controller reads a custom
 * resource's /scale. Skipped, with the reason, where the apiserver does not
 * serve CustomResourceDefinitions.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { EventRecorder, InformerFactory, RestClient } from '@kubeling/client';
import { eventually, request, startTestEnv } from '@kubeling/testenv';
import type { Controller, ControllerContext } from './context.js';
import { DisruptionController } from './controllers/disruption/controller.js';
import { GarbageCollector } from './controllers/garbagecollector/controller.js';
import { NamespaceController } from './controllers/namespace/controller.js';
import { ResourceQuotaController } from './controllers/resourcequota/controller.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'example.com';

const crd = (plural: string, kind: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
        },
      },
    ],
  },
});

const env = await startTestEnv();
const abort = new AbortController();
const cleanups: (() => void)[] = [];
after(async () => {
  abort.abort();
  for (const c of cleanups) c();
  await env.stop();
});

const get = (path: string) => request(env.url, 'GET', path);
const post = (path: string, body: object) => request(env.url, 'POST', path, body);
const del = (path: string, body?: object) => request(env.url, 'DELETE', path, body);

/** Creates a CRD and waits until its resources are listed; the reason they cannot be, if so. */
async function createCRD(plural: string, kind: string): Promise<string | undefined> {
  const c = await post(CRDS, crd(plural, kind));
  if (c.status !== 201) return `POST ${CRDS} answered ${c.status}`;
  for (let i = 0; i < 200; i++) {
    if ((await get(`/apis/${GROUP}/v1/namespaces/default/${plural}`)).status === 200) return undefined;
    await new Promise((r) => setTimeout(r, 50));
  }
  return `${plural}.${GROUP} was never served`;
}

const probe = await createCRD('foos', 'Foo').catch((e: unknown) => String(e));
const skip = probe ? `the apiserver does not serve apiextensions.k8s.io/v1 customresourcedefinitions yet (${probe})` : false;

async function run<C extends Controller>(make: (ctx: ControllerContext) => C): Promise<C> {
  const client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false }, { qps: 200, burst: 400 });
  const informers = new InformerFactory(client);
  const c = make({ client, informers, log: pino({ level: 'silent' }), recorder: (component) => new EventRecorder(client, { component }), workers: 2 });
  c.init();
  informers.start();
  await informers.waitForSync();
  void c.run(abort.signal);
  cleanups.push(
    () => informers.stop(),
    () => client.close(),
  );
  return c;
}

const foos = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/foos`;
const foo = (name: string, extra: object = {}) => ({ apiVersion: `${GROUP}/v1`, kind: 'Foo', metadata: { name, ...extra }, spec: { replicas: 4 } });
const gone = (path: string) => eventually(async () => (await get(path)).status === 404);

async function namespace(name: string): Promise<void> {
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status, 201);
}

test('garbage collector: custom resources as dependents and as owners, a CRD made while it runs included', { skip }, async () => {
  const gc = await run((ctx) => new GarbageCollector(ctx, { syncPeriodMs: 300 }));
  await eventually(async () => gc.monitored().includes(`${GROUP}/foos`));
  // An owner of a kind nobody serves yet is never collected against...
  const byGhost = { apiVersion: `${GROUP}/v1`, kind: 'Bar', name: 'ghost', uid: '00000000-0000-0000-0000-00000000b0a2' };
  const cmPath = '/api/v1/namespaces/default/configmaps/of-ghost';
  assert.equal(
    (await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-ghost', ownerReferences: [byGhost] } }))
      .status,
    201,
  );
  await new Promise((r) => setTimeout(r, 800));
  assert.equal((await get(cmPath)).status, 200);
  // ...until a CRD serves the kind (created while the collector runs: monitored after its next sync), and the owner is found missing.
  assert.equal(await createCRD('bars', 'Bar'), undefined);
  await eventually(async () => gc.monitored().includes(`${GROUP}/bars`));
  await gone(cmPath);

  // A Foo owned by a ConfigMap goes with it.
  const cm = await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
  const byCm = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: cm.body.metadata.uid };
  assert.equal((await post(foos('default'), foo('dependent', { ownerReferences: [byCm] }))).status, 201);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await get(`${foos('default')}/dependent`)).status, 200);
  assert.equal((await del('/api/v1/namespaces/default/configmaps/owner')).status, 200);
  await gone(`${foos('default')}/dependent`);

  // A ConfigMap owned by a Foo goes with the Foo (the owner's kind is resolved through discovery).
  const owner = await post(foos('default'), foo('owner'));
  const byFoo = { apiVersion: `${GROUP}/v1`, kind: 'Foo', name: 'owner', uid: owner.body.metadata.uid };
  assert.equal(
    (await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dep', ownerReferences: [byFoo] } })).status,
    201,
  );
  assert.equal((await del(`${foos('default')}/owner`)).status, 200);
  await gone('/api/v1/namespaces/default/configmaps/dep');

  // Foreground deletion of a Bar waits for its blocking dependent, then the Bar goes too.
  const bar = await post(`/apis/${GROUP}/v1/namespaces/default/bars`, { apiVersion: `${GROUP}/v1`, kind: 'Bar', metadata: { name: 'fg' } });
  const byBar = { apiVersion: `${GROUP}/v1`, kind: 'Bar', name: 'fg', uid: bar.body.metadata.uid, blockOwnerDeletion: true };
  assert.equal((await post(foos('default'), foo('fg-dep', { ownerReferences: [byBar] }))).status, 201);
  const d = await del(`/apis/${GROUP}/v1/namespaces/default/bars/fg`, { propagationPolicy: 'Foreground' });
  assert.deepEqual(d.body.metadata?.finalizers, ['foregroundDeletion'], d.text);
  await gone(`${foos('default')}/fg-dep`);
  await gone(`/apis/${GROUP}/v1/namespaces/default/bars/fg`);
});

test('a namespace holding custom resources finishes deleting', { skip }, async () => {
  await run((ctx) => new NamespaceController(ctx));
  const ns = 'crd-ns';
  await namespace(ns);
  assert.equal((await post(foos(ns), foo('a'))).status, 201);
  assert.equal((await post(foos(ns), foo('held', { finalizers: ['example.com/hold'] }))).status, 201);
  assert.equal((await del(`/api/v1/namespaces/${ns}`)).status, 200);
  await gone(`${foos(ns)}/a`);
  const cond = await eventually(async () => {
    const cs = ((await get(`/api/v1/namespaces/${ns}`)).body.status?.conditions ?? []) as { type: string; status: string; message: string }[];
    return cs.find((c) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True');
  });
  assert.equal(cond.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
  // The finalizer's owner lets go: the namespace goes.
  const held = (await get(`${foos(ns)}/held`)).body;
  assert.equal((await request(env.url, 'PUT', `${foos(ns)}/held`, { ...held, metadata: { ...held.metadata, finalizers: [] } })).status, 200);
  await gone(`/api/v1/namespaces/${ns}`);
});

test('a quota counts count/foos.example.com', { skip }, async () => {
  await run((ctx) => new ResourceQuotaController(ctx, { resyncPeriodMs: 2000, discoveryRefreshMs: 300, syncTimeoutMs: 5000 }));
  const ns = 'crd-quota';
  await namespace(ns);
  assert.equal((await post(foos(ns), foo('one'))).status, 201);
  const hard = { 'count/foos.example.com': '3' };
  assert.equal(
    (await post(`/api/v1/namespaces/${ns}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard } })).status,
    201,
  );
  const used = async () => (await get(`/api/v1/namespaces/${ns}/resourcequotas/q`)).body.status?.used?.['count/foos.example.com'] as string | undefined;
  await eventually(async () => (await used()) === '1');
  assert.equal((await post(foos(ns), foo('two'))).status, 201);
  await eventually(async () => (await used()) === '2');
  // Released on delete (the custom resource's monitor replenishes the quota).
  assert.equal((await del(`${foos(ns)}/one`)).status, 200);
  await eventually(async () => (await used()) === '1');
});

test('disruption: the expected pods of a budget come from a custom resource’s /scale', { skip }, async () => {
  await run((ctx) => new DisruptionController(ctx));
  const ns = 'crd-pdb';
  await namespace(ns);
  const owner = await post(foos(ns), foo('scaled'));
  const ref = { apiVersion: `${GROUP}/v1`, kind: 'Foo', name: 'scaled', uid: owner.body.metadata.uid, controller: true };
  for (const name of ['p1', 'p2']) {
    const p = await post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'foo' }, ownerReferences: [ref] },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(p.status, 201, p.text);
  }
  const pdb = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'b' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'foo' } } },
  };
  assert.equal((await post(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, pdb)).status, 201);
  const status = await eventually(async () => {
    const s = (await get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/b`)).body.status;
    return s?.conditions?.length ? s : undefined;
  });
  assert.deepEqual([status.expectedPods, status.desiredHealthy], [4, 3], JSON.stringify(status));
});
