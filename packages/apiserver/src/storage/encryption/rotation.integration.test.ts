/**
 * Key rotation end to end, as the Kubernetes documentation tells operators to
 * do it: one etcd, apiservers restarted with a new configuration each step —
 * [key1] → [key2, key1] + rewrite every Secret with the real kubectl → [key2];
 * then turning encryption off with identity first.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { Kubectl, kubectlBinaries, request, startEtcd, type EtcdProcess } from '@kubeling/testenv';
import { buildApiServer, type ApiServer } from '../../server.js';
import type { EncryptionConfiguration, ProviderConfiguration } from './config.js';

const aescbc = (name: string, fill: number): ProviderConfiguration => ({ aescbc: { keys: [{ name, secret: Buffer.alloc(32, fill).toString('base64') }] } });
const KEY1 = aescbc('key1', 1);
const KEY2 = aescbc('key2', 2);
const config = (...providers: ProviderConfiguration[]): EncryptionConfiguration => ({
  apiVersion: 'apiserver.config.k8s.io/v1',
  kind: 'EncryptionConfiguration',
  resources: [{ resources: ['secrets'], providers }],
});

let etcd: EtcdProcess;
let raw: Etcd3;
before(async () => {
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoint });
});
after(async () => {
  raw?.close();
  await etcd?.stop();
});

/** An apiserver on the shared etcd with `encryptionConfig`, for the duration of `fn`. */
async function withServer(encryptionConfig: EncryptionConfiguration, fn: (url: string, server: ApiServer) => Promise<void>): Promise<void> {
  const server = await buildApiServer({ etcdServers: [etcd.endpoint], logger: false, compactionIntervalMs: 0, encryptionConfig });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.app.server.address();
  try {
    await fn(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, server);
  } finally {
    await server.close();
  }
}

const NAMES = [
  ['default', 'a'],
  ['default', 'b'],
  ['kube-system', 'c'],
] as const;
const data = (name: string) => ({ token: Buffer.from(`value-of-${name}`).toString('base64') });

/** The provider and key prefix of every Secret in etcd. */
async function prefixes(): Promise<string[]> {
  const all = await raw.getAll().prefix('/registry/secrets/').buffers();
  return Object.values(all).map((v) => (v.subarray(0, 8).toString() === 'k8s:enc:' ? v.subarray(0, 23).toString() : 'plaintext'));
}

async function readsAll(url: string): Promise<void> {
  for (const [ns, name] of NAMES) {
    const r = await request(url, 'GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data, data(name));
  }
  const list = await request(url, 'GET', '/api/v1/secrets');
  assert.equal(list.status, 200, list.text);
  const cached = await request(url, 'GET', '/api/v1/secrets?resourceVersion=0');
  assert.equal(cached.status, 200, cached.text);
  assert.equal(cached.body.items.length, list.body.items.length);
}

const kubectlBin = kubectlBinaries().default;

test('rotate key1 → key2 with a rewrite by kubectl, then drop key1; identity first turns encryption off', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  await withServer(config(KEY1), async (url) => {
    for (const [ns, name] of NAMES) {
      const r = await request(url, 'POST', `/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: data(name) });
      assert.equal(r.status, 201, r.text);
    }
    assert.deepEqual([...new Set(await prefixes())], ['k8s:enc:aescbc:v1:key1:']);
  });

  await withServer(config(KEY2, KEY1), async (url) => {
    await readsAll(url);
    assert.deepEqual([...new Set(await prefixes())], ['k8s:enc:aescbc:v1:key1:'], 'reads do not rewrite');
    const k = new Kubectl(url, kubectlBin!);
    try {
      const got = await k.run(['get', 'secrets', '-A', '-o', 'json']);
      assert.equal(got.code, 0, got.stderr);
      const replaced = await k.run(['replace', '-f', '-'], { input: got.stdout });
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.match(replaced.stdout, /secret\/a replaced/);
    } finally {
      k.cleanup();
    }
    assert.deepEqual([...new Set(await prefixes())], ['k8s:enc:aescbc:v1:key2:']);
    await readsAll(url);
  });

  await withServer(config(KEY2), async (url) => {
    await readsAll(url);
    // A Secret still under key1 would now be unreadable, with the key level's words.
    const underKey2 = (await raw.get('/registry/secrets/default/a').buffer())!;
    await raw.put('/registry/secrets/default/old').value(Buffer.concat([Buffer.from('k8s:enc:aescbc:v1:key1:'), underKey2.subarray(23)]));
    const old = await request(url, 'GET', '/api/v1/namespaces/default/secrets/old');
    assert.equal(old.status, 500);
    assert.equal(
      old.body.message,
      'Internal error occurred: unable to transform key "/registry/secrets/default/old": no matching key was found for the provided AES transformer',
    );
    await raw.delete().key('/registry/secrets/default/old');
  });

  // Turning encryption off: identity first writes plaintext and still decrypts what key2 wrote.
  await withServer(config({ identity: {} }, KEY2), async (url) => {
    await readsAll(url);
    const r = await request(url, 'POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'new' },
      data: data('new'),
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(JSON.parse((await raw.get('/registry/secrets/default/new').string())!).data.token, data('new').token);
  });
});
