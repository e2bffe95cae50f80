/**
 * The scheduler against a real etcd + apiserver, with Node objects made by the
 * test: resources fit and overflow, taints, node selection, topology spread,
 * inter-pod affinity and anti-affinity, preemption, and no over-commit when many pods arrive at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { InformerFactory, RestClient } from '@kubeling/client';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { buildConfig } from './framework/profile.js';
import { Scheduler } from './scheduler.js';
import { milliValue } from '@kubeling/apimachinery';

let env: TestEnv;
let client: RestClient;
let informers: InformerFactory;
let scheduler: Scheduler;

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false }, { qps: 1000, burst: 1000 });
  informers = new InformerFactory(client);
  scheduler = new Scheduler({
    client,
    informers,
    config: buildConfig({ podInitialBackoffSeconds: 1, podMaxBackoffSeconds: 2 }),
    log: pino({ level: 'silent' }),
  });
  scheduler.init();
  informers.start();
  await scheduler.run();
});
after(async () => {
  await scheduler?.stop();
  informers?.stop();
  client?.close();
  await env?.stop();
});

type Obj = Record<string, any>;

async function node(name: string, o: { cpu?: string; memory?: string; pods?: number; labels?: Record<string, string>; taints?: Obj[] } = {}): Promise<void> {
  const alloc = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: String(o.pods ?? 110) };
  const r = await request(env.url, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: o.taints ? { taints: o.taints } : {},
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const s = await request(
    env.url,
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    { status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(s.status, 200, JSON.stringify(s.body));
}

async function namespace(name: string): Promise<void> {
  await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

async function pod(ns: string, name: string, o: { cpu?: string; labels?: Record<string, string>; spec?: Obj } = {}): Promise<void> {
  const r = await request(env.url, 'POST', `/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: o.labels ?? {} },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'nginx', ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}) }],
      ...(o.spec ?? {}),
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const getPod = async (ns: string, name: string): Promise<Obj> => (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body;

async function boundTo(ns: string, name: string): Promise<string> {
  let n = '';
  await waitFor(async () => !!(n = (await getPod(ns, name)).spec?.nodeName ?? ''), 10_000, `${ns}/${name} to be bound`);
  return n;
}

async function failedEvent(ns: string, name: string, match?: RegExp): Promise<string> {
  let msg = '';
  await waitFor(
    async () => {
      const evs = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/events`)).body.items as Obj[];
      const e = evs
        .filter((x) => x.involvedObject.name === name && x.reason === 'FailedScheduling')
        .map((x) => x.message as string)
        .find((m) => !match || match.test(m));
      msg = e ?? '';
      return !!e;
    },
    10_000,
    `FailedScheduling for ${name}`,
  );
  return msg;
}

async function cleanup(ns: string, nodes: string[]): Promise<void> {
  const pods = (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/pods`)).body.items as Obj[];
  await Promise.all(pods.map((p) => request(env.url, 'DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { gracePeriodSeconds: 0 })));
  await Promise.all(nodes.map((n) => request(env.url, 'DELETE', `/api/v1/nodes/${n}`)));
}

test('pods are placed while resources last; the overflow stays Pending with the reasons, and a new node takes it', async (t) => {
  await namespace('fit');
  t.after(() => cleanup('fit', ['fit-1', 'fit-2', 'fit-3']));
  await node('fit-1', { cpu: '2' });
  await node('fit-2', { cpu: '2' });
  await pod('fit', 'a', { cpu: '1500m' });
  await pod('fit', 'b', { cpu: '1500m' });
  const [na, nb] = [await boundTo('fit', 'a'), await boundTo('fit', 'b')];
  assert.notEqual(na, nb, 'the second pod goes to the node with room');
  await pod('fit', 'c', { cpu: '1500m' });
  const msg = await failedEvent('fit', 'c');
  assert.equal(msg, '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.');
  let c: Obj = {};
  await waitFor(async () => !!(c = await getPod('fit', 'c')).status?.conditions?.length, 10_000, 'the PodScheduled condition');
  assert.equal(c.spec.nodeName, undefined);
  const cond = c.status.conditions.find((x: Obj) => x.type === 'PodScheduled');
  assert.deepEqual([cond.status, cond.reason, cond.message], ['False', 'Unschedulable', msg]);
  await node('fit-3', { cpu: '2' });
  assert.equal(await boundTo('fit', 'c'), 'fit-3');
  await waitFor(
    async () =>
      ((await request(env.url, 'GET', '/api/v1/namespaces/fit/events')).body.items as Obj[]).some(
        (e) => e.reason === 'Scheduled' && e.message === 'Successfully assigned fit/c to fit-3' && e.source?.component === 'default-scheduler',
      ),
    10_000,
    'the Scheduled event',
  );
});

test('taints keep pods off unless tolerated; the message names each taint', async (t) => {
  await namespace('taint');
  t.after(() => cleanup('taint', ['taint-gpu', 'taint-cp']));
  await node('taint-gpu', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
  await node('taint-cp', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
  await pod('taint', 'plain');
  const msg = await failedEvent('taint', 'plain');
  assert.equal(
    msg,
    '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
  );
  await pod('taint', 'tolerant', { spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } });
  assert.equal(await boundTo('taint', 'tolerant'), 'taint-gpu');
});

test('nodeSelector, required and preferred node affinity choose the node', async (t) => {
  await namespace('aff');
  t.after(() => cleanup('aff', ['aff-ssd', 'aff-hdd', 'aff-nvme']));
  await node('aff-ssd', { labels: { disk: 'ssd', zone: 'z1' } });
  await node('aff-hdd', { labels: { disk: 'hdd', zone: 'z1' } });
  await node('aff-nvme', { labels: { disk: 'nvme', zone: 'z2' } });
  await pod('aff', 'sel', { spec: { nodeSelector: { disk: 'hdd' } } });
  assert.equal(await boundTo('aff', 'sel'), 'aff-hdd');
  await pod('aff', 'req', {
    spec: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z2'] }] }] },
        },
      },
    },
  });
  assert.equal(await boundTo('aff', 'req'), 'aff-nvme');
  for (let i = 0; i < 3; i++) {
    await pod('aff', `pref-${i}`, {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 100, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
            ],
          },
        },
      },
    });
    assert.equal(await boundTo('aff', `pref-${i}`), 'aff-ssd');
  }
  await pod('aff', 'none', { spec: { nodeSelector: { disk: 'tape' } } });
  assert.equal(
    await failedEvent('aff', 'none'),
    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
  );
});

test('topology spread puts 6 pods 2 per node across 3 nodes, and refuses a skew', async (t) => {
  await namespace('spread');
  t.after(() => cleanup('spread', ['spread-1', 'spread-2', 'spread-3']));
  for (const [n, z] of [
    ['spread-1', 'a'],
    ['spread-2', 'b'],
    ['spread-3', 'c'],
  ] as const)
    await node(n, { labels: { 'topology.kubernetes.io/zone': z } });
  const spec = {
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
    ],
  };
  await Promise.all(Array.from({ length: 6 }, (_, i) => pod('spread', `web-${i}`, { labels: { app: 'web' }, spec })));
  const placed = await Promise.all(Array.from({ length: 6 }, (_, i) => boundTo('spread', `web-${i}`)));
  const per = new Map<string, number>();
  for (const n of placed) per.set(n, (per.get(n) ?? 0) + 1);
  assert.deepEqual([...per.values()].sort(), [2, 2, 2], JSON.stringify([...per]));
  // Pinned to zone a (nodeAffinityPolicy Ignore keeps b and c as domains): a third
  // pod there is a skew of 1, a fourth would be 2.
  const pinned = {
    ...spec,
    nodeSelector: { 'topology.kubernetes.io/zone': 'a' },
    topologySpreadConstraints: [{ ...spec.topologySpreadConstraints[0], nodeAffinityPolicy: 'Ignore' }],
  };
  await pod('spread', 'web-pinned-1', { labels: { app: 'web' }, spec: pinned });
  assert.equal(await boundTo('spread', 'web-pinned-1'), 'spread-1');
  await pod('spread', 'web-pinned', { labels: { app: 'web' }, spec: pinned });
  const msg = await failedEvent('spread', 'web-pinned');
  assert.match(
    msg,
    /^0\/3 nodes are available: 1 node\(s\) didn't match pod topology spread constraints, 2 node\(s\) didn't match Pod's node affinity\/selector\./,
  );
});

test('pod anti-affinity puts one replica per node and refuses a fourth; pod affinity puts a web pod beside its cache', async (t) => {
  await namespace('ipa');
  t.after(() => cleanup('ipa', ['ipa-1', 'ipa-2', 'ipa-3']));
  for (const [n, z] of [
    ['ipa-1', 'a'],
    ['ipa-2', 'a'],
    ['ipa-3', 'b'],
  ] as const)
    await node(n, { labels: { 'topology.kubernetes.io/zone': z } });
  const anti = {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'kubernetes.io/hostname' }],
      },
    },
  };
  await Promise.all(Array.from({ length: 3 }, (_, i) => pod('ipa', `db-${i}`, { labels: { app: 'db' }, spec: anti })));
  const placed = await Promise.all(Array.from({ length: 3 }, (_, i) => boundTo('ipa', `db-${i}`)));
  assert.deepEqual([...placed].sort(), ['ipa-1', 'ipa-2', 'ipa-3']);
  await pod('ipa', 'db-3', { labels: { app: 'db' }, spec: anti });
  assert.equal(
    await failedEvent('ipa', 'db-3'),
    "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
  );
  await pod('ipa', 'cache', { labels: { app: 'cache' }, spec: { nodeSelector: { 'kubernetes.io/hostname': 'ipa-3' } } });
  assert.equal(await boundTo('ipa', 'cache'), 'ipa-3');
  await pod('ipa', 'web', {
    labels: { app: 'web' },
    spec: {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'topology.kubernetes.io/zone' }],
        },
      },
    },
  });
  assert.equal(await boundTo('ipa', 'web'), 'ipa-3', "the only node in the cache's zone");
});

test('a high-priority pod preempts a low-priority one and is nominated, then bound', async (t) => {
  await namespace('prio');
  t.after(() => cleanup('prio', ['prio-1']));
  for (const [name, value] of [
    ['low', 10],
    ['high', 1000],
  ] as const) {
    await request(env.url, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
    });
  }
  await node('prio-1', { cpu: '2' });
  await pod('prio', 'victim', { cpu: '1500m', spec: { priorityClassName: 'low' } });
  await pod('prio', 'peer', { cpu: '500m', spec: { priorityClassName: 'high' } });
  await boundTo('prio', 'victim');
  await boundTo('prio', 'peer');
  await pod('prio', 'vip', { cpu: '1500m', spec: { priorityClassName: 'high' } });
  await waitFor(
    async () => {
      const v = await getPod('prio', 'vip');
      return !!(v.status?.nominatedNodeName || v.spec?.nodeName);
    },
    10_000,
    'vip nominated or bound',
  );
  assert.equal(await boundTo('prio', 'vip'), 'prio-1');
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/prio/pods/victim')).status, 404, 'the victim is gone');
  assert.equal((await getPod('prio', 'peer')).spec.nodeName, 'prio-1', 'a pod of equal priority stays');
  await waitFor(
    async () =>
      ((await request(env.url, 'GET', '/api/v1/namespaces/prio/events')).body.items as Obj[]).some(
        (e) => e.involvedObject.name === 'victim' && e.reason === 'Preempted',
      ),
    10_000,
    'the Preempted event on the victim',
  );
});

const NODES = ['burst-1', 'burst-2', 'burst-3', 'burst-4', 'burst-5'];

test('200 pods created at once never over-commit a node; the rest stay Pending', async (t) => {
  await namespace('burst');
  t.after(() => cleanup('burst', NODES));
  const nodes = NODES;
  for (const n of nodes) await node(n, { cpu: '4', pods: 110 });
  // 5 nodes × 4 cpu / 100m = 200 pods fit; 20 more cannot.
  const total = 220;
  for (let i = 0; i < total; i += 50) await Promise.all(Array.from({ length: Math.min(50, total - i) }, (_, j) => pod('burst', `p-${i + j}`, { cpu: '100m' })));
  let pods: Obj[] = [];
  await waitFor(
    async () => {
      pods = (await request(env.url, 'GET', '/api/v1/namespaces/burst/pods')).body.items;
      return (
        pods.filter((p) => p.spec.nodeName).length === 200 &&
        pods.filter((p) => !p.spec.nodeName && p.status?.conditions?.some((c: Obj) => c.reason === 'Unschedulable')).length === 20
      );
    },
    30_000,
    '200 bound and 20 unschedulable',
  );
  const used = new Map<string, number>();
  for (const p of pods)
    if (p.spec.nodeName) used.set(p.spec.nodeName, (used.get(p.spec.nodeName) ?? 0) + milliValue(p.spec.containers[0].resources.requests.cpu));
  for (const n of nodes) assert.ok((used.get(n) ?? 0) <= 4000, `${n} holds ${used.get(n)}m of 4000m`);
  assert.equal(
    [...used.values()].reduce((a, b) => a + b, 0),
    20_000,
  );
});
