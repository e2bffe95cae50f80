/**
 * The DNS server against a real etcd and apiserver, asked by Node's resolver
 * (c-ares: UDP, then TCP when an answer is truncated) and by hand over TCP:
 * Services and EndpointSlices as they are written, names outside the zone
 * forwarded to an upstream on loopback, bad packets answered or dropped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { Resolver } from 'node:dns/promises';
import * as packet from 'dns-packet';
import { RestClient } from '@kubeling/client';
import { startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { startZoneServer, type ZoneServer } from './zone-server.js';

let env: TestEnv;
let client: RestClient;
let dns: ZoneServer;
let addr: string;
const resolver = new Resolver({ timeout: 2000, tries: 1 });

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
  // An upstream resolver on loopback that knows one name.
  dns = await startZoneServer(client, { 'outside.test': '127.0.0.99' });
  addr = dns.address;
  resolver.setServers([addr]);
});

after(async () => {
  await dns?.close();
  client?.close();
  await env?.stop();
});

async function create(path: string, body: object): Promise<void> {
  await client.request({ method: 'POST', path, body });
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: NodeJS.ErrnoException) => e.code,
  );

test('Services as they are written: A, SRV, CNAME, PTR; a deleted Service is NXDOMAIN', async () => {
  await create('/api/v1/namespaces/default/services', {
    metadata: { name: 'web' },
    spec: { clusterIP: '127.1.7.20', ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
  });
  await create('/api/v1/namespaces/default/services', { metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'outside.test' } });
  await waitFor(async () => (await code(resolver.resolve4('web.default.svc.cluster.local'))) === 'ok', 10_000, 'the Service in DNS');
  assert.deepEqual(await resolver.resolve4('web.default.svc.cluster.local'), ['127.1.7.20']);
  assert.deepEqual(await resolver.resolveSrv('_http._tcp.web.default.svc.cluster.local'), [
    { name: 'web.default.svc.cluster.local', port: 80, priority: 0, weight: 100 },
  ]);
  assert.deepEqual(await resolver.reverse('127.1.7.20'), ['web.default.svc.cluster.local']);
  assert.deepEqual(await resolver.resolveCname('ext.default.svc.cluster.local'), ['outside.test']);
  assert.equal(await code(resolver.resolve4('nope.default.svc.cluster.local')), 'ENOTFOUND');
  assert.equal(await code(resolver.resolve6('web.default.svc.cluster.local')), 'ENODATA');
  assert.deepEqual(await resolver.resolveTxt('dns-version.cluster.local'), [['1.1.0']]);
  assert.deepEqual(await resolver.resolve4('127-2-3-4.default.pod.cluster.local'), ['127.2.3.4']);

  await client.request({ method: 'DELETE', path: '/api/v1/namespaces/default/services/web' });
  await waitFor(async () => (await code(resolver.resolve4('web.default.svc.cluster.local'))) === 'ENOTFOUND', 10_000, 'the Service gone from DNS');
});

test('a headless Service: ready endpoints only, host names, SRV per endpoint; a large answer is truncated and fetched over TCP', async () => {
  await create('/api/v1/namespaces/default/services', { metadata: { name: 'db' }, spec: { clusterIP: 'None', ports: [{ name: 'sql', port: 5432 }] } });
  const endpoints = Array.from({ length: 60 }, (_, i) => ({
    addresses: [`127.2.9.${i + 1}`],
    ...(i === 0 ? { hostname: 'db-0' } : {}),
    conditions: { ready: i !== 59 },
  }));
  await create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    metadata: { name: 'db-1', labels: { 'kubernetes.io/service-name': 'db' } },
    addressType: 'IPv4',
    endpoints,
    ports: [{ name: 'sql', port: 15432, protocol: 'TCP' }],
  });
  await waitFor(async () => (await code(resolver.resolve4('db-0.db.default.svc.cluster.local'))) === 'ok', 10_000, 'the endpoints in DNS');
  assert.deepEqual(await resolver.resolve4('db-0.db.default.svc.cluster.local'), ['127.2.9.1']);
  assert.deepEqual(await resolver.resolve4('127-2-9-2.db.default.svc.cluster.local'), ['127.2.9.2']);
  assert.equal(await code(resolver.resolve4('127-2-9-60.db.default.svc.cluster.local')), 'ENOTFOUND', 'not ready');
  assert.deepEqual(await resolver.reverse('127.2.9.1'), ['db-0.db.default.svc.cluster.local']);
  // 59 A records do not fit in 512 bytes: UDP says truncated, the resolver asks again over TCP.
  const all = await resolver.resolve4('db.default.svc.cluster.local');
  assert.equal(all.length, 59);
  const srv = await resolver.resolveSrv('_sql._tcp.db.default.svc.cluster.local');
  assert.equal(srv.length, 59);
  assert.ok(srv.some((s) => s.name === 'db-0.db.default.svc.cluster.local' && s.port === 15432));
});

test('TCP answers several length-prefixed queries on one connection', async () => {
  const [host, port] = addr.split(':') as [string, string];
  const replies = await new Promise<packet.DecodedPacket[]>((resolve, reject) => {
    const c = connect({ host, port: Number(port) });
    let buf = Buffer.alloc(0);
    const out: packet.DecodedPacket[] = [];
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        out.push(packet.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
        if (out.length === 2) {
          c.destroy();
          resolve(out);
        }
      }
    });
    c.on('error', reject);
    c.write(packet.streamEncode({ type: 'query', id: 1, flags: packet.RECURSION_DESIRED, questions: [{ name: 'cluster.local', type: 'SOA' }] }));
    c.write(packet.streamEncode({ type: 'query', id: 2, questions: [{ name: 'missing.default.svc.cluster.local', type: 'A' }] }));
  });
  const byId = new Map(replies.map((r) => [r.id, r]));
  assert.equal(byId.get(1)?.answers?.[0]?.type, 'SOA');
  assert.equal(byId.get(1)?.flag_aa, true);
  assert.equal(byId.get(1)?.flag_rd, true);
  assert.equal((byId.get(2) as unknown as { rcode: string }).rcode, 'NXDOMAIN');
  assert.equal(byId.get(2)?.authorities?.[0]?.type, 'SOA');
});

test('other names go to the upstream; its NXDOMAIN comes back as it is', async () => {
  assert.deepEqual(await resolver.resolve4('outside.test'), ['127.0.0.99']);
  assert.equal(await code(resolver.resolve4('unknown.test')), 'ENOTFOUND');
  assert.ok(dns.server.counts.forwarded >= 2);
});

test('malformed packets: a readable header gets FORMERR, a scrap is dropped, and the server goes on', async () => {
  const [host, port] = addr.split(':') as [string, string];
  const ask = (msg: Buffer) =>
    new Promise<Buffer | undefined>((resolve) => {
      const s = createSocket('udp4');
      const t = setTimeout(() => {
        s.close();
        resolve(undefined);
      }, 500);
      s.on('message', (m) => {
        clearTimeout(t);
        s.close();
        resolve(m);
      });
      s.send(msg, Number(port), host);
    });
  const header = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0xff]);
  const formerr = await ask(header);
  assert.ok(formerr);
  assert.equal(formerr.readUInt16BE(0), 0x1234);
  assert.equal(formerr.readUInt16BE(2) & 0xf, 1, 'FORMERR');
  assert.equal(await ask(Buffer.from([1, 2, 3])), undefined);
  assert.deepEqual(await resolver.resolveTxt('dns-version.cluster.local'), [['1.1.0']]);
});
