/**
 * Pruning of fields a structural schema does not specify
 * (apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm.go
 * `PruneWithOptions`, with the unknown-field paths of schema/options.go).
 *
 * Guarantees, as upstream:
 * - an object keeps the fields in `properties`; other fields are kept (and
 *   pruned by `additionalProperties`' schema) when `additionalProperties` is
 *   set, and dropped otherwise;
 * - under `x-kubernetes-preserve-unknown-fields: true` unknown fields stay,
 *   but specified fields below are still pruned by their schema;
 * - `apiVersion`, `kind` and `metadata` are never touched at an embedded
 *   resource (`x-kubernetes-embedded-resource`) nor at the resource root
 *   (`isResourceRoot`);
 * - without a schema everything inside objects is dropped;
 * - the removed fields come back as paths (`spec.foo`, `spec.list[0].bar`),
 *   sorted byte-wise, as the `unknown field "spec.foo"` warnings and strict
 *   field validation errors print them.
 * It mutates `obj` in place.
 */
import type { JSONSchemaProps } from '../types.js';
import { itemsSchema } from './structural.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const withKey = (parent: string, k: string): string => (parent ? `${parent}.${k}` : k);

/** additionalProperties' schema when set; `null` when set without a schema (`true`/`false`); undefined when absent. */
function additional(s: JSONSchemaProps): JSONSchemaProps | null | undefined {
  const ap = s.additionalProperties;
  if (ap === undefined) return undefined;
  return typeof ap === 'object' ? ap : null;
}

const propOf = (s: JSONSchemaProps, k: string): JSONSchemaProps | undefined => (s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined);

function pruneValue(x: unknown, s: JSONSchemaProps | undefined, path: string, out: string[]): void {
  if (s?.['x-kubernetes-preserve-unknown-fields']) return skipPrune(x, s, path, out);
  if (Array.isArray(x)) {
    const items = s ? itemsSchema(s) : undefined;
    x.forEach((v, i) => pruneValue(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(x)) return;
  if (!s) {
    for (const k of Object.keys(x)) {
      out.push(withKey(path, k));
      delete x[k];
    }
    return;
  }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const ap = additional(s);
  for (const k of Object.keys(x)) {
    if (embedded && META_FIELDS.has(k)) continue;
    const prop = propOf(s, k);
    if (prop) pruneValue(x[k], prop, withKey(path, k), out);
    else if (ap !== undefined) pruneValue(x[k], ap ?? undefined, withKey(path, k), out);
    else {
      if (!META_FIELDS.has(k) || path !== '') out.push(withKey(path, k));
      delete x[k];
    }
  }
}

function skipPrune(x: unknown, s: JSONSchemaProps, path: string, out: string[]): void {
  if (Array.isArray(x)) {
    const items = itemsSchema(s);
    if (items) x.forEach((v, i) => skipPrune(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(x)) return;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const ap = additional(s);
  for (const k of Object.keys(x)) {
    if (embedded && META_FIELDS.has(k)) continue;
    const prop = propOf(s, k);
    if (prop) pruneValue(x[k], prop, withKey(path, k), out);
    else if (ap !== undefined) pruneValue(x[k], ap ?? undefined, withKey(path, k), out);
  }
}

/**
 * Removes from `obj` the fields `schema` does not specify and returns their
 * paths (sorted). With `isResourceRoot` the root is treated as an embedded
 * resource, so its apiVersion/kind/metadata stay.
 */
export function prune(obj: unknown, schema: JSONSchemaProps | undefined, opts: { isResourceRoot: boolean }): string[] {
  let s = schema;
  if (opts.isResourceRoot && !s?.['x-kubernetes-embedded-resource']) s = { ...(s ?? {}), 'x-kubernetes-embedded-resource': true };
  const out: string[] = [];
  pruneValue(obj, s, '', out);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
