/**
 * Stored values: the JSON an object is kept as (no resourceVersion: that is the
 * key's mod_revision), and, when encryption at rest is configured, the trip
 * through the resource's transformer with the etcd key as authenticated data
 * (k8s.io/apiserver pkg/storage/etcd3/store.go: TransformFromStorage /
 * TransformToStorage around every read and write).
 *
 * A value that cannot be transformed is upstream's storage InternalError,
 * `unable to transform key "<etcd key>": <why>`; a value that cannot be
 * encrypted fails its write with the transformer's words.
 */
import type { IKeyValue } from 'etcd3';
import type { KubeObject } from '@kubeling/api';
import { StatusError, failure } from '@kubeling/apimachinery';
import { type Encryption, type FromStorage, isPromise, looksEncrypted } from './encryption/index.js';
import type { StoredObject } from './etcd.js';

export function decodeStored(value: Buffer | Uint8Array, rev: number): KubeObject {
  const obj = JSON.parse(Buffer.from(value).toString('utf8')) as KubeObject;
  obj.metadata = obj.metadata ?? {};
  obj.metadata.resourceVersion = String(rev);
  return obj;
}

export function encodeStored(obj: KubeObject): Buffer {
  const meta = obj.metadata ?? {};
  const { resourceVersion: _rv, selfLink: _sl, ...rest } = meta;
  return Buffer.from(JSON.stringify({ ...obj, metadata: rest }));
}

/** A value that cannot be read back (not decryptable): a 500 naming the etcd key, as upstream's storage.NewInternalError. */
export function transformError(etcdKey: Buffer | string, err: unknown): StatusError {
  const msg = `unable to transform key "${etcdKey.toString()}": ${(err as Error)?.message ?? String(err)}`;
  return failure('InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] });
}

/** A write whose value could not be encrypted: a 500 with the transformer's words. */
function encryptError(err: unknown): StatusError {
  const msg = (err as Error)?.message ?? String(err);
  return failure('InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] });
}

/** Told about each value a tolerant read skips because it cannot be decoded. */
export type UndecodableHandler = (key: string, rev: number, err: StatusError, raw: { etcdKey: Buffer; value: Buffer }) => void;

/** Values through the transformers of an encryption configuration. */
export class ValueCodec {
  constructor(
    private readonly encryption: Encryption,
    /** The `/registry/...` key of an etcd key. */
    private readonly registryKey: (etcdKey: Buffer) => string,
  ) {}

  /** The object of a value read at `etcdKey`; a Promise only when a KMS plugin must be asked for its data key. */
  decode(etcdKey: Buffer, value: Buffer, rev: number): StoredObject | Promise<StoredObject> {
    const t = this.encryption.forKey(this.registryKey(etcdKey));
    if (!t) {
      // Not configured: identity, which refuses to read what another configuration encrypted.
      if (looksEncrypted(value)) throw transformError(etcdKey, new Error('identity transformer tried to read encrypted data'));
      return { obj: decodeStored(value, rev), rev };
    }
    const done = (r: FromStorage): StoredObject => (r.stale ? { obj: decodeStored(r.data, rev), rev, stale: true } : { obj: decodeStored(r.data, rev), rev });
    let r: FromStorage | Promise<FromStorage>;
    try {
      r = t.fromStorage(value, etcdKey);
    } catch (e) {
      throw transformError(etcdKey, e);
    }
    if (isPromise(r))
      return r.then(done, (e: unknown) => {
        throw transformError(etcdKey, e);
      });
    return done(r);
  }

  /** The value to store for `obj` at `key` (etcd key `etcdKey`), and its plain JSON. */
  async encode(key: string, etcdKey: Buffer, obj: KubeObject): Promise<{ plain: Buffer; value: Buffer }> {
    const plain = encodeStored(obj);
    const t = this.encryption.forKey(key);
    if (!t) return { plain, value: plain };
    try {
      return { plain, value: await t.toStorage(plain, etcdKey) };
    } catch (e) {
      throw encryptError(e);
    }
  }

  /** Decodes a page of values; without `onError` the first undecodable one fails the read, as upstream's list. */
  decodeAll(kvs: IKeyValue[], onError?: UndecodableHandler): StoredObject[] | Promise<StoredObject[]> {
    const out: (StoredObject | Promise<StoredObject | undefined>)[] = [];
    let pending = false;
    for (const kv of kvs) {
      const rev = Number(kv.mod_revision);
      const key = this.registryKey(kv.key);
      const skip = (e: unknown) => {
        const err = e instanceof StatusError ? e : transformError(kv.key, e);
        if (!onError) throw err;
        onError(key, rev, err, { etcdKey: kv.key, value: kv.value });
        return undefined;
      };
      let r: StoredObject | Promise<StoredObject>;
      try {
        r = this.decode(kv.key, kv.value, rev);
      } catch (e) {
        skip(e);
        continue;
      }
      if (isPromise(r)) {
        pending = true;
        out.push(
          r.then((o) => {
            o.key = key;
            return o;
          }, skip),
        );
      } else {
        r.key = key;
        out.push(r);
      }
    }
    if (!pending) return out as StoredObject[];
    return Promise.all(out).then((xs) => xs.filter((x): x is StoredObject => x !== undefined));
  }
}
