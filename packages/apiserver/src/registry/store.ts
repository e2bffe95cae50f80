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
 *
 * This file orchestrates the writes. Reads are reader.ts; the create/update
 * rules rest.ts (system fields meta.ts); what a DELETE does delete.ts;
 * managedFields managedfields.ts.
 */
import { apiVersionOf, type KubeList, type KubeObject, type ResourceDef, storageOf } from '@kubeling/api';
import { type GroupResource, StatusError, alreadyExists, conflict, jsonEqual, notFound, OPTIMISTIC_LOCK_MESSAGE } from '@kubeling/apimachinery';
import type { Cacher, EventType, Filter, WatchSink } from '../storage/cacher.js';
import { type EtcdStorage, type StoredObject, StorageConflict, StorageKeyExists } from '../storage/etcd.js';
import type { FieldContext } from '../fieldmanager/index.js';
import type { Admission, AdmissionAttributes } from './admission.js';
import { beforeDelete, checkPreconditions, type DeleteOptions } from './delete.js';
import { fieldContextFor, managedFieldsOnUpdate, trackManagedFields } from './managedfields.js';
import { stripRV } from './meta.js';
import { type ListOptions, StoreReader } from './reader.js';
import { beforeCreate, beforeUpdate, invalidObject, validateCreate } from './rest.js';
import type { Strategy } from './strategy.js';

export interface WriteContext {
  dryRun?: boolean;
  /** Who writes, for managedFields (the fieldManager parameter or the user agent). */
  fieldManager?: string;
  /** Server-side apply: the object already carries its managedFields. */
  applied?: boolean;
  /** The requesting user, for admission. */
  user?: { name: string; groups: string[]; uid?: string; extra?: Record<string, string[]> };
  /** Warnings to return in `Warning` headers. */
  warnings?: string[];
}

export interface NamespaceGate {
  /** Throws 404 for a missing namespace, 403 for a terminating one. */
  check(namespace: string, gr: GroupResource, name: string): Promise<void>;
}

const MAX_RETRIES = 16;

export class Store {
  readonly gr: GroupResource;
  readonly gk: { group: string; kind: string };
  private readonly apiVersion: string;
  private readonly reader: StoreReader;

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
    this.apiVersion = apiVersionOf(def.group, def.version);
    this.reader = new StoreReader(def, strategy, storage, cacher, storagePrefix(def));
  }

  // ---- reads (reader.ts) -----------------------------------------------------

  /**
   * Follows every object of this resource from the watch cache: first an ADDED
   * per object, then changes. Re-subscribes (replaying) if the cache restarts.
   */
  subscribe(handler: (type: EventType, obj: KubeObject) => void): () => void {
    return this.reader.subscribe(handler);
  }

  key(namespace: string | undefined, name: string): string {
    return this.reader.key(namespace, name);
  }

  /** Key prefix of a collection: all namespaces when `namespace` is empty. */
  collectionPrefix(namespace: string | undefined): string {
    return this.reader.collectionPrefix(namespace);
  }

  /** Sets apiVersion/kind (and converts shared-storage objects). */
  external(o: KubeObject): KubeObject {
    return this.reader.external(o);
  }

  /** The stored form of an object as a client sent it (in this resource's version). */
  private async internal(o: KubeObject): Promise<KubeObject> {
    if (this.strategy.convert) return this.strategy.convert.toStorage(o);
    return this.strategy.fromExternal ? this.strategy.fromExternal(o) : o;
  }

  /** `external`, through the resource's conversion webhook when it has one. */
  private async ext(o: KubeObject): Promise<KubeObject> {
    if (this.strategy.convert) return this.external((await this.strategy.convert.fromStorage([o]))[0]!);
    return this.external(o);
  }

  get(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KubeObject> {
    return this.reader.get(namespace, name, resourceVersion);
  }

  /** Builds the filter of label and field selectors; 400 on malformed selectors. */
  filter(opts: ListOptions): Filter {
    return this.reader.filter(opts);
  }

  list(namespace: string | undefined, opts: ListOptions): Promise<KubeList> {
    return this.reader.list(namespace, opts);
  }

  /**
   * Starts a watch. Events go to `sink`; returns the function that stops it.
   * `resourceVersion` unset or "0": ADDED for every current object first.
   */
  watch(namespace: string | undefined, opts: ListOptions, sink: WatchSink, initialEvents?: { notOlderThan?: string }): Promise<() => void> {
    return this.reader.watch(namespace, opts, sink, initialEvents);
  }

  // ---- writes --------------------------------------------------------------

  private attributes(
    operation: AdmissionAttributes['operation'],
    namespace: string | undefined,
    ctx: WriteContext | undefined,
    extra: Partial<AdmissionAttributes>,
  ): AdmissionAttributes {
    return {
      operation,
      resource: `${this.gr.group}/${this.gr.resource}`,
      namespace,
      ...extra,
      dryRun: !!ctx?.dryRun,
      ...(ctx?.user ? { user: ctx.user } : {}),
      ...(ctx?.warnings ? { warnings: ctx.warnings } : {}),
      ...(this.strategy.defaults ? { defaults: (o: KubeObject) => this.strategy.defaults?.(o) } : {}),
    };
  }

  /**
   * Tells admission an object is gone (quota usage returns), and gives back what
   * it was allocated before the deletion is answered (upstream's AfterDelete), so
   * a client may take it again at once.
   */
  private async released(obj: KubeObject): Promise<void> {
    this.admission.deleted(obj, { operation: 'DELETE', resource: `${this.gr.group}/${this.gr.resource}`, namespace: obj.metadata.namespace });
    if (this.strategy.release) await this.strategy.release(obj, this.storage).catch(() => undefined);
  }

  /** Deletes `cur` from etcd (if unchanged); answers `shown` at the deletion's revision. */
  private async remove(key: string, cur: StoredObject, shown: KubeObject): Promise<KubeObject> {
    const rev = await this.storage.delete(key, cur.rev);
    await this.released(cur.obj);
    return this.ext({ ...shown, metadata: { ...shown.metadata, resourceVersion: String(rev) } });
  }

  /**
   * Creates `obj` in `namespace`. The caller has decoded and type-checked the body
   * and defaulted its namespace from the URL.
   */
  async create(namespace: string | undefined, input: KubeObject, ctx: WriteContext = {}): Promise<KubeObject> {
    const obj = await this.internal(structuredClone(input));
    const meta = obj.metadata;
    beforeCreate(this, obj, namespace, ctx.user);
    await this.admission.admit(obj, this.attributes('CREATE', namespace, ctx, meta.name ? { name: meta.name } : {}));
    validateCreate(this, obj);
    if (!ctx.applied) trackManagedFields(obj, undefined, this.fieldContext(ctx, undefined));
    if (this.def.namespaced && namespace) await this.namespaces.check(namespace, this.gr, meta.name ?? '');
    await this.admission.validate(obj, this.attributes('CREATE', namespace, ctx, meta.name ? { name: meta.name } : {}));
    const allocErrs = (await this.strategy.allocate?.(obj, this.storage, !!ctx.dryRun)) ?? [];
    if (allocErrs.length) throw invalidObject(this.gk, meta.name!, allocErrs);
    if (ctx.dryRun) return this.ext(obj);
    try {
      const stored = await this.storage.create(this.key(namespace, meta.name!), obj);
      return this.ext(stored.obj);
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
      const old = await this.ext(cur.obj);
      const proposed = await this.internal(await tryUpdate(structuredClone(old)));
      let candidate = beforeUpdate(this, proposed, cur.obj, opts.subresource, opts.preconditionRV);
      const subresource = opts.subresource === 'binding-internal' ? 'binding' : opts.subresource;
      const attrs = this.attributes('UPDATE', namespace, opts.ctx, { name, ...(subresource ? { subresource } : {}), old });
      if (this.admission.mutates(attrs)) {
        // Mutating admission, then the strategy's rules again on what it made.
        const mutated = await this.ext(candidate);
        await this.admission.admit(mutated, attrs);
        candidate = beforeUpdate(this, await this.internal(mutated), cur.obj, opts.subresource, undefined);
      }
      await this.admission.validate(await this.ext(candidate), attrs);
      managedFieldsOnUpdate(candidate, cur.obj, proposed, {
        applied: !!opts.ctx?.applied,
        subresource: opts.subresource,
        fieldContext: () => this.fieldContext(opts.ctx, opts.subresource),
      });
      // A no-op update is not written, unless the stored value was read with a key that is
      // no longer the first (upstream's stale flag): rewriting is how keys are rotated.
      if (!cur.stale && jsonEqual(stripRV(candidate), stripRV(cur.obj))) return { obj: old, created: false };
      const alloc = await this.strategy.allocateUpdate?.(candidate, cur.obj, this.storage, !!opts.ctx?.dryRun);
      if (alloc?.errors.length) throw invalidObject(this.gk, name, alloc.errors);
      if (opts.ctx?.dryRun) return { obj: await this.ext(candidate), created: false };
      const finishing =
        candidate.metadata.deletionTimestamp &&
        !candidate.metadata.finalizers?.length &&
        !this.strategy.blocksDeletion?.(candidate) &&
        !candidate.metadata.deletionGracePeriodSeconds;
      try {
        if (finishing) return { obj: await this.remove(key, cur, candidate), created: false };
        const stored = await this.storage.update(key, candidate, cur.rev);
        await alloc?.commit().catch(() => undefined);
        return { obj: await this.ext(stored.obj), created: false };
      } catch (e) {
        await alloc?.abort().catch(() => undefined);
        if (!(e instanceof StorageConflict)) throw e;
        if (opts.preconditionRV) throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
        cur = e.current;
      }
    }
    throw conflict(this.gr, name, OPTIMISTIC_LOCK_MESSAGE);
  }

  /** What field management needs to know about a write to this resource. */
  fieldContext(ctx: WriteContext | undefined, subresource: string | undefined): FieldContext {
    return fieldContextFor(this.def, this.apiVersion, this.strategy, ctx?.fieldManager, subresource);
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
      const old = await this.ext(cur.obj);
      await this.admission.validate(old, this.attributes('DELETE', namespace, ctx, { name, old }));
    }
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      if (!cur) throw notFound(this.gr, name);
      checkPreconditions(this.gr, name, opts.preconditions, cur);
      const plan = beforeDelete(cur.obj, this.strategy, opts);
      if (plan.action === 'unchanged') return { obj: await this.ext(cur.obj), deleted: false };
      if (ctx.dryRun) return plan.action === 'delete' ? { obj: await this.ext(cur.obj), deleted: true } : { obj: await this.ext(plan.obj), deleted: false };
      try {
        if (plan.action === 'delete') return { obj: await this.remove(key, cur, cur.obj), deleted: true };
        if (plan.removeNow) return { obj: await this.remove(key, cur, plan.obj), deleted: true };
        const stored = await this.storage.update(key, plan.obj, cur.rev);
        return { obj: await this.ext(stored.obj), deleted: false };
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
