import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalIPv6, dashed, reverseAddress, undashed, Zone, type ZoneSource } from './zone.js';
import type { EndpointSlice, Service } from './zone.js';

const svc = (ns: string, name: string, spec: Record<string, unknown>): Service =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: ns, name }, spec }) as Service;
const slice = (ns: string, service: string, endpoints: unknown[], ports: unknown[] = []): EndpointSlice =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: ns, name: `${service}-abc`, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints,
    ports,
  }) as EndpointSlice;

function source(services: Service[], slices: EndpointSlice[]): ZoneSource {
  return {
    service: (ns, name) => services.find((s) => s.metadata.namespace === ns && s.metadata.name === name),
    slices: (ns, name) => slices.filter((s) => s.metadata.namespace === ns && s.metadata.labels?.['kubernetes.io/service-name'] === name),
    namespaceExists: (ns) => services.some((s) => s.metadata.namespace === ns),
    servicesByIP: (ip) => services.filter((s) => s.spec?.clusterIP === ip),
    endpointsByIP: (ip) =>
      slices.flatMap((sl) =>
        (sl.endpoints ?? [])
          .filter((e) => e.addresses.includes(ip))
          .filter(() => services.find((s) => s.metadata.name === sl.metadata.labels?.['kubernetes.io/service-name'])?.spec?.clusterIP === 'None')
          .map((endpoint) => ({ slice: sl, endpoint })),
      ),
  };
}

const services = [
  svc('default', 'web', {
    clusterIP: '127.1.0.20',
    clusterIPs: ['127.1.0.20'],
    ports: [
      { name: 'http', port: 80, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
  }),
  svc('default', 'db', { clusterIP: 'None', ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }] }),
  svc('default', 'ext', { type: 'ExternalName', externalName: 'example.org' }),
  svc('default', 'inside', { type: 'ExternalName', externalName: 'web.default.svc.cluster.local' }),
  svc('other', 'v6', { clusterIP: 'fd00::10', clusterIPs: ['fd00::10'] }),
];
const slices = [
  slice(
    'default',
    'db',
    [
      { addresses: ['127.2.1.5'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['127.2.1.6'], conditions: { ready: true } },
      { addresses: ['127.2.1.7'], hostname: 'db-2', conditions: { ready: false } },
    ],
    [{ name: 'sql', port: 15432, protocol: 'TCP' }],
  ),
];
const zone = new Zone(source(services, slices), { domain: 'cluster.local', ttl: 30 });
const data = (name: string, type: string) => zone.answer(name, type).answers.map((a) => a.data);

test('a ClusterIP Service: A of its cluster IP, NODATA for AAAA, case-insensitive', () => {
  assert.deepEqual(data('web.default.svc.cluster.local', 'A'), ['127.1.0.20']);
  assert.deepEqual(data('WEB.Default.SVC.cluster.local.', 'A'), ['127.1.0.20']);
  const aaaa = zone.answer('web.default.svc.cluster.local', 'AAAA');
  assert.equal(aaaa.rcode, 'NOERROR');
  assert.deepEqual(aaaa.answers, []);
  assert.equal(aaaa.authorities[0]?.type, 'SOA');
  assert.deepEqual(data('v6.other.svc.cluster.local', 'AAAA'), ['fd00::10']);
});

test('missing names are NXDOMAIN with the SOA; an existing namespace is NOERROR', () => {
  const nx = zone.answer('nope.default.svc.cluster.local', 'A');
  assert.equal(nx.rcode, 'NXDOMAIN');
  assert.equal(nx.authorities[0]?.type, 'SOA');
  assert.equal(zone.answer('default.svc.cluster.local', 'A').rcode, 'NOERROR');
  assert.equal(zone.answer('absent.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  assert.equal(zone.answer('web.default.cluster.local', 'A').rcode, 'NXDOMAIN');
  assert.equal(zone.answer('svc.cluster.local', 'A').rcode, 'NOERROR');
});

test('a headless Service: one A per ready endpoint; endpoints by hostname or dashed IP', () => {
  assert.deepEqual(data('db.default.svc.cluster.local', 'A'), ['127.2.1.5', '127.2.1.6']);
  assert.deepEqual(data('db-0.db.default.svc.cluster.local', 'A'), ['127.2.1.5']);
  assert.deepEqual(data('127-2-1-6.db.default.svc.cluster.local', 'A'), ['127.2.1.6']);
  assert.equal(zone.answer('db-2.db.default.svc.cluster.local', 'A').rcode, 'NXDOMAIN', 'not ready: not published');
  assert.equal(zone.answer('db-0.web.default.svc.cluster.local', 'A').rcode, 'NXDOMAIN', 'a ClusterIP Service has no endpoint names');
});

test('publishNotReadyAddresses publishes the endpoints that are not ready', () => {
  const s = [svc('default', 'db', { clusterIP: 'None', publishNotReadyAddresses: true })];
  const z = new Zone(source(s, slices), { domain: 'cluster.local', ttl: 30 });
  assert.deepEqual(
    z.answer('db.default.svc.cluster.local', 'A').answers.map((a) => a.data),
    ['127.2.1.5', '127.2.1.6', '127.2.1.7'],
  );
});

test('SRV: a ClusterIP Service names itself, a headless one each endpoint, with the A records beside', () => {
  const web = zone.answer('_http._tcp.web.default.svc.cluster.local', 'SRV');
  assert.deepEqual(
    web.answers.map((a) => a.data),
    [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }],
  );
  assert.deepEqual(
    web.additionals.map((a) => [a.name, a.data]),
    [['web.default.svc.cluster.local', '127.1.0.20']],
  );
  assert.deepEqual(data('_dns._udp.web.default.svc.cluster.local', 'SRV'), [{ priority: 0, weight: 100, port: 53, target: 'web.default.svc.cluster.local' }]);
  assert.equal(zone.answer('_dns._tcp.web.default.svc.cluster.local', 'SRV').rcode, 'NXDOMAIN', 'the protocol must match');
  const db = zone.answer('_sql._tcp.db.default.svc.cluster.local', 'SRV');
  assert.deepEqual(
    db.answers.map((a) => a.data),
    [
      { priority: 0, weight: 50, port: 15432, target: 'db-0.db.default.svc.cluster.local' },
      { priority: 0, weight: 50, port: 15432, target: '127-2-1-6.db.default.svc.cluster.local' },
    ],
  );
  assert.deepEqual(
    db.additionals.map((a) => a.data),
    ['127.2.1.5', '127.2.1.6'],
  );
  // SRV of the Service name itself lists every named port.
  assert.equal(zone.answer('web.default.svc.cluster.local', 'SRV').answers.length, 2);
});

test('ExternalName: a CNAME to the external name, whatever the type asked', () => {
  for (const t of ['A', 'AAAA', 'CNAME']) {
    const a = zone.answer('ext.default.svc.cluster.local', t);
    assert.deepEqual(
      a.answers.map((x) => [x.type, x.data]),
      [['CNAME', 'example.org']],
    );
  }
});

test('ExternalName naming a Service of the cluster: the CNAME, then the target records (the chain CoreDNS follows in its zone)', () => {
  const a = zone.answer('inside.default.svc.cluster.local', 'A');
  assert.equal(a.rcode, 'NOERROR');
  assert.deepEqual(
    a.answers.map((x) => [x.name, x.type, x.data]),
    [
      ['inside.default.svc.cluster.local', 'CNAME', 'web.default.svc.cluster.local'],
      ['web.default.svc.cluster.local', 'A', '127.1.0.20'],
    ],
  );
  assert.deepEqual(
    zone.answer('inside.default.svc.cluster.local', 'CNAME').answers.map((x) => x.type),
    ['CNAME'],
  );
});

test('pods: the address a dashed name spells, in any namespace that exists', () => {
  assert.deepEqual(data('127-2-1-9.default.pod.cluster.local', 'A'), ['127.2.1.9']);
  assert.deepEqual(data('fd00--5.other.pod.cluster.local', 'AAAA'), ['fd00::5']);
  assert.equal(zone.answer('not-an-ip.default.pod.cluster.local', 'A').rcode, 'NXDOMAIN');
  assert.deepEqual(data('127-2-1-9.default.pod.cluster.local', 'AAAA'), []);
});

test('PTR: a cluster IP names its Service, a headless endpoint its host; unknown addresses go on', () => {
  assert.deepEqual(data('20.0.1.127.in-addr.arpa', 'PTR'), ['web.default.svc.cluster.local']);
  assert.deepEqual(data('5.1.2.127.in-addr.arpa.', 'PTR'), ['db-0.db.default.svc.cluster.local']);
  assert.deepEqual(data('6.1.2.127.in-addr.arpa', 'PTR'), ['127-2-1-6.db.default.svc.cluster.local']);
  assert.equal(zone.answer('9.9.9.127.in-addr.arpa', 'PTR').rcode, 'forward');
  const v6 = `${'0.1.0.0.'}${'0.0.0.0.'.repeat(6)}0.0.d.f.ip6.arpa`;
  assert.equal(reverseAddress(v6), 'fd00::10');
  assert.deepEqual(data(v6, 'PTR'), ['v6.other.svc.cluster.local']);
});

test('the apex, dns-version, and names outside the zone', () => {
  assert.equal(zone.answer('cluster.local', 'SOA').answers[0]?.type, 'SOA');
  assert.deepEqual(data('cluster.local', 'NS'), ['ns.dns.cluster.local']);
  assert.deepEqual(data('dns-version.cluster.local', 'TXT'), [['1.1.0']]);
  assert.equal(zone.answer('example.org', 'A').rcode, 'forward');
  assert.equal(zone.answer('notcluster.local', 'A').rcode, 'forward');
});

test('address helpers', () => {
  assert.equal(dashed('1.2.3.4'), '1-2-3-4');
  assert.deepEqual(undashed('1-2-3-4'), { ip: '1.2.3.4', family: 4 });
  assert.equal(undashed('1-2-3-256'), undefined);
  assert.equal(canonicalIPv6('fd00:0000:0000:0000:0000:0000:0000:0010'), 'fd00::10');
  assert.equal(canonicalIPv6('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
  assert.equal(reverseAddress('4.3.2.1.in-addr.arpa'), '1.2.3.4');
  assert.equal(reverseAddress('3.2.1.in-addr.arpa'), undefined);
});
