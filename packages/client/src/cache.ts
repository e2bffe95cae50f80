/**
 * The informer machinery (k8s.io/client-go tools/cache): a thread-safe store with
 * indexes (namespace plus custom ones), a reflector that lists then watches from
 * the list's resourceVersion (relisting on 410, re-watching on stream end with
 * jitter, following bookmarks), and shared informers that fan events out to
 * handlers and resync periodically.
 *
 * Objects handed to handlers and returned by listers are shared: treat them as
 * read-only (structuredClone before editing).
 */
import type { KubeObject } from '@kubeling/api';
import { isExpired, isStatusError } from '@kubeling/apimachinery';
import type { RestClient, WatchEvent } from './rest.js';

export type IndexFunc = (obj: KubeObject) => string[];

export const keyOf = (obj: KubeObject): string => (obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : (obj.metadata.name ?? ''));

export const namespaceIndex: IndexFunc = (obj) => [obj.metadata.namespace ?? ''];

export class Indexer<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(private readonly indexers: Record<string, IndexFunc> = { namespace: namespaceIndex }) {
    for (const name of Object.keys(indexers)) this.indices.set(name, new Map());
  }

  addIndexer(name: string, fn: IndexFunc): void {
    this.indexers[name] = fn;
    const idx = new Map<string, Set<string>>();
    this.indices.set(name, idx);
    for (const [k, o] of this.items) for (const v of fn(o)) (idx.get(v) ?? idx.set(v, new Set()).get(v)!).add(k);
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const set = idx.get(v);
        set?.delete(key);
        if (set && set.size === 0) idx.delete(v);
      }
    }
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) (idx.get(v) ?? idx.set(v, new Set()).get(v)!).add(key);
    }
  }

  set(obj: T): void {
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (old) {
      this.unindex(key, old);
      this.items.delete(key);
    }
    return old;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(name: string, value: string): T[] {
    const keys = this.indices.get(name)?.get(value);
    if (!keys) return [];
    return [...keys].map((k) => this.items.get(k)!).filter(Boolean);
  }

  /** Replaces everything (after a relist); returns what changed. */
  replace(objs: T[]): { added: T[]; updated: [T, T][]; deleted: T[] } {
    const next = new Map(objs.map((o) => [keyOf(o), o]));
    const added: T[] = [];
    const updated: [T, T][] = [];
    const deleted: T[] = [];
    for (const [k, old] of this.items) if (!next.has(k)) deleted.push(old);
    for (const [k, o] of next) {
      const old = this.items.get(k);
      if (!old) added.push(o);
      else updated.push([old, o]);
    }
    for (const d of deleted) this.delete(keyOf(d));
    for (const o of objs) this.set(o);
    return { added, updated, deleted };
  }

  get size(): number {
    return this.items.size;
  }
}

export interface EventHandlers<T extends KubeObject = KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

export interface ListWatchTarget {
  /** Collection path, e.g. `/api/v1/pods` or `/apis/apps/v1/namespaces/x/deployments`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerOptions {
  resyncMs?: number;
  /** Server-side watch timeout range; each watch picks a random value in [min, 2*min). */
  minWatchTimeoutSeconds?: number;
  indexers?: Record<string, IndexFunc>;
  onError?(err: unknown): void;
}

/**
 * One informer per resource (per selector). `start()` returns at once; `synced()`
 * resolves after the first list has been delivered.
 */
export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Indexer<T>;
  private readonly handlers: EventHandlers<T>[] = [];
  private resourceVersion = '';
  private running = false;
  private abort: AbortController | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private syncedResolve!: () => void;
  private readonly syncedPromise: Promise<void>;
  /** Lists done (the first plus relists after 410). */
  listCount = 0;

  constructor(
    private readonly client: RestClient,
    readonly target: ListWatchTarget,
    private readonly opts: InformerOptions = {},
  ) {
    this.store = new Indexer<T>(opts.indexers ?? { namespace: namespaceIndex });
    this.syncedPromise = new Promise((r) => (this.syncedResolve = r));
  }

  addEventHandler(h: EventHandlers<T>): void {
    this.handlers.push(h);
    // A late handler sees what is already there, as client-go's does.
    for (const o of this.store.list()) h.add?.(o);
  }

  synced(): Promise<void> {
    return this.syncedPromise;
  }

  hasSynced(): boolean {
    return this.listCount > 0;
  }

  get lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.run();
    if (this.opts.resyncMs) {
      this.resyncTimer = setInterval(() => {
        for (const o of this.store.list()) for (const h of this.handlers) h.update?.(o, o);
      }, this.opts.resyncMs);
      this.resyncTimer.unref();
    }
  }

  stop(): void {
    this.running = false;
    this.abort?.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
  }

  private emit(kind: 'add' | 'update' | 'delete', a: T, b?: T): void {
    for (const h of this.handlers) {
      try {
        if (kind === 'add') h.add?.(a);
        else if (kind === 'update') h.update?.(a, b!);
        else h.delete?.(a);
      } catch (e) {
        this.opts.onError?.(e);
      }
    }
  }

  private async list(): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.client.get<{ metadata: { resourceVersion: string; continue?: string }; items: T[] }>(this.target.path, {
        limit: 500,
        ...(cont ? { continue: cont } : { resourceVersion: '0' }),
        labelSelector: this.target.labelSelector,
        fieldSelector: this.target.fieldSelector,
      });
      items.push(...page.items);
      rv = page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
    } while (cont);
    const diff = this.store.replace(items);
    this.resourceVersion = rv;
    this.listCount++;
    for (const o of diff.deleted) this.emit('delete', o);
    for (const o of diff.added) this.emit('add', o);
    for (const [a, b] of diff.updated) if (a.metadata.resourceVersion !== b.metadata.resourceVersion) this.emit('update', a, b);
    this.syncedResolve();
  }

  private handle(ev: WatchEvent<T>): void {
    if (ev.type === 'BOOKMARK') {
      this.resourceVersion = String((ev.object as KubeObject).metadata?.resourceVersion ?? this.resourceVersion);
      return;
    }
    if (ev.type === 'ERROR') throw Object.assign(new Error((ev.object as { message?: string }).message ?? 'watch error'), { status: ev.object });
    const obj = ev.object;
    const key = keyOf(obj);
    this.resourceVersion = obj.metadata.resourceVersion ?? this.resourceVersion;
    if (ev.type === 'DELETED') {
      const old = this.store.delete(key);
      this.emit('delete', old ?? obj);
      return;
    }
    const old = this.store.get(key);
    this.store.set(obj);
    if (old) this.emit('update', old, obj);
    else this.emit('add', obj);
  }

  private async run(): Promise<void> {
    let needList = true;
    let failures = 0;
    while (this.running) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        this.abort = new AbortController();
        const min = this.opts.minWatchTimeoutSeconds ?? 300;
        let expired = false;
        await this.client.watch<T>(
          this.target.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: Math.floor(min + Math.random() * min),
            labelSelector: this.target.labelSelector,
            fieldSelector: this.target.fieldSelector,
          },
          (ev) => {
            if (ev.type === 'ERROR') {
              const code = (ev.object as { code?: number }).code;
              if (code === 410) {
                expired = true;
                this.abort?.abort();
                return;
              }
            }
            this.handle(ev);
          },
          this.abort.signal,
        );
        if (expired) needList = true;
        failures = 0;
      } catch (e) {
        if (!this.running) return;
        if (isStatusError(e) && isExpired(e)) needList = true;
        else {
          this.opts.onError?.(e);
          needList = needList || !this.resourceVersion;
        }
        failures++;
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** Math.min(failures, 5), 5000) * (0.5 + Math.random() / 2)));
      }
    }
  }
}

/** Shares one informer per (path, selectors) among the controllers of a process. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer>();

  constructor(
    private readonly client: RestClient,
    private readonly defaults: InformerOptions = {},
  ) {}

  informer<T extends KubeObject = KubeObject>(target: ListWatchTarget, opts: InformerOptions = {}): Informer<T> {
    const key = `${target.path}?l=${target.labelSelector ?? ''}&f=${target.fieldSelector ?? ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer(this.client, target, { ...this.defaults, ...opts });
      this.informers.set(key, inf);
    }
    return inf as unknown as Informer<T>;
  }

  start(): void {
    for (const i of this.informers.values()) i.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.synced()));
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
  }
}
