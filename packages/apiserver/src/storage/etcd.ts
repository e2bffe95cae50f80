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
 *
 * Keys are written as `/registry/<resource>/...` everywhere above this class;
 * a storage made with another `prefix` (upstream's --etcd-prefix) keeps them
 * under that prefix in etcd instead, so several control planes can share one etcd.
 *
 * With an encryption configuration (--encryption-provider-config), values of the
 * configured resources pass through their transformer on the way in and out, the
 * etcd key being the authenticated data (storage/encryption). Other resources
 * take the plain path: no transformer lookup per value when nothing is encrypted,
 * and no Promise unless a KMS plugin must be asked for a data key.
 */
import { Etcd3, GRPCDeadlineExceededError, GRPCResourceExhastedError, isRecoverableError, type IKeyValue, type IOptions, type IRangeResponse } from 'etcd3';
import { ConstantBackoff, handleWhen, noop, retry, type IBackoff } from 'cockatiel';
import type { Logger } from 'pino';
import type { KubeObject } from '@kubeling/api';
import { StatusError, failure } from '@kubeling/apimachinery';
import { type Encryption, type EncryptionConfiguration, buildEncryption } from './encryption/index.js';
import { type UndecodableHandler, ValueCodec, decodeStored, encodeStored } from './values.js';

export { type UndecodableHandler, decodeStored, encodeStored, transformError } from './values.js';

export interface StoredObject {
  obj: KubeObject;
  rev: number;
  /** Set on objects read by `range`. */
  key?: string;
  /** Read through a provider or key other than the configured first one: an update should rewrite it even when unchanged. */
  stale?: boolean;
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
/**
 * etcd cannot be reached (down, restarting, no quorum): 503 with Retry-After, so
 * clients retry; nothing was written, or the write's outcome is reported as
 * unknown (a timeout).
 */
export class StorageUnavailable extends StatusError {
  constructor(override readonly cause: unknown) {
    super(failure('ServiceUnavailable', 'etcd is unavailable: the storage backend could not be reached, retry later', { retryAfterSeconds: 1 }).status);
  }
}

/** A write larger than etcd accepts (its --max-request-bytes): upstream passes etcd's own words on as 413. */
export class StorageRequestTooLarge extends StatusError {
  constructor() {
    super(failure('RequestEntityTooLarge', 'etcdserver: request is too large').status);
  }
}

/** The requested revision is ahead of etcd's current one. */
export class StorageFutureRevision extends Error {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`revision ${requested} is a future revision (current ${current})`);
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
const REGISTRY_KEY = enc('/registry');

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

const isCompactedError = (e: unknown) => /compacted/i.test(String((e as Error)?.message ?? e));

/** etcd's default --max-request-bytes (1.5 MiB). */
export const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** What a transaction adds around its key and value (compare, headers, raft envelope), kept on the safe side. */
const TXN_OVERHEAD_BYTES = 1024;

export interface EtcdStorageOptions {
  hosts: string[];
  dialTimeout?: number;
  /** The etcd server's --max-request-bytes: bigger writes are refused (413) before they are sent. */
  maxRequestBytes?: number;
  /** Keys per range read when reading a whole prefix (lists, the watch cache's fill). */
  pageSize?: number;
  /** Deadline of each unary call; a call past it reports etcd unavailable. */
  callTimeoutMs?: number;
  /** Where the keys live in etcd (--etcd-prefix): `/registry` unless given. */
  prefix?: string;
  /** Encryption at rest (--encryption-provider-config); validated here, so a bad one fails the start. */
  encryptionConfig?: EncryptionConfiguration;
  /** Where KMS plugin problems are reported. */
  logger?: Logger;
}

/** The prefix every key has above the storage layer. */
export const REGISTRY_PREFIX = '/registry';

/**
 * Client options: no circuit breaker (a returning etcd is used at once — the
 * pool opens a fresh channel after a failure), one retry on another member for
 * transient errors, quick watch reconnection, and a receive limit above the
 * 4 MiB default so a page of large objects fits.
 */
function clientOptions(o: EtcdStorageOptions): IOptions {
  const callTimeout = o.callTimeoutMs ?? 10_000;
  return {
    hosts: o.hosts,
    dialTimeout: o.dialTimeout ?? 5000,
    grpcOptions: { 'grpc.max_receive_message_length': 256 * 1024 * 1024, 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1000 },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeout }),
    faultHandling: {
      host: () => noop,
      global: o.hosts.length > 1 ? retry(handleWhen(isRecoverableError), { maxAttempts: o.hosts.length - 1, backoff: new ConstantBackoff(20) }) : noop,
      watchBackoff: watchBackoff(50),
    },
  };
}

/** Watch reconnection delays: 50 ms doubling to 1 s, so a watch resumes soon after etcd returns. */
const watchBackoff = (ms: number): IBackoff<unknown> => ({ duration: ms, next: () => watchBackoff(Math.min(ms * 2, 1000)) });

export class EtcdStorage {
  readonly client: Etcd3;
  /** Highest revision compacted by this process (0 if none known). */
  compactedRevision = 0;
  readonly maxRequestBytes: number;
  /** Where the keys live in etcd, without a trailing slash. */
  readonly prefix: string;
  private pageSize: number;
  /** The transformers of encrypted resources, when configured. */
  readonly encryption: Encryption | undefined;
  private readonly values: ValueCodec | undefined;

  constructor(
    opts: EtcdStorageOptions,
    private readonly metrics?: Metrics,
  ) {
    this.encryption = opts.encryptionConfig ? buildEncryption(opts.encryptionConfig, opts.logger ? { logger: opts.logger } : {}) : undefined;
    this.values = this.encryption ? new ValueCodec(this.encryption, (k) => this.registryKey(k)) : undefined;
    this.client = new Etcd3(clientOptions(opts));
    this.maxRequestBytes = opts.maxRequestBytes ?? ETCD_MAX_REQUEST_BYTES;
    this.pageSize = opts.pageSize ?? 500;
    // As upstream's path.Join("/", prefix): one leading slash, none trailing.
    const trimmed = (opts.prefix ?? REGISTRY_PREFIX).replace(/^\/+|\/+$/g, '');
    this.prefix = trimmed ? `/${trimmed}` : '';
  }

  /** The etcd key of a `/registry/...` key. */
  etcdKey(key: string | Buffer): Buffer {
    const b = typeof key === 'string' ? enc(key) : key;
    if (this.prefix === REGISTRY_PREFIX) return b;
    if (!b.subarray(0, REGISTRY_PREFIX.length).equals(REGISTRY_KEY)) throw new Error(`storage key ${b.toString()} is outside ${REGISTRY_PREFIX}`);
    return Buffer.concat([enc(this.prefix), b.subarray(REGISTRY_PREFIX.length)]);
  }

  /** The `/registry/...` key of an etcd key. */
  registryKey(key: Buffer): string {
    const s = key.toString();
    return this.prefix === REGISTRY_PREFIX ? s : REGISTRY_PREFIX + s.slice(this.prefix.length);
  }

  /**
   * The object of a value read at `etcdKey`: decrypted first when its resource
   * is encrypted. Throws (or rejects) an InternalError naming the key when the
   * value cannot be decrypted; a Promise only when a KMS plugin must be asked.
   */
  decodeValue(etcdKey: Buffer, value: Buffer, rev: number): StoredObject | Promise<StoredObject> {
    return this.values ? this.values.decode(etcdKey, value, rev) : { obj: decodeStored(value, rev), rev };
  }

  /** A watch on etcd of every key below `keyPrefix` (a `/registry/...` prefix); events carry etcd keys (see `registryKey`). */
  watchPrefix(keyPrefix: string) {
    return this.client.watch().prefix(this.etcdKey(keyPrefix).toString());
  }

  /** Deletes every key of this storage's prefix: a control plane that shares etcd removing itself. */
  async deleteAll(): Promise<void> {
    const start = enc(`${this.prefix}/`);
    await this.timed('delete', () => this.client.kv.deleteRange({ key: start, range_end: prefixEnd(`${this.prefix}/`) }));
  }

  private async timed<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const start = process.hrtime.bigint();
    try {
      return await fn();
    } catch (e) {
      throw interpretError(e);
    } finally {
      this.metrics?.observe(op, Number(process.hrtime.bigint() - start) / 1e9);
    }
  }

  /** Refuses a write etcd would refuse for its size, before sending it. */
  private checkSize(key: string, value: Buffer): void {
    if (Buffer.byteLength(key) + value.length + TXN_OVERHEAD_BYTES > this.maxRequestBytes) throw new StorageRequestTooLarge();
  }

  async currentRevision(): Promise<number> {
    const res = await this.timed('get', () => this.client.kv.range({ key: enc('/'), count_only: true }));
    return Number(res.header.revision);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const res = await this.timed('get', () => this.client.kv.range({ key: this.etcdKey(key) }));
    const kv = res.kvs[0];
    if (!kv) return undefined;
    return this.decodeValue(kv.key, kv.value, Number(kv.mod_revision));
  }

  /**
   * Reads keys in [from, end) in key order at `revision` (0 = now), at most `limit`
   * (0 = all). Throws StorageCompacted when the revision is gone.
   */
  async range(from: string | Buffer, end: Buffer, opts: { revision?: number; limit?: number; onError?: UndecodableHandler } = {}): Promise<RangeResult> {
    try {
      // An unbounded read is a page of the default size; callers follow `more`.
      let limit = opts.limit && opts.limit > 0 ? opts.limit : this.pageSize;
      let res: IRangeResponse;
      for (;;) {
        try {
          res = await this.timed('list', () =>
            this.client.kv.range({
              key: this.etcdKey(from),
              range_end: this.etcdKey(end),
              ...(opts.revision ? { revision: opts.revision } : {}),
              limit,
            }),
          );
          break;
        } catch (e) {
          // Larger than the receive limit: fewer keys per page (for this storage from now on).
          if (!(e instanceof GRPCResourceExhastedError) || limit <= 1) throw e;
          limit = Math.max(1, Math.floor(limit / 2));
          this.pageSize = Math.min(this.pageSize, limit);
        }
      }
      const items = this.values
        ? await this.values!.decodeAll(res.kvs, opts.onError)
        : res.kvs.map((kv) => {
            const rev = Number(kv.mod_revision);
            return { obj: decodeStored(kv.value, rev), rev, key: this.registryKey(kv.key) };
          });
      const count = Number(res.count);
      return { items, rev: Number(res.header.revision), more: res.more, count };
    } catch (e) {
      if (isCompactedError(e)) throw new StorageCompacted(opts.revision ?? 0, this.compactedRevision);
      if (/future revision/.test(String((e as Error)?.message))) throw new StorageFutureRevision(opts.revision ?? 0, await this.currentRevision());
      throw e;
    }
  }

  /**
   * Reads every key in [from, end) at one revision (`revision`, or the current
   * one), a page at a time so that no single response is unbounded. A page too
   * big for the client's receive limit is read again in halves.
   */
  async rangeAll(from: string, end: Buffer, opts: { revision?: number; onError?: UndecodableHandler } = {}): Promise<{ items: StoredObject[]; rev: number }> {
    const items: StoredObject[] = [];
    let rev = opts.revision ?? 0;
    let start: string | Buffer = from;
    for (;;) {
      // The page's last key, skipped values included, is where the next page starts.
      let last: string | undefined;
      const seen = (key: string) => {
        if (last === undefined || key > last) last = key;
      };
      const onError = opts.onError;
      const page = await this.range(start, end, {
        revision: rev,
        limit: this.pageSize,
        ...(onError
          ? {
              onError: ((key, r, err, raw) => {
                seen(key);
                onError(key, r, err, raw);
              }) satisfies UndecodableHandler,
            }
          : {}),
      });
      if (!rev) rev = page.rev;
      for (const it of page.items) items.push(it);
      const lastItem = page.items[page.items.length - 1]?.key;
      if (lastItem !== undefined) seen(lastItem);
      if (!page.more || last === undefined) break;
      start = Buffer.concat([Buffer.from(last), Buffer.from([0])]);
    }
    return { items, rev };
  }

  /** create: If(mod_revision == 0) Then(put). Returns the stored object with its resourceVersion. */
  async create(key: string, obj: KubeObject): Promise<StoredObject> {
    const k = this.etcdKey(key);
    const { plain, value } = this.values ? await this.values.encode(key, k, obj) : { plain: encodeStored(obj), value: undefined };
    const stored = value ?? plain;
    this.checkSize(key, stored);
    const res = await this.timed('create', () =>
      this.client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: 0 }],
        success: [{ request_put: { key: k, value: stored } }],
        failure: [],
      }),
    );
    if (!res.succeeded) throw new StorageKeyExists(key);
    const rev = Number(res.header.revision);
    return { obj: decodeStored(plain, rev), rev };
  }

  /** update: If(mod_revision == rev) Then(put) Else(get). */
  async update(key: string, obj: KubeObject, expectedRev: number): Promise<StoredObject> {
    const k = this.etcdKey(key);
    const { plain, value } = this.values ? await this.values.encode(key, k, obj) : { plain: encodeStored(obj), value: undefined };
    const stored = value ?? plain;
    this.checkSize(key, stored);
    const res = await this.timed('update', () =>
      this.client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRev }],
        success: [{ request_put: { key: k, value: stored } }],
        failure: [{ request_range: { key: k } }],
      }),
    );
    if (!res.succeeded) throw new StorageConflict(key, await this.currentFromFailure(res.responses));
    const rev = Number(res.header.revision);
    return { obj: decodeStored(plain, rev), rev };
  }

  /** delete: If(mod_revision == rev) Then(delete) Else(get). Returns the revision of the deletion. */
  async delete(key: string, expectedRev: number): Promise<number> {
    const k = this.etcdKey(key);
    const res = await this.timed('delete', () =>
      this.client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRev }],
        success: [{ request_delete_range: { key: k } }],
        failure: [{ request_range: { key: k } }],
      }),
    );
    if (!res.succeeded) throw new StorageConflict(key, await this.currentFromFailure(res.responses));
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

  /** The object an Else branch read (the key's current value), if any. */
  private currentFromFailure(responses: { response_range?: { kvs: IKeyValue[] } }[]): StoredObject | undefined | Promise<StoredObject> {
    const kv = responses[0]?.response_range?.kvs[0];
    if (!kv) return undefined;
    return this.decodeValue(kv.key, kv.value, Number(kv.mod_revision));
  }

  close(): void {
    this.encryption?.close();
    this.client.close();
  }
}

/** etcd's and the transport's failures as the API reports them; anything else passes through. */
function interpretError(e: unknown): unknown {
  if (e instanceof StatusError || e instanceof GRPCResourceExhastedError) return e;
  const msg = String((e as Error)?.message ?? e);
  if (/request is too large/.test(msg)) return new StorageRequestTooLarge();
  if (isCompactedError(e)) return e;
  if (
    (e instanceof Error && isRecoverableError(e)) ||
    e instanceof GRPCDeadlineExceededError ||
    /unavailable|no connection|ECONNREFUSED|not connected|failed to connect|Connection dropped|deadline/i.test(msg)
  ) {
    return new StorageUnavailable(e);
  }
  return e;
}
