/**
 * The watch cache: one etcd watch per resource prefix, fanned out to every client
 * watcher, also serving `resourceVersion=0` lists (kubernetes/apiserver
 * pkg/storage/cacher).
 *
 * Guarantees:
 * - Events reach watchers in etcd revision order, each exactly once.
 * - A watch from revision R replays every event with revision > R that is still in
 *   the bounded window; if R is older than the window, `watch` reports
 *   `tooOld` so the caller can fall back to a direct etcd watch (which answers 410
 *   once etcd has compacted R).
 * - An object that stops matching a watcher's filter is delivered as DELETED, one
 *   that starts matching as ADDED.
 * - Values are decoded in event order even when decoding waits (an encrypted
 *   value whose data key a KMS plugin must decrypt).
 * - A value that cannot be decrypted never stops the cache: the key is held as
 *   unreadable, and a list, get or initial watch that covers it fails with the
 *   InternalError naming it (as a read from etcd does) until the key is written
 *   again, deleted, or decrypts on a later try. Such a value arriving on the
 *   watch ends the current watchers with that error and the cache relists.
 */
import type { KubeObject } from '@kubeling/api';
import { StatusError, internalError } from '@kubeling/apimachinery';
import { type EtcdStorage, type StoredObject, StorageCompacted, prefixEnd } from './etcd.js';
import { isPromise } from './encryption/index.js';
import type { IWatchResponse, Watcher as EtcdWatcher } from 'etcd3';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  type: EventType;
  key: string;
  obj: KubeObject;
  prev: KubeObject | undefined;
  rev: number;
  /** Serialised `obj`, computed once and shared by every watcher. */
  json?: string;
}

export type Filter = (obj: KubeObject) => boolean;

export interface WatchSink {
  event(type: EventType, obj: KubeObject, ev: CacheEvent): void;
  /** The cache lost its etcd watch; the stream must end (clients relist). */
  error(err: Error): void;
}

interface CacheWatcher {
  filter: Filter;
  sink: WatchSink;
  keyPrefix: string;
  fromRev: number;
}

/** Turns a raw change into what a filtered watcher sees (or nothing). */
export function filteredEvent(ev: { type: EventType; obj: KubeObject; prev: KubeObject | undefined }, filter: Filter): EventType | undefined {
  if (ev.type === 'ADDED') return filter(ev.obj) ? 'ADDED' : undefined;
  if (ev.type === 'DELETED') return filter(ev.obj) ? 'DELETED' : undefined;
  const now = filter(ev.obj);
  const before = ev.prev ? filter(ev.prev) : false;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}

/** A key whose current value could not be decoded. */
interface Unreadable {
  rev: number;
  error: StatusError;
  etcdKey: Buffer;
  value: Buffer;
}

type Decoded = { ok: true; stored: StoredObject } | { ok: false; error: StatusError };

const asStatus = (e: unknown): StatusError => (e instanceof StatusError ? e : internalError((e as Error)?.message ?? String(e)));

/** A decode that reports failure as a value (never throws, never rejects). */
function decodeSafe(storage: EtcdStorage, etcdKey: Buffer, value: Buffer, rev: number): Decoded | Promise<Decoded> {
  try {
    const r = storage.decodeValue(etcdKey, value, rev);
    if (!isPromise(r)) return { ok: true, stored: r };
    return r.then(
      (stored): Decoded => ({ ok: true, stored }),
      (e: unknown): Decoded => ({ ok: false, error: asStatus(e) }),
    );
  } catch (e) {
    return { ok: false, error: asStatus(e) };
  }
}

/**
 * Runs steps one after another: synchronously while none waits, queued behind
 * the first that returns a Promise until it settles. Keeps events in order
 * without an await per event when nothing needs one. A step that throws goes to
 * `onError` and does not stop the ones after it.
 */
class OrderedSteps {
  private tail: Promise<void> | undefined;

  constructor(private readonly onError: (e: unknown) => void) {}

  run(step: () => void | Promise<void>): void {
    if (!this.tail) {
      let r: void | Promise<void>;
      try {
        r = step();
      } catch (e) {
        this.onError(e);
        return;
      }
      if (!r) return;
      this.tail = r.catch(this.onError);
    } else this.tail = this.tail.then(step).catch(this.onError);
    const mine = this.tail;
    void mine.then(() => {
      if (this.tail === mine) this.tail = undefined;
    });
  }

  reset(): void {
    this.tail = undefined;
  }
}

export class Cacher {
  private readonly objects = new Map<string, StoredObject>();
  private readonly unreadable = new Map<string, Unreadable>();
  private retrying: Promise<void> | undefined;
  /** Bumped by each (re)start: steps of an older etcd watch find it changed and do nothing. */
  private generation = 0;
  /** An event that could not be applied (a watcher's sink failing) ends the watchers; the cache relists. */
  private readonly steps = new OrderedSteps((e) => this.fail(asStatus(e)));
  private readonly window: CacheEvent[] = [];
  private readonly watchers = new Set<CacheWatcher>();
  private etcdWatcher: EtcdWatcher | undefined;
  /** Revision of the last change applied (or of the initial list). */
  rev = 0;
  /** Every event with revision > windowStart is in the window. */
  private windowStart = 0;
  private readyPromise: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly storage: EtcdStorage,
    readonly prefix: string,
    private readonly capacity = 10_000,
  ) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

  ready(): Promise<void> {
    this.readyPromise ??= this.init();
    return this.readyPromise;
  }

  private async init(): Promise<void> {
    const gen = ++this.generation;
    this.steps.reset();
    // Read in pages at one revision; a compaction between pages means reading again.
    let listed: { items: StoredObject[]; rev: number } | undefined;
    const unreadable = new Map<string, Unreadable>();
    for (let attempt = 0; !listed; attempt++) {
      unreadable.clear();
      try {
        listed = await this.storage.rangeAll(this.prefix, prefixEnd(this.prefix), {
          onError: (key, rev, error, raw) => unreadable.set(key, { rev, error, ...raw }),
        });
      } catch (e) {
        if (!(e instanceof StorageCompacted) || attempt >= 5) throw e;
      }
    }
    const { items, rev } = listed;
    this.objects.clear();
    for (const it of items) this.objects.set(it.key!, { obj: it.obj, rev: it.rev });
    this.unreadable.clear();
    for (const [k, u] of unreadable) this.unreadable.set(k, u);
    this.rev = rev;
    this.windowStart = rev;
    this.window.length = 0;
    const w = await this.storage
      .watchPrefix(this.prefix)
      .withPreviousKV()
      .startRevision(String(rev + 1))
      .create();
    if (this.stopped) {
      await w.cancel();
      return;
    }
    this.etcdWatcher = w;
    w.on('data', (res) => this.steps.run(() => this.onData(gen, res, 0)));
    w.on('error', (err) => this.fail(err));
  }

  /** Applies the events of one etcd watch response from `from` on; returns a Promise only if a decode waits. */
  private onData(gen: number, res: IWatchResponse, from: number): void | Promise<void> {
    for (let i = from; i < res.events.length; i++) {
      if (gen !== this.generation) return;
      const e = res.events[i]!;
      const key = this.storage.registryKey(e.kv.key);
      const rev = Number(e.kv.mod_revision);
      if (e.type === 'Put') {
        const d = decodeSafe(this.storage, e.kv.key, e.kv.value, rev);
        if (isPromise(d))
          return d.then((r) => {
            this.applyPut(gen, key, rev, r);
            return this.onData(gen, res, i + 1);
          });
        this.applyPut(gen, key, rev, d);
        continue;
      }
      const old = this.objects.get(key);
      if (old || !e.prev_kv) {
        this.applyDelete(key, rev, old?.obj);
        continue;
      }
      const d = decodeSafe(this.storage, e.prev_kv.key, e.prev_kv.value, Number(e.prev_kv.mod_revision));
      if (isPromise(d))
        return d.then((r) => {
          if (gen === this.generation) this.applyDelete(key, rev, r.ok ? r.stored.obj : undefined);
          return this.onData(gen, res, i + 1);
        });
      this.applyDelete(key, rev, d.ok ? d.stored.obj : undefined);
    }
    if (gen !== this.generation) return;
    const headerRev = Number(res.header.revision);
    if (headerRev > this.rev && res.events.length === 0) this.rev = headerRev;
  }

  private applyPut(gen: number, key: string, rev: number, d: Decoded): void {
    if (gen !== this.generation) return;
    if (!d.ok) {
      // Watchers cannot be told what the object is now: they end, and the cache relists.
      this.fail(d.error);
      return;
    }
    if (this.unreadable.size) this.unreadable.delete(key);
    const obj = d.stored.obj;
    const old = this.objects.get(key);
    this.objects.set(key, { obj, rev });
    this.apply({ type: old ? 'MODIFIED' : 'ADDED', key, obj, prev: old?.obj, rev });
  }

  private applyDelete(key: string, rev: number, last: KubeObject | undefined): void {
    this.objects.delete(key);
    if (this.unreadable.size) this.unreadable.delete(key);
    if (!last) return;
    const obj = { ...last, metadata: { ...last.metadata, resourceVersion: String(rev) } };
    this.apply({ type: 'DELETED', key, obj, prev: last, rev });
  }

  /**
   * Throws the error of an unreadable key under `keyPrefix` (after starting one
   * more try to decode them: a KMS plugin that was down may be back).
   */
  private checkReadable(keyPrefix: string): void {
    if (!this.unreadable.size) return;
    for (const [k, u] of this.unreadable) {
      if (!k.startsWith(keyPrefix)) continue;
      this.retryUnreadable();
      throw u.error;
    }
  }

  private retryUnreadable(): void {
    if (this.retrying) return;
    const gen = this.generation;
    this.retrying = (async () => {
      for (const [k, u] of [...this.unreadable]) {
        const d = await decodeSafe(this.storage, u.etcdKey, u.value, u.rev);
        // Only if nothing changed the key meanwhile.
        if (gen !== this.generation || this.unreadable.get(k) !== u) continue;
        if (d.ok) {
          this.unreadable.delete(k);
          this.objects.set(k, { obj: d.stored.obj, rev: u.rev });
        } else u.error = d.error;
      }
    })().finally(() => (this.retrying = undefined));
  }

  private fail(err: Error): void {
    this.generation++;
    for (const cw of this.watchers) cw.sink.error(err);
    this.watchers.clear();
    const old = this.etcdWatcher;
    this.etcdWatcher = undefined;
    this.readyPromise = undefined;
    void old?.cancel().catch(() => undefined);
    if (!this.stopped) void this.ready().catch(() => undefined);
  }

  private apply(ev: CacheEvent): void {
    this.rev = ev.rev;
    this.window.push(ev);
    if (this.window.length > this.capacity) {
      const dropped = this.window.splice(0, this.window.length - this.capacity);
      this.windowStart = dropped[dropped.length - 1]!.rev;
    }
    for (const cw of this.watchers) dispatch(cw, ev);
  }

  /** Drops events at or below a compacted revision, so watches from there fall through to etcd (410). */
  compacted(rev: number): void {
    if (rev <= this.windowStart) return;
    let i = 0;
    while (i < this.window.length && this.window[i]!.rev <= rev) i++;
    this.window.splice(0, i);
    this.windowStart = rev;
  }

  /** Current objects under `keyPrefix` that pass the filter, sorted by key. Throws when one of them cannot be read. */
  list(keyPrefix: string, filter: Filter): { items: KubeObject[]; rev: number } {
    this.checkReadable(keyPrefix);
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(keyPrefix)).sort();
    const items: KubeObject[] = [];
    for (const k of keys) {
      const o = this.objects.get(k)!.obj;
      if (filter(o)) items.push(o);
    }
    return { items, rev: this.rev };
  }

  /** The current object at `key`; throws when its value cannot be read. */
  get(key: string): StoredObject | undefined {
    const u = this.unreadable.size ? this.unreadable.get(key) : undefined;
    if (u) {
      this.retryUnreadable();
      throw u.error;
    }
    return this.objects.get(key);
  }

  /**
   * Starts a watcher. `fromRev` undefined means: first an ADDED event for every
   * current object, then changes. Returns undefined (tooOld) when `fromRev` is
   * older than the window. An unreadable object among the initial ones ends
   * the watch at once with its error.
   */
  watch(keyPrefix: string, fromRev: number | undefined, filter: Filter, sink: WatchSink): (() => void) | undefined {
    const cw: CacheWatcher = { filter, sink, keyPrefix, fromRev: fromRev ?? this.rev };
    if (fromRev === undefined) {
      try {
        this.checkReadable(keyPrefix);
      } catch (e) {
        sink.error(e as Error);
        return () => undefined;
      }
      for (const k of [...this.objects.keys()].sort()) {
        if (!k.startsWith(keyPrefix)) continue;
        const { obj, rev } = this.objects.get(k)!;
        if (filter(obj)) sink.event('ADDED', obj, { type: 'ADDED', key: k, obj, prev: undefined, rev });
      }
    } else {
      if (fromRev < this.windowStart) return undefined;
      for (const ev of this.window) if (ev.rev > fromRev) dispatch(cw, ev);
    }
    this.watchers.add(cw);
    return () => {
      this.watchers.delete(cw);
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    for (const cw of this.watchers) cw.sink.error(new Error('apiserver shutting down'));
    this.watchers.clear();
    await this.etcdWatcher?.cancel().catch(() => undefined);
  }
}

function dispatch(cw: CacheWatcher, ev: CacheEvent): void {
  if (ev.rev <= cw.fromRev || !ev.key.startsWith(cw.keyPrefix)) return;
  const type = filteredEvent(ev, cw.filter);
  if (type) cw.sink.event(type, ev.obj, ev);
}

/**
 * A watcher straight on etcd from `fromRev` (exclusive), for revisions older than
 * the cache window. Reports `StorageCompacted`-style errors through `sink.error`
 * with `compacted: true` when etcd no longer has that history.
 */
export async function watchEtcd(storage: EtcdStorage, keyPrefix: string, fromRev: number, filter: Filter, sink: WatchSink): Promise<() => void> {
  const w = await storage
    .watchPrefix(keyPrefix)
    .withPreviousKV()
    .startRevision(String(fromRev + 1))
    .create();
  // Decoded in order; the first value that cannot be read ends the watch with its error.
  let failed = false;
  const steps = new OrderedSteps((e) => fail(asStatus(e)));
  const fail = (err: StatusError) => {
    if (failed) return;
    failed = true;
    sink.error(err);
    void w.cancel().catch(() => undefined);
  };
  const decoded = (d: Decoded | undefined): KubeObject | undefined => {
    if (!d) return undefined;
    if (d.ok) return d.stored.obj;
    fail(d.error);
    return undefined;
  };
  const emit = (e: IWatchResponse['events'][number], key: string, rev: number, prev: KubeObject | undefined, obj: KubeObject | undefined) => {
    if (failed) return;
    let ev: CacheEvent;
    if (e.type === 'Put') {
      if (!obj) return;
      ev = { type: e.kv.version === '1' || !prev ? 'ADDED' : 'MODIFIED', key, obj, prev, rev };
    } else {
      if (!prev) return;
      ev = { type: 'DELETED', key, obj: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rev) } }, prev, rev };
    }
    const type = filteredEvent(ev, filter);
    if (type) sink.event(type, ev.obj, ev);
  };
  const onData = (res: IWatchResponse, from: number): void | Promise<void> => {
    for (let i = from; i < res.events.length && !failed; i++) {
      const e = res.events[i]!;
      const key = storage.registryKey(e.kv.key);
      const rev = Number(e.kv.mod_revision);
      const p = e.prev_kv ? decodeSafe(storage, e.prev_kv.key, e.prev_kv.value, Number(e.prev_kv.mod_revision)) : undefined;
      const o = e.type === 'Put' ? decodeSafe(storage, e.kv.key, e.kv.value, rev) : undefined;
      if (isPromise(p) || isPromise(o))
        return Promise.all([p, o]).then(([pd, od]) => {
          const prev = decoded(pd);
          emit(e, key, rev, prev, decoded(od));
          return onData(res, i + 1);
        });
      emit(e, key, rev, decoded(p), decoded(o));
    }
  };
  w.on('data', (res) => steps.run(() => onData(res, 0)));
  w.on('error', (err) => sink.error(err));
  return () => {
    void w.cancel().catch(() => undefined);
  };
}
