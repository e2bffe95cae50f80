/**
 * The volume binder's assume cache (upstream volumebinding/assume_cache.go):
 * an informer's objects overlaid with the versions the scheduler has decided on
 * but not yet written — a PV pre-bound to a claim, a claim given a selected
 * node — so the next pod's Filter already sees them. An assumed object gives
 * way as soon as the informer holds a newer resourceVersion of it (the write
 * came back, or someone else changed it); `restore` drops it at once.
 */
import type { KubeObject } from '@kubeling/api';
import type { Lister } from '../../framework/storage.js';

const keyOf = (o: KubeObject): string => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? ''));

/** Compares resourceVersions as the etcd revisions they are; -1, 0 or 1. */
export function compareVersions(a: KubeObject, b: KubeObject): number {
  const x = a.metadata.resourceVersion ?? '';
  const y = b.metadata.resourceVersion ?? '';
  if (/^\d+$/.test(x) && /^\d+$/.test(y)) {
    const bx = BigInt(x);
    const by = BigInt(y);
    return bx < by ? -1 : bx > by ? 1 : 0;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

export class AssumeCache<T extends KubeObject> {
  private readonly assumed = new Map<string, T>();

  /** `lister` is read on every call: the handle behind it changes between leadership terms. */
  constructor(
    private readonly lister: () => Lister<T>,
    private readonly description: string,
  ) {}

  /** The assumed version while it is as new as the informer's, else the informer's. */
  get(key: string): T | undefined {
    const api = this.lister().get(key);
    const a = this.assumed.get(key);
    if (!a) return api;
    if (!api || compareVersions(api, a) > 0) {
      this.assumed.delete(key);
      return api;
    }
    return a;
  }

  list(): T[] {
    if (!this.assumed.size) return this.lister().list();
    return this.lister()
      .list()
      .map((o) => this.get(keyOf(o)) ?? o);
  }

  /** The informer's object, never an assumed one (what PreBind checks against). */
  getAPI(key: string): T | undefined {
    return this.lister().get(key);
  }

  /** Overlays `obj`; throws when the object is gone or the informer already holds a newer version. */
  assume(obj: T): void {
    const key = keyOf(obj);
    const current = this.get(key);
    if (!current) throw new Error(`${this.description} "${key}" not found`);
    if (compareVersions(obj, current) < 0) {
      throw new Error(`${this.description} "${key}" is out of sync (stored: ${current.metadata.resourceVersion}, assume: ${obj.metadata.resourceVersion})`);
    }
    this.assumed.set(key, obj);
  }

  restore(key: string): void {
    this.assumed.delete(key);
  }

  get assumedCount(): number {
    return this.assumed.size;
  }
}
