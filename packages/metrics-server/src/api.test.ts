import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { KubeObject, NodeMetrics, NodeMetricsList, PodMetrics, PodMetricsList } from '@kubeling/api';
import { isStatusError, type StatusError } from '@kubeling/apimachinery';
import { DISCOVERY, type Listers, read, resourceAttributes, route, tableWanted, toTable } from './api.js';
import { MetricsStorage } from './storage.js';

const T0 = 1_700_000_000_000;
const node = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
const pod = (ns: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels },
});

const nodes = [node('a', { zone: 'x' }), node('b', { zone: 'y' }), node('c')];
const pods = [pod('default', 'web', { app: 'web' }), pod('default', 'db', { app: 'db' }), pod('kube-system', 'dns', { app: 'dns' }), pod('default', 'idle')];
const listers: Listers = {
  node: (n) => nodes.find((x) => x.metadata.name === n),
  nodes: () => nodes,
  pod: (ns, n) => pods.find((x) => x.metadata.namespace === ns && x.metadata.name === n),
  pods: (ns) => pods.filter((p) => ns === undefined || p.metadata.namespace === ns),
};

/** Two points 15 s apart for nodes a and b and the pods web, db, dns (idle has none; c has none). */
function storage(): MetricsStorage {
  const s = new MetricsStorage(15_000);
  for (const [i, t] of [T0, T0 + 15_000].entries()) {
    const pt = (cpu: number, mem: number) => ({ startTimeMs: T0 - 3_600_000, timestampMs: t, cpuNanos: cpu * 1e9 * (i + 1), memoryBytes: mem });
    s.store({
      nodes: new Map([
        ['a', pt(15, 2 ** 30)],
        ['b', pt(1.5, 512 * 1024)],
      ]),
      pods: new Map([
        [
          'default/web',
          new Map([
            ['app', pt(1.5, 3 * 2 ** 20)],
            ['proxy', pt(0.15, 2 ** 20)],
          ]),
        ],
        ['default/db', new Map([['db', pt(3, 1234567)]])],
        ['kube-system/dns', new Map([['dns', pt(0.015, 1000)]])],
      ]),
    });
  }
  return s;
}

const q = (s = '') => new URLSearchParams(s);
const r = (path: string) => {
  const x = route(path);
  assert.equal(x.kind, 'resource', path);
  return x as Extract<ReturnType<typeof route>, { kind: 'resource' }>;
};
const statusOf = (fn: () => unknown): StatusError['status'] => {
  try {
    fn();
  } catch (e) {
    if (isStatusError(e)) return e.status;
    throw e;
  }
  assert.fail('expected a StatusError');
};

test('routes: discovery documents, resources, and everything else not found', () => {
  assert.deepEqual(route('/apis/metrics.k8s.io/v1beta1/'), { kind: 'discovery', body: DISCOVERY['/apis/metrics.k8s.io/v1beta1'] });
  assert.deepEqual((route('/apis') as { body: { groups: { preferredVersion: unknown }[] } }).body.groups[0]!.preferredVersion, {
    groupVersion: 'metrics.k8s.io/v1beta1',
    version: 'v1beta1',
  });
  assert.deepEqual(r('/apis/metrics.k8s.io/v1beta1/nodes/n%201'), { kind: 'resource', resource: 'nodes', namespace: '', name: 'n 1' });
  assert.deepEqual(r('/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p'), { kind: 'resource', resource: 'pods', namespace: 'ns', name: 'p' });
  for (const p of [
    '/apis/metrics.k8s.io/v1beta1/namespaces/ns/nodes',
    '/apis/metrics.k8s.io/v1beta1/pods/x',
    '/apis/metrics.k8s.io/v1/nodes',
    '/api/v1/nodes',
    '/apis/metrics.k8s.io/v1beta1/nodes/a/b',
    '/apis/metrics.k8s.io/v1beta1/nodes/%zz',
  ])
    assert.equal(route(p).kind, 'notFound', p);
  assert.deepEqual(resourceAttributes(r('/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods'), false), {
    verb: 'list',
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    resource: 'pods',
    namespace: 'ns',
    name: '',
  });
  assert.equal(resourceAttributes(r('/apis/metrics.k8s.io/v1beta1/nodes/a'), false).verb, 'get');
});

test('NodeMetrics: get and list with usage, labels, window; label and field selectors', () => {
  const s = storage();
  const now = new Date(T0 + 20_000);
  const a = read(r('/apis/metrics.k8s.io/v1beta1/nodes/a'), q(), listers, s, now) as NodeMetrics;
  assert.deepEqual(a, {
    kind: 'NodeMetrics',
    apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: { name: 'a', creationTimestamp: '2023-11-14T22:13:40Z', labels: { zone: 'x' } },
    timestamp: '2023-11-14T22:13:35Z',
    window: '15s',
    usage: { cpu: '1', memory: '1Gi' },
  });
  const all = read(r('/apis/metrics.k8s.io/v1beta1/nodes'), q(), listers, s, now) as NodeMetricsList;
  assert.equal(all.kind, 'NodeMetricsList');
  assert.deepEqual(
    all.items.map((i) => [i.metadata.name, i.usage.cpu, i.usage.memory]),
    [
      ['a', '1', '1Gi'],
      ['b', '100m', '512Ki'],
    ],
  );
  const sel = (s2: string) => (read(r('/apis/metrics.k8s.io/v1beta1/nodes'), q(s2), listers, s, now) as NodeMetricsList).items.map((i) => i.metadata.name);
  assert.deepEqual(sel('labelSelector=zone%3Dy'), ['b']);
  assert.deepEqual(sel('labelSelector=zone'), ['a', 'b']);
  assert.deepEqual(sel('fieldSelector=metadata.name%3Da'), ['a']);
  assert.deepEqual(sel('fieldSelector=metadata.name!%3Da'), ['b']);
});

test('PodMetrics: all namespaces, one namespace, one pod; selectors on the pod labels', () => {
  const s = storage();
  const all = read(r('/apis/metrics.k8s.io/v1beta1/pods'), q(), listers, s) as PodMetricsList;
  assert.deepEqual(
    all.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    ['default/db', 'default/web', 'kube-system/dns'],
  );
  const ns = read(r('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods'), q('labelSelector=app+in+(web,dns)'), listers, s) as PodMetricsList;
  assert.deepEqual(
    ns.items.map((p) => p.metadata.name),
    ['web'],
  );
  const web = read(r('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web'), q(), listers, s) as PodMetrics;
  assert.deepEqual(web.containers, [
    { name: 'app', usage: { cpu: '100m', memory: '3Mi' } },
    { name: 'proxy', usage: { cpu: '10m', memory: '1Mi' } },
  ]);
  assert.deepEqual(web.metadata.labels, { app: 'web' });
  assert.equal(web.window, '15s');
  const dns = read(
    r('/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods'),
    q('fieldSelector=metadata.namespace%3Dkube-system'),
    listers,
    s,
  ) as PodMetricsList;
  assert.deepEqual(dns.items[0]?.containers, [{ name: 'dns', usage: { cpu: '1m', memory: '1k' } }]);
});

test('NotFound, bad selectors and watch are Statuses with upstream messages', () => {
  const s = storage();
  const cases: [string, string, number, string][] = [
    ['/apis/metrics.k8s.io/v1beta1/nodes/c', '', 404, 'nodemetrics.metrics.k8s.io "c" not found'],
    ['/apis/metrics.k8s.io/v1beta1/nodes/zz', '', 404, 'node "zz" not found'],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/idle', '', 404, 'podmetrics.metrics.k8s.io "default/idle" not found'],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/other/pods/web', '', 404, 'pods "web" not found'],
    [
      '/apis/metrics.k8s.io/v1beta1/pods',
      'fieldSelector=spec.nodeName%3Dx',
      400,
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    ],
    ['/apis/metrics.k8s.io/v1beta1/nodes', 'watch=true', 405, 'watch is not supported on resources of kind "nodes.metrics.k8s.io"'],
  ];
  for (const [path, query, code, message] of cases) {
    const st = statusOf(() => read(r(path), q(query), listers, s));
    assert.deepEqual([st.code, st.message], [code, message], path);
  }
  const nf = statusOf(() => read(r('/apis/metrics.k8s.io/v1beta1/nodes/c'), q(), listers, s));
  assert.deepEqual(nf.details, { name: 'c', group: 'metrics.k8s.io', kind: 'nodemetrics' });
  assert.equal(statusOf(() => read(r('/apis/metrics.k8s.io/v1beta1/nodes'), q('labelSelector=a%3D%3D%3Db'), listers, s)).code, 400);
});

test('Table output: Name, cpu, memory, Window; a pod summed over its containers', () => {
  const s = storage();
  assert.equal(tableWanted('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'), 'v1');
  assert.equal(tableWanted('application/json'), undefined);
  const now = new Date(T0);
  const t = toTable(read(r('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods'), q(), listers, s, now) as PodMetricsList, 'v1', null);
  assert.deepEqual(
    t.columnDefinitions.map((c) => [c.name, c.format]),
    [
      ['Name', 'name'],
      ['cpu', 'quantity'],
      ['memory', 'quantity'],
      ['Window', 'duration'],
    ],
  );
  assert.deepEqual(
    t.rows.map((x) => x.cells),
    [
      ['db', '200m', '1234567', '15s'],
      ['web', '110m', '4Mi', '15s'],
    ],
  );
  assert.deepEqual(t.rows[0]!.object, {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: (read(r('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/db'), q(), listers, s, now) as PodMetrics).metadata,
  });
  const one = toTable(read(r('/apis/metrics.k8s.io/v1beta1/nodes/b'), q(), listers, s) as NodeMetrics, 'v1beta1', 'None');
  assert.equal(one.apiVersion, 'meta.k8s.io/v1beta1');
  assert.deepEqual(one.rows, [{ cells: ['b', '100m', '512Ki', '15s'] }]);
});
