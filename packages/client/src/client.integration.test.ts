/**
 * The client machinery against real servers: retries with Retry-After on a
 * loopback server that answers 429 first, and an informer over a real apiserver
 * that follows adds, updates and deletes and relists after a 410.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { Informer } from './cache.js';
import { RestClient } from './rest.js';

let env: TestEnv;
before(async () => {
  env = await startTestEnv({ server: { compactionIntervalMs: 0, watchCacheSize: 5 } });
});
after(async () => {
  await env?.stop();
});

test('429 with Retry-After is retried; 500 on a read is retried; a write is not retried on 500', async () => {
  let calls = 0;
  const srv = createServer((req, res) => {
    calls++;
    if (req.url === '/busy' && calls === 1) {
      res
        .writeHead(429, { 'Retry-After': '1', 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 }));
      return;
    }
    if (req.url === '/flaky' && calls <= 3) {
      res.writeHead(500).end();
      return;
    }
    res.writeHead(req.method === 'POST' ? 500 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const client = new RestClient({ server: `http://127.0.0.1:${port}`, namespace: 'default', insecureSkipTLSVerify: false });
  try {
    const t0 = Date.now();
    assert.deepEqual(await client.get('/busy'), { ok: true });
    assert.ok(Date.now() - t0 >= 900, 'waited for Retry-After');
    calls = 1;
    assert.deepEqual(await client.get('/flaky'), { ok: true });
    calls = 10;
    const before = client.requestCount;
    await assert.rejects(client.post('/write', {}));
    assert.equal(client.requestCount - before, 1);
  } finally {
    client.close();
    srv.close();
  }
});

test('an informer follows the apiserver and relists after 410', async () => {
  const client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
  const inf = new Informer(client, { path: '/api/v1/namespaces/default/configmaps' }, { minWatchTimeoutSeconds: 1 });
  const seen: string[] = [];
  inf.addEventHandler({
    add: (o) => seen.push(`add:${o.metadata.name}`),
    update: (_a, o) => seen.push(`update:${o.metadata.name}`),
    delete: (o) => seen.push(`delete:${o.metadata.name}`),
  });
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
  await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('before'));
  inf.start();
  await inf.synced();
  await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('during'));
  await request(env.url, 'PATCH', '/api/v1/namespaces/default/configmaps/during', { data: { a: '2' } }, { contentType: 'application/merge-patch+json' });
  await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/before');
  const wait = async (cond: () => boolean) => {
    for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  };
  await wait(() => seen.includes('delete:before'));
  assert.deepEqual(seen, ['add:before', 'add:during', 'update:during', 'delete:before']);
  // Make its resourceVersion one that compaction removed: its next watch gets 410 and it must relist.
  for (let i = 0; i < 10; i++) await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm(`fill-${i}`));
  await env.server!.compactOnce();
  await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('after'));
  await env.server!.compactOnce();
  await wait(() => inf.store.get('default/after') !== undefined);
  const lists = inf.listCount;
  (inf as unknown as { resourceVersion: string }).resourceVersion = '2';
  await wait(() => inf.listCount > lists);
  assert.ok(inf.listCount > lists, 'relisted after 410');
  assert.ok(inf.store.get('default/fill-9'));
  assert.equal(inf.store.get('default/before'), undefined);
  inf.stop();
  client.close();
});
