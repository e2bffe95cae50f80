/**
 * The read side of the generic store: get, list, watch and subscribe over one
 * resource's key prefix (kubernetes/apiserver pkg/registry/generic/registry
 * store.go Get/List/Watch, with the storage reads of pkg/storage/etcd3 GetList
 * and pkg/storage/cacher).
 *
 * Guarantees:
 * - resourceVersion "0" (and NotOlderThan a revision the cache has reached) is
 *   served from the watch cache; everything else is a consistent read from etcd.
 * - A revision etcd has not reached is 504 Too large resource version; a
 *   compacted one is 410 Expired (for a continue token, its own wording).
 * - Objects leave here in their external form (apiVersion/kind set).
 *
 * Writes are not its business: see store.ts.
 */
import { apiVersionOf, type KubeList, listKindOf, type KubeObject, type ResourceDef } from '@kubeling/api';
import { type GroupResource, badRequest, notFound, tooOldResourceVersion } from '@kubeling/apimachinery';
import { type Cacher, type EventType, type Filter, type WatchSink, watchEtcd } from '../storage/cacher.js';
import { type EtcdStorage, StorageCompacted, StorageFutureRevision, prefixEnd } from '../storage/etcd.js';
import { selectionFilter } from './selection.js';
import type { Strategy } from './strategy.js';
import { continueExpired, decodeContinue, encodeContinue, parseResourceVersion, tooLarge } from './versions.js';

export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
}

export class StoreReader {
  private readonly gr: GroupResource;
  private readonly apiVersion: string;

  constructor(
    private readonly def: ResourceDef,
    private readonly strategy: Strategy,
    private readonly storage: EtcdStorage,
    private readonly cacher: Cacher,
    /** The etcd key prefix of the resource's objects (`/registry/<resource>/`). */
    private readonly prefix: string,
  ) {
    this.gr = { group: def.group, resource: def.resource };
    this.apiVersion = apiVersionOf(def.group, def.version);
  }

  key(namespace: string | undefined, name: string): string {
    return this.def.namespaced ? `${this.prefix}${namespace}/${name}` : `${this.prefix}${name}`;
  }

  /** Key prefix of a collection: all namespaces when `namespace` is empty. */
  collectionPrefix(namespace: string | undefined): string {
    return this.def.namespaced && namespace ? `${this.prefix}${namespace}/` : this.prefix;
  }

  /** Sets apiVersion/kind (and converts shared-storage objects). */
  external(o: KubeObject): KubeObject {
    const obj = this.strategy.toExternal ? this.strategy.toExternal(o) : o;
    return { apiVersion: this.apiVersion, kind: this.def.kind, ...stripTypeMeta(obj) };
  }

  /** `external` of several stored objects, through the conversion webhook when there is one. */
  private async externalAll(objs: KubeObject[]): Promise<KubeObject[]> {
    const converted = this.strategy.convert && objs.length ? await this.strategy.convert.fromStorage(objs) : objs;
    return converted.map((o) => this.external(o));
  }

  /** A sink that gets objects converted, in the order the events came. */
  private converting(sink: WatchSink): WatchSink {
    const convert = this.strategy.convert;
    if (!convert) return sink;
    let chain = Promise.resolve();
    let failed = false;
    return {
      event: (type, obj, ev) => {
        chain = chain.then(async () => {
          if (failed) return;
          try {
            const [c] = await convert.fromStorage([obj]);
            sink.event(type, c!, ev);
          } catch (e) {
            failed = true;
            sink.error(e as Error);
          }
        });
      },
      error: (err) => {
        chain = chain.then(() => sink.error(err));
      },
    };
  }

  /**
   * Follows every object of this resource from the watch cache: first an ADDED
   * per object, then changes. Re-subscribes (replaying) if the cache restarts.
   */
  subscribe(handler: (type: EventType, obj: KubeObject) => void): () => void {
    let cancel: (() => void) | undefined;
    let stopped = false;
    const start = () => {
      if (stopped) return;
      void this.cacher.ready().then(
        () => {
          if (stopped) return;
          cancel = this.cacher.watch(this.prefix, undefined, () => true, {
            event: (type, obj) => {
              if (!this.strategy.convert) return handler(type, this.external(obj));
              void this.externalAll([obj]).then(
                ([o]) => handler(type, o!),
                () => undefined,
              );
            },
            error: () => {
              cancel = undefined;
              setTimeout(start, 500).unref();
            },
          });
        },
        () => setTimeout(start, 500).unref(),
      );
    };
    start();
    return () => {
      stopped = true;
      cancel?.();
    };
  }

  async get(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KubeObject> {
    const rv = parseResourceVersion(resourceVersion);
    if (resourceVersion === '0') {
      await this.cacher.ready();
      const hit = this.cacher.get(this.key(namespace, name));
      if (hit) return (await this.externalAll([hit.obj]))[0]!;
    }
    if (rv.n > 0) {
      // Not older than rv: a read from etcd is, unless etcd has not reached it.
      const current = await this.storage.currentRevision();
      if (rv.n > current) throw tooLarge(rv, current);
    }
    const cur = await this.storage.get(this.key(namespace, name));
    if (!cur) throw notFound(this.gr, name);
    return (await this.externalAll([cur.obj]))[0]!;
  }

  /** Builds the filter of label and field selectors; 400 on malformed selectors. */
  filter(opts: ListOptions): Filter {
    return selectionFilter(this.strategy, opts);
  }

  async list(namespace: string | undefined, opts: ListOptions): Promise<KubeList> {
    const filter = this.filter(opts);
    const keyPrefix = this.collectionPrefix(namespace);
    const rvParam = opts.resourceVersion;
    const match = opts.resourceVersionMatch;
    // The options themselves were checked by the HTTP layer (ValidateListOptions); these are storage's checks.
    const rv = parseResourceVersion(rvParam);
    const rvNum = rv.n;
    let cont: { start: string; rv: number } | undefined;
    if (opts.continue) {
      cont = decodeContinue(opts.continue);
      if (rvParam && rvParam !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    }

    // Served from the watch cache: resourceVersion=0, or NotOlderThan a revision the cache has reached.
    if (!cont && (rvParam === '0' || (rvNum > 0 && match !== 'Exact' && rvNum <= this.cacher.rev))) {
      await this.cacher.ready();
      if (rvNum <= this.cacher.rev) {
        const { items, rev } = this.cacher.list(keyPrefix, filter);
        return await this.listOf(items, String(rev));
      }
    }
    if (rvNum > 0 && (match !== 'Exact' || rvNum > Number.MAX_SAFE_INTEGER)) {
      // Not older than rvNum: a consistent read satisfies it, unless the store has not reached it.
      const current = await this.storage.currentRevision();
      if (rvNum > current) throw tooLarge(rv, current);
    }

    let atRev = match === 'Exact' ? rvNum : 0;
    let from = keyPrefix;
    if (cont) {
      atRev = Math.max(cont.rv, 0);
      from = keyPrefix + cont.start;
    }
    const end = prefixEnd(keyPrefix);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const items: KubeObject[] = [];
    let lastKey: string | undefined;
    let more = false;
    let rev = atRev;
    let remaining: number | undefined;
    try {
      for (let round = 0; ; round++) {
        const batch = limit ? Math.max(limit, 64) : 0;
        const res = await this.storage.range(from, end, { revision: rev, limit: batch });
        if (!rev) rev = res.rev;
        let i = 0;
        for (; i < res.items.length; i++) {
          const it = res.items[i]!;
          lastKey = it.key!;
          if (filter(it.obj)) {
            items.push(it.obj);
            if (limit && items.length >= limit) {
              i++;
              break;
            }
          }
        }
        const hasMoreInBatch = i < res.items.length;
        more = hasMoreInBatch || res.more;
        if (limit && items.length >= limit) {
          if (more && !opts.labelSelector && !opts.fieldSelector && res.count !== undefined) remaining = res.count - i;
          break;
        }
        if (!res.more || !lastKey) break;
        from = lastKey + '\x00';
        if (round > 10_000) break;
      }
    } catch (e) {
      if (e instanceof StorageCompacted) {
        if (cont) continueExpired(cont.start);
        throw tooOldResourceVersion(rvNum, this.storage.compactedRevision || rvNum);
      }
      if (e instanceof StorageFutureRevision) throw tooLarge(e.requested, e.current);
      throw e;
    }
    const list = await this.listOf(items, String(rev));
    if (limit && more && lastKey) {
      list.metadata.continue = encodeContinue(rev, lastKey.slice(keyPrefix.length) + '\x00');
      if (remaining !== undefined && remaining > 0) list.metadata.remainingItemCount = remaining;
    }
    return list;
  }

  private async listOf(items: KubeObject[], rv: string): Promise<KubeList> {
    return {
      apiVersion: this.apiVersion,
      kind: listKindOf(this.def),
      metadata: { resourceVersion: rv },
      items: await this.externalAll(items),
    };
  }

  /**
   * Starts a watch. Events go to `sink`; returns the function that stops it.
   * `resourceVersion` unset or "0": ADDED for every current object first.
   */
  async watch(namespace: string | undefined, opts: ListOptions, target: WatchSink, initialEvents?: { notOlderThan?: string }): Promise<() => void> {
    const sink = this.converting(target);
    const filter = this.filter(opts);
    const keyPrefix = this.collectionPrefix(namespace);
    await this.cacher.ready();
    if (initialEvents) return this.watchList(keyPrefix, filter, sink, initialEvents.notOlderThan);
    const parsed = parseResourceVersion(opts.resourceVersion);
    const rv = parsed.n > 0 ? parsed.n : undefined;
    const stop = this.cacher.watch(keyPrefix, rv, filter, sink);
    if (stop) return stop;
    if (rv !== undefined && rv <= this.storage.compactedRevision) {
      throw tooOldResourceVersion(rv, this.storage.compactedRevision + 1);
    }
    return watchEtcd(this.storage, keyPrefix, rv!, filter, {
      event: sink.event,
      error: (err) => {
        if (/compacted/i.test(err.message)) sink.error(tooOldResourceVersion(rv!, this.storage.compactedRevision + 1));
        else sink.error(err);
      },
    });
  }

  /**
   * A watch that starts with the current state (sendInitialEvents): with
   * resourceVersion "0" whatever the cache holds; unset, a consistent state —
   * read from etcd at its current revision, the cache followed from there — as
   * with a resourceVersion the cache has not reached yet.
   */
  private async watchList(keyPrefix: string, filter: Filter, sink: WatchSink, notOlderThan: string | undefined): Promise<() => void> {
    const parsed = notOlderThan === undefined ? undefined : parseResourceVersion(notOlderThan);
    const min = parsed?.n;
    if (min !== undefined && min <= this.cacher.rev) return this.cacher.watch(keyPrefix, undefined, filter, sink)!;
    const current = await this.storage.currentRevision();
    if (min !== undefined && min > current) throw tooLarge(parsed!, current);
    const { items } = await this.storage.rangeAll(keyPrefix, prefixEnd(keyPrefix), { revision: current });
    for (const it of items) if (filter(it.obj)) sink.event('ADDED', it.obj, { type: 'ADDED', key: it.key!, obj: it.obj, prev: undefined, rev: it.rev });
    const stop = this.cacher.watch(keyPrefix, current, filter, sink);
    return stop ?? watchEtcd(this.storage, keyPrefix, current, filter, sink);
  }
}

function stripTypeMeta(o: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest as KubeObject;
}
