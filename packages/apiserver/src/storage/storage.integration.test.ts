/**
 * The storage layer at its limits, against real etcd processes: resources larger
 * than one gRPC message, objects larger than etcd accepts, and etcd going away
 * and coming back under the apiserver.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { buildApiServer, type ApiServer } from '../server.js';
import { request, startEtcd, waitFor, type EtcdProcess } from '@kubeling/testenv';

async function serve(etcd: EtcdProcess, extra: Record<string, unknown> = {}): Promise<{ server: ApiServer; url: string }> {
  const server = await buildApiServer({ etcdServers: [etcd.endpoint], logger: false, compactionIntervalMs: 0, ...extra });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.app.server.address();
  return { server, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` };
}

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('a resource larger than one etcd response', () => {
  let etcd: EtcdProcess;
  let raw: Etcd3;
  const COUNT = 2600;
  before(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
    // 2,600 ConfigMaps of 2 KiB: 5.3 MB under one prefix, more than the 4 MiB a gRPC response may carry by default.
    const filler = 'x'.repeat(2048);
    for (let i = 0; i < COUNT; i += 100) {
      await raw.kv.txn({
        compare: [],
        success: Array.from({ length: Math.min(100, COUNT - i) }, (_, j) => {
          const name = `cm-${String(i + j).padStart(5, '0')}`;
          const obj = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: 'bulk', uid: `u-${i + j}`, creationTimestamp: '2026-01-01T00:00:00Z' },
            data: { filler },
          };
          return { request_put: { key: Buffer.from(`/registry/configmaps/bulk/${name}`), value: Buffer.from(JSON.stringify(obj)) } };
        }),
        failure: [],
      });
    }
  });
  after(async () => {
    raw?.close();
    await etcd?.stop();
  });

  test('the apiserver starts on it, and unpaginated lists (from etcd and from the cache) answer whole', async () => {
    const { server, url } = await serve(etcd);
    try {
      const all = await request(url, 'GET', '/api/v1/configmaps');
      assert.equal(all.status, 200, all.text.slice(0, 300));
      assert.equal(all.body.items.filter((o: any) => o.metadata.namespace === 'bulk').length, COUNT);
      const cached = await request(url, 'GET', '/api/v1/namespaces/bulk/configmaps?resourceVersion=0');
      assert.equal(cached.status, 200);
      assert.equal(cached.body.items.length, COUNT);
      const page = await request(url, 'GET', '/api/v1/namespaces/bulk/configmaps?limit=1000');
      assert.equal(page.body.items.length, 1000);
      assert.equal(page.body.metadata.remainingItemCount, COUNT - 1000);
      const rest = await request(url, 'GET', `/api/v1/namespaces/bulk/configmaps?limit=5000&continue=${page.body.metadata.continue}`);
      assert.equal(rest.body.items.length, COUNT - 1000);
      assert.equal(rest.body.items[0].metadata.name, 'cm-01000');
    } finally {
      await server.close();
    }
  });
});

describe('objects larger than etcd accepts', () => {
  let etcd: EtcdProcess;
  let raw: Etcd3;
  before(async () => {
    etcd = await startEtcd({ maxRequestBytes: 256 * 1024 });
    raw = new Etcd3({ hosts: etcd.endpoint });
  });
  after(async () => {
    raw?.close();
    await etcd?.stop();
  });

  const keys = async () => (await raw.getAll().prefix('/registry/configmaps/default/').keys()).sort();

  test('a 2.6 MB object is 413 RequestEntityTooLarge before it is sent, and nothing is stored', async () => {
    const { server, url } = await serve(etcd, { etcdMaxRequestBytes: 1.5 * 1024 * 1024 });
    try {
      const data: Record<string, string> = {};
      for (let i = 0; i < 200_000; i++) data[`k${i}`] = 'v';
      const before = await keys();
      const res = await request(url, 'POST', '/api/v1/namespaces/default/configmaps', cm('huge', data));
      assert.equal(res.status, 413, res.text.slice(0, 300));
      assert.equal(res.body.kind, 'Status');
      assert.equal(res.body.reason, 'RequestEntityTooLarge');
      assert.equal(res.body.message, 'etcdserver: request is too large');
      assert.deepEqual(await keys(), before);
      // An update that grows an object past the limit is refused the same way.
      assert.equal((await request(url, 'POST', '/api/v1/namespaces/default/configmaps', cm('grows', { a: '1' }))).status, 201);
      const grown = await request(url, 'PUT', '/api/v1/namespaces/default/configmaps/grows', cm('grows', data));
      assert.equal(grown.status, 413);
      assert.equal((await request(url, 'GET', '/api/v1/namespaces/default/configmaps/grows')).body.data.a, '1');
    } finally {
      await server.close();
    }
  });

  test("etcd's own refusal (a smaller --max-request-bytes than the apiserver knows) is 413 too", async () => {
    const { server, url } = await serve(etcd);
    try {
      const res = await request(url, 'POST', '/api/v1/namespaces/default/configmaps', cm('medium', { blob: 'y'.repeat(400 * 1024) }));
      assert.equal(res.status, 413, res.text.slice(0, 300));
      assert.equal(res.body.reason, 'RequestEntityTooLarge');
      assert.equal(res.body.message, 'etcdserver: request is too large');
      assert.ok(!(await keys()).includes('/registry/configmaps/default/medium'));
    } finally {
      await server.close();
    }
  });
});

describe('etcd going away and coming back', () => {
  let etcd: EtcdProcess;
  let server: ApiServer;
  let url: string;
  before(async () => {
    etcd = await startEtcd();
    ({ server, url } = await serve(etcd));
  });
  after(async () => {
    await server?.close();
    await etcd?.stop();
  });

  test('while etcd is down: 503 ServiceUnavailable with Retry-After; the first write after it answers succeeds; watches resume', async () => {
    assert.equal((await request(url, 'POST', '/api/v1/namespaces/default/configmaps', cm('before', { a: '1' }))).status, 201);
    const list = await request(url, 'GET', '/api/v1/namespaces/default/configmaps');
    // A watch from the list's revision, held across the outage.
    const ac = new AbortController();
    const seen: string[] = [];
    const watching = fetch(`${url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, { signal: ac.signal })
      .then(async (res) => {
        const reader = res.body!.getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += Buffer.from(value).toString();
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const ev = JSON.parse(buf.slice(0, i));
            buf = buf.slice(i + 1);
            seen.push(`${ev.type} ${ev.object.metadata?.name ?? ev.object.reason}`);
          }
        }
      })
      .catch(() => undefined);

    await etcd.kill();
    for (const [method, path, body] of [
      ['POST', '/api/v1/namespaces/default/configmaps', cm('during', { a: '1' })],
      ['GET', '/api/v1/namespaces/default/configmaps/before', undefined],
      ['GET', '/api/v1/namespaces/default/configmaps', undefined],
      ['PUT', '/api/v1/namespaces/default/configmaps/before', cm('before', { a: '2' })],
      ['DELETE', '/api/v1/namespaces/default/configmaps/before', undefined],
    ] as const) {
      const res = await request(url, method, path, body);
      assert.equal(res.status, 503, `${method} ${path}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.reason, 'ServiceUnavailable');
      assert.equal(res.headers.get('retry-after'), '1');
    }
    const ready = await request(url, 'GET', '/readyz');
    assert.notEqual(ready.status, 200);

    await etcd.restart();
    const after = await request(url, 'POST', '/api/v1/namespaces/default/configmaps', cm('after', { a: '1' }));
    assert.equal(after.status, 201, after.text.slice(0, 200));
    await waitFor(async () => seen.includes('ADDED after'), 15_000, 'the watch to see the object created after the outage');
    assert.ok(!seen.some((s) => s.startsWith('ERROR')), seen.join(', '));
    ac.abort();
    await watching;
  });
});
