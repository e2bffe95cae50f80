/**
 * Garbage collector (kubernetes pkg/controller/garbagecollector): keeps the graph
 * of ownerReferences over every stored resource and
 * - deletes dependents whose owners are all gone (Background propagation),
 *   and drops references to gone owners from dependents that still have others;
 * - for an owner deleting with the `orphan` finalizer, removes its references from
 *   the dependents, then the finalizer;
 * - for an owner deleting with the `foregroundDeletion` finalizer, deletes the
 *   dependents (in the foreground too) and removes the finalizer once no dependent
 *   with `blockOwnerDeletion` is left.
 * An owner is only judged gone after a live GET confirms it (the cache may lag).
 *
 * What it watches comes from discovery (garbagecollector.go Sync,
 * GetDeletableResources): every resource that supports delete, list and watch,
 * matched with discovery every `syncPeriodMs` — monitors start for resources
 * that appear (custom resources) and stop for those that go. Owner references
 * resolve their kind through discovery too, so an owner may be a custom
 * resource; a kind discovery does not know yet is retried after the next sync.
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import {
  groupResourceKey,
  parseGroupVersion,
  resourcePath,
  restMapping,
  supportsAllVerbs,
  type DiscoveredResource,
  type EventHandlers,
} from '@kubeling/client';
import type { ControllerContext } from '../../context.js';
import { builtInResources, DISCOVERY_PERIOD_MS, Monitors, sharedDiscovery } from '../../discovery.js';
import { runEvery } from '../periodic.js';
import { QueueController } from '../queue-controller.js';

export interface GarbageCollectorSettings {
  /** How often the monitored resources are matched with discovery (upstream: garbagecollector.Sync every 30 s). */
  syncPeriodMs: number;
}

export const GARBAGECOLLECTOR_DEFAULTS: GarbageCollectorSettings = { syncPeriodMs: DISCOVERY_PERIOD_MS };

/** garbagecollector.DefaultIgnoredResources: events (core, and events.k8s.io, which shares its storage). */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);

/** GetDeletableResources: what supports delete, list and watch, less the ignored resources. */
export function deletableResources(rs: readonly DiscoveredResource[]): DiscoveredResource[] {
  return rs.filter((r) => !IGNORED.has(groupResourceKey(r)) && supportsAllVerbs(r, ['delete', 'list', 'watch']));
}

/** An owner whose kind discovery does not know (yet): retried after the next discovery sync (attemptToDeleteWorker's restMappingError). */
class RestMappingError extends Error {}

/** How old a discovery snapshot may be when an owner's kind is not in it. */
const MISS_MAX_AGE_MS = 1000;

interface Node {
  res: DiscoveredResource;
  obj: KubeObject;
}

const objectPath = (res: DiscoveredResource, o: KubeObject) => `${resourcePath(res, o.metadata.namespace)}/${o.metadata.name}`;
const nodeKey = (res: DiscoveredResource, o: KubeObject) => `${groupResourceKey(res)}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

export class GarbageCollector extends QueueController {
  readonly name = 'garbagecollector';
  private monitors!: Monitors;
  private readonly discovery;
  private readonly byUid = new Map<string, Node>();
  /** owner uid → dependents' node keys */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly nodes = new Map<string, Node>();
  /** Syncs with discovery done. */
  syncs = 0;

  constructor(
    ctx: ControllerContext,
    private readonly o: GarbageCollectorSettings = GARBAGECOLLECTOR_DEFAULTS,
  ) {
    super(ctx);
    this.discovery = sharedDiscovery(ctx.client);
  }

  /** Monitors every deletable resource of the static table until discovery answers (the factory then waits for them to sync). */
  init(): void {
    this.monitors = new Monitors(this.ctx, (m) => this.handlers(m.resource));
    for (const r of deletableResources(builtInResources())) this.monitors.ensure(r);
  }

  /** The resources monitored, as `group/resource`. */
  monitored(): string[] {
    return this.monitors.list().map((m) => groupResourceKey(m.resource));
  }

  override async run(signal: AbortSignal): Promise<void> {
    const log = this.ctx.log.child({ controller: this.name });
    this.monitors.run();
    signal.addEventListener('abort', () => this.monitors.stopAll(), { once: true });
    const sync = runEvery(
      signal,
      this.o.syncPeriodMs,
      () => this.sync(log),
      (e) => log.warn({ err: String((e as Error)?.message ?? e) }, 'garbage collector sync with discovery failed'),
    );
    await Promise.all([super.run(signal), sync]);
  }

  /**
   * garbagecollector.Sync: monitors the deletable resources discovery lists
   * now, keeping those of groups that could not be discovered this time, and
   * drops the objects of resources no longer served from the graph.
   */
  private async sync(log: ControllerContext['log']): Promise<void> {
    const snap = await this.discovery.discover(MISS_MAX_AGE_MS);
    const want = deletableResources(snap.preferred);
    // Upstream skips a sync that discovered nothing rather than stop every monitor.
    if (!want.length) return;
    const failedGroups = new Set([...snap.failed.keys()].map((gv) => parseGroupVersion(gv).group));
    if (failedGroups.size) log.warn({ groups: [...snap.failed.keys()] }, 'failed to discover some groups');
    const { added, removed } = this.monitors.sync(
      want,
      (key) => failedGroups.has(key.slice(0, key.indexOf('/'))),
      (m) => {
        for (const o of m.informer.store.list()) this.forget(m.resource, o);
      },
    );
    this.syncs++;
    if (added.length || removed.length) {
      log.info(
        { added: added.map((m) => groupResourceKey(m.resource)), removed: removed.map((m) => groupResourceKey(m.resource)) },
        'garbage collector monitors synced with discovery',
      );
    }
  }

  private handlers(res: DiscoveredResource): EventHandlers {
    return {
      add: (o) => this.observe(res, o),
      update: (old, o) => {
        this.forget(res, old);
        this.observe(res, o);
      },
      delete: (o) => {
        this.forget(res, o);
        for (const dep of this.dependents.get(o.metadata.uid!) ?? []) this.queue.add(`dep:${dep}`);
      },
    };
  }

  private observe(res: DiscoveredResource, o: KubeObject): void {
    const key = nodeKey(res, o);
    const node = { res, obj: o };
    this.nodes.set(key, node);
    this.byUid.set(o.metadata.uid!, node);
    for (const ref of o.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(key);
    }
    if (o.metadata.ownerReferences?.length) this.queue.add(`dep:${key}`);
    const fin = o.metadata.finalizers ?? [];
    if (o.metadata.deletionTimestamp && (fin.includes('orphan') || fin.includes('foregroundDeletion'))) this.queue.add(`owner:${o.metadata.uid}`);
    // A dependent changing may unblock a foreground deletion of its owners.
    for (const ref of o.metadata.ownerReferences ?? []) {
      const owner = this.byUid.get(ref.uid);
      if (owner?.obj.metadata.deletionTimestamp) this.queue.add(`owner:${ref.uid}`);
    }
  }

  private forget(res: DiscoveredResource, o: KubeObject): void {
    const key = nodeKey(res, o);
    this.nodes.delete(key);
    if (this.byUid.get(o.metadata.uid!)?.obj === o) this.byUid.delete(o.metadata.uid!);
    for (const ref of o.metadata.ownerReferences ?? []) {
      this.dependents.get(ref.uid)?.delete(key);
      if (this.dependents.get(ref.uid)?.size === 0) this.dependents.delete(ref.uid);
      const owner = this.byUid.get(ref.uid);
      if (owner?.obj.metadata.deletionTimestamp) this.queue.add(`owner:${ref.uid}`);
    }
  }

  async reconcile(item: string): Promise<{ requeueAfterMs?: number } | void> {
    try {
      if (item.startsWith('owner:')) return await this.processOwner(item.slice(6));
      return await this.processDependent(item.slice(4));
    } catch (e) {
      if (!(e instanceof RestMappingError)) throw e;
      this.ctx.log.debug({ controller: this.name, item, err: e.message }, 'owner kind not discovered yet');
      return { requeueAfterMs: this.o.syncPeriodMs };
    }
  }

  /** The resource of an owner reference's kind (RESTMapper.RESTMapping), reading discovery again when the kind is new. */
  private async ownerResource(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    const { group, version } = parseGroupVersion(apiVersion);
    const read = async (maxAgeMs: number) => {
      try {
        return await this.discovery.discover(maxAgeMs);
      } catch (e) {
        // A failed read keeps deciding with what the last one said.
        if (this.discovery.last) return this.discovery.last;
        throw e;
      }
    };
    const found = restMapping(await read(this.o.syncPeriodMs), group, kind, version) ?? restMapping(await read(MISS_MAX_AGE_MS), group, kind, version);
    if (!found) throw new RestMappingError(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return found;
  }

  /** Whether the owner a reference names still exists (checked live). */
  private async ownerExists(dep: KubeObject, ref: { apiVersion: string; kind: string; name: string; uid: string }): Promise<boolean> {
    const res = await this.ownerResource(ref.apiVersion, ref.kind);
    // A namespaced owner of a cluster-scoped object is invalid: never collected against (namespacedOwnerOfClusterScopedObjectErr).
    if (res.namespaced && !dep.metadata.namespace) return true;
    try {
      const live = await this.ctx.client.get<KubeObject>(`${resourcePath(res, res.namespaced ? dep.metadata.namespace : undefined)}/${ref.name}`);
      return live.metadata.uid === ref.uid;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private async processDependent(key: string): Promise<void> {
    const node = this.nodes.get(key);
    if (!node) return;
    const { res, obj } = node;
    const refs = obj.metadata.ownerReferences ?? [];
    if (!refs.length || obj.metadata.deletionTimestamp) return;
    const cachedAlive = refs.filter((r) => {
      const o = this.byUid.get(r.uid);
      return o && !o.obj.metadata.deletionTimestamp;
    });
    if (cachedAlive.length === refs.length) return;
    const gone: string[] = [];
    for (const r of refs) if (!(await this.ownerExists(obj, r))) gone.push(r.uid);
    if (!gone.length) return;
    const path = objectPath(res, obj);
    try {
      if (gone.length === refs.length) {
        await this.ctx.client.delete(path, { propagationPolicy: 'Background', preconditions: { uid: obj.metadata.uid } });
      } else {
        await this.ctx.client.patch(
          path,
          { metadata: { uid: obj.metadata.uid, ownerReferences: gone.map((uid) => ({ $patch: 'delete', uid })) } },
          'application/strategic-merge-patch+json',
        );
      }
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async processOwner(uid: string): Promise<{ requeueAfterMs?: number } | void> {
    const node = this.byUid.get(uid);
    if (!node?.obj.metadata.deletionTimestamp) return;
    const { res, obj } = node;
    const fin = obj.metadata.finalizers ?? [];
    const deps = [...(this.dependents.get(uid) ?? [])].map((k) => this.nodes.get(k)).filter((n): n is Node => !!n);
    if (fin.includes('orphan')) {
      for (const d of deps) {
        const path = objectPath(d.res, d.obj);
        try {
          await this.ctx.client.patch(
            path,
            { metadata: { uid: d.obj.metadata.uid, ownerReferences: [{ $patch: 'delete', uid }] } },
            'application/strategic-merge-patch+json',
          );
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
      return this.removeFinalizer(res, obj, 'orphan');
    }
    if (fin.includes('foregroundDeletion')) {
      let blocking = 0;
      for (const d of deps) {
        const refs = d.obj.metadata.ownerReferences ?? [];
        const ref = refs.find((r) => r.uid === uid);
        if (ref?.blockOwnerDeletion) blocking++;
        if (d.obj.metadata.deletionTimestamp) continue;
        // A dependent with another owner that stays (a solid owner, attemptToDeleteItem) is not deleted: it only lets go of this one.
        const solid = refs.some((r) => r.uid !== uid && this.byUid.get(r.uid) && !this.byUid.get(r.uid)!.obj.metadata.deletionTimestamp);
        try {
          if (solid) {
            await this.ctx.client.patch(
              objectPath(d.res, d.obj),
              { metadata: { uid: d.obj.metadata.uid, ownerReferences: [{ $patch: 'delete', uid }] } },
              'application/strategic-merge-patch+json',
            );
            continue;
          }
          // A dependent with a dependent of its own already waiting for its dependents may close a circle back to
          // this owner: it stops blocking its owners before it goes (upstream's attemptToDeleteItem, with its false positives).
          if (this.hasDeletingDependent(d.obj.metadata.uid!)) await this.unblockOwners(d);
          await this.ctx.client.delete(objectPath(d.res, d.obj), {
            propagationPolicy: 'Foreground',
            preconditions: { uid: d.obj.metadata.uid },
          });
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
      if (blocking > 0) return { requeueAfterMs: 500 };
      return this.removeFinalizer(res, obj, 'foregroundDeletion');
    }
  }

  private deletingDependents(o: KubeObject): boolean {
    return !!o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).includes('foregroundDeletion');
  }

  private hasDeletingDependent(uid: string): boolean {
    return [...(this.dependents.get(uid) ?? [])].some((k) => {
      const n = this.nodes.get(k);
      return !!n && this.deletingDependents(n.obj);
    });
  }

  /** Sets blockOwnerDeletion to false on every owner reference of `d` that blocks (unblockOwnerReferences). */
  private async unblockOwners(d: Node): Promise<void> {
    const refs = (d.obj.metadata.ownerReferences ?? []).filter((r) => r.blockOwnerDeletion);
    if (!refs.length) return;
    try {
      await this.ctx.client.patch(
        objectPath(d.res, d.obj),
        { metadata: { uid: d.obj.metadata.uid, ownerReferences: refs.map((r) => ({ uid: r.uid, blockOwnerDeletion: false })) } },
        'application/strategic-merge-patch+json',
      );
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async removeFinalizer(res: DiscoveredResource, obj: KubeObject, finalizer: string): Promise<void> {
    const path = objectPath(res, obj);
    for (let attempt = 0; attempt < 5; attempt++) {
      let cur: KubeObject;
      try {
        cur = await this.ctx.client.get<KubeObject>(path);
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      if (cur.metadata.uid !== obj.metadata.uid) return;
      const fins = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      try {
        await this.ctx.client.patch(
          path,
          [
            { op: 'test', path: '/metadata/resourceVersion', value: cur.metadata.resourceVersion },
            { op: 'replace', path: '/metadata/finalizers', value: fins },
          ],
          'application/json-patch+json',
        );
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) && !/test/.test(String((e as Error).message))) throw e;
      }
    }
    throw new Error(`could not remove finalizer ${finalizer} from ${path}`);
  }
}
