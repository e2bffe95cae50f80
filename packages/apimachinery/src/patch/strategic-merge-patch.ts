/**
 * Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), driven by
 * the schema's `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy`:
 * lists with a merge key merge element by element, primitive lists with strategy
 * merge merge as sets; directives `$patch` (replace, delete, merge), `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured and
 * never left in the result. Fields without schema merge like a JSON merge patch.
 */
import { isPlainObject, jsonEqual } from '../util.js';
import { PatchError } from './json-patch.js';

export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  patternProperties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  [k: string]: unknown;
}

type Obj = Record<string, unknown>;

function childSchema(s: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (!s) return undefined;
  if (s.properties?.[key]) return s.properties[key];
  if (s.patternProperties) return Object.values(s.patternProperties)[0];
  if (isPlainObject(s.additionalProperties)) return s.additionalProperties as SchemaNode;
  return undefined;
}

const strategyOf = (s: SchemaNode | undefined) => (s?.['x-kubernetes-patch-strategy'] ?? '').split(',');

function mergeMap(original: Obj, patch: Obj, schema: SchemaNode | undefined): Obj {
  const p = { ...patch };
  const directive = p.$patch;
  delete p.$patch;
  if (directive === 'replace') return stripDirectives(p, schema) as Obj;
  if (directive === 'delete') return {};
  let out: Obj = structuredClone(original);
  const retain = p.$retainKeys;
  delete p.$retainKeys;
  if (Array.isArray(retain)) {
    const keep = new Set(retain as string[]);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  // Order directives and primitive deletions are handled alongside their lists.
  const orders: Record<string, unknown[]> = {};
  const deletions: Record<string, unknown[]> = {};
  for (const k of Object.keys(p)) {
    if (k.startsWith('$setElementOrder/')) {
      orders[k.slice('$setElementOrder/'.length)] = p[k] as unknown[];
      delete p[k];
    } else if (k.startsWith('$deleteFromPrimitiveList/')) {
      deletions[k.slice('$deleteFromPrimitiveList/'.length)] = p[k] as unknown[];
      delete p[k];
    } else if (k.startsWith('$')) {
      throw new PatchError(`unknown patch directive ${k}`);
    }
  }
  for (const [k, v] of Object.entries(p)) {
    const cs = childSchema(schema, k);
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v)) out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as unknown[]) : [], v, cs, orders[k]);
    else if (isPlainObject(v)) out[k] = isPlainObject(out[k]) ? mergeMap(out[k] as Obj, v, cs) : stripDirectives(v, cs);
    else out[k] = v;
  }
  for (const [k, del] of Object.entries(deletions)) {
    if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).filter((x) => !del.some((d) => jsonEqual(d, x)));
  }
  for (const [k, order] of Object.entries(orders)) {
    if (!(k in p) && Array.isArray(out[k])) out[k] = reorder(out[k] as unknown[], order, childSchema(schema, k));
  }
  return out;
}

function reorder(list: unknown[], order: unknown[], schema: SchemaNode | undefined): unknown[] {
  const key = schema?.['x-kubernetes-patch-merge-key'];
  const idOf = (x: unknown) => (key && isPlainObject(x) ? JSON.stringify(x[key]) : JSON.stringify(x));
  const pos = new Map(order.map((o, i) => [idOf(o), i]));
  const listed = list.filter((x) => pos.has(idOf(x))).sort((a, b) => pos.get(idOf(a))! - pos.get(idOf(b))!);
  const rest = list.filter((x) => !pos.has(idOf(x)));
  return [...listed, ...rest];
}

function mergeList(original: unknown[], patch: unknown[], schema: SchemaNode | undefined, order: unknown[] | undefined): unknown[] {
  const strategy = strategyOf(schema);
  const key = schema?.['x-kubernetes-patch-merge-key'];
  const itemSchema = schema?.items;
  if (!strategy.includes('merge')) {
    // replace, unless a $patch: replace element asks for exactly that
    return patch.filter((x) => !(isPlainObject(x) && x.$patch === 'replace' && Object.keys(x).length === 1)).map((x) => stripDirectives(x, itemSchema));
  }
  if (!key) {
    // primitive set merge
    const out = [...original];
    for (const v of patch) if (!out.some((x) => jsonEqual(x, v))) out.push(v);
    return order ? reorder(out, order, schema) : out;
  }
  if (patch.some((x) => isPlainObject(x) && x.$patch === 'replace')) {
    return patch.filter((x) => !(isPlainObject(x) && x.$patch === 'replace')).map((x) => stripDirectives(x, itemSchema));
  }
  const out = structuredClone(original);
  for (const el of patch) {
    if (!isPlainObject(el)) throw new PatchError(`found non-map element in a list with merge key ${key}`);
    const id = el[key];
    const idx = out.findIndex((x) => isPlainObject(x) && jsonEqual(x[key], id));
    if (el.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = mergeMap(out[idx] as Obj, el, itemSchema);
    else out.push(stripDirectives(el, itemSchema));
  }
  return order ? reorder(out, order, schema) : out;
}

/** Removes `$` directives from a value that is taken whole. */
function stripDirectives(v: unknown, schema: SchemaNode | undefined): unknown {
  if (Array.isArray(v)) return v.map((x) => stripDirectives(x, schema?.items));
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (x === null) continue;
    out[k] = stripDirectives(x, childSchema(schema, k));
  }
  return out;
}

export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema: SchemaNode | undefined): unknown {
  if (!isPlainObject(patch)) throw new PatchError('strategic merge patch must be a JSON object');
  return mergeMap(isPlainObject(doc) ? doc : {}, patch, schema);
}
