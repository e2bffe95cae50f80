/**
 * Value transformers: what a stored value goes through on its way to and from
 * etcd (k8s.io/apiserver pkg/storage/value/transformer.go and encrypt/{identity,
 * aes,secretbox}). Formats are upstream's byte for byte, so values written here
 * read there and back:
 *   aescbc:    IV(16) ‖ AES-CBC(PKCS#7(data))          no authentication, no AAD
 *   aesgcm:    nonce(12) ‖ AES-GCM(data) ‖ tag(16)      AAD = the etcd key
 *   secretbox: nonce(24) ‖ tag(16) ‖ XSalsa20(data)      no AAD (nacl secretbox)
 * each behind `k8s:enc:<provider>:v1:<key name>:`. The first provider writes;
 * reads pick providers by prefix, in order, and say `stale` when the value was
 * not written by the first one (so a rewrite moves it to the current key).
 *
 * Transforms are synchronous except where a KMS plugin must be asked (a DEK not
 * in the cache): then, and only then, the result is a Promise.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';

export interface FromStorage {
  data: Buffer;
  /** Written by a provider or key other than the current first one: a write should re-encrypt it. */
  stale: boolean;
}

export interface Transformer {
  fromStorage(data: Buffer, aad: Buffer): FromStorage | Promise<FromStorage>;
  toStorage(data: Buffer, aad: Buffer): Buffer | Promise<Buffer>;
}

export interface PrefixTransformer {
  prefix: Buffer;
  transformer: Transformer;
}

/** Random bytes; injectable so tests can fix IVs and nonces. */
export type Random = (n: number) => Buffer;

export const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as Promise<T>)?.then === 'function';

/** utilerrors.Reduce(NewAggregate(errs)): one error as it is, several as `[a, b]`. */
function reduce(errs: Error[]): Error | undefined {
  if (!errs.length) return undefined;
  if (errs.length === 1) return errs[0];
  return new Error(`[${[...new Set(errs.map((e) => e.message))].join(', ')}]`);
}

/**
 * Tries each transformer whose prefix the data has, in order; the first success
 * wins (stale unless it is the first transformer). A failing match does not stop
 * later ones: two aescbc providers share a prefix while a key is rotated. An
 * empty prefix (identity) that fails is skipped without counting as an error.
 */
export class PrefixTransformers implements Transformer {
  constructor(
    readonly transformers: PrefixTransformer[],
    private readonly noMatch: string,
  ) {}

  fromStorage(data: Buffer, aad: Buffer): FromStorage | Promise<FromStorage> {
    return this.tryFrom(0, data, aad, []);
  }

  private tryFrom(start: number, data: Buffer, aad: Buffer, errs: Error[]): FromStorage | Promise<FromStorage> {
    for (let i = start; i < this.transformers.length; i++) {
      const { prefix, transformer } = this.transformers[i]!;
      if (data.length < prefix.length || !data.subarray(0, prefix.length).equals(prefix)) continue;
      const done = (r: FromStorage): FromStorage => (i === 0 ? r : { data: r.data, stale: true });
      const failed = (e: unknown) => {
        if (prefix.length) errs.push(e instanceof Error ? e : new Error(String(e)));
      };
      let r: FromStorage | Promise<FromStorage>;
      try {
        r = transformer.fromStorage(data.subarray(prefix.length), aad);
      } catch (e) {
        failed(e);
        continue;
      }
      if (isPromise(r))
        return r.then(done, (e: unknown) => {
          failed(e);
          return this.tryFrom(i + 1, data, aad, errs);
        });
      return done(r);
    }
    throw reduce(errs) ?? new Error(this.noMatch);
  }

  toStorage(data: Buffer, aad: Buffer): Buffer | Promise<Buffer> {
    const { prefix, transformer } = this.transformers[0]!;
    const out = transformer.toStorage(data, aad);
    return isPromise(out) ? out.then((b) => Buffer.concat([prefix, b])) : Buffer.concat([prefix, out]);
  }
}

const ENCRYPTED = Buffer.from('k8s:enc:');

/** identity: stores as is; refuses to read encrypted data (which lets a later provider try it). */
export const identity: Transformer = {
  fromStorage(data) {
    if (data.length >= ENCRYPTED.length && data.subarray(0, ENCRYPTED.length).equals(ENCRYPTED))
      throw new Error('identity transformer tried to read encrypted data');
    return { data, stale: false };
  },
  toStorage: (data) => data,
};

/** Whether a value carries the prefix reserved for encrypted data. */
export const looksEncrypted = (data: Buffer): boolean =>
  data[0] === 0x6b && data.length >= ENCRYPTED.length && data.subarray(0, ENCRYPTED.length).equals(ENCRYPTED);

const SHORT = 'the stored data was shorter than the required size';
const AUTH_FAILED = 'cipher: message authentication failed';

const aesName = (key: Buffer, mode: 'cbc' | 'gcm') => {
  if (![16, 24, 32].includes(key.length)) throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}`;
};

/** AES-GCM open of nonce(12) ‖ ciphertext ‖ tag(16), with the etcd key as additional data. */
export function gcmOpen(key: Buffer, data: Buffer, aad: Buffer, infoLen = 0): Buffer {
  if (data.length < infoLen + 12) throw new Error(SHORT);
  const nonce = data.subarray(infoLen, infoLen + 12);
  const body = data.subarray(infoLen + 12);
  if (body.length < 16) throw new Error(AUTH_FAILED);
  try {
    const d = createDecipheriv(aesName(key, 'gcm') as 'aes-256-gcm', key, nonce);
    d.setAAD(aad);
    d.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]);
  } catch {
    throw new Error(AUTH_FAILED);
  }
}

/** AES-GCM seal: nonce ‖ ciphertext ‖ tag. */
export function gcmSeal(key: Buffer, nonce: Buffer, data: Buffer, aad: Buffer): Buffer {
  const c = createCipheriv(aesName(key, 'gcm') as 'aes-256-gcm', key, nonce);
  c.setAAD(aad);
  const body = Buffer.concat([c.update(data), c.final()]);
  return Buffer.concat([nonce, body, c.getAuthTag()]);
}

/** aesgcm: a random 12-byte nonce per write (so keys must be rotated well before 2^32 writes). */
export function aesGCM(key: Buffer, random: Random = randomBytes): Transformer {
  aesName(key, 'gcm');
  return {
    fromStorage: (data, aad) => ({ data: gcmOpen(key, data, aad), stale: false }),
    toStorage: (data, aad) => gcmSeal(key, random(12), data, aad),
  };
}

/** aescbc: a random IV and PKCS#7 padding; no integrity, as upstream (aesgcm or KMS v2 are the better choices). */
export function aesCBC(key: Buffer, random: Random = randomBytes): Transformer {
  const algo = aesName(key, 'cbc');
  return {
    fromStorage(data) {
      if (data.length < 16) throw new Error(SHORT);
      const body = data.subarray(16);
      if (body.length % 16 !== 0) throw new Error('the stored data is not a multiple of the block size');
      const d = createDecipheriv(algo, key, data.subarray(0, 16));
      d.setAutoPadding(false);
      const out = Buffer.concat([d.update(body), d.final()]);
      const pad = out.length ? out[out.length - 1]! : 0;
      if (pad === 0 || pad > out.length) throw new Error('invalid PKCS7 data (empty or not padded)');
      for (let i = out.length - pad; i < out.length; i++) if (out[i] !== pad) throw new Error('invalid padding on input');
      return { data: out.subarray(0, out.length - pad), stale: false };
    },
    toStorage(data) {
      const pad = 16 - (data.length % 16);
      const iv = random(16);
      const c = createCipheriv(algo, key, iv);
      c.setAutoPadding(false);
      return Buffer.concat([iv, c.update(Buffer.concat([data, Buffer.alloc(pad, pad)])), c.final()]);
    },
  };
}

/** secretbox: XSalsa20-Poly1305 with a random 24-byte nonce (nacl's format: the tag before the ciphertext). */
export function secretbox(key: Buffer, random: Random = randomBytes): Transformer {
  if (key.length !== 32) throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
  return {
    fromStorage(data) {
      if (data.length < 16 + 24) throw new Error(SHORT);
      try {
        return { data: Buffer.from(xsalsa20poly1305(key, data.subarray(0, 24)).decrypt(data.subarray(24))), stale: false };
      } catch {
        // upstream's words for a failed open
        throw new Error('output array was not large enough for encryption');
      }
    },
    toStorage(data) {
      const nonce = random(24);
      return Buffer.concat([nonce, xsalsa20poly1305(key, nonce).encrypt(data)]);
    },
  };
}

/** The per-key transformers of one aescbc/aesgcm/secretbox provider, each behind `<name>:`. */
export function keyed(keys: { name: string; transformer: Transformer }[], noMatch: string): Transformer {
  return new PrefixTransformers(
    keys.map((k) => ({ prefix: Buffer.from(`${k.name}:`), transformer: k.transformer })),
    noMatch,
  );
}
