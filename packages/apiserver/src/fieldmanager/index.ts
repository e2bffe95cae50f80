/**
 * Field management (k8s.io/apiserver pkg/endpoints/handlers/fieldmanager):
 * `metadata.managedFields` records which manager set which fields.
 *
 * - Update (create, update, patch): the fields that changed pass to the writing
 *   manager's `Update` entry and leave everyone else's; removed fields leave all.
 * - Apply (`application/apply-patch+yaml`): the applied configuration is merged
 *   into the live object (structs and maps by field, associative lists by key,
 *   sets by value, atomic lists replaced). Fields another manager owns with a
 *   different value are conflicts — 409 unless `force`, which takes them over.
 *   Fields the manager applied before and no longer applies are removed unless
 *   someone else owns them. The manager's `Apply` entry becomes exactly the
 *   applied set.
 */
import type { KubeObject } from '@kubeling/api';
import { failure, isPlainObject, jsonEqual, rfc3339, type StatusError } from '@kubeling/apimachinery';
import { collect, FieldSet, itemElement, listShape, pathKey, pathString, removePath, type Path, type SchemaNode } from './fieldset.js';

type Obj = Record<string, unknown>;

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
  changed: boolean;
}

/** What a write is: who, through which subresource, which fields it may touch. */
export interface FieldContext {
  manager: string;
  apiVersion: string;
  subresource?: string;
  schema: SchemaNode | undefined;
  /** Whether the resource has a status subresource (main writes then leave status alone). */
  statusSubresource: boolean;
}

const IGNORED_META = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'selfLink',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generateName',
];

/** The part of an object whose fields are tracked for this kind of write. */
function tracked(obj: KubeObject | Obj | undefined, ctx: FieldContext): Obj {
  if (!obj) return {};
  const o: Obj = { ...(obj as Obj) };
  delete o.apiVersion;
  delete o.kind;
  if (ctx.subresource === 'status') return o.status === undefined ? {} : { status: o.status };
  if (ctx.statusSubresource) delete o.status;
  if (isPlainObject(o.metadata)) {
    const m: Obj = { ...(o.metadata as Obj) };
    for (const k of IGNORED_META) delete m[k];
    if (Object.keys(m).length) o.metadata = m;
    else delete o.metadata;
  }
  return o;
}

function decode(mf: unknown): Entry[] {
  if (!Array.isArray(mf)) return [];
  return mf
    .filter((e): e is ManagedFieldsEntry => isPlainObject(e) && typeof (e as Obj).manager === 'string')
    .map((e) => ({
      manager: e.manager,
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: e.apiVersion ?? '',
      ...(e.time ? { time: e.time } : {}),
      ...(e.subresource ? { subresource: e.subresource } : {}),
      set: FieldSet.fromFieldsV1(e.fieldsV1),
      changed: false,
    }));
}

function encode(entries: Entry[]): ManagedFieldsEntry[] | undefined {
  const out = entries
    .filter((e) => e.set.size > 0)
    .map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time ? { time: e.time } : {}),
      fieldsType: 'FieldsV1' as const,
      fieldsV1: e.set.toFieldsV1(),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
  return out.length ? out : undefined;
}

function entryFor(entries: Entry[], ctx: FieldContext, operation: 'Apply' | 'Update'): Entry {
  let e = entries.find((x) => x.manager === ctx.manager && x.operation === operation && (x.subresource ?? '') === (ctx.subresource ?? ''));
  if (!e) {
    e = {
      manager: ctx.manager,
      operation,
      apiVersion: ctx.apiVersion,
      set: new FieldSet(),
      changed: true,
      ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
    };
    entries.push(e);
  }
  return e;
}

function finish(entries: Entry[], now: string): ManagedFieldsEntry[] | undefined {
  for (const e of entries) if (e.changed) e.time = now;
  return encode(entries);
}

/** managedFields after a create or an update by `ctx.manager` (operation Update). */
export function trackUpdate(old: KubeObject | undefined, next: KubeObject, ctx: FieldContext): ManagedFieldsEntry[] | undefined {
  const after = collect(tracked(next, ctx), ctx.schema);
  if (!old) {
    // A create: every field is the creator's.
    if (!after.set.size) return undefined;
    const entries: Entry[] = [];
    const mine = entryFor(entries, ctx, 'Update');
    mine.set = after.set;
    return finish(entries, rfc3339());
  }
  const before = collect(tracked(old, ctx), ctx.schema);
  const changed = new FieldSet();
  for (const p of after.set) {
    const k = pathKey(p);
    if (!before.set.has(p)) changed.add(p);
    else if (after.leaves.has(k) && !jsonEqual(after.leaves.get(k), before.leaves.get(k))) changed.add(p);
  }
  const removed = before.set.difference(after.set);
  const entries = decode(old?.metadata.managedFields);
  if (!changed.size && !removed.size) return encode(entries);
  for (const e of entries) {
    for (const p of [...removed, ...changed]) {
      if (e.set.has(p)) {
        e.set.delete(p);
        e.changed = true;
      }
    }
  }
  if (changed.size) {
    const mine = entryFor(entries, ctx, 'Update');
    for (const p of changed) mine.set.add(p);
    mine.apiVersion = ctx.apiVersion;
    mine.changed = true;
  }
  return finish(entries, rfc3339());
}

// ---- apply -----------------------------------------------------------------------

function childSchema(s: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (!s) return undefined;
  if (s.properties?.[key]) return s.properties[key];
  if (isPlainObject(s.additionalProperties)) return s.additionalProperties as SchemaNode;
  return undefined;
}

/** Merges an applied configuration into the live value, following the schema. */
export function mergeApplied(live: unknown, applied: unknown, schema: SchemaNode | undefined): unknown {
  if (applied === null) return undefined;
  if (isPlainObject(applied)) {
    if (!isPlainObject(live) || schema?.['x-kubernetes-map-type'] === 'atomic' || schema?.anyOf) return structuredClone(applied);
    const out: Obj = { ...(live as Obj) };
    for (const [k, v] of Object.entries(applied as Obj)) {
      const merged = mergeApplied(out[k], v, childSchema(schema, k));
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
    return out;
  }
  if (Array.isArray(applied)) {
    const shape = listShape(schema);
    if (!Array.isArray(live) || shape.type === 'atomic') return structuredClone(applied);
    if (shape.type === 'set') {
      const out = [...live];
      for (const v of applied) if (!out.some((x) => jsonEqual(x, v))) out.push(structuredClone(v));
      return out;
    }
    const out = [...live];
    for (const item of applied) {
      const el = itemElement(item, shape.keys, schema?.items);
      const idx = el ? out.findIndex((x) => itemElement(x, shape.keys, schema?.items) === el) : -1;
      if (idx >= 0) out[idx] = mergeApplied(out[idx], item, schema?.items);
      else out.push(structuredClone(item));
    }
    return out;
  }
  return applied;
}

export interface Conflict {
  manager: string;
  description: string;
  path: Path;
}

function managerDescription(e: Entry): string {
  let m = JSON.stringify(e.manager);
  if (e.subresource) m = `${m} with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Apply') return m;
  return e.time ? `${m} using ${e.apiVersion} at ${e.time}` : `${m} using ${e.apiVersion}`;
}

/** 409 Conflict with the message and causes upstream's apply gives. */
export function conflictError(conflicts: Conflict[]): StatusError {
  const n = conflicts.length;
  let detail: string;
  if (n === 1) detail = `conflict with ${conflicts[0]!.description}: ${pathString(conflicts[0]!.path)}`;
  else {
    const by = new Map<string, Path[]>();
    for (const c of conflicts) (by.get(c.description) ?? by.set(c.description, []).get(c.description)!).push(c.path);
    detail = [...by.keys()]
      .sort()
      .flatMap((m) => [`conflicts with ${m}:`, ...by.get(m)!.map((p) => `- ${pathString(p)}`)])
      .join('\n');
  }
  return failure('Conflict', `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${detail}`, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.description}`, field: pathString(c.path) })),
  });
}

/**
 * Server-side apply of `applied` by `ctx.manager` onto `live` (undefined when
 * creating). Returns the merged object with its managedFields.
 */
export function apply(live: KubeObject | undefined, applied: KubeObject, ctx: FieldContext, force: boolean): KubeObject {
  const appliedTracked = tracked(applied, ctx);
  const ours = collect(appliedTracked, ctx.schema);
  const liveC = collect(tracked(live, ctx), ctx.schema);
  const entries = decode(live?.metadata.managedFields);
  const conflicts: Conflict[] = [];
  for (const e of entries) {
    if (e.manager === ctx.manager && e.operation === 'Apply') continue;
    for (const p of ours.set) {
      const k = pathKey(p);
      if (!ours.leaves.has(k) || !e.set.has(p)) continue;
      if (!jsonEqual(ours.leaves.get(k), liveC.leaves.get(k))) conflicts.push({ manager: e.manager, description: managerDescription(e), path: p });
    }
  }
  if (conflicts.length && !force) throw conflictError(conflicts);
  for (const c of conflicts) {
    for (const e of entries) {
      if (e.manager === c.manager && !(e.manager === ctx.manager && e.operation === 'Apply') && e.set.has(c.path)) {
        e.set.delete(c.path);
        e.changed = true;
      }
    }
  }
  const base: Obj = live ? structuredClone(live) : { apiVersion: applied.apiVersion, kind: applied.kind, metadata: {} };
  const merged = mergeApplied(base, applied, ctx.schema) as KubeObject;
  merged.metadata = { ...(merged.metadata ?? {}) };
  if (live) {
    if (live.apiVersion !== undefined) merged.apiVersion = live.apiVersion;
    if (live.kind !== undefined) merged.kind = live.kind;
  }
  // What this manager applied before and no longer does goes, unless someone else holds it.
  const mine = entryFor(entries, ctx, 'Apply');
  const others = entries.filter((e) => e !== mine).reduce((s, e) => s.union(e.set), new FieldSet());
  const candidates = [...mine.set.difference(ours.set)].filter((p) => !others.hasPrefix(p) && !ours.set.hasPrefix(p));
  // Removing an item or map removes what is under it: drop only the outermost paths.
  const outer = FieldSet.of(candidates);
  const dropped = candidates.filter((p) => !p.some((_, i) => i > 0 && outer.has(p.slice(0, i))));
  const trackedRoot = merged as unknown as Obj;
  for (const p of dropped) removePath(trackedRoot, p);
  if (!mine.set.size || [...mine.set].length !== ours.set.size || mine.set.difference(ours.set).size) mine.changed = true;
  mine.set = ours.set;
  mine.apiVersion = ctx.apiVersion;
  const mf = finish(entries, rfc3339());
  if (mf) merged.metadata.managedFields = mf as never;
  else delete merged.metadata.managedFields;
  return merged;
}

/** The default manager name for a request without `fieldManager`: the user agent up to its first '/'. */
export function managerFromUserAgent(ua: string | undefined): string {
  const s = (ua ?? '').split('/')[0]!.trim();
  return s.length > 128 ? s.slice(0, 128) : s || 'unknown';
}
