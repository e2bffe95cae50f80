/**
 * The controllers that read discovery, against a real etcd and apiserver
 * through a proxy that changes only what discovery says (a group left out, a
 * group version failing): the discovery client's view in both forms; the
 * garbage collector monitoring every deletable resource, dropping and taking
 * back monitors as discovery changes, and keeping them for a group that fails;
 * a namespace whose deletion meets a failing group (the condition, no
 * finalization until it is discovered again); a quota that starts counting
 * `count/<resource>.<group>` when the resource appears; the disruption
 * controller's /scale lookup through discovery.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DiscoveryClient, EventRecorder, InformerFactory, RestClient, groupResourceKey } from '@kubeling/client';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import type { ControllerContext, Controller } from './context.js';
import { DisruptionController } from './controllers/disruption/controller.js';
import { deletableResources, GarbageCollector } from './controllers/garbagecollector/controller.js';
import { NamespaceController } from './controllers/namespace/controller.js';
import { ResourceQuotaController } from './controllers/resourcequota/controller.js';
import { startDiscoveryProxy, type DiscoveryProxy } from './discovery-proxy.fixtures.js';

let env: TestEnv;
const abort = new AbortController();
const cleanups: (() => Promise<void> | void)[] = [];

before(async () => {
  env = await startTestEnv();
});
after(async () => {
  abort.abort();
  for (const c of cleanups.reverse()) await c();
  await env?.stop();
});

/** A controller of its own (own client, informers and proxy), initialised, synced and running. */
async function run<C extends Controller>(make: (ctx: ControllerContext) => C, legacyOnly = false): Promise<{ c: C; proxy: DiscoveryProxy }> {
  const proxy = await startDiscoveryProxy(env.url);
  proxy.legacyOnly = legacyOnly;
  const client = new RestClient({ server: proxy.url, namespace: 'default', insecureSkipTLSVerify: false }, { qps: 200, burst: 400 });
  const informers = new InformerFactory(client);
  const ctx: ControllerContext = {
    client,
    informers,
    log: pino({ level: 'silent' }),
    recorder: (component) => new EventRecorder(client, { component }),
    workers: 2,
  };
  const c = make(ctx);
  c.init();
  informers.start();
  await informers.waitForSync();
  void c.run(abort.signal);
  cleanups.push(
    () => informers.stop(),
    () => client.close(),
    () => proxy.close(),
  );
  return { c, proxy };
}

const post = (path: string, body: object) => request(env.url, 'POST', path, body);
const get = (path: string) => request(env.url, 'GET', path);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the apiserver's own legacy documents say is deletable (delete, list, watch; events aside), read without the client under test. */
async function deletableFromServer(): Promise<string[]> {
  const out: string[] = [];
  const add = (group: string, list: { resources: { name: string; verbs: string[] }[] }) => {
    for (const r of list.resources) {
      if (r.name.includes('/') || r.name === 'events' || !['delete', 'list', 'watch'].every((v) => r.verbs.includes(v))) continue;
      out.push(`${group}/${r.name}`);
    }
  };
  add('', (await get('/api/v1')).body);
  for (const g of (await get('/apis')).body.groups) add(g.name, (await get(`/apis/${g.preferredVersion.groupVersion}`)).body);
  return out.sort();
}

test('discovery reads the same resources in the aggregated and the legacy form, as the server documents them', async () => {
  const proxy = await startDiscoveryProxy(env.url);
  const client = new RestClient({ server: proxy.url, namespace: 'default', insecureSkipTLSVerify: false });
  try {
    const aggregated = await new DiscoveryClient(client).discover();
    proxy.legacyOnly = true;
    const legacy = await new DiscoveryClient(client).discover();
    const shape = (rs: typeof legacy.preferred) =>
      rs.map((r) => `${r.group}/${r.version}/${r.resource} ${r.kind} ${r.namespaced} ${[...r.verbs].sort()} ${[...r.subresources].sort()}`).sort();
    assert.deepEqual(shape(aggregated.preferred), shape(legacy.preferred));
    assert.ok(legacy.preferred.length > 40, `${legacy.preferred.length} resources`);
    assert.equal(aggregated.failed.size + legacy.failed.size, 0);
    const deploy = legacy.preferred.find((r) => r.group === 'apps' && r.resource === 'deployments')!;
    assert.deepEqual([deploy.version, deploy.kind, deploy.namespaced, [...deploy.subresources].sort()], ['v1', 'Deployment', true, ['scale', 'status']]);
    assert.deepEqual(deletableResources(legacy.preferred).map(groupResourceKey).sort(), await deletableFromServer());
  } finally {
    client.close();
    await proxy.close();
  }
});

test('the garbage collector monitors every deletable resource, follows discovery, and keeps the monitors of a failing group', async () => {
  const { c: gc, proxy } = await run((ctx) => new GarbageCollector(ctx, { syncPeriodMs: 300 }));
  await eventually(async () => gc.syncs >= 1);
  assert.deepEqual(gc.monitored().sort(), await deletableFromServer());

  // A group that stops being served loses its monitors: a dependent there is not seen.
  proxy.hidden.add('apps');
  await eventually(async () => !gc.monitored().some((r) => r.startsWith('apps/')));
  const cm = await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gc-owner' } });
  assert.equal(cm.status, 201);
  const ownerRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: cm.body.metadata.uid };
  const rs = await post('/apis/apps/v1/namespaces/default/replicasets', {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'gc-dependent', ownerReferences: [ownerRef] },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'gc' } },
      template: { metadata: { labels: { app: 'gc' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  assert.equal(rs.status, 201, rs.text);
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/gc-owner')).status, 200);
  await sleep(1500);
  assert.equal((await get('/apis/apps/v1/namespaces/default/replicasets/gc-dependent')).status, 200, 'not collected while apps is not discovered');

  // Served again: the monitor comes back, sees the dependent, and collects it.
  proxy.hidden.delete('apps');
  await eventually(async () => gc.monitored().includes('apps/replicasets'));
  await eventually(async () => (await get('/apis/apps/v1/namespaces/default/replicasets/gc-dependent')).status === 404);

  // A group whose discovery fails keeps its monitors (it may still be served).
  proxy.failing.add('batch/v1');
  const syncs = gc.syncs;
  await eventually(async () => gc.syncs >= syncs + 2);
  assert.ok(gc.monitored().includes('batch/jobs') && gc.monitored().includes('batch/cronjobs'));
  proxy.failing.clear();
});

test('a namespace deletion that meets a failing group: the condition, the rest emptied, finalized once discovery is whole again', async () => {
  const { proxy } = await run((ctx) => new NamespaceController(ctx), true);
  const ns = 'disc-fail';
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  assert.equal((await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } })).status, 201);
  const d = await post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  assert.equal(d.status, 201, d.text);
  proxy.failing.add('apps/v1');
  assert.equal((await request(env.url, 'DELETE', `/api/v1/namespaces/${ns}`)).status, 200);
  const cond = await eventually(async () => {
    const cs = ((await get(`/api/v1/namespaces/${ns}`)).body.status?.conditions ?? []) as { type: string; status: string; reason: string; message: string }[];
    return cs.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure' && c.status === 'True');
  });
  assert.equal(cond.reason, 'DiscoveryFailed');
  assert.equal(
    cond.message,
    'Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: apps/v1: the server is currently unable to handle the request',
  );
  await eventually(async () => (await get(`/api/v1/namespaces/${ns}/configmaps/cm`)).status === 404);
  await sleep(1000);
  const held = await get(`/api/v1/namespaces/${ns}`);
  assert.equal(held.status, 200, 'not finalized while a group could not be discovered');
  assert.equal(held.body.status.phase, 'Terminating');
  assert.equal((await get(`/apis/apps/v1/namespaces/${ns}/deployments/d`)).status, 200);

  proxy.failing.clear();
  await eventually(async () => (await get(`/api/v1/namespaces/${ns}`)).status === 404, 30_000);
  assert.equal((await get(`/apis/apps/v1/namespaces/${ns}/deployments/d`)).status, 404);
});

test('a quota starts counting count/<resource>.<group> when discovery starts listing the resource', async () => {
  const { c: rq, proxy } = await run((ctx) => new ResourceQuotaController(ctx, { resyncPeriodMs: 600_000, discoveryRefreshMs: 300, syncTimeoutMs: 5000 }));
  proxy.hidden.add('apps');
  await sleep(700);
  const ns = 'disc-quota';
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const sts = await post(`/apis/apps/v1/namespaces/${ns}/statefulsets`, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 's' },
    spec: {
      replicas: 0,
      serviceName: 's',
      selector: { matchLabels: { app: 's' } },
      template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  assert.equal(sts.status, 201, sts.text);
  const hard = { configmaps: '3', 'count/statefulsets.apps': '4' };
  assert.equal(
    (await post(`/api/v1/namespaces/${ns}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard } })).status,
    201,
  );
  const used = async () => (await get(`/api/v1/namespaces/${ns}/resourcequotas/q`)).body.status?.used as Record<string, string> | undefined;
  // Unknown to discovery: not counted (upstream has no evaluator for it).
  assert.deepEqual(await eventually(used), { configmaps: '0' });
  assert.ok(!rq.monitored().includes('apps/statefulsets'));
  proxy.hidden.delete('apps');
  await eventually(async () => (await used())?.['count/statefulsets.apps'] === '1');
  assert.ok(rq.monitored().includes('apps/statefulsets'));
});

test('disruption: the /scale of a pod’s controller is found through discovery; a kind without one, or unknown, fails safe with the reason', async () => {
  await run((ctx) => new DisruptionController(ctx));
  const ns = 'disc-pdb';
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const rc = await post(`/api/v1/namespaces/${ns}/replicationcontrollers`, {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'rc' },
    spec: { replicas: 5, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  });
  assert.equal(rc.status, 201, rc.text);
  const cm = await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } });
  const owners: Record<string, object> = {
    rc: { apiVersion: 'v1', kind: 'ReplicationController', name: 'rc', uid: rc.body.metadata.uid, controller: true },
    cm: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: cm.body.metadata.uid, controller: true },
    widget: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '00000000-0000-0000-0000-000000000001', controller: true },
  };
  for (const [app, owner] of Object.entries(owners)) {
    const p = await post(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${app}-pod`, labels: { app }, ownerReferences: [owner] },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(p.status, 201, p.text);
    const pdb = await post(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: app },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app } } },
    });
    assert.equal(pdb.status, 201, pdb.text);
  }
  const status = (name: string) =>
    eventually(async () => {
      const s = (await get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`)).body.status;
      return s?.conditions?.length ? s : undefined;
    });
  // The ReplicationController's scale (5), read from its /scale, not the one pod there is.
  const rcStatus = await status('rc');
  assert.deepEqual([rcStatus.expectedPods, rcStatus.desiredHealthy], [5, 4]);
  const reasonOf = async (name: string) => (await status(name)).conditions.find((c: { type: string }) => c.type === 'DisruptionAllowed');
  assert.deepEqual(
    { ...(await reasonOf('cm')), lastTransitionTime: undefined },
    {
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'SyncFailed',
      message: 'could not find scale subresource for /v1, Resource=configmaps in discovery information',
      lastTransitionTime: undefined,
    },
  );
  assert.equal((await reasonOf('widget')).message, 'no matches for kind "Widget" in version "example.com/v1"');
});
