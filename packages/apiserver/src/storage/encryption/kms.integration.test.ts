/**
 * KMS v2 end to end: kubeling's test plugin on a unix socket, a real etcd and
 * apiserver. Values carry `k8s:enc:kms:v2:<name>:` and upstream's
 * EncryptedObject; reads work; a key ID rotation in the plugin gives new writes
 * a new DEK; the DEK cache spares the plugin a call per read.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { eventually, request, startEtcd, type EtcdProcess } from '@kubeling/testenv';
import { buildApiServer, type ApiServer } from '../../server.js';
import type { EncryptionConfiguration } from './config.js';
import { decodeEncryptedObject } from './encrypted-object.js';
import { type KmsTestPlugin, startKmsTestPlugin } from './kms-test-plugin.js';

const PREFIX = 'k8s:enc:kms:v2:test-kms:';

let dir: string;
let plugin: KmsTestPlugin;
let etcd: EtcdProcess;
let raw: Etcd3;
let config: EncryptionConfiguration;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeling-kms-'));
  plugin = await startKmsTestPlugin({ socket: join(dir, 'kms.sock') });
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoint });
  config = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      { resources: ['secrets'], providers: [{ kms: { apiVersion: 'v2', name: 'test-kms', endpoint: plugin.endpoint, timeout: '2s' } }, { identity: {} }] },
    ],
  };
});
after(async () => {
  raw?.close();
  await etcd?.stop();
  await plugin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(): Promise<{ server: ApiServer; url: string }> {
  const server = await buildApiServer({ etcdServers: [etcd.endpoint], logger: false, compactionIntervalMs: 0, encryptionConfig: config });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.app.server.address();
  return { server, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` };
}

const data = (name: string) => ({ v: Buffer.from(`kms-protected-${name}`).toString('base64') });
const stored = async (name: string) => {
  const v = (await raw.get(`/registry/secrets/default/${name}`).buffer())!;
  assert.equal(v.subarray(0, PREFIX.length).toString(), PREFIX);
  return decodeEncryptedObject(v.subarray(PREFIX.length));
};

test('values are KMS v2 envelopes; a key ID rotation gives new writes a new DEK; the DEK cache spares the plugin', async () => {
  const { server, url } = await serve();
  try {
    for (const name of ['a', 'b', 'c']) {
      const r = await request(url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: data(name) });
      assert.equal(r.status, 201, r.text);
    }
    const a = await stored('a');
    assert.equal(a.keyID, 'key-1');
    assert.deepEqual(a.annotations, { 'version.kms.kubeling.dev': Buffer.from('1') });
    assert.ok(!a.encryptedData.includes(Buffer.from('kms-protected')));
    assert.deepEqual((await stored('c')).encryptedDEKSource, a.encryptedDEKSource, 'one DEK for every write under a key ID');
    assert.equal(plugin.calls.encrypt, 1);
    for (const name of ['a', 'b', 'c']) assert.deepEqual((await request(url, 'GET', `/api/v1/namespaces/default/secrets/${name}`)).body.data, data(name));
    assert.equal(plugin.calls.decrypt, 0, 'the writer has its DEK');

    plugin.rotate();
    await server.storage.encryption!.kms[0]!.check();
    const r = await request(url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'd' }, data: data('d') });
    assert.equal(r.status, 201, r.text);
    const d = await stored('d');
    assert.equal(d.keyID, 'key-2');
    assert.notDeepEqual(d.encryptedDEKSource, a.encryptedDEKSource);
    assert.equal(plugin.calls.encrypt, 2);
    assert.deepEqual((await request(url, 'GET', '/api/v1/namespaces/default/secrets/a')).body.data, data('a'));
  } finally {
    await server.close();
  }

  // A restarted apiserver knows no DEK: one Decrypt per DEK, not per value, then none.
  const before = plugin.calls.decrypt;
  const again = await serve();
  try {
    const list = await request(again.url, 'GET', '/api/v1/namespaces/default/secrets');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((s: any) => s.data),
      ['a', 'b', 'c', 'd'].map(data),
    );
    assert.equal(plugin.calls.decrypt - before, 2);
    for (const name of ['a', 'b', 'c', 'd']) assert.equal((await request(again.url, 'GET', `/api/v1/namespaces/default/secrets/${name}`)).status, 200);
    assert.equal(plugin.calls.decrypt - before, 2);
  } finally {
    await again.server.close();
  }
});

test('the plugin down at start: reads and writes fail with InternalError naming the key; all recovers when it is back', async () => {
  plugin.healthy = false;
  const { server, url } = await serve();
  try {
    const r = await request(url, 'GET', '/api/v1/namespaces/default/secrets/a');
    assert.equal(r.status, 500);
    assert.equal(r.body.reason, 'InternalError');
    assert.match(
      r.body.message,
      /^Internal error occurred: unable to transform key "\/registry\/secrets\/default\/a": failed to decrypt DEK, error: rpc error: code = Unavailable desc = plugin is unhealthy$/,
    );
    assert.equal((await request(url, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0')).status, 500);
    const w = await request(url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'e' }, data: data('e') });
    assert.equal(w.status, 500);
    assert.equal(w.body.message, 'Internal error occurred: got unexpected nil transformer');

    plugin.healthy = true;
    assert.deepEqual((await request(url, 'GET', '/api/v1/namespaces/default/secrets/a')).body.data, data('a'));
    // The watch cache tries its unreadable values again when asked for them.
    const cached = await eventually(async () => {
      const l = await request(url, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0');
      return l.status === 200 && l;
    });
    assert.equal(cached.body.items.length, 4);
    // Writes wait for the next Status poll (here: now).
    await server.storage.encryption!.kms[0]!.check();
    const e = await request(url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'e' }, data: data('e') });
    assert.equal(e.status, 201, e.text);
  } finally {
    plugin.healthy = true;
    await server.close();
  }
});
