/**
 * Service cluster IPs against a real etcd: each allocated IP is a key of its
 * own under /registry/ipaddresses/, so no two Services share one; a taken or
 * out-of-range IP is refused as upstream words it; deletion, a failed create
 * and a dry run leave nothing held; the start-up repair records IPs a Service
 * holds without a key. And EndpointSlices: the `kubernetes`
 * Service's own, and their validation.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { EtcdStorage } from '../../storage/etcd.js';
import { repairServiceIPs } from './services.js';

let env: TestEnv;
let etcd: Etcd3;

before(async () => {
  env = await startTestEnv();
  etcd = new Etcd3({ hosts: env.etcd.endpoint });
});
after(async () => {
  etcd?.close();
  await env?.stop();
});

const svc = (name: string, clusterIP?: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], selector: { app: name }, ...(clusterIP ? { clusterIP } : {}) },
});
const post = (body: object, query = '') => request(env.url, 'POST', `/api/v1/namespaces/default/services${query}`, body);
const held = async () => (await etcd.getAll().prefix('/registry/ipaddresses/').keys()).map((k) => k.slice('/registry/ipaddresses/'.length)).sort();

test('allocated IPs are distinct and recorded; the kubernetes Service holds its own', async () => {
  const ips: string[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await post(svc(`s${i}`));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.match(r.body.spec.clusterIP, /^127\.1\.\d+\.\d+$/);
    assert.deepEqual(r.body.spec.clusterIPs, [r.body.spec.clusterIP]);
    ips.push(r.body.spec.clusterIP);
  }
  assert.equal(new Set(ips).size, ips.length);
  const h = await held();
  for (const ip of [...ips, '127.1.0.1']) assert.ok(h.includes(ip), ip);
  const rec = JSON.parse((await etcd.get(`/registry/ipaddresses/${ips[0]}`).string())!);
  assert.deepEqual([rec.kind, rec.spec.parentRef], ['IPAddress', { group: '', resource: 'services', namespace: 'default', name: 's0' }]);
});

test('a taken or out-of-range IP is Invalid with upstream message; nothing is left held by the refused create', async () => {
  const a = await post(svc('fixed', '127.1.200.7'));
  assert.equal(a.status, 201);
  const taken = await post(svc('fixed2', '127.1.200.7'));
  assert.equal(taken.status, 422);
  assert.equal(
    taken.body.message,
    'Service "fixed2" is invalid: spec.clusterIPs: Invalid value: ["127.1.200.7"]: failed to allocate IP 127.1.200.7: provided IP is already allocated',
  );
  const outside = await post(svc('outside', '10.0.0.10'));
  assert.equal(outside.status, 422);
  assert.match(
    outside.body.message,
    /failed to allocate IP 10\.0\.0\.10: the provided IP \(10\.0\.0\.10\) is not in the valid range\. The range of valid IPs is 127\.1\.0\.0\/16/,
  );
  // A create that fails after allocation (the name exists) gives its IP back.
  const before = await held();
  const dup = await post(svc('fixed', '127.1.201.9'));
  assert.equal(dup.status, 409);
  assert.deepEqual(await held(), before);
  // A dry run takes nothing.
  const dry = await post(svc('dry', '127.1.202.3'), '?dryRun=All');
  assert.equal(dry.status, 201);
  assert.ok(!(await held()).includes('127.1.202.3'));
});

test('deleting a Service gives its IP back, and another Service may take it', async () => {
  const a = await post(svc('recycle', '127.1.210.10'));
  assert.equal(a.status, 201);
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/services/recycle')).status, 200);
  for (let i = 0; i < 50 && (await held()).includes('127.1.210.10'); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!(await held()).includes('127.1.210.10'));
  assert.equal((await post(svc('recycle2', '127.1.210.10'))).status, 201);
  // Headless and ExternalName Services hold nothing.
  assert.equal((await post({ ...svc('headless'), spec: { clusterIP: 'None', selector: { app: 'h' } } })).status, 201);
  assert.equal(
    (await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.com' } })).status,
    201,
  );
  assert.ok(!(await held()).includes('None'));
});

test('EndpointSlices: the kubernetes Service has one; address types, families, ports and immutability are checked', async () => {
  const own = await request(env.url, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
  assert.equal(own.status, 200);
  assert.equal(own.body.metadata.labels['kubernetes.io/service-name'], 'kubernetes');
  assert.equal(own.body.endpoints[0].addresses[0], '127.0.0.1');
  const path = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
  const slice = (over: object) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'es' },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.30.0.1'] }],
    ports: [{ name: 'http', port: 80 }],
    ...over,
  });
  const bad = async (over: object, message: RegExp) => {
    const r = await request(env.url, 'POST', path, slice(over));
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(r.body.message, message);
  };
  await bad({ addressType: 'IPv5' }, /addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"/);
  await bad({ endpoints: [{ addresses: ['::1'] }] }, /endpoints\[0\]\.addresses\[0\]: Invalid value: "::1": must be an IPv4 address/);
  await bad({ endpoints: [{ addresses: [] }] }, /endpoints\[0\]\.addresses: Required value/);
  await bad(
    {
      ports: [
        { name: 'a', port: 80 },
        { name: 'a', port: 81 },
      ],
    },
    /ports\[1\]\.name: Duplicate value: "a"/,
  );
  await bad({ ports: [{ port: 70000 }] }, /ports\[0\]\.port: Invalid value: 70000/);
  const ok = await request(env.url, 'POST', path, slice({}));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.equal(ok.body.ports[0].protocol, 'TCP');
  const change = await request(env.url, 'PATCH', `${path}/es`, { addressType: 'FQDN' }, { contentType: 'application/merge-patch+json' });
  assert.equal(change.status, 422);
  assert.match(change.body.message, /addressType: Invalid value: "FQDN": field is immutable/);
});

test('the start-up repair records the IP of a Service that holds none, and takes no IP another Service holds', async () => {
  const made = (await post(svc('old-timer'))).body;
  const other = (await post(svc('holder'))).body;
  const ip = made.spec.clusterIP as string;
  // As a Service stored before IPs were recorded.
  await etcd.delete().key(`/registry/ipaddresses/${ip}`);
  const storage = new EtcdStorage({ hosts: [env.etcd.endpoint] });
  try {
    const ghost = { ...other, metadata: { ...other.metadata, name: 'ghost' } };
    assert.deepEqual(await repairServiceIPs(storage, [made, ghost]), [ip]);
    const rec = JSON.parse((await etcd.get(`/registry/ipaddresses/${ip}`).string())!);
    assert.equal(rec.spec.parentRef.name, 'old-timer');
    assert.equal(JSON.parse((await etcd.get(`/registry/ipaddresses/${other.spec.clusterIP}`).string())!).spec.parentRef.name, 'holder');
    assert.deepEqual(await repairServiceIPs(storage, [made]), []);
  } finally {
    storage.close();
  }
});

const nodePorts = async () =>
  (await etcd.getAll().prefix('/registry/servicenodeports/').keys()).map((k) => Number(k.slice('/registry/servicenodeports/'.length))).sort();
const svcPath = (name: string) => `/api/v1/namespaces/default/services/${name}`;

test('NodePort Services: ports from the range, each held once; taken, out-of-range and misplaced ones refused as upstream words them', async () => {
  const a = await post({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'np-a' },
    spec: {
      type: 'NodePort',
      selector: { app: 'a' },
      ports: [
        { name: 'tcp', port: 53, protocol: 'TCP' },
        { name: 'udp', port: 53, protocol: 'UDP' },
        { name: 'web', port: 80 },
      ],
    },
  });
  assert.equal(a.status, 201, JSON.stringify(a.body));
  const [tcp, udp, web] = a.body.spec.ports.map((p: { nodePort: number }) => p.nodePort);
  for (const p of [tcp, web]) assert.ok(p >= 30000 && p <= 32767, String(p));
  assert.equal(udp, tcp, 'the TCP and UDP ports of one number share a node port');
  assert.notEqual(web, tcp);
  assert.deepEqual(
    (await nodePorts()).filter((p) => p === tcp || p === web),
    [tcp, web].sort(),
  );

  const taken = await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'np-b' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: web }] } });
  assert.equal(taken.status, 422);
  assert.equal(taken.body.message, `Service "np-b" is invalid: spec.ports[0].nodePort: Invalid value: ${web}: provided port is already allocated`);
  const outside = await post({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'np-c' },
    spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] },
  });
  assert.equal(outside.status, 422);
  assert.equal(
    outside.body.message,
    'Service "np-c" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
  );
  const misplaced = await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'np-d' }, spec: { ports: [{ port: 80, nodePort: 30123 }] } });
  assert.equal(misplaced.status, 422);
  assert.equal(misplaced.body.message, 'Service "np-d" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is \'ClusterIP\'');
  assert.equal((await request(env.url, 'GET', svcPath('np-b'))).status, 404);
});

test('NodePort updates: a new port gets one, kept ports keep theirs, ClusterIP drops and gives them back, deletion too', async () => {
  const c = await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'np-e' }, spec: { selector: { app: 'e' }, ports: [{ name: 'a', port: 80 }] } });
  assert.equal(c.status, 201);
  const toNodePort = await request(
    env.url,
    'PATCH',
    svcPath('np-e'),
    {
      spec: {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      },
    },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(toNodePort.status, 200, JSON.stringify(toNodePort.body));
  const [a, b] = toNodePort.body.spec.ports.map((p: { nodePort: number }) => p.nodePort);
  assert.ok(a && b && a !== b);
  const relabel = await request(env.url, 'PATCH', svcPath('np-e'), { metadata: { labels: { x: 'y' } } }, { contentType: 'application/merge-patch+json' });
  assert.deepEqual(
    relabel.body.spec.ports.map((p: { nodePort: number }) => p.nodePort),
    [a, b],
  );
  const back = await request(env.url, 'PATCH', svcPath('np-e'), { spec: { type: 'ClusterIP' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.deepEqual(
    back.body.spec.ports.map((p: { nodePort?: number }) => p.nodePort),
    [undefined, undefined],
  );
  const held = await nodePorts();
  assert.ok(!held.includes(a) && !held.includes(b), 'given back');
  // Another Service may take a port given back; deleting it gives it back again.
  const f = await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'np-f' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: a }] } });
  assert.equal(f.status, 201, JSON.stringify(f.body));
  assert.equal((await request(env.url, 'DELETE', svcPath('np-f'))).status, 200);
  assert.ok(!(await nodePorts()).includes(a));
});

test('type changes: off ExternalName a Service gets a cluster IP (and node ports), onto it the IP is given back', async () => {
  const patch = (body: object) => request(env.url, 'PATCH', svcPath('ext-a'), body, { contentType: 'application/merge-patch+json' });
  const c = await post({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext-a' }, spec: { type: 'ExternalName', externalName: 'foo.example.com' } });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  assert.equal(c.body.spec.clusterIP, undefined);
  const toNodePort = await patch({ spec: { type: 'NodePort', externalName: null, selector: { app: 'a' }, ports: [{ port: 80, protocol: 'TCP' }] } });
  assert.equal(toNodePort.status, 200, JSON.stringify(toNodePort.body));
  const ip = toNodePort.body.spec.clusterIP;
  assert.match(ip, /^127\.1\.\d+\.\d+$/);
  assert.deepEqual([toNodePort.body.spec.clusterIPs, toNodePort.body.spec.ipFamilies], [[ip], ['IPv4']]);
  assert.ok(toNodePort.body.spec.ports[0].nodePort >= 30000);
  assert.ok((await held()).includes(ip));
  const back = await patch({ spec: { type: 'ExternalName', externalName: 'bar.example.com', selector: null, ports: null } });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.spec.clusterIP, undefined);
  assert.ok(!(await held()).includes(ip), 'the IP is given back');
  const again = await patch({ spec: { type: 'ClusterIP', externalName: null, ports: [{ port: 80 }] } });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.match(again.body.spec.clusterIP, /^127\.1\.\d+\.\d+$/);
  assert.ok((await held()).includes(again.body.spec.clusterIP));
});

test('defaults: an unset targetPort is the port, and so is 0 or "" (a Go client sends an unset IntOrString as 0); ExternalName ports too', async () => {
  const body = (name: string, targetPort: unknown, type?: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: {
      ...(type ? { type, externalName: 'db.example.com' } : { selector: { app: name } }),
      ports: [{ port: 8080, ...(targetPort === undefined ? {} : { targetPort }) }],
    },
  });
  for (const [name, tp, want] of [
    ['tp-unset', undefined, 8080],
    ['tp-zero', 0, 8080],
    ['tp-empty', '', 8080],
    ['tp-named', 'http', 'http'],
    ['tp-number', 9090, 9090],
  ] as const) {
    const r = await post(body(name, tp));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual([r.body.spec.ports[0].targetPort, r.body.spec.ports[0].protocol], [want, 'TCP'], name);
  }
  const ext = await post(body('tp-external', undefined, 'ExternalName'));
  assert.equal(ext.status, 201, ext.text);
  assert.deepEqual(ext.body.spec.ports[0], { port: 8080, targetPort: 8080, protocol: 'TCP' });
  assert.equal(ext.body.spec.internalTrafficPolicy, undefined);
});
