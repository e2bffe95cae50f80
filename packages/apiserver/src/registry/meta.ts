/**
 * The metadata fields only the server sets, and what tells one stored object
 * from another (kubernetes/apiserver pkg/registry/rest/meta.go
 * FillObjectMetaSystemFields and the update rules of rest/update.go).
 *
 * A client's values for uid, creationTimestamp, deletion fields, generation and
 * selfLink are never taken: on create they are filled in, on update carried
 * over from the stored object.
 */
import { randomUUID } from 'node:crypto';
import { wire, type KubeObject } from '@kubeling/api';
import { failure, rfc3339 } from '@kubeling/apimachinery';

/** Sets a new object's system fields; `generation` is 1 where the resource keeps one. */
export function fillSystemFields(obj: KubeObject, generation: boolean): void {
  const meta = obj.metadata;
  meta.uid = randomUUID();
  meta.creationTimestamp = rfc3339();
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.resourceVersion;
  delete meta.selfLink;
  if (generation) meta.generation = 1;
  else delete meta.generation;
}

/**
 * Carries the stored object's system fields over to an update. Refuses (403)
 * new finalizers on an object being deleted: they may only be removed then.
 */
export function keepSystemMeta(obj: KubeObject, old: KubeObject): void {
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
      throw failure(
        'Forbidden',
        `${old.kind ?? 'object'} "${o.name}" is forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      );
    }
  }
}

/** The object without type meta and resourceVersion: equal ones make an update a no-op. */
export function stripRV(o: KubeObject): unknown {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  const { resourceVersion: _rv, ...meta } = o.metadata ?? {};
  return { ...rest, metadata: meta };
}

/**
 * Everything but metadata and status, as Go holds it (a zero non-pointer field
 * and an absent one are the same value): what bumps `generation`.
 */
export function specOf(o: KubeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(wire.toGoJson(o))) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') out[k] = v;
  return out;
}
