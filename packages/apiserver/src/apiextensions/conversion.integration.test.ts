/**
 * A CRD with two versions and a conversion webhook (an HTTPS server in the
 * test, trusted through caBundle): v1 keeps `spec.hostPort: "host:port"`, v2
 * splits it into `spec.host` and `spec.port`. Objects written in either
 * version are stored in v1 and read back in both; lists and watches are
 * converted too; a webhook that fails makes reads of the other version fail
 * with upstream's error.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, issue } from '@kubeling/pki';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let hook: Server;
let broken = false;
const reviews: { desiredAPIVersion: string; count: number }[] = [];

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: Record<string, unknown> };

function convert(o: Obj, desired: string): Obj {
  const spec = { ...(o.spec ?? {}) };
  if (desired.endsWith('/v2') && typeof spec.hostPort === 'string') {
    const [host, port] = spec.hostPort.split(':');
    delete spec.hostPort;
    Object.assign(spec, { host, port: Number(port) });
  } else if (desired.endsWith('/v1') && spec.host !== undefined) {
    spec.hostPort = `${String(spec.host)}:${String(spec.port)}`;
    delete spec.host;
    delete spec.port;
  }
  return { ...o, apiVersion: desired, spec };
}

const versionSchema = (props: Record<string, object>) => ({
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
});

before(async () => {
  env = await startTestEnv();
  const ca = await createCA('conversion-ca');
  const cert = await issue(ca, { commonName: 'converter', ips: ['127.0.0.1'], usage: 'server' });
  hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      const review = JSON.parse(b);
      const r = review.request;
      reviews.push({ desiredAPIVersion: r.desiredAPIVersion, count: r.objects.length });
      const response = broken
        ? { uid: r.uid, result: { status: 'Failure', message: 'converter is down' } }
        : { uid: r.uid, result: { status: 'Success' }, convertedObjects: r.objects.map((o: Obj) => convert(o, r.desiredAPIVersion)) };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const port = (hook.address() as AddressInfo).port;
  const crd = await request(env.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'endpoints.conv.example.com' },
    spec: {
      group: 'conv.example.com',
      scope: 'Namespaced',
      names: { plural: 'endpoints', singular: 'endpoint', kind: 'Endpoint' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: versionSchema({ hostPort: { type: 'string' } }) },
        { name: 'v2', served: true, storage: false, schema: versionSchema({ host: { type: 'string' }, port: { type: 'integer' } }) },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(ca.certPem).toString('base64') },
        },
      },
    },
  });
  assert.equal(crd.status, 201, crd.text);
  for (let i = 0; i < 100 && (await request(env.url, 'GET', '/apis/conv.example.com/v2/endpoints')).status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
});
after(async () => {
  hook?.close();
  await env?.stop();
});

const V1 = '/apis/conv.example.com/v1/namespaces/default/endpoints';
const V2 = '/apis/conv.example.com/v2/namespaces/default/endpoints';

test('objects written in v1 and v2 are stored in v1 and read back in both', async () => {
  const a = await request(env.url, 'POST', V1, { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'a' }, spec: { hostPort: 'db:5432' } });
  assert.equal(a.status, 201, a.text);
  const b = await request(env.url, 'POST', V2, {
    apiVersion: 'conv.example.com/v2',
    kind: 'Endpoint',
    metadata: { name: 'b', labels: { x: 'y' } },
    spec: { host: 'cache', port: 6379 },
  });
  assert.equal(b.status, 201, b.text);
  assert.equal(b.body.apiVersion, 'conv.example.com/v2');
  assert.deepEqual(b.body.spec, { host: 'cache', port: 6379 });

  const stored = await env.server!.storage.client.get('/registry/conv.example.com/endpoints/default/b').json();
  assert.equal((stored as Obj).apiVersion, 'conv.example.com/v1');
  assert.deepEqual((stored as Obj).spec, { hostPort: 'cache:6379' });

  const a2 = await request(env.url, 'GET', `${V2}/a`);
  assert.equal(a2.status, 200, a2.text);
  assert.deepEqual([a2.body.apiVersion, a2.body.spec], ['conv.example.com/v2', { host: 'db', port: 5432 }]);
  const b1 = await request(env.url, 'GET', `${V1}/b`);
  assert.deepEqual([b1.body.apiVersion, b1.body.spec, b1.body.metadata.labels], ['conv.example.com/v1', { hostPort: 'cache:6379' }, { x: 'y' }]);

  const list = await request(env.url, 'GET', V2);
  assert.deepEqual(
    list.body.items.map((o: Obj) => [o.apiVersion, o.metadata.name, o.spec]),
    [
      ['conv.example.com/v2', 'a', { host: 'db', port: 5432 }],
      ['conv.example.com/v2', 'b', { host: 'cache', port: 6379 }],
    ],
  );
  assert.ok(
    reviews.some((r) => r.desiredAPIVersion === 'conv.example.com/v2' && r.count === 2),
    'a list is converted in one review',
  );

  const patched = await request(env.url, 'PATCH', `${V2}/a`, { spec: { port: 5433 } }, { contentType: 'application/merge-patch+json' });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.body.spec, { host: 'db', port: 5433 });
  assert.deepEqual((await request(env.url, 'GET', `${V1}/a`)).body.spec, { hostPort: 'db:5433' });
});

test('a watch in v2 gets converted events', async () => {
  const ac = new AbortController();
  const res = await fetch(`${env.url}${V2}?watch=true&fieldSelector=metadata.name%3Dw`, { signal: ac.signal });
  const reader = res.body!.getReader();
  await request(env.url, 'POST', V1, { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'w' }, spec: { hostPort: 'mq:5672' } });
  let text = '';
  for (let i = 0; i < 50 && !text.includes('\n'); i++) text += new TextDecoder().decode((await reader.read()).value);
  ac.abort();
  const ev = JSON.parse(text.split('\n')[0]!);
  assert.equal(ev.type, 'ADDED');
  assert.deepEqual([ev.object.apiVersion, ev.object.spec], ['conv.example.com/v2', { host: 'mq', port: 5672 }]);
});

test('a failing webhook fails reads of the other version with upstream error', async () => {
  broken = true;
  try {
    const r = await request(env.url, 'GET', `${V2}/a`);
    assert.equal(r.status, 500, r.text);
    assert.match(r.body.message, /^conversion webhook for conv\.example\.com\/v1, Kind=Endpoint failed: converter is down/);
    assert.equal((await request(env.url, 'GET', `${V1}/a`)).status, 200, 'the storage version needs no conversion');
  } finally {
    broken = false;
  }
});

test('after the storage version moves, objects stored in the old one are converted when read in the new one', async () => {
  const crd = (await request(env.url, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/endpoints.conv.example.com')).body;
  crd.spec.versions = crd.spec.versions.map((v: { name: string }) => ({ ...v, storage: v.name === 'v2' }));
  const put = await request(env.url, 'PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/endpoints.conv.example.com', crd);
  assert.equal(put.status, 200, put.text);
  let c: Awaited<ReturnType<typeof request>> | undefined;
  for (let i = 0; i < 100; i++) {
    await request(env.url, 'DELETE', `${V1}/c`);
    c = await request(env.url, 'POST', V1, { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'c' }, spec: { hostPort: 'log:514' } });
    const stored = await env.server!.storage.client.get('/registry/conv.example.com/endpoints/default/c').json();
    if ((stored as Obj | null)?.apiVersion === 'conv.example.com/v2') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(c?.status, 201, c?.text);
  const stored = (await env.server!.storage.client.get('/registry/conv.example.com/endpoints/default/c').json()) as Obj;
  assert.deepEqual([stored.apiVersion, stored.spec], ['conv.example.com/v2', { host: 'log', port: 514 }]);
  // `a` and `b` are still stored in v1: a list in v2 converts them, and only them.
  const v2 = await request(env.url, 'GET', V2);
  for (const o of v2.body.items as Obj[]) {
    assert.equal(o.apiVersion, 'conv.example.com/v2', o.metadata.name as string);
    assert.equal(o.spec?.hostPort, undefined, o.metadata.name as string);
  }
  assert.deepEqual((v2.body.items as Obj[]).find((o) => o.metadata.name === 'a')?.spec, { host: 'db', port: 5433 });
  assert.deepEqual((await request(env.url, 'GET', `${V2}/b`)).body.spec, { host: 'cache', port: 6379 });
  const v1 = await request(env.url, 'GET', V1);
  assert.deepEqual((v1.body.items as Obj[]).find((o) => o.metadata.name === 'c')?.spec, { hostPort: 'log:514' });
});
