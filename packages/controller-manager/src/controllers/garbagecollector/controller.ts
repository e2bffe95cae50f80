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
 */
import { findByKind, parseApiVersion, resources, type KubeObject, type ResourceDef } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';

const tracked = resources.filter((r) => !r.virtual && !r.storage && r.verbs.includes('watch') && r.resource !== 'events');

export function collectionPath(def: ResourceDef, ns: string | undefined): string {
  const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return def.namespaced && ns ? `${base}/namespaces/${ns}/${def.resource}` : `${base}/${def.resource}`;
}

interface Node {
  def: ResourceDef;
  obj: KubeObject;
}

const nodeKey = (def: ResourceDef, o: KubeObject) => `${def.group}/${def.resource}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

export class GarbageCollector extends QueueController {
  readonly name = 'garbagecollector';
  private readonly informers = new Map<string, { def: ResourceDef; inf: Informer }>();
  private readonly byUid = new Map<string, Node>();
  /** owner uid → dependents' node keys */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly nodes = new Map<string, Node>();

  init(): void {
    for (const def of tracked) {
      const inf = this.ctx.informers.informer({ path: collectionPath(def, undefined) });
      this.informers.set(`${def.group}/${def.resource}`, { def, inf });
      inf.addEventHandler({
        add: (o) => this.observe(def, o),
        update: (old, o) => {
          this.forget(def, old);
          this.observe(def, o);
        },
        delete: (o) => {
          this.forget(def, o);
          for (const dep of this.dependents.get(o.metadata.uid!) ?? []) this.queue.add(`dep:${dep}`);
        },
      });
    }
  }

  private observe(def: ResourceDef, o: KubeObject): void {
    const key = nodeKey(def, o);
    const node = { def, obj: o };
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

  private forget(def: ResourceDef, o: KubeObject): void {
    const key = nodeKey(def, o);
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
    if (item.startsWith('owner:')) return this.processOwner(item.slice(6));
    return this.processDependent(item.slice(4));
  }

  /** Whether the owner a reference names still exists (checked live). */
  private async ownerExists(dep: KubeObject, ref: { apiVersion: string; kind: string; name: string; uid: string }): Promise<boolean> {
    const { group, version } = parseApiVersion(ref.apiVersion);
    const def = findByKind(group, version, ref.kind);
    if (!def) return true; // unknown kinds are never collected against
    try {
      const live = await this.ctx.client.get<KubeObject>(`${collectionPath(def, def.namespaced ? dep.metadata.namespace : undefined)}/${ref.name}`);
      return live.metadata.uid === ref.uid;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  private async processDependent(key: string): Promise<void> {
    const node = this.nodes.get(key);
    if (!node) return;
    const { def, obj } = node;
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
    const path = `${collectionPath(def, obj.metadata.namespace)}/${obj.metadata.name}`;
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
    const { def, obj } = node;
    const fin = obj.metadata.finalizers ?? [];
    const deps = [...(this.dependents.get(uid) ?? [])].map((k) => this.nodes.get(k)).filter((n): n is Node => !!n);
    if (fin.includes('orphan')) {
      for (const d of deps) {
        const path = `${collectionPath(d.def, d.obj.metadata.namespace)}/${d.obj.metadata.name}`;
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
      return this.removeFinalizer(def, obj, 'orphan');
    }
    if (fin.includes('foregroundDeletion')) {
      let blocking = 0;
      for (const d of deps) {
        const ref = (d.obj.metadata.ownerReferences ?? []).find((r) => r.uid === uid);
        if (ref?.blockOwnerDeletion) blocking++;
        if (d.obj.metadata.deletionTimestamp) continue;
        try {
          await this.ctx.client.delete(`${collectionPath(d.def, d.obj.metadata.namespace)}/${d.obj.metadata.name}`, {
            propagationPolicy: 'Foreground',
            preconditions: { uid: d.obj.metadata.uid },
          });
        } catch (e) {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
      }
      if (blocking > 0) return { requeueAfterMs: 500 };
      return this.removeFinalizer(def, obj, 'foregroundDeletion');
    }
  }

  private async removeFinalizer(def: ResourceDef, obj: KubeObject, finalizer: string): Promise<void> {
    const path = `${collectionPath(def, obj.metadata.namespace)}/${obj.metadata.name}`;
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
