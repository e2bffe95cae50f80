/**
 * The providers: round trips, upstream's prefixes byte for byte, failures on a
 * wrong key, tampered data or another etcd key (where upstream authenticates
 * it), and the choice of transformer by resource (`secrets`, `*.apps`, `*.*`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { EncryptionConfiguration } from './config.js';
import { buildEncryption } from './index.js';
import { type FromStorage, type Transformer, aesCBC, aesGCM, identity, isPromise, secretbox } from './transformers.js';

const key = (seed: string, n = 32) => createHash('sha512').update(seed).digest().subarray(0, n);
const b64 = (b: Buffer) => b.toString('base64');
/** Deterministic "random" bytes, so ciphertexts (and a wrong key's garbage) are the same at every run. */
const fixed = (n: number) => Buffer.alloc(n, 7);
const sync = (r: FromStorage | Promise<FromStorage>): FromStorage => {
  if (isPromise(r)) throw new Error('unexpected Promise');
  return r;
};
const to = (t: Transformer, data: string, aad: string) => {
  const r = t.toStorage(Buffer.from(data), Buffer.from(aad));
  if (isPromise(r)) throw new Error('unexpected Promise');
  return r;
};

const SECRET = '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"password":"aHVudGVyMg=="}}';
const KEY_A = '/registry/secrets/default/s';
const KEY_B = '/registry/secrets/default/other';

const config = (providers: unknown[], resources = ['secrets']): EncryptionConfiguration =>
  ({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources, providers }] }) as EncryptionConfiguration;

test('each provider round-trips behind upstream prefix and keeps no plaintext', () => {
  for (const [provider, prefix] of [
    [{ aescbc: { keys: [{ name: 'key1', secret: b64(key('a')) }] } }, 'k8s:enc:aescbc:v1:key1:'],
    [{ aesgcm: { keys: [{ name: 'key1', secret: b64(key('a', 16)) }] } }, 'k8s:enc:aesgcm:v1:key1:'],
    [{ secretbox: { keys: [{ name: 'key1', secret: b64(key('a')) }] } }, 'k8s:enc:secretbox:v1:key1:'],
  ] as const) {
    const enc = buildEncryption(config([provider]));
    const t = enc.forKey(KEY_A)!;
    const stored = to(t, SECRET, KEY_A);
    assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
    assert.ok(!stored.includes('aHVudGVyMg'), `${prefix} leaves no plaintext`);
    const back = sync(t.fromStorage(stored, Buffer.from(KEY_A)));
    assert.equal(back.data.toString(), SECRET);
    assert.equal(back.stale, false);
  }
});

test('value layouts are upstream: IV/nonce first, sizes as Go writes them', () => {
  const k = key('a');
  const cbc = to(aesCBC(k, fixed), 'x'.repeat(16), KEY_A);
  assert.equal(cbc.length, 16 + 32, 'a full block of data gets a full block of padding');
  assert.deepEqual(cbc.subarray(0, 16), fixed(16));
  const gcm = to(aesGCM(k, fixed), 'hello', KEY_A);
  assert.equal(gcm.length, 12 + 5 + 16);
  assert.deepEqual(gcm.subarray(0, 12), fixed(12));
  const box = to(secretbox(k, fixed), 'hello', KEY_A);
  assert.equal(box.length, 24 + 16 + 5);
  assert.deepEqual(box.subarray(0, 24), fixed(24));
});

test('a wrong key, tampered data or another etcd key fail to decrypt', () => {
  const good = key('good');
  const bad = key('bad');
  // aesgcm authenticates the etcd key; secretbox and aescbc do not (as upstream).
  const gcm = to(aesGCM(good, fixed), SECRET, KEY_A);
  assert.throws(() => aesGCM(bad).fromStorage(gcm, Buffer.from(KEY_A)), { message: 'cipher: message authentication failed' });
  assert.throws(() => aesGCM(good).fromStorage(gcm, Buffer.from(KEY_B)), { message: 'cipher: message authentication failed' });
  const tampered = Buffer.from(gcm);
  tampered[20]! ^= 1;
  assert.throws(() => aesGCM(good).fromStorage(tampered, Buffer.from(KEY_A)), { message: 'cipher: message authentication failed' });

  const box = to(secretbox(good, fixed), SECRET, KEY_A);
  assert.throws(() => secretbox(bad).fromStorage(box, Buffer.from(KEY_A)), { message: 'output array was not large enough for encryption' });
  const boxT = Buffer.from(box);
  boxT[40]! ^= 1;
  assert.throws(() => secretbox(good).fromStorage(boxT, Buffer.from(KEY_A)), { message: 'output array was not large enough for encryption' });
  assert.equal(sync(secretbox(good).fromStorage(box, Buffer.from(KEY_B))).data.toString(), SECRET, 'secretbox has no additional data');

  // CBC has no integrity: a wrong key or a changed last block shows as broken padding (fixed inputs make it certain).
  const cbc = to(aesCBC(good, fixed), SECRET, KEY_A);
  assert.throws(() => aesCBC(bad).fromStorage(cbc, Buffer.from(KEY_A)), /invalid (PKCS7 data|padding on input)/);
  const cbcT = Buffer.from(cbc);
  cbcT[cbcT.length - 1]! ^= 0x55;
  assert.throws(() => aesCBC(good).fromStorage(cbcT, Buffer.from(KEY_A)), /invalid (PKCS7 data|padding on input)/);
  assert.throws(() => aesCBC(good).fromStorage(cbc.subarray(0, cbc.length - 3), Buffer.from(KEY_A)), {
    message: 'the stored data is not a multiple of the block size',
  });
});

test('reads pick providers and keys by prefix; not the first is stale; no match is an error', () => {
  const k1 = { name: 'key1', secret: b64(key('1')) };
  const k2 = { name: 'key2', secret: b64(key('2')) };
  const old = buildEncryption(config([{ aescbc: { keys: [k1] } }])).forKey(KEY_A)!;
  const v1 = to(old, SECRET, KEY_A);
  // Rotation: key2 first, key1 still readable (two providers sharing the aescbc prefix).
  const rotated = buildEncryption(config([{ aescbc: { keys: [k2] } }, { aescbc: { keys: [k1] } }])).forKey(KEY_A)!;
  assert.deepEqual(sync(rotated.fromStorage(v1, Buffer.from(KEY_A))), { data: Buffer.from(SECRET), stale: true });
  assert.equal(to(rotated, SECRET, KEY_A).subarray(0, 23).toString(), 'k8s:enc:aescbc:v1:key2:');
  // Keys of one provider: the same.
  const both = buildEncryption(config([{ aescbc: { keys: [k2, k1] } }])).forKey(KEY_A)!;
  assert.equal(sync(both.fromStorage(v1, Buffer.from(KEY_A))).stale, true);
  // key1 gone: the key level says so.
  const only2 = buildEncryption(config([{ aescbc: { keys: [k2] } }])).forKey(KEY_A)!;
  assert.throws(() => only2.fromStorage(v1, Buffer.from(KEY_A)), { message: 'no matching key was found for the provided AES transformer' });
  // Plaintext is read only when identity is configured.
  assert.throws(() => only2.fromStorage(Buffer.from(SECRET), Buffer.from(KEY_A)), { message: 'no matching prefix found' });
  const withIdentity = buildEncryption(config([{ aescbc: { keys: [k2] } }, { identity: {} }])).forKey(KEY_A)!;
  assert.deepEqual(sync(withIdentity.fromStorage(Buffer.from(SECRET), Buffer.from(KEY_A))), { data: Buffer.from(SECRET), stale: true });
  // Identity first (turning encryption off): writes plaintext, still reads the encrypted values.
  const off = buildEncryption(config([{ identity: {} }, { aescbc: { keys: [k1] } }])).forKey(KEY_A)!;
  assert.equal(to(off, SECRET, KEY_A).toString(), SECRET);
  assert.deepEqual(sync(off.fromStorage(v1, Buffer.from(KEY_A))), { data: Buffer.from(SECRET), stale: true });
  assert.throws(() => identity.fromStorage(v1, Buffer.from(KEY_A)), { message: 'identity transformer tried to read encrypted data' });
});

test('resources: exact, *.group, *.* and custom resources map to their rule; others are not transformed', () => {
  const p = (name: string) => [{ aescbc: { keys: [{ name, secret: b64(key(name)) }] } }];
  const enc = buildEncryption({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      { resources: ['secrets'], providers: p('s') },
      { resources: ['*.apps'], providers: p('apps') },
      { resources: ['widgets.example.com'], providers: p('w') },
    ],
  } as EncryptionConfiguration);
  const prefixOf = (k: string) => {
    const t = enc.forKey(k);
    return t
      ? to(t, '{}', k)
          .subarray(0, 'k8s:enc:aescbc:v1:'.length + 2)
          .toString()
      : undefined;
  };
  assert.equal(prefixOf('/registry/secrets/ns/a'), 'k8s:enc:aescbc:v1:s:');
  assert.equal(prefixOf('/registry/deployments/ns/a'), 'k8s:enc:aescbc:v1:ap');
  assert.equal(prefixOf('/registry/controllerrevisions/ns/a'), 'k8s:enc:aescbc:v1:ap');
  assert.equal(prefixOf('/registry/example.com/widgets/ns/a'), 'k8s:enc:aescbc:v1:w:');
  assert.equal(prefixOf('/registry/configmaps/ns/a'), undefined);
  assert.equal(prefixOf('/registry/example.com/gadgets/ns/a'), undefined);
  assert.equal(prefixOf('/registry/leases/ns/a'), undefined);

  const all = buildEncryption(config(p('all'), ['*.*']));
  assert.ok(all.forKey('/registry/configmaps/ns/a') && all.forKey('/registry/example.com/gadgets/x'));
  const core = buildEncryption(config(p('core'), ['*.']));
  assert.ok(core.forKey('/registry/configmaps/ns/a'));
  assert.equal(core.forKey('/registry/deployments/ns/a'), undefined);
  // events.k8s.io events are stored as core events: `events` covers both.
  assert.ok(buildEncryption(config(p('e'), ['events'])).forKey('/registry/events/ns/e'));
});
