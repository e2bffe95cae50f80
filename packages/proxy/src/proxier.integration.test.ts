/**
 * The userspace proxy against a real etcd + apiserver: a Service's cluster IP
 * answers on this machine with its endpoints' replies, in turn; a changed
 * EndpointSlice moves the traffic, and a deleted Service closes the port.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import { randomInt } from 'node:crypto';
import pino from 'pino';
import { InformerFactory, RestClient } from '@kubeling/client';
import { freePort, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Proxier } from './proxier.js';

let env: TestEnv;
let client: RestClient;
let informers: InformerFactory;
let proxier: Proxier;
const backends: Server[] = [];
const udpBackends: UdpSocket[] = [];

/** A TCP server that answers each connection with its name. */
async function backend(name: string): Promise<number> {
  const s = createServer((c) => c.end(`${name}\n`));
  backends.push(s);
  const port = await freePort();
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', () => r()));
  return port;
}

/** One connection's whole answer, or the error's code. */
function ask(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    const s = connect({ host, port });
    s.on('data', (d) => (b += d.toString()));
    s.on('end', () => resolve(b.trim()));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
  informers = new InformerFactory(client);
  proxier = new Proxier(informers, pino({ level: 'silent' }));
  proxier.init();
  informers.start();
});
after(async () => {
  await proxier?.close();
  informers?.stop();
  client?.close();
  for (const s of backends) s.close();
  for (const s of udpBackends) s.close();
  await env?.stop();
});

test('a cluster IP relays to its endpoints in turn, follows EndpointSlice changes, and closes with its Service', async () => {
  const [a, b, c] = [await backend('a'), await backend('b'), await backend('c')];
  const ip = `127.1.${randomInt(100, 250)}.${randomInt(2, 250)}`;
  const port = await freePort();
  const svc = await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'echo' },
    spec: { clusterIP: ip, ports: [{ name: 'tcp', port }] },
  });
  assert.equal(svc.status, 201, JSON.stringify(svc.body));
  // One slice per backend port (each slice has one port number for its endpoints).
  const slice = (n: string, p: number) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: n, labels: { 'kubernetes.io/service-name': 'echo' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'tcp', port: p }],
  });
  const slices = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
  for (const [n, p] of [
    ['echo-a', a],
    ['echo-b', b],
  ] as const)
    assert.equal((await request(env.url, 'POST', slices, slice(n, p))).status, 201);
  // Both slices seen (each may reach the proxier in its own event): the cluster IP answers from both.
  const seen = new Set<string>();
  await waitFor(async () => seen.add(await ask(ip, port)).has('a') && seen.has('b'), 10_000, 'the cluster IP to answer from both');
  const answers = new Set<string>();
  for (let i = 0; i < 4; i++) answers.add(await ask(ip, port));
  assert.deepEqual([...answers].sort(), ['a', 'b'], 'both endpoints, in turn');
  assert.equal((await request(env.url, 'DELETE', `${slices}/echo-b`)).status, 200);
  assert.equal(
    (await request(env.url, 'PATCH', `${slices}/echo-a`, { ports: [{ name: 'tcp', port: c }] }, { contentType: 'application/merge-patch+json' })).status,
    200,
  );
  await waitFor(async () => (await ask(ip, port)) === 'c' && (await ask(ip, port)) === 'c', 10_000, 'traffic to follow the slices');
  assert.ok(proxier.connections >= 6);
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/services/echo')).status, 200);
  await waitFor(async () => (await ask(ip, port)) === 'ECONNREFUSED', 10_000, 'the port to close');
  assert.ok(!proxier.listening.includes(`${ip}:${port}`));
});

/** A UDP server that answers each datagram with its name and what it got. */
async function udpBackend(name: string): Promise<number> {
  const s = createSocket('udp4');
  udpBackends.push(s);
  s.on('message', (m, r) => s.send(`${name}:${m.toString()}`, r.port, r.address));
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s.address().port;
}

/** One datagram's answer through a fresh client socket (a new session each time), or '' after a while. */
function askUdp(host: string, port: number, msg: string): Promise<string> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => {
      s.close();
      resolve('');
    }, 300);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(m.toString());
    });
    s.send(msg, port, host);
  });
}

test('a UDP port relays each client to an endpoint and the replies back from the cluster IP', async () => {
  const [a, b] = [await udpBackend('a'), await udpBackend('b')];
  const ip = `127.1.${randomInt(100, 250)}.${randomInt(2, 250)}`;
  const port = await freePort();
  const svc = await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'udp-echo' },
    spec: { clusterIP: ip, ports: [{ name: 'u', port, protocol: 'UDP' }] },
  });
  assert.equal(svc.status, 201, JSON.stringify(svc.body));
  const slices = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
  for (const [n, p] of [
    ['udp-echo-a', a],
    ['udp-echo-b', b],
  ] as const) {
    const body = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: n, labels: { 'kubernetes.io/service-name': 'udp-echo' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'u', port: p, protocol: 'UDP' }],
    };
    assert.equal((await request(env.url, 'POST', slices, body)).status, 201);
  }
  // Each client is a new session: once both slices are seen, clients spread over both endpoints.
  const answers = new Set<string>();
  await waitFor(
    async () => {
      answers.add(await askUdp(ip, port, 'ping'));
      return answers.has('a:ping') && answers.has('b:ping');
    },
    10_000,
    'clients to reach both endpoints',
  );
  assert.ok(proxier.listening.includes(`${ip}:${port}/UDP`));
  assert.deepEqual([...answers].filter(Boolean).sort(), ['a:ping', 'b:ping']);
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/services/udp-echo')).status, 200);
  await waitFor(async () => !proxier.listening.includes(`${ip}:${port}/UDP`), 10_000, 'the UDP port to close');
});

/** One connection's whole answer from a given local (client) address. */
function askFrom(localAddress: string, host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    const s = connect({ host, port, localAddress });
    s.on('data', (d) => (b += d.toString()));
    s.on('end', () => resolve(b.trim()));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

test('a NodePort answers on the node address; ClientIP affinity keeps each client on its endpoint', async () => {
  const [a, b] = [await backend('na'), await backend('nb')];
  const created = await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'sticky' },
    spec: { type: 'NodePort', sessionAffinity: 'ClientIP', ports: [{ name: 'tcp', port: 80 }] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ip = created.body.spec.clusterIP as string;
  const nodePort = created.body.spec.ports[0].nodePort as number;
  assert.equal(created.body.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800, 10800);
  const slices = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
  for (const [n, p] of [
    ['sticky-a', a],
    ['sticky-b', b],
  ] as const) {
    const body = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: n, labels: { 'kubernetes.io/service-name': 'sticky' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'tcp', port: p }],
    };
    assert.equal((await request(env.url, 'POST', slices, body)).status, 201);
  }
  // Both slices seen: new clients get both endpoints.
  const first = new Set<string>();
  let n = 30;
  await waitFor(
    async () => first.add(await askFrom(`127.0.0.${n++}`, '127.0.0.1', nodePort)).has('na') && first.has('nb'),
    10_000,
    'the node port to answer from both',
  );
  assert.ok(proxier.listening.includes(`127.0.0.1:${nodePort}`));
  // Each client address sticks to the endpoint it got first, through the node port and the cluster IP alike.
  const seen = new Set<string>();
  for (const client of ['127.0.0.21', '127.0.0.22', '127.0.0.23', '127.0.0.24']) {
    const first = await askFrom(client, '127.0.0.1', nodePort);
    assert.ok(first === 'na' || first === 'nb', first);
    seen.add(first);
    for (let i = 0; i < 3; i++) assert.equal(await askFrom(client, '127.0.0.1', nodePort), first, `${client} keeps its endpoint`);
    assert.equal(await askFrom(client, ip, 80), first, `${client} on the cluster IP too`);
  }
  assert.deepEqual([...seen].sort(), ['na', 'nb'], 'new clients still spread over the endpoints');
  // Without affinity the same client goes round the endpoints.
  assert.equal(
    (
      await request(
        env.url,
        'PATCH',
        '/api/v1/namespaces/default/services/sticky',
        { spec: { sessionAffinity: 'None' } },
        { contentType: 'application/merge-patch+json' },
      )
    ).status,
    200,
  );
  await waitFor(
    async () => {
      const got = new Set<string>();
      for (let i = 0; i < 4; i++) got.add(await askFrom('127.0.0.21', '127.0.0.1', nodePort));
      return got.size === 2;
    },
    10_000,
    'one client to reach both endpoints',
  );
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/services/sticky')).status, 200);
  await waitFor(async () => (await ask('127.0.0.1', nodePort)) === 'ECONNREFUSED', 10_000, 'the node port to close');
});
