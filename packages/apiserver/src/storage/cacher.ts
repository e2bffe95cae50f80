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
 */
import type { KubeObject } from '@kubeling/api';
import { type EtcdStorage, type StoredObject, StorageCompacted, decodeStored, prefixEnd } from './etcd.js';
import type { Watcher as EtcdWatcher } from 'etcd3';

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

export class Cacher {
  private readonly objects = new Map<string, StoredObject>();
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
    // Read in pages at one revision; a compaction between pages means reading again.
    let listed: { items: StoredObject[]; rev: number } | undefined;
    for (let attempt = 0; !listed; attempt++) {
      try {
        listed = await this.storage.rangeAll(this.prefix, prefixEnd(this.prefix));
      } catch (e) {
        if (!(e instanceof StorageCompacted) || attempt >= 5) throw e;
      }
    }
    const { items, rev } = listed;
    this.objects.clear();
    for (const it of items) this.objects.set(it.key!, { obj: it.obj, rev: it.rev });
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
    w.on('data', (res) => {
      for (const e of res.events) {
        const key = this.storage.registryKey(e.kv.key);
        const rev = Number(e.kv.mod_revision);
        if (e.type === 'Put') {
          const obj = decodeStored(e.kv.value, rev);
          const old = this.objects.get(key);
          this.objects.set(key, { obj, rev });
          this.apply({ type: old ? 'MODIFIED' : 'ADDED', key, obj, prev: old?.obj, rev });
        } else {
          const old = this.objects.get(key);
          this.objects.delete(key);
          const last = old?.obj ?? (e.prev_kv ? decodeStored(e.prev_kv.value, Number(e.prev_kv.mod_revision)) : undefined);
          if (!last) continue;
          const obj = { ...last, metadata: { ...last.metadata, resourceVersion: String(rev) } };
          this.apply({ type: 'DELETED', key, obj, prev: last, rev });
        }
      }
      const headerRev = Number(res.header.revision);
      if (headerRev > this.rev && res.events.length === 0) this.rev = headerRev;
    });
    w.on('error', (err) => this.fail(err));
  }

  private fail(err: Error): void {
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

  /** Current objects under `keyPrefix` that pass the filter, sorted by key. */
  list(keyPrefix: string, filter: Filter): { items: KubeObject[]; rev: number } {
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(keyPrefix)).sort();
    const items: KubeObject[] = [];
    for (const k of keys) {
      const o = this.objects.get(k)!.obj;
      if (filter(o)) items.push(o);
    }
    return { items, rev: this.rev };
  }

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  /**
   * Starts a watcher. `fromRev` undefined means: first an ADDED event for every
   * current object, then changes. Returns undefined (tooOld) when `fromRev` is
   * older than the window.
   */
  watch(keyPrefix: string, fromRev: number | undefined, filter: Filter, sink: WatchSink): (() => void) | undefined {
    const cw: CacheWatcher = { filter, sink, keyPrefix, fromRev: fromRev ?? this.rev };
    if (fromRev === undefined) {
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
  w.on('data', (res) => {
    for (const e of res.events) {
      const key = storage.registryKey(e.kv.key);
      const rev = Number(e.kv.mod_revision);
      const prev = e.prev_kv ? decodeStored(e.prev_kv.value, Number(e.prev_kv.mod_revision)) : undefined;
      let ev: CacheEvent;
      if (e.type === 'Put') {
        ev = { type: e.kv.version === '1' || !prev ? 'ADDED' : 'MODIFIED', key, obj: decodeStored(e.kv.value, rev), prev, rev };
      } else {
        if (!prev) continue;
        ev = { type: 'DELETED', key, obj: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rev) } }, prev, rev };
      }
      const type = filteredEvent(ev, filter);
      if (type) sink.event(type, ev.obj, ev);
    }
  });
  w.on('error', (err) => sink.error(err));
  return () => {
    void w.cancel().catch(() => undefined);
  };
}
