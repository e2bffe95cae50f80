/**
 * The only code that talks to etcd.
 *
 * Objects are stored as JSON under their key; `metadata.resourceVersion` is never
 * stored and is set on read from the key's mod_revision. Writes are exactly three
 * transaction shapes (anchored on kubernetes/apiserver pkg/storage/etcd3/store.go):
 *   create:  If(mod_revision(key) == 0) Then(put)
 *   update:  If(mod_revision(key) == rv) Then(put) Else(get)
 *   delete:  If(mod_revision(key) == rv) Then(delete) Else(get)
 * A lost race surfaces as `StorageConflict` carrying the current object from the
 * Else branch, so `guaranteedUpdate` can retry without another read.
 */
import { Etcd3, type IOptions } from 'etcd3';
import type { KubeObject } from '@kubeling/api';

export interface StoredObject {
  obj: KubeObject;
  rev: number;
  /** Set on objects read by `range`. */
  key?: string;
}

export class StorageKeyExists extends Error {
  constructor(readonly key: string) {
    super(`key exists: ${key}`);
  }
}
export class StorageNotFound extends Error {
  constructor(readonly key: string) {
    super(`key not found: ${key}`);
  }
}
/** The key changed (or vanished) since the revision the write was based on. */
export class StorageConflict extends Error {
  constructor(
    readonly key: string,
    readonly current: StoredObject | undefined,
  ) {
    super(`conflict on ${key}`);
  }
}
/** The requested revision has been compacted away. */
export class StorageCompacted extends Error {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`revision ${requested} compacted (${compacted})`);
  }
}

export interface RangeResult {
  items: StoredObject[];
  /** Store revision the range was read at. */
  rev: number;
  more: boolean;
  /** Number of keys in the whole range (only when asked). */
  count?: number;
}

export interface Metrics {
  observe(op: string, seconds: number): void;
}

const enc = (s: string) => Buffer.from(s);

/** The end of a prefix range: the prefix with its last byte incremented. */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const out = b.subarray(0, i + 1);
      out[i] = out[i]! + 1;
      return Buffer.from(out);
    }
  }
  return Buffer.from([0]);
}

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

const isCompactedError = (e: unknown) => /compacted/i.test(String((e as Error)?.message ?? e));

export class EtcdStorage {
  readonly client: Etcd3;
  /** Highest revision compacted by this process (0 if none known). */
  compactedRevision = 0;

  constructor(
    opts: IOptions,
    private readonly metrics?: Metrics,
  ) {
    this.client = new Etcd3(opts);
  }

  private async timed<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const start = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      this.metrics?.observe(op, Number(process.hrtime.bigint() - start) / 1e9);
    }
  }

  async currentRevision(): Promise<number> {
    const res = await this.timed('get', () => this.client.kv.range({ key: enc('/'), count_only: true }));
    return Number(res.header.revision);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const res = await this.timed('get', () => this.client.kv.range({ key: enc(key) }));
    const kv = res.kvs[0];
    if (!kv) return undefined;
    const rev = Number(kv.mod_revision);
    return { obj: decodeStored(kv.value, rev), rev };
  }

  /**
   * Reads keys in [from, end) in key order at `revision` (0 = now), at most `limit`
   * (0 = all). Throws StorageCompacted when the revision is gone.
   */
  async range(from: string | Buffer, end: Buffer, opts: { revision?: number; limit?: number } = {}): Promise<RangeResult> {
    try {
      const res = await this.timed('list', () =>
        this.client.kv.range({
          key: typeof from === 'string' ? enc(from) : from,
          range_end: end,
          ...(opts.revision ? { revision: opts.revision } : {}),
          ...(opts.limit ? { limit: opts.limit } : {}),
        }),
      );
      const items = res.kvs.map((kv) => {
        const rev = Number(kv.mod_revision);
        return { obj: decodeStored(kv.value, rev), rev, key: kv.key.toString() };
      });
      const count = Number(res.count);
      return { items, rev: Number(res.header.revision), more: res.more, count };
    } catch (e) {
      if (isCompactedError(e)) throw new StorageCompacted(opts.revision ?? 0, this.compactedRevision);
      throw e;
    }
  }

  /** create: If(mod_revision == 0) Then(put). Returns the stored object with its resourceVersion. */
  async create(key: string, obj: KubeObject): Promise<StoredObject> {
    const value = encodeStored(obj);
    const res = await this.timed('create', () =>
      this.client.kv.txn({
        compare: [{ key: enc(key), target: 'Mod', result: 'Equal', mod_revision: 0 }],
        success: [{ request_put: { key: enc(key), value } }],
        failure: [],
      }),
    );
    if (!res.succeeded) throw new StorageKeyExists(key);
    const rev = Number(res.header.revision);
    return { obj: decodeStored(value, rev), rev };
  }

  /** update: If(mod_revision == rev) Then(put) Else(get). */
  async update(key: string, obj: KubeObject, expectedRev: number): Promise<StoredObject> {
    const value = encodeStored(obj);
    const res = await this.timed('update', () =>
      this.client.kv.txn({
        compare: [{ key: enc(key), target: 'Mod', result: 'Equal', mod_revision: expectedRev }],
        success: [{ request_put: { key: enc(key), value } }],
        failure: [{ request_range: { key: enc(key) } }],
      }),
    );
    if (!res.succeeded) throw new StorageConflict(key, currentFromFailure(res.responses));
    const rev = Number(res.header.revision);
    return { obj: decodeStored(value, rev), rev };
  }

  /** delete: If(mod_revision == rev) Then(delete) Else(get). Returns the revision of the deletion. */
  async delete(key: string, expectedRev: number): Promise<number> {
    const res = await this.timed('delete', () =>
      this.client.kv.txn({
        compare: [{ key: enc(key), target: 'Mod', result: 'Equal', mod_revision: expectedRev }],
        success: [{ request_delete_range: { key: enc(key) } }],
        failure: [{ request_range: { key: enc(key) } }],
      }),
    );
    if (!res.succeeded) throw new StorageConflict(key, currentFromFailure(res.responses));
    return Number(res.header.revision);
  }

  async compact(revision: number): Promise<void> {
    if (revision <= this.compactedRevision) return;
    try {
      await this.client.kv.compact({ revision, physical: false });
    } catch (e) {
      if (!isCompactedError(e)) throw e;
    }
    this.compactedRevision = Math.max(this.compactedRevision, revision);
  }

  close(): void {
    this.client.close();
  }
}

function currentFromFailure(responses: { response_range?: { kvs: { value: Buffer; mod_revision: string }[] } }[]): StoredObject | undefined {
  const kv = responses[0]?.response_range?.kvs[0];
  if (!kv) return undefined;
  const rev = Number(kv.mod_revision);
  return { obj: decodeStored(kv.value, rev), rev };
}
