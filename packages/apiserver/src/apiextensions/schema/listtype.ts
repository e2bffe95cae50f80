/**
 * The uniqueness invariants of `x-kubernetes-list-type: set` and `map`
 * lists (apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go
 * `ValidateListSetsAndMaps`).
 *
 * - A set reports `Duplicate value: <item>` at the second occurrence of each
 *   repeated item (once per distinct item).
 * - A map list requires objects (`must be an object for an array of
 *   list-type map`) and reports the key tuple of a repeated entry as
 *   `Duplicate value: map[string]interface {}{"name":"a"}`; a missing key
 *   counts as its own value.
 * Paths are `spec.list[1]`, map keys `spec.m[k]`, prefixed by `fldPath`.
 */
import { type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { jsonBadValue } from './gofmt.js';

const { duplicate, invalid } = field;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const join = (p: string, name: string): string => (p ? `${p}.${name}` : name);

/** Go's json.Marshal of a decoded value (map keys sorted), for identity comparison. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v ?? null);
}

const UNSPECIFIED = Symbol('unspecifiedKeyValue');

/** Indices of the second occurrence of each repeated item. */
function nonUnique(items: readonly unknown[]): number[] {
  if (items.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  items.forEach((x, i) => {
    const key = x === UNSPECIFIED ? 'unspecified' : Array.isArray(x) || isObject(x) ? `c:${canonical(x)}` : `s:${typeof x}:${String(x)}`;
    const times = seen.get(key) ?? 0;
    seen.set(key, times + 1);
    if (times === 1) out.push(i);
  });
  return out;
}

function validateListMap(p: string, s: JSONSchemaProps, list: unknown[]): FieldError[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && x !== undefined && !isObject(x)) return [invalid(`${p}[${i}]`, jsonBadValue(x), 'must be an object for an array of list-type map')];
  }
  if (list.length <= 1) return [];
  const keyFields = s['x-kubernetes-list-map-keys'] ?? [];
  if (keyFields.length === 1) {
    const k = keyFields[0]!;
    const keys = list.map((x) => (isObject(x) && Object.hasOwn(x, k) ? x[k] : UNSPECIFIED));
    return nonUnique(keys).map((i) => duplicate(`${p}[${i}]`, jsonBadValue(keys[i] === UNSPECIFIED ? {} : { [k]: keys[i] })));
  }
  const keys = list.map((x) => {
    const key: Record<string, unknown> = {};
    if (isObject(x)) for (const f of keyFields) if (Object.hasOwn(x, f)) key[f] = x[f];
    return key;
  });
  return nonUnique(keys).map((i) => duplicate(`${p}[${i}]`, jsonBadValue(keys[i])));
}

function validateArray(p: string, s: JSONSchemaProps, list: unknown[]): FieldError[] {
  const errs: FieldError[] = [];
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'set') for (const i of nonUnique(list)) errs.push(duplicate(`${p}[${i}]`, jsonBadValue(list[i])));
  else if (lt === 'map') errs.push(...validateListMap(p, s, list));
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (items) list.forEach((v, i) => errs.push(...validateValue(`${p}[${i}]`, items, v)));
  return errs;
}

function validateValue(p: string, s: JSONSchemaProps, v: unknown): FieldError[] {
  if (Array.isArray(v)) return validateArray(p, s, v);
  if (isObject(v)) return validateListSetsAndMaps(s, v, p);
  return [];
}

/** ValidateListSetsAndMaps over an object and everything below it. */
export function validateListSetsAndMaps(s: JSONSchemaProps | undefined, obj: unknown, fldPath = ''): FieldError[] {
  if (!s || !isObject(obj)) return [];
  const errs: FieldError[] = [];
  const ap = s.additionalProperties;
  if (ap && typeof ap === 'object') for (const [k, v] of Object.entries(obj)) errs.push(...validateValue(`${fldPath}[${k}]`, ap, v));
  if (s.properties)
    for (const [k, v] of Object.entries(obj)) {
      const sub = s.properties[k];
      if (sub && Object.hasOwn(s.properties, k)) errs.push(...validateValue(join(fldPath, k), sub, v));
    }
  return errs;
}
