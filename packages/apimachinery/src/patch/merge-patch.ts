/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces. */
import { isPlainObject, jsonEqual } from '../util.js';

export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(doc) ? structuredClone(doc) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** The merge patch that turns `original` into `modified`. */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isPlainObject(original) || !isPlainObject(modified)) return structuredClone(modified);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(original)) if (!(k in modified)) out[k] = null;
  for (const [k, v] of Object.entries(modified)) {
    if (!(k in original)) out[k] = structuredClone(v);
    else if (!jsonEqual(original[k], v)) out[k] = isPlainObject(v) && isPlainObject(original[k]) ? createMergePatch(original[k], v) : structuredClone(v);
  }
  return out;
}
