/**
 * Client-side apply: the manifest is remembered in the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation, and the change
 * sent is a three-way JSON merge patch — what the manifest sets that the live
 * object lacks or differs in, plus deletions (null) of what the previous
 * manifest set and this one no longer does. Fields other writers added and no
 * manifest ever mentioned are left alone.
 */
import { asObject, isObject, type JsonObject } from '../json.js';
import { jsonpath } from '@kubeling/apimachinery';

const { goJSON } = jsonpath;

/** A manifest carrying the last-applied annotation: its metadata and annotations are objects. */
export interface AnnotatedManifest extends JsonObject {
  metadata: JsonObject & { annotations: JsonObject };
}

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Whether `cur` already says everything `want` says (server defaults may add more). */
function covers(want: unknown, cur: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(cur) && cur.length === want.length && want.every((w, i) => covers(w, cur[i]));
  if (isObject(want)) return isObject(cur) && Object.entries(want).every(([k, v]) => covers(v, cur[k]));
  return JSON.stringify(want) === JSON.stringify(cur);
}

/** The patch taking `current` to `modified`, deleting what `original` had and `modified` dropped. */
export function threeWayMergePatch(original: JsonObject | undefined, modified: JsonObject, current: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [k, v] of Object.entries(modified)) {
    const cur = current?.[k];
    if (isObject(v) && isObject(cur)) {
      const sub = threeWayMergePatch(asObject(original?.[k]), v, cur);
      if (Object.keys(sub).length) patch[k] = sub;
    } else if (!covers(v, cur) || (Array.isArray(v) && original && k in original && !deepEqual(original[k], v))) {
      // A list the last manifest had differently is sent whole, so what left its items goes too.
      patch[k] = v;
    }
  }
  for (const k of Object.keys(original ?? {})) {
    if (!(k in modified) && current && k in current) patch[k] = null;
  }
  return patch;
}

/** The manifest as kubectl stores it in the annotation: keys sorted, the annotation itself left out (an empty map stays). */
export function lastApplied(manifest: JsonObject): string {
  const copy = structuredClone(manifest);
  const meta = asObject(copy.metadata);
  const annotations = { ...asObject(meta?.annotations) };
  delete annotations[LAST_APPLIED];
  copy.metadata = { ...meta, annotations };
  return goJSON(copy);
}

/** The manifest with its own last-applied annotation, as kubectl sends it. */
export function withAnnotation(manifest: JsonObject): AnnotatedManifest {
  const out = structuredClone(manifest);
  const meta = asObject(out.metadata);
  return Object.assign(out, { metadata: { ...meta, annotations: { ...asObject(meta?.annotations), [LAST_APPLIED]: lastApplied(manifest) + '\n' } } });
}

/** Equal as JSON values: maps whatever their key order, lists item by item. */
const deepEqual = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) || isObject(b))
    return isObject(a) && isObject(b) && Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => k in b && deepEqual(a[k], b[k]));
  return a === b;
};

/** The JSON merge patch taking `from` to `to` exactly: changed values, removed keys as null, lists whole. */
export function twoWayMergePatch(from: JsonObject, to: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [k, v] of Object.entries(to)) {
    const was = from[k];
    if (isObject(v) && isObject(was)) {
      const sub = twoWayMergePatch(was, v);
      if (Object.keys(sub).length) patch[k] = sub;
    } else if (!deepEqual(v, was)) patch[k] = v;
  }
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  return patch;
}
