/**
 * KMS v2 envelope encryption against a plugin made of plain functions: the
 * EncryptedObject wire format, one Encrypt per key ID, the DEK cache on reads,
 * rotation on a new key ID, upstream's seed format, and failures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { AES_GCM_KEY, HKDF_SHA256_XNONCE_AES_GCM_SEED, decodeEncryptedObject, encodeEncryptedObject } from './encrypted-object.js';
import { KmsV2Provider, type KmsService } from './kms.js';
import { isPromise } from './transformers.js';

/** A plugin whose "encryption" is XOR with its key ID's byte; counts calls. */
function fakePlugin() {
  const p = {
    keyId: 'k1',
    healthz: 'ok',
    calls: { status: 0, encrypt: 0, decrypt: 0 },
    service: undefined as unknown as KmsService,
  };
  const xor = (b: Buffer, id: string) => Buffer.from(b.map((x) => x ^ id.charCodeAt(1)));
  p.service = {
    status: async () => {
      p.calls.status++;
      return { version: 'v2', healthz: p.healthz, keyId: p.keyId };
    },
    encrypt: async (_uid, plaintext) => {
      p.calls.encrypt++;
      return { ciphertext: xor(plaintext, p.keyId), keyId: p.keyId, annotations: { 'kms.example.com': Buffer.from('x') } };
    },
    decrypt: async (_uid, req) => {
      p.calls.decrypt++;
      if (p.healthz !== 'ok') throw new Error('rpc error: code = Unavailable desc = down');
      return xor(req.ciphertext, req.keyId);
    },
    close: () => undefined,
  };
  return p;
}

const AAD = Buffer.from('/registry/secrets/default/s');
const DATA = Buffer.from('{"kind":"Secret","data":{"k":"dmFsdWU="}}');

async function read(t: KmsV2Provider, v: Buffer, aad = AAD) {
  const r = t.fromStorage(v, aad);
  return isPromise(r) ? { ...(await r), async: true } : { ...r, async: false };
}

test('the EncryptedObject encodes as upstream protobuf and decodes back', () => {
  const o = {
    encryptedData: Buffer.from([1, 2]),
    keyID: 'k',
    encryptedDEKSource: Buffer.from([3]),
    annotations: { 'b.io': Buffer.from('2'), 'a.io': Buffer.from('1') },
    encryptedDEKSourceType: 1,
  };
  const b = encodeEncryptedObject(o);
  // field 1, 2, 3, then map entries sorted by key, then the enum.
  assert.equal(b.toString('hex'), '0a020102' + '12016b' + '1a0103' + '22090a04612e696f120131' + '22090a04622e696f120132' + '2801');
  assert.deepEqual(decodeEncryptedObject(b), o);
  assert.throws(() => decodeEncryptedObject(Buffer.from([0x0a, 0x05, 1])), { message: 'unexpected EOF' });
});

test('writes: one DEK per key ID encrypted once; values carry it; reads use the DEK cache', async () => {
  const plugin = fakePlugin();
  const t = new KmsV2Provider({ name: 'p', service: plugin.service });
  t.start();
  const v1 = await t.toStorage(DATA, AAD);
  const v2 = await t.toStorage(DATA, AAD);
  assert.equal(plugin.calls.encrypt, 1, 'one Encrypt for the DEK, none per write');
  const o = decodeEncryptedObject(v1);
  assert.equal(o.keyID, 'k1');
  assert.equal(o.encryptedDEKSourceType, AES_GCM_KEY);
  assert.deepEqual(o.annotations, { 'kms.example.com': Buffer.from('x') });
  assert.ok(!v1.includes(DATA));
  assert.notDeepEqual(v1, v2, 'a fresh nonce each write');
  // The writer's own DEK is cached: no Decrypt at all.
  assert.deepEqual(await read(t, v1), { data: DATA, stale: false, async: false });
  assert.equal(plugin.calls.decrypt, 0);
  // Another etcd key fails (AES-GCM additional data).
  assert.throws(() => t.fromStorage(v1, Buffer.from('/registry/secrets/default/other')), { message: 'cipher: message authentication failed' });
  t.close();

  // A new process: the DEK is asked for once, then cached, including concurrent first reads.
  const again = new KmsV2Provider({ name: 'p', service: plugin.service });
  again.start();
  const [a, b] = await Promise.all([read(again, v1), read(again, v2)]);
  assert.deepEqual([a.data, b.data, a.async], [DATA, DATA, true]);
  assert.equal(plugin.calls.decrypt, 1);
  assert.equal((await read(again, v1)).async, false);
  assert.equal(plugin.calls.decrypt, 1);
  again.close();
});

test('a key ID rotation seen by Status makes a new DEK; old values read, stale', async () => {
  const plugin = fakePlugin();
  const t = new KmsV2Provider({ name: 'p', service: plugin.service });
  t.start();
  const before = await t.toStorage(DATA, AAD);
  plugin.keyId = 'k2';
  // Until Status is polled, writes keep the current DEK.
  assert.equal(decodeEncryptedObject(await t.toStorage(DATA, AAD)).keyID, 'k1');
  await t.check();
  const after = await t.toStorage(DATA, AAD);
  const [ob, oa] = [decodeEncryptedObject(before), decodeEncryptedObject(after)];
  assert.equal(oa.keyID, 'k2');
  assert.notDeepEqual(oa.encryptedDEKSource, ob.encryptedDEKSource);
  assert.equal(plugin.calls.encrypt, 2);
  assert.deepEqual(await read(t, before), { data: DATA, stale: true, async: false });
  assert.deepEqual(await read(t, after), { data: DATA, stale: false, async: false });
  // An unchanged key ID keeps the DEK.
  await t.check();
  assert.equal(plugin.calls.encrypt, 2);
  t.close();
});

test('an unhealthy plugin: Status says why; reads needing Decrypt fail; the DEK expires for writes after 3 minutes', async () => {
  const plugin = fakePlugin();
  let now = 1_000_000;
  const t = new KmsV2Provider({ name: 'p', service: plugin.service, now: () => now });
  t.start();
  const v = await t.toStorage(DATA, AAD);
  plugin.healthz = 'broken';
  await assert.rejects(t.check(), { message: 'kmsv2 Provider p is not healthy, error: got unexpected healthz status: broken' });
  const other = new KmsV2Provider({ name: 'p', service: plugin.service });
  await assert.rejects(Promise.resolve(other.fromStorage(v, AAD)), { message: 'failed to decrypt DEK, error: rpc error: code = Unavailable desc = down' });
  other.close();
  now += 3 * 60_000 + 1;
  assert.throws(() => t.toStorage(DATA, AAD), /^Error: encryptedDEKSource with keyID hash "sha256:[0-9a-f]{64}" expired at /);
  t.close();
});

test('values written in upstream seed mode (HKDF-SHA256 extended nonce) read', async () => {
  const plugin = fakePlugin();
  const seed = randomBytes(32);
  const info = randomBytes(32);
  const dek = createHmac('sha256', seed)
    .update(Buffer.concat([info, Buffer.from([1])]))
    .digest();
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', dek, nonce);
  c.setAAD(AAD);
  const sealed = Buffer.concat([info, nonce, c.update(DATA), c.final(), c.getAuthTag()]);
  const xorSeed = Buffer.from(seed.map((x) => x ^ '1'.charCodeAt(0)));
  const value = encodeEncryptedObject({
    encryptedData: sealed,
    keyID: 'k1',
    encryptedDEKSource: xorSeed,
    annotations: {},
    encryptedDEKSourceType: HKDF_SHA256_XNONCE_AES_GCM_SEED,
  });
  const t = new KmsV2Provider({ name: 'p', service: plugin.service });
  t.start();
  const r = await read(t, value);
  assert.deepEqual(r.data, DATA);
  assert.equal(r.stale, true, 'not the write mode');
  t.close();
});
