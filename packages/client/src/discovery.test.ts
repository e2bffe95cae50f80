import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DiscoveryClient, discoveryError, groupResourceKey, resourcePath, restMapping, supportsAllVerbs } from './discovery.js';
import { RestClient } from './rest.js';

/**
 * A loopback server answering discovery as an apiserver does, in both forms:
 * core v1, apps/v1, example.com with v2 preferred over v1 (v1 also serving
 * `bars`), and broken.example.com/v1, whose resource list fails (503) or is
 * marked Stale in the aggregated form.
 */
const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const legacyLists: Record<string, { name: string; namespaced: boolean; kind: string; verbs: string[] }[]> = {
  '/api/v1': [
    { name: 'pods', namespaced: true, kind: 'Pod', verbs: ALL },
    { name: 'pods/status', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    { name: 'nodes', namespaced: false, kind: 'Node', verbs: ALL },
    { name: 'bindings', namespaced: true, kind: 'Binding', verbs: ['create'] },
  ],
  '/apis/apps/v1': [
    { name: 'deployments', namespaced: true, kind: 'Deployment', verbs: ALL },
    { name: 'deployments/scale', namespaced: true, kind: 'Scale', verbs: ['get', 'patch', 'update'] },
  ],
  '/apis/example.com/v2': [{ name: 'foos', namespaced: true, kind: 'Foo', verbs: ALL }],
  '/apis/example.com/v1': [
    { name: 'foos', namespaced: true, kind: 'Foo', verbs: ['get', 'list'] },
    { name: 'bars', namespaced: false, kind: 'Bar', verbs: ['get', 'list', 'watch', 'delete'] },
  ],
};
const namedGroups = [
  { name: 'apps', versions: ['v1'] },
  { name: 'example.com', versions: ['v2', 'v1'] },
  { name: 'broken.example.com', versions: ['v1'] },
];

function aggregated(root: '/api' | '/apis') {
  const groups = root === '/api' ? [{ name: '', versions: ['v1'] }] : namedGroups;
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    items: groups.map((g) => ({
      metadata: g.name ? { name: g.name } : {},
      versions: g.versions.map((v) => {
        const list = legacyLists[g.name ? `/apis/${g.name}/${v}` : `/api/${v}`];
        if (!list) return { version: v, freshness: 'Stale' };
        const top = list.filter((r) => !r.name.includes('/'));
        return {
          version: v,
          freshness: 'Current',
          resources: top.map((r) => ({
            resource: r.name,
            responseKind: { group: g.name, version: v, kind: r.kind },
            scope: r.namespaced ? 'Namespaced' : 'Cluster',
            verbs: r.verbs,
            subresources: list.filter((s) => s.name.startsWith(`${r.name}/`)).map((s) => ({ subresource: s.name.split('/')[1], verbs: s.verbs })),
          })),
        };
      }),
    })),
  };
}

let server: Server;
let url: string;
let aggregatedOn = true;
let down = false;
const requests: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '';
    requests.push(path);
    const send = (code: number, body: object, type = 'application/json') => {
      res.writeHead(code, { 'content-type': type });
      res.end(JSON.stringify(body));
    };
    if (down) return send(500, { kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500, message: 'down' });
    const wantsAggregated = aggregatedOn && String(req.headers.accept ?? '').includes('as=APIGroupDiscoveryList');
    if ((path === '/api' || path === '/apis') && wantsAggregated) {
      return send(200, aggregated(path), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    }
    if (path === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'] });
    if (path === '/apis') {
      return send(200, {
        kind: 'APIGroupList',
        groups: namedGroups.map((g) => ({
          name: g.name,
          versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
          preferredVersion: { groupVersion: `${g.name}/${g.versions[0]}`, version: g.versions[0] },
        })),
      });
    }
    const list = legacyLists[path];
    if (list) return send(200, { kind: 'APIResourceList', groupVersion: path.replace(/^\/apis?\//, ''), resources: list });
    send(503, { kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: 'the server is currently unable to handle the request' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const client = () => new RestClient({ server: url, namespace: 'default', insecureSkipTLSVerify: false }, { maxRetries: 0 });
const keys = (rs: readonly { group: string; version: string; resource: string }[]) => rs.map((r) => `${r.group}/${r.version}/${r.resource}`).sort();

for (const form of ['legacy', 'aggregated'] as const) {
  test(`${form} documents: preferred resources, subresources folded in, a failing group version recorded`, async () => {
    aggregatedOn = form === 'aggregated';
    requests.length = 0;
    const c = client();
    try {
      const snap = await new DiscoveryClient(c).discover();
      // aggregated: two requests; legacy: /api, /apis and one per group version
      assert.equal(requests.length, form === 'aggregated' ? 2 : 7);
      assert.deepEqual(keys(snap.resources), [
        '/v1/bindings',
        '/v1/nodes',
        '/v1/pods',
        'apps/v1/deployments',
        'example.com/v1/bars',
        'example.com/v1/foos',
        'example.com/v2/foos',
      ]);
      // ServerPreferredResources: foos from the preferred v2, bars from v1 (the only version serving it)
      assert.deepEqual(keys(snap.preferred), ['/v1/bindings', '/v1/nodes', '/v1/pods', 'apps/v1/deployments', 'example.com/v1/bars', 'example.com/v2/foos']);
      const pods = snap.resources.find((r) => r.resource === 'pods')!;
      assert.deepEqual(
        { ...pods, verbs: [...pods.verbs] },
        {
          group: '',
          version: 'v1',
          resource: 'pods',
          kind: 'Pod',
          namespaced: true,
          verbs: ALL,
          subresources: ['status'],
        },
      );
      assert.deepEqual(snap.resources.find((r) => r.resource === 'deployments')?.subresources, ['scale']);
      assert.equal(snap.resources.find((r) => r.resource === 'bars')?.namespaced, false);
      assert.deepEqual([...snap.failed.keys()], ['broken.example.com/v1']);
      const why = form === 'aggregated' ? 'stale GroupVersion discovery: broken.example.com/v1' : 'the server is currently unable to handle the request';
      assert.equal(discoveryError(snap)?.message, `unable to retrieve the complete list of server APIs: broken.example.com/v1: ${why}`);
      assert.deepEqual(
        snap.groups.map((g) => [g.name, ...g.versions]),
        [
          ['', 'v1'],
          ['apps', 'v1'],
          ['example.com', 'v2', 'v1'],
          ['broken.example.com', 'v1'],
        ],
      );
    } finally {
      c.close();
    }
  });
}

test('REST mapping: the version asked for, else the preferred one; subresource kinds and unknown kinds do not map', async () => {
  aggregatedOn = true;
  const c = client();
  try {
    const snap = await new DiscoveryClient(c).discover();
    assert.equal(restMapping(snap, 'example.com', 'Foo', 'v1')?.version, 'v1');
    assert.equal(restMapping(snap, 'example.com', 'Foo', 'v9')?.version, 'v2');
    assert.equal(restMapping(snap, 'example.com', 'Foo')?.version, 'v2');
    assert.equal(restMapping(snap, 'apps', 'Deployment', 'v1')?.resource, 'deployments');
    assert.equal(restMapping(snap, 'apps', 'Scale', 'v1'), undefined);
    assert.equal(restMapping(snap, 'example.com', 'Baz', 'v1'), undefined);
    assert.equal(restMapping(snap, '', 'Deployment', 'v1'), undefined);
    const foo = restMapping(snap, 'example.com', 'Foo')!;
    assert.equal(resourcePath(foo, 'ns1'), '/apis/example.com/v2/namespaces/ns1/foos');
    assert.equal(resourcePath(foo), '/apis/example.com/v2/foos');
    assert.equal(resourcePath(restMapping(snap, '', 'Node', 'v1')!, 'ns1'), '/api/v1/nodes');
    assert.equal(groupResourceKey(foo), 'example.com/foos');
    assert.equal(supportsAllVerbs(foo, ['list', 'watch', 'delete']), true);
    assert.equal(supportsAllVerbs(restMapping(snap, 'example.com', 'Foo', 'v1')!, ['list', 'watch']), false);
  } finally {
    c.close();
  }
});

test('a snapshot is reused while young enough; concurrent callers share one read; invalidate forces the next', async () => {
  aggregatedOn = true;
  const c = client();
  try {
    const d = new DiscoveryClient(c);
    const [a, b] = await Promise.all([d.discover(), d.discover()]);
    assert.equal(a, b);
    assert.equal(d.reads, 1);
    assert.equal(await d.discover(60_000), a);
    assert.equal(d.reads, 1);
    assert.notEqual(await d.discover(0), a);
    assert.equal(d.reads, 2);
    d.invalidate();
    await d.discover(60_000);
    assert.equal(d.reads, 3);
  } finally {
    c.close();
  }
});

test('a server that cannot answer /apis fails the read and keeps the last snapshot', async () => {
  const c = client();
  try {
    const d = new DiscoveryClient(c);
    const first = await d.discover();
    down = true;
    await assert.rejects(d.discover(0), /down/);
    assert.equal(d.last, first);
  } finally {
    down = false;
    c.close();
  }
});
