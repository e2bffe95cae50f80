/**
 * The generic registry store: get/list/watch/create/update/delete of any resource
 * over etcd, with the resource's strategy plugged in (kubernetes/apiserver
 * pkg/registry/generic/registry/store.go).
 *
 * Guarantees:
 * - Every write is one etcd transaction; a lost race is 409 Conflict (or retried
 *   internally for server-computed updates such as patches without a
 *   resourceVersion).
 * - Nothing is written when validation fails, when the namespace is missing or
 *   terminating, or under dryRun.
 * - Deletion honours preconditions, graceful periods and finalizers: an object
 *   with finalizers (or a pending grace period) gets `deletionTimestamp` and stays
 *   until they are gone.
 */
import { randomUUID } from 'node:crypto';
import { apiVersionOf, type KubeList, type KubeObject, type ResourceDef, storageOf } from '@kubeling/api';
import {
  type FieldError,
  type GroupResource,
  StatusError,
  aggregateMessage,
  alreadyExists,
  badRequest,
  conflict,
  failure,
  fieldErrorBody,
  invalid,
  isPlainObject,
  jsonEqual,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  parseFieldSelector,
  parseLabelSelector,
  randomSuffix,
  rfc3339,
  tooOldResourceVersion,
  validateObjectMeta,
  validateObjectMetaUpdate,
  nameIsDNSSubdomain,
} from '@kubeling/apimachinery';
import { type Cacher, type Filter, type WatchSink, watchEtcd } from '../storage/cacher.js';
import { type EtcdStorage, type StoredObject, StorageCompacted, StorageConflict, StorageFutureRevision, StorageKeyExists, prefixEnd } from '../storage/etcd.js';
import type { Admission } from './admission.js';
import { trackUpdate, type FieldContext, type ManagedFieldsEntry } from '../fieldmanager/index.js';
import type { SchemaNode } from '../fieldmanager/fieldset.js';
import type { Strategy } from './strategy.js';
import { continueExpired, decodeContinue, encodeContinue, parseResourceVersion, tooLarge } from './versions.js';

export { decodeContinue, encodeContinue } from './versions.js';

export interface WriteContext {
  dryRun?: boolean;
  /** Who writes, for managedFields (the fieldManager parameter or the user agent). */
  fieldManager?: string;
  /** Server-side apply: the object already carries its managedFields. */
  applied?: boolean;
  /** The requesting user, for admission. */
  user?: { name: string; groups: string[] };
  /** Warnings to return in `Warning` headers. */
  warnings?: string[];
}

export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  propagationPolicy?: string | undefined;
  orphanDependents?: boolean | undefined;
  dryRun?: string[] | undefined;
}

export interface NamespaceGate {
  /** Throws 404 for a missing namespace, 403 for a terminating one. */
  check(namespace: string, gr: GroupResource, name: string): Promise<void>;
}

const MAX_RETRIES = 16;

export class Store {
  readonly gr: GroupResource;
  readonly gk: { group: string; kind: string };
  private readonly prefix: string;
  private readonly apiVersion: string;

  /** Tells admission an object is gone (quota usage returns), and gives back what it was allocated. */
  private released(obj: KubeObject): void {
    if (this.strategy.release) void this.strategy.release(obj, this.storage).catch(() => undefined);
    this.admission.deleted(obj, { operation: 'DELETE', resource: `${this.gr.group}/${this.gr.resource}`, namespace: obj.metadata.namespace });
  }

  constructor(
    readonly def: ResourceDef,
    readonly strategy: Strategy,
    private readonly storage: EtcdStorage,
    readonly cacher: Cacher,
    private readonly namespaces: NamespaceGate,
    /** The admission plugins of this resource (mutating after defaulting, validating after validation). */
    readonly admission: Admission,
  ) {
    this.gr = { group: def.group, resource: def.resource };
    this.gk = { group: def.group, kind: def.kind };
    this.prefix = storagePrefix(def);
    this.apiVersion = apiVersionOf(def.group, def.version);
  }

  /**
   * Follows every object of this resource from the watch cache: first an ADDED
   * per object, then changes. Re-subscribes (replaying) if the cache restarts.
   */
  subscribe(handler: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => void): () => void {
    let cancel: (() => void) | undefined;
    let stopped = false;
    const start = () => {
      if (stopped) return;
      void this.cacher.ready().then(() => {
        if (stopped) return;
        cancel = this.cacher.watch(this.prefix, undefined, () => true, {
          event: (type, obj) => handler(type, this.external(obj)),
          error: () => {
            cancel = undefined;
            setTimeout(start, 500).unref();
          },
        });
      }, () => setTimeout(start, 500).unref());
    };
    start();
    return () => {
      stopped = true;
      cancel?.();
    };
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

  private internal(o: KubeObject): KubeObject {
    const obj = this.strategy.fromExternal ? this.strategy.fromExternal(o) : o;
    return obj;
  }

  // ---- reads ---------------------------------------------------------------

  async get(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KubeObject> {
    const rv = parseResourceVersion(resourceVersion);
    if (resourceVersion === '0') {
      await this.cacher.ready();
      const hit = this.cacher.get(this.key(namespace, name));
      if (hit) return this.external(hit.obj);
    }
    if (rv.n > 0) {
      // Not older than rv: a read from etcd is, unless etcd has not reached it.
      const current = await this.storage.currentRevision();
      if (rv.n > current) throw tooLarge(rv, current);
    }
    const cur = await this.storage.get(this.key(namespace, name));
    if (!cur) throw notFound(this.gr, name);
    return this.external(cur.obj);
  }

  /** Builds the filter of label and field selectors; 400 on malformed selectors. */
  filter(opts: ListOptions): Filter {
    let labels: ReturnType<typeof parseLabelSelector> | undefined;
    let fields: ReturnType<typeof parseFieldSelector> | undefined;
    try {
      if (opts.labelSelector) labels = parseLabelSelector(opts.labelSelector);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    try {
      if (opts.fieldSelector) fields = parseFieldSelector(opts.fieldSelector);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    if (fields) {
      for (const r of fields.requirements) {
        if (r.field === 'metadata.name' || r.field === 'metadata.namespace') continue;
        if (!this.supportsField(r.field)) throw badRequest(`field label not supported: ${r.field}`);
      }
    }
    if (!labels && !fields) return () => true;
    return (obj) => {
      if (labels && !labels.matches(obj.metadata.labels ?? {})) return false;
      if (fields) {
        const extra = this.strategy.fields ? this.strategy.fields(obj) : {};
        const get = (f: string) =>
          f === 'metadata.name' ? (obj.metadata.name ?? '') : f === 'metadata.namespace' ? (obj.metadata.namespace ?? '') : (extra[f] ?? '');
        if (!fields.matches(get)) return false;
      }
      return true;
    };
  }

  private fieldNames: Set<string> | undefined;
  private supportsField(f: string): boolean {
    if (!this.strategy.fields) return false;
    this.fieldNames ??= new Set(Object.keys(this.strategy.fields({ metadata: {} } as KubeObject)));
    return this.fieldNames.has(f);
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
        return this.listOf(items, String(rev));
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
      atRev = cont.rv > 0 ? cont.rv : 0;
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
    const list = this.listOf(items, String(rev));
    if (limit && more && lastKey) {
      list.metadata.continue = encodeContinue(rev, lastKey.slice(keyPrefix.length) + '\x00');
      if (remaining !== undefined && remaining > 0) list.metadata.remainingItemCount = remaining;
    }
    return list;
  }

  private listOf(items: KubeObject[], rv: string): KubeList {
    return {
      apiVersion: this.apiVersion,
      kind: `${this.def.kind}List`,
      metadata: { resourceVersion: rv },
      items: items.map((o) => this.external(o)),
    };
  }

  /**
   * Starts a watch. Events go to `sink`; returns the function that stops it.
   * `resourceVersion` unset or "0": ADDED for every current object first.
   */
  async watch(namespace: string | undefined, opts: ListOptions, sink: WatchSink, initialEvents?: { notOlderThan?: string }): Promise<() => void> {
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

  // ---- writes --------------------------------------------------------------

  private invalid(name: string, errs: FieldError[]): StatusError {
    return invalid(
      this.gk,
      name,
      errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
      aggregateMessage(errs),
    );
  }

  private validateCreate(obj: KubeObject): void {
    const errs: FieldError[] = [
      ...validateObjectMeta(obj.metadata, { namespaced: this.def.namespaced, nameFn: this.strategy.nameValidation ?? nameIsDNSSubdomain }),
      ...(this.strategy.validate ? this.strategy.validate(obj) : []),
    ];
    if (errs.length) throw this.invalid(obj.metadata.name ?? '', errs);
  }

  /**
   * Creates `obj` in `namespace`. The caller has decoded and type-checked the body
   * and defaulted its namespace from the URL.
   */
  async create(namespace: string | undefined, input: KubeObject, ctx: WriteContext = {}): Promise<KubeObject> {
    const obj = this.internal(structuredClone(input));
    const meta = obj.metadata;
    if (!this.def.namespaced) delete meta.namespace;
    else if (namespace !== undefined) meta.namespace = namespace;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
    // System fields are the server's (rest.FillObjectMetaSystemFields).
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    delete meta.selfLink;
    if (this.strategy.generation) meta.generation = 1;
    else delete meta.generation;
    this.strategy.prepareForCreate?.(obj);
    this.strategy.defaults?.(obj);
    await this.admission.admit(obj, { operation: 'CREATE', resource: `${this.gr.group}/${this.gr.resource}`, namespace, ...(meta.name ? { name: meta.name } : {}), dryRun: !!ctx.dryRun, ...(ctx.user ? { user: ctx.user } : {}) });
    this.validateCreate(obj);
    if (!ctx.applied) this.setManagedFields(obj, trackUpdate(undefined, obj, this.fieldContext(ctx, undefined)));
    if (this.def.namespaced && namespace) await this.namespaces.check(namespace, this.gr, meta.name ?? '');
    await this.admission.validate(obj, { operation: 'CREATE', resource: `${this.gr.group}/${this.gr.resource}`, namespace, ...(meta.name ? { name: meta.name } : {}), dryRun: !!ctx.dryRun, ...(ctx.user ? { user: ctx.user } : {}) });
    const allocErrs = (await this.strategy.allocate?.(obj, this.storage, !!ctx.dryRun)) ?? [];
    if (allocErrs.length) throw this.invalid(meta.name!, allocErrs);
    if (ctx.dryRun) return this.external(obj);
    try {
      const stored = await this.storage.create(this.key(namespace, meta.name!), obj);
      return this.external(stored.obj);
    } catch (e) {
      await this.strategy.release?.(obj, this.storage).catch(() => undefined);
      if (e instanceof StorageKeyExists) throw alreadyExists(this.gr, meta.name!);
      throw e;
    }
  }

  /**
   * Read-modify-write with retries (storage.GuaranteedUpdate): `tryUpdate` gets the
   * current object and returns the new one. A StatusError from it ends the loop.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    tryUpdate: (cur: KubeObject) => KubeObject | Promise<KubeObject>,
    opts: { subresource?: string; ctx?: WriteContext; preconditionRV?: string | undefined; createIfMissing?: boolean } = {},
  ): Promise<{ obj: KubeObject; created: boolean }> {
    const key = this.key(namespace, name);
    let cur: StoredObject | undefined = await this.storage.get(key);
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      if (!cur) {
        if (opts.createIfMissing) {
          const candidate = await tryUpdate(undefined as unknown as KubeObject);
          return { obj: await this.create(namespace, candidate, opts.ctx), created: true };
        }
        throw notFound(this.gr, name);
      }
      const old = this.external(cur.obj);
      const proposed = this.internal(await tryUpdate(structuredClone(old)));
      let candidate = this.prepareUpdate(proposed, cur.obj, opts.subresource, opts.preconditionRV);
      const attrs = { operation: 'UPDATE' as const, resource: `${this.gr.group}/${this.gr.resource}`, namespace, name, ...(opts.subresource ? { subresource: opts.subresource === 'binding-internal' ? 'binding' : opts.subresource } : {}), old: this.external(cur.obj), dryRun: !!opts.ctx?.dryRun, ...(opts.ctx?.user ? { user: opts.ctx.user } : {}) };
      if (this.admission.mutates(attrs)) {
        // Mutating admission, then the strategy's rules again on what it made.
        const mutated = this.external(candidate);
        await this.admission.admit(mutated, attrs);
        candidate = this.prepareUpdate(this.internal(mutated), cur.obj, opts.subresource, undefined);
      }
      await this.admission.validate(this.external(candidate), attrs);
      if (opts.ctx?.applied) {
        if (opts.subresource === 'status') {
          if (proposed.metadata.managedFields) candidate.metadata.managedFields = proposed.metadata.managedFields;
          else delete candidate.metadata.managedFields;
        }
      } else this.setManagedFields(candidate, trackUpdate(cur.obj, candidate, this.fieldContext(opts.ctx, opts.subresource)));
      if (jsonEqual(stripRV(candidate), stripRV(cur.obj))) return { obj: old, created: false };
      if (opts.ctx?.dryRun) return { obj: this.external(candidate), created: false };
      const finishing = candidate.metadata.deletionTimestamp && !(candidate.metadata.finalizers?.length) && !this.strategy.blocksDeletion?.(candidate) && !candidate.metadata.deletionGracePeriodSeconds;
      try {
        if (finishing) {
          const rev = await this.storage.delete(key, cur.rev);
          this.released(cur.obj);
          return { obj: this.external({ ...candidate, metadata: { ...candidate.metadata, resourceVersion: String(rev) } }), created: false };
        }
        const stored = await this.storage.update(key, candidate, cur.rev);
        return { obj: this.external(stored.obj), created: false };
      } catch (e) {
        if (!(e instanceof StorageConflict)) throw e;
        if (opts.preconditionRV) throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
        cur = e.current;
      }
    }
    throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
  }

  /** What field management needs to know about a write to this resource. */
  fieldContext(ctx: WriteContext | undefined, subresource: string | undefined): FieldContext {
    const sub = subresource === 'binding-internal' ? 'binding' : subresource;
    return {
      manager: ctx?.fieldManager ?? 'unknown',
      apiVersion: this.apiVersion,
      ...(sub ? { subresource: sub } : {}),
      schema: this.def.schema as SchemaNode,
      statusSubresource: !!this.strategy.statusSubresource,
    };
  }

  private setManagedFields(obj: KubeObject, mf: ManagedFieldsEntry[] | undefined): void {
    if (mf) obj.metadata.managedFields = mf as never;
    else delete obj.metadata.managedFields;
  }

  /** Applies the strategy's update rules; throws 409/422 as upstream does. */
  private prepareUpdate(proposed: KubeObject, old: KubeObject, subresource: string | undefined, preconditionRV: string | undefined): KubeObject {
    const obj = structuredClone(proposed);
    const name = old.metadata.name!;
    const rv = obj.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
    if (preconditionRV && preconditionRV !== old.metadata.resourceVersion) throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
    if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    obj.metadata.name = name;
    if (this.def.namespaced && old.metadata.namespace !== undefined) obj.metadata.namespace ??= old.metadata.namespace;
    let errs: FieldError[];
    if (subresource && subresource !== 'status') {
      const hook = this.strategy.subresourceUpdate?.[subresource];
      const next = hook ? hook(obj, old) : obj;
      keepSystemMeta(next, old);
      return next;
    }
    if (subresource === 'status') {
      const next = structuredClone(old);
      next.status = obj.status;
      if (this.strategy.prepareForStatusUpdate) this.strategy.prepareForStatusUpdate(next, old);
      keepSystemMeta(next, old);
      errs = this.strategy.validateStatusUpdate ? this.strategy.validateStatusUpdate(next, old) : [];
      if (errs.length) throw this.invalid(name, errs);
      return next;
    }
    keepSystemMeta(obj, old);
    if (this.strategy.statusSubresource) {
      if (old.status === undefined) delete obj.status;
      else obj.status = structuredClone(old.status);
    }
    this.strategy.defaults?.(obj);
    this.strategy.prepareForUpdate?.(obj, old);
    if (this.strategy.generation) {
      obj.metadata.generation = old.metadata.generation ?? 1;
      if (!jsonEqual(specOf(obj), specOf(old))) obj.metadata.generation += 1;
    }
    // Finalizers may only shrink to empty on a deleting object; the store finishes deletion then.
    errs = [
      ...validateObjectMeta(obj.metadata, { namespaced: this.def.namespaced, nameFn: this.strategy.nameValidation ?? nameIsDNSSubdomain }),
      ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...(this.strategy.validate ? this.strategy.validate(obj) : []),
      ...(this.strategy.validateUpdate ? this.strategy.validateUpdate(obj, old) : []),
    ];
    if (errs.length) throw this.invalid(name, errs);
    return obj;
  }

  /** PUT. `created` tells 201 from 200. */
  async update(namespace: string | undefined, name: string, body: KubeObject, subresource: string | undefined, ctx: WriteContext = {}) {
    const createIfMissing = !!this.strategy.allowCreateOnUpdate && !subresource;
    return this.guaranteedUpdate(namespace, name, () => structuredClone(body), {
      ...(subresource ? { subresource } : {}),
      ctx,
      preconditionRV: body.metadata?.resourceVersion,
      createIfMissing,
    });
  }

  /**
   * DELETE. Returns the object and whether it is gone (false while finalizers or a
   * grace period hold it).
   */
  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}, ctx: WriteContext = {}): Promise<{ obj: KubeObject; deleted: boolean }> {
    const key = this.key(namespace, name);
    let cur = await this.storage.get(key);
    if (cur && this.admission.validates()) {
      // Validating admission sees a DELETE once, with the object as it stands (webhooks get it as oldObject).
      const old = this.external(cur.obj);
      await this.admission.validate(old, { operation: 'DELETE', resource: `${this.gr.group}/${this.gr.resource}`, namespace, name, old, dryRun: !!ctx.dryRun, ...(ctx.user ? { user: ctx.user } : {}) });
    }
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      if (!cur) throw notFound(this.gr, name);
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== cur.obj.metadata.uid) {
        throw conflict(this.gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.obj.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== String(cur.rev)) {
        throw conflict(this.gr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.rev}`);
      }
      const obj = structuredClone(cur.obj);
      const meta = obj.metadata;
      const grace = this.strategy.gracePeriod ? this.strategy.gracePeriod(obj, opts.gracePeriodSeconds) : 0;
      const finalizers = new Set(meta.finalizers ?? []);
      const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : undefined);
      if (policy === 'Orphan') {
        finalizers.add('orphan');
        finalizers.delete('foregroundDeletion');
      } else if (policy === 'Foreground') {
        finalizers.add('foregroundDeletion');
        finalizers.delete('orphan');
      }
      const pendingFinalizers = finalizers.size > 0 || !!this.strategy.blocksDeletion?.(obj);
      const alreadyDeleting = !!meta.deletionTimestamp;
      if (!pendingFinalizers && grace <= 0) {
        if (ctx.dryRun) return { obj: this.external(cur.obj), deleted: true };
        try {
          const rev = await this.storage.delete(key, cur.rev);
          this.released(cur.obj);
          return { obj: this.external({ ...cur.obj, metadata: { ...cur.obj.metadata, resourceVersion: String(rev) } }), deleted: true };
        } catch (e) {
          if (!(e instanceof StorageConflict)) throw e;
          cur = e.current;
          continue;
        }
      }
      // Graceful or finalizer-held deletion: record it on the object.
      if (alreadyDeleting) {
        const current = meta.deletionGracePeriodSeconds ?? 0;
        const shorten = grace < current;
        const sameFinalizers = jsonEqual([...finalizers].sort(), [...(meta.finalizers ?? [])].sort());
        if (!shorten && sameFinalizers) return { obj: this.external(cur.obj), deleted: false };
        if (shorten) {
          meta.deletionGracePeriodSeconds = grace;
          meta.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
        }
      } else {
        meta.deletionTimestamp = rfc3339(new Date(Date.now() + Math.max(grace, 0) * 1000));
        meta.deletionGracePeriodSeconds = Math.max(grace, 0);
        this.strategy.prepareForDelete?.(obj);
      }
      if (finalizers.size) meta.finalizers = [...finalizers];
      else delete meta.finalizers;
      if (ctx.dryRun) return { obj: this.external(obj), deleted: false };
      try {
        if (!pendingFinalizers && meta.deletionGracePeriodSeconds === 0) {
          const rev = await this.storage.delete(key, cur.rev);
          this.released(cur.obj);
          return { obj: this.external({ ...obj, metadata: { ...meta, resourceVersion: String(rev) } }), deleted: true };
        }
        const stored = await this.storage.update(key, obj, cur.rev);
        return { obj: this.external(stored.obj), deleted: false };
      } catch (e) {
        if (!(e instanceof StorageConflict)) throw e;
        cur = e.current;
      }
    }
    throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
  }

  /** DELETE on a collection: deletes every object the selectors match, one by one. */
  async deleteCollection(namespace: string | undefined, listOpts: ListOptions, opts: DeleteOptions, ctx: WriteContext = {}): Promise<KubeList> {
    const list = await this.list(namespace, { ...listOpts, limit: undefined, continue: undefined });
    const out: KubeObject[] = [];
    for (const item of list.items) {
      try {
        const { obj } = await this.delete(item.metadata.namespace, item.metadata.name!, { ...opts, preconditions: undefined }, ctx);
        out.push(obj);
      } catch (e) {
        if (e instanceof StatusError && e.status.reason === 'NotFound') continue;
        throw e;
      }
    }
    return { ...list, items: out };
  }
}

export function storagePrefix(def: ResourceDef): string {
  const s = storageOf(def);
  return `/registry/${s.resource}/`;
}

function stripTypeMeta(o: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest as KubeObject;
}

function stripRV(o: KubeObject): unknown {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  const { resourceVersion: _rv, ...meta } = o.metadata ?? {};
  return { ...rest, metadata: meta };
}

/** Everything but metadata and status: what bumps `generation`. */
function specOf(o: KubeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') out[k] = v;
  return out;
}

/** Fields of metadata only the server sets (rest.FillObjectMetaSystemFields + update rules). */
function keepSystemMeta(obj: KubeObject, old: KubeObject): void {
  const m = obj.metadata;
  const o = old.metadata;
  if (o.uid !== undefined) m.uid = o.uid;
  if (o.creationTimestamp !== undefined) m.creationTimestamp = o.creationTimestamp;
  if (o.deletionTimestamp) m.deletionTimestamp = o.deletionTimestamp;
  else delete m.deletionTimestamp;
  if (o.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
  else delete m.deletionGracePeriodSeconds;
  if (o.generation !== undefined) m.generation = o.generation;
  else delete m.generation;
  delete m.selfLink;
  if (m.generateName === undefined && o.generateName !== undefined) m.generateName = o.generateName;
  // While deleting, finalizers may be removed but not added.
  if (o.deletionTimestamp && m.finalizers) {
    const had = new Set(o.finalizers ?? []);
    const added = m.finalizers.filter((f) => !had.has(f));
    if (added.length) {
      throw failure('Forbidden', `${old.kind ?? 'object'} "${o.name}" is forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`);
    }
  }
}

export const isObject = isPlainObject;
