/**
 * Encryption at rest against a real etcd and apiserver: Secrets are stored
 * encrypted (read raw from etcd), served in plaintext by GET, lists (from etcd
 * and from the watch cache) and watches; resources not configured stay
 * plaintext; a value that cannot be decrypted fails its reads with upstream's
 * InternalError and does not break the watch cache.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { eventually, readWatch, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import type { EncryptionConfiguration } from './config.js';

const KEY1 = Buffer.alloc(32, 0x11).toString('base64');
const config: EncryptionConfiguration = {
  apiVersion: 'apiserver.config.k8s.io/v1',
  kind: 'EncryptionConfiguration',
  resources: [{ resources: ['secrets'], providers: [{ aescbc: { keys: [{ name: 'key1', secret: KEY1 }] } }, { identity: {} }] }],
};

let env: TestEnv;
let etcd: Etcd3;
before(async () => {
  env = await startTestEnv({ server: { encryptionConfig: config, compactionIntervalMs: 0 } });
  etcd = new Etcd3({ hosts: env.etcd.endpoint });
});
after(async () => {
  etcd?.close();
  await env?.stop();
});

const PASSWORD = Buffer.from('hunter2-very-secret').toString('base64');
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { app: 'enc' } }, data: { password: PASSWORD } });
const raw = async (key: string) => (await etcd.get(key).buffer())!;

test('a Secret is stored encrypted and read back in plaintext by GET, list, list from the cache and watch', async () => {
  const listed = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets');
  const watching = readWatch(
    `${env.url}/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${listed.body.metadata.resourceVersion}`,
    (ev) => ev.type === 'ADDED',
  );
  const created = await request(env.url, 'POST', '/api/v1/namespaces/default/secrets', secret('s1'));
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.data.password, PASSWORD);

  const value = await raw('/registry/secrets/default/s1');
  assert.equal(value.subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key1:');
  for (const plain of [PASSWORD, 'hunter2', '"password"', '"Secret"']) assert.ok(!value.includes(plain), `no ${plain} in etcd`);

  const got = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets/s1');
  assert.equal(got.status, 200);
  assert.equal(got.body.data.password, PASSWORD);
  assert.equal(got.body.metadata.resourceVersion, created.body.metadata.resourceVersion);
  const fromEtcd = await request(env.url, 'GET', '/api/v1/secrets?labelSelector=app%3Denc');
  assert.deepEqual(
    fromEtcd.body.items.map((s: any) => [s.metadata.name, s.data.password]),
    [['s1', PASSWORD]],
  );
  const fromCache = await eventually(async () => {
    const r = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0&labelSelector=app%3Denc');
    return r.body.items.length === 1 && r;
  });
  assert.equal(fromCache.body.items[0].data.password, PASSWORD);
  const events = await watching;
  assert.equal(events.at(-1)!.object.data.password, PASSWORD);

  // Updates are encrypted too.
  const updated = await request(env.url, 'PUT', '/api/v1/namespaces/default/secrets/s1', { ...got.body, data: { password: PASSWORD, more: 'bW9yZQ==' } });
  assert.equal(updated.status, 200, updated.text);
  const after = await raw('/registry/secrets/default/s1');
  assert.equal(after.subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key1:');
  assert.ok(!after.includes('bW9yZQ=='));
});

test('a ConfigMap (not configured) stays plaintext JSON in etcd', async () => {
  const cm = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'plain' },
    data: { k: 'visible' },
  });
  assert.equal(cm.status, 201);
  const value = await raw('/registry/configmaps/default/plain');
  assert.equal(JSON.parse(value.toString()).data.k, 'visible');
});

test('a plaintext Secret written before encryption reads through identity', async () => {
  const obj = { ...secret('legacy'), metadata: { name: 'legacy', namespace: 'default', uid: 'u-legacy', creationTimestamp: '2026-01-01T00:00:00Z' } };
  await etcd.put('/registry/secrets/default/legacy').value(JSON.stringify(obj));
  const got = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets/legacy');
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body.data.password, PASSWORD);
});

test('a value that cannot be decrypted: reads fail with InternalError naming the key; the watch cache survives', async () => {
  const key = '/registry/secrets/default/broken';
  const message = `Internal error occurred: unable to transform key "${key}": the stored data was shorter than the required size`;
  // A watcher of Secrets is ended (with the error) when such a value arrives.
  const listed = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets');
  const watching = readWatch(
    `${env.url}/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${listed.body.metadata.resourceVersion}`,
    (ev) => ev.type === 'ERROR',
  );
  await etcd.put(key).value(Buffer.concat([Buffer.from('k8s:enc:aescbc:v1:key1:'), Buffer.from('garbage')]));

  const get = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets/broken');
  assert.equal(get.status, 500);
  assert.equal(get.body.reason, 'InternalError');
  assert.equal(get.body.message, message);
  const list = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets');
  assert.equal(list.status, 500);
  assert.equal(list.body.message, message);
  const cached = await eventually(async () => {
    const r = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0');
    return r.status === 500 && r;
  });
  assert.equal(cached.body.message, message);
  const events = await watching;
  assert.equal(events.at(-1)!.type, 'ERROR');
  assert.equal(events.at(-1)!.object.message, message);
  // Other namespaces and other resources are served meanwhile.
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/kube-system/secrets?resourceVersion=0')).status, 200);
  assert.equal((await request(env.url, 'GET', '/api/v1/configmaps?resourceVersion=0')).status, 200);

  // Removing the value (here in etcd directly) heals every read.
  await etcd.delete().key(key);
  await eventually(async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/secrets?resourceVersion=0')).status === 200);
  const healed = await request(env.url, 'GET', '/api/v1/namespaces/default/secrets');
  assert.equal(healed.status, 200);
  assert.ok(healed.body.items.some((s: any) => s.metadata.name === 's1'));
});
