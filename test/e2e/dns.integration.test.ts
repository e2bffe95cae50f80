/**
 * Cluster DNS from inside a pod: a kubelet on kubeling's runtime runs a
 * busybox pod that asks kubeling-dns (in this process, on a loopback port,
 * with an upstream resolver of the test's own) for each record type the DNS
 * specification gives — A of a Service, A of a headless Service's endpoints
 * and of one by its hostname, AAAA, SRV of a named port, PTR of a cluster IP,
 * a pod's dashed A record, an ExternalName's CNAME — and for a name outside
 * the cluster, which is forwarded. The pod's resolv.conf and /etc/hosts, as
 * the kubelet writes them for ClusterFirst, a subdomain and hostAliases, are
 * read back too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import * as packet from 'dns-packet';
import { RestClient } from '@kubeling/client';
import { startZoneServer, type ZoneServer } from '@kubeling/dns';
import { request, startTestEnv, startTestNode, waitFor, type TestEnv, type TestNode } from '@kubeling/testenv';

const NODE = 'dns-node';
let env: TestEnv;
let node: TestNode;
let client: RestClient;
let dns: ZoneServer;
let server: string;

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
  dns = await startZoneServer(client, { 'outside.test': '127.0.0.99' });
  server = dns.address;
  node = await startTestNode({
    server: env.url,
    name: NODE,
    podCIDR: '127.5.40.0/24',
    kubelet: { clusterDNS: ['127.1.0.10'], clusterDomain: 'cluster.local' },
  });
});

after(async () => {
  await node?.stop();
  await dns?.close();
  client?.close();
  await env?.stop();
});

async function post(path: string, body: object): Promise<void> {
  const r = await request(env.url, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
}

const slice = (name: string, service: string, addressType: string, endpoints: object[], ports: object[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, labels: { 'kubernetes.io/service-name': service } },
  addressType,
  endpoints,
  ports,
});

test('every record type, asked from inside a pod; the pod resolv.conf and /etc/hosts', { timeout: 120_000 }, async () => {
  const svcs = '/api/v1/namespaces/default/services';
  const slices = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
  await post(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { clusterIP: '127.1.40.7', ports: [{ name: 'http', port: 80 }] } });
  await post(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db' }, spec: { clusterIP: 'None', ports: [{ name: 'sql', port: 5432 }] } });
  await post(
    slices,
    slice(
      'db-a',
      'db',
      'IPv4',
      [
        { addresses: ['127.2.40.1'], hostname: 'db-0', conditions: { ready: true } },
        { addresses: ['127.2.40.2'], hostname: 'db-1', conditions: { ready: true } },
      ],
      [{ name: 'sql', port: 15432, protocol: 'TCP' }],
    ),
  );
  await post(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'v6' }, spec: { clusterIP: 'None', ipFamilies: ['IPv6'], ports: [{ port: 80 }] } });
  await post(slices, slice('v6-a', 'v6', 'IPv6', [{ addresses: ['fd00::5'], conditions: { ready: true } }], [{ name: '', port: 80, protocol: 'TCP' }]));
  await post(svcs, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'outside.test' } });
  // The zone is read from informers: wait for the last object written.
  const probe = createSocket('udp4');
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), 300);
        probe.once('message', (m) => {
          clearTimeout(t);
          resolve((packet.decode(m).answers ?? []).length > 0);
        });
        const [h, p] = server.split(':') as [string, string];
        probe.send(packet.encode({ type: 'query', id: 7, questions: [{ name: 'ext.default.svc.cluster.local', type: 'CNAME' }] }), Number(p), h);
      }),
    10_000,
    'the Services in the zone',
  );
  probe.close();

  const q = (type: string, name: string) => `echo "== ${type} ${name}"; busybox nslookup -type=${type} ${name} ${server}`;
  const script = [
    q('a', 'web.default.svc.cluster.local'),
    q('a', 'db.default.svc.cluster.local'),
    q('a', 'db-1.db.default.svc.cluster.local'),
    q('aaaa', 'v6.default.svc.cluster.local'),
    q('srv', '_sql._tcp.db.default.svc.cluster.local'),
    q('srv', '_http._tcp.web.default.svc.cluster.local'),
    q('ptr', '7.40.1.127.in-addr.arpa'),
    q('a', '127-2-40-9.default.pod.cluster.local'),
    q('cname', 'ext.default.svc.cluster.local'),
    q('a', 'outside.test'),
    q('a', 'missing.default.svc.cluster.local'),
    'echo "== resolv.conf"; cat etc/resolv.conf',
    'echo "== hosts"; cat etc/hosts',
    'echo "== done"',
  ].join('; ');
  await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'asker' },
    spec: {
      nodeName: NODE,
      hostname: 'asker',
      subdomain: 'db',
      hostAliases: [{ ip: '127.0.0.7', hostnames: ['alias.local'] }],
      dnsConfig: { options: [{ name: 'timeout', value: '1' }] },
      restartPolicy: 'Never',
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script] }],
    },
  });
  let log = '';
  await waitFor(
    async () => {
      log = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/asker/log')).text;
      return log.includes('== done');
    },
    60_000,
    'the pod to ask every question',
  ).catch(async (e) => {
    const pod = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/asker')).text;
    throw new Error(`${(e as Error).message}\nlog: ${log}\npod: ${pod}`);
  });
  const section = (head: string) => {
    const start = log.indexOf(`== ${head}\n`);
    assert.ok(start >= 0, `${head} in ${log}`);
    const end = log.indexOf('\n== ', start + 1);
    return log.slice(start, end < 0 ? undefined : end + 1);
  };
  assert.match(section('a web.default.svc.cluster.local'), /Address: 127\.1\.40\.7/);
  const headless = section('a db.default.svc.cluster.local');
  assert.match(headless, /Address: 127\.2\.40\.1/);
  assert.match(headless, /Address: 127\.2\.40\.2/);
  assert.match(section('a db-1.db.default.svc.cluster.local'), /Address: 127\.2\.40\.2/);
  assert.match(section('aaaa v6.default.svc.cluster.local'), /Address: fd00::5/);
  const srv = section('srv _sql._tcp.db.default.svc.cluster.local');
  assert.match(srv, /service = 0 50 15432 db-0\.db\.default\.svc\.cluster\.local/);
  assert.match(srv, /service = 0 50 15432 db-1\.db\.default\.svc\.cluster\.local/);
  assert.match(section('srv _http._tcp.web.default.svc.cluster.local'), /service = 0 100 80 web\.default\.svc\.cluster\.local/);
  assert.match(section('ptr 7.40.1.127.in-addr.arpa'), /name = web\.default\.svc\.cluster\.local/);
  assert.match(section('a 127-2-40-9.default.pod.cluster.local'), /Address: 127\.2\.40\.9/);
  assert.match(section('cname ext.default.svc.cluster.local'), /canonical name = outside\.test/);
  assert.match(section('a outside.test'), /Address: 127\.0\.0\.99/, 'forwarded upstream');
  assert.match(section('a missing.default.svc.cluster.local'), /NXDOMAIN/);
  // The cluster's search path first, the host's after it.
  assert.match(section('resolv.conf'), /^== resolv\.conf\nsearch default\.svc\.cluster\.local svc\.cluster\.local cluster\.local( \S+)*\n/);
  assert.match(section('resolv.conf'), /\nnameserver 127\.1\.0\.10\n/);
  assert.match(section('resolv.conf'), /\noptions ndots:5 timeout:1\n/);
  const hosts = section('hosts');
  assert.match(hosts, /# Kubernetes-managed hosts file\./);
  assert.match(hosts, /\n127\.5\.40\.\d+\tasker\.db\.default\.svc\.cluster\.local\tasker\n/);
  assert.match(hosts, /# Entries added by HostAliases\.\n127\.0\.0\.7\talias\.local\n/);
});

test("dig and nslookup in the conformance suite's jessie-dnsutils image, as its DNS probes and Service checks ask: A, SRV and PTR, over UDP and TCP", {
  timeout: 120_000,
}, async () => {
  const [host, port] = server.split(':') as [string, string];
  const dig = (args: string) => `echo "== ${args}"; dig @${host} -p ${port} ${args}`;
  const script = [
    dig('+notcp +noall +answer web.default.svc.cluster.local A'),
    dig('+tcp +noall +answer web.default.svc.cluster.local A'),
    dig('+notcp +noall +answer _sql._tcp.db.default.svc.cluster.local SRV'),
    dig('+notcp +noall +answer 7.40.1.127.in-addr.arpa. PTR'),
    dig('+short missing.default.svc.cluster.local A'),
    `nslookup web.default.svc.cluster.local ${server}; echo "== nslookup $?"`,
    `nslookup missing.default.svc.cluster.local ${server}; echo "== nslookup missing $?"`,
    'echo "== done"',
  ].join('; ');
  await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'digger' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      containers: [{ name: 'c', image: 'gcr.io/kubernetes-e2e-test-images/jessie-dnsutils:1.0', command: ['sh', '-c', script] }],
    },
  });
  let log = '';
  await waitFor(
    async () => {
      log = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/digger/log')).text;
      return log.includes('== done');
    },
    60_000,
    'the pod to dig',
  );
  const lines = log.split('\n');
  const after = (head: string) => lines[lines.indexOf(`== ${head}`) + 1];
  assert.equal(after('+notcp +noall +answer web.default.svc.cluster.local A'), 'web.default.svc.cluster.local.\t\t30\tIN\tA\t127.1.40.7');
  assert.equal(after('+tcp +noall +answer web.default.svc.cluster.local A'), 'web.default.svc.cluster.local.\t\t30\tIN\tA\t127.1.40.7');
  assert.match(
    after('+notcp +noall +answer _sql._tcp.db.default.svc.cluster.local SRV') ?? '',
    /\tIN\tSRV\t0 50 15432 db-[01]\.db\.default\.svc\.cluster\.local\.$/,
  );
  assert.equal(after('+notcp +noall +answer 7.40.1.127.in-addr.arpa. PTR'), '7.40.1.127.in-addr.arpa.\t\t30\tIN\tPTR\tweb.default.svc.cluster.local.');
  assert.equal(after('+short missing.default.svc.cluster.local A'), `Server:\t\t${host}`, 'no answer for a missing name');
  // nslookup as busybox prints it; its status says whether the name resolved.
  assert.ok(log.includes(`Name:\tweb.default.svc.cluster.local\nAddress: 127.1.40.7\n`), log);
  assert.ok(lines.includes('== nslookup 0'), log);
  assert.ok(log.includes("** server can't find missing.default.svc.cluster.local: NXDOMAIN"), log);
  assert.ok(lines.includes('== nslookup missing 1'), log);
});
