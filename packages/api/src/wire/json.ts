/**
 * JSON as Go's encoding/json writes an API object: keys in Go struct order
 * (TypeMeta's `kind` before `apiVersion`, a Status's `code` last), fields
 * without `omitempty` present even when zero (`numberReady: 0`, `null` for a
 * nil pointer, slice or map, a zero metav1.Time as `null`), `omitempty` fields
 * dropped when Go finds them empty (a struct never is), map keys sorted. Keys
 * the tables do not know are kept, after the known ones. Values of an
 * unexpected JSON type are left as they are.
 *
 * One pass, copying: the input is not changed.
 */
import type { WireField, WireStruct, WireType } from './model.js';
import { kindStruct, wireStruct } from './registry.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Plan {
  fields: readonly WireField[];
  known: ReadonlySet<string>;
}

const plans = new Map<string, Plan>();

/** The JSON fields of a struct in order, embedded structs' fields in their place. */
function planOf(st: WireStruct): Plan {
  let p = plans.get(st.key);
  if (!p) {
    const fields: WireField[] = [];
    const add = (s: WireStruct) => {
      for (const f of s.fields) {
        if (f.noJson) continue;
        const inner = f.inline && f.type.k === 'struct' ? wireStruct(f.type.name) : undefined;
        if (inner) add(inner);
        else fields.push(f);
      }
    };
    add(st);
    p = { fields, known: new Set(fields.map((f) => f.json)) };
    plans.set(st.key, p);
  }
  return p;
}

/** What Go writes for a field it holds the zero value of (a zero struct: shared and frozen). */
export function zeroOf(f: Pick<WireField, 'ptr' | 'type'>): unknown {
  if (f.ptr) return null;
  const t = f.type;
  switch (t.k) {
    case 'scalar':
      return t.s === 'string' ? '' : t.s === 'bool' ? false : t.s === 'bytes' || t.s === 'any' ? null : 0;
    case 'special':
      return t.s === 'Quantity' ? '0' : t.s === 'IntOrString' ? 0 : t.s === 'Duration' ? '0s' : null;
    case 'struct':
      return zeroStruct(t.name);
    default:
      return null;
  }
}

const zeros = new Map<string, Obj>();

/** What Go writes for a zero struct (computed once per struct; frozen, shared by every answer). */
function zeroStruct(name: string): Obj {
  let z = zeros.get(name);
  if (!z) {
    const st = wireStruct(name);
    z = deepFreeze(st ? struct({}, st) : {});
    zeros.set(name, z);
  }
  return z;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** Go's isEmptyValue for an omitempty field (structs, Time and Quantity among them, are never empty). */
function isEmpty(v: unknown, f: WireField): boolean {
  const t = f.type;
  if (!f.ptr && (t.k === 'struct' || t.k === 'special')) return false;
  if (v === null || v === undefined) return true;
  if (f.ptr) return false;
  if (t.k === 'scalar') return v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
  if (t.k === 'slice' || t.k === 'wrapper') return Array.isArray(v) && v.length === 0;
  if (t.k === 'map') return isObj(v) && Object.keys(v).length === 0;
  return false;
}

function value(v: unknown, t: WireType, ptr: boolean): unknown {
  switch (t.k) {
    case 'struct': {
      if (v === null) return ptr ? null : zeroStruct(t.name);
      if (!isObj(v)) return v;
      const st = wireStruct(t.name);
      return st ? struct(v, st) : v;
    }
    case 'slice':
    case 'wrapper':
      return Array.isArray(v) ? v.map((x) => value(x, t.of, false)) : v;
    case 'map': {
      if (!isObj(v)) return v;
      const out: Obj = {};
      for (const k of Object.keys(v).sort()) out[k] = value(v[k], t.of, false);
      return out;
    }
    case 'special':
      if (t.s === 'Quantity' && typeof v === 'number') return String(v);
      // An object in a RawExtension (a Table row's object, a ControllerRevision's data) is written by Go too.
      if (t.s === 'RawExtension') return toGoJson(v);
      return v;
    default:
      return v;
  }
}

function struct(obj: Obj, st: WireStruct): Obj {
  const plan = planOf(st);
  const out: Obj = {};
  for (const f of plan.fields) {
    const v = obj[f.json];
    const x = v === undefined ? zeroOf(f) : value(v, f.type, f.ptr);
    if (f.omitempty && isEmpty(x, f)) continue;
    out[f.json] = x;
  }
  for (const k of Object.keys(obj)) if (!plan.known.has(k)) out[k] = obj[k];
  return out;
}

/** `obj` as Go writes a value of struct `st`. */
export function goJson(obj: unknown, st: WireStruct): unknown {
  return isObj(obj) ? struct(obj, st) : obj;
}

/** An object (or list, or Status) as Go writes it, by its apiVersion and kind; unchanged when the tables do not know its kind. */
export function toGoJson<T>(obj: T): T {
  if (!isObj(obj) || typeof obj.kind !== 'string') return obj;
  const st = kindStruct(typeof obj.apiVersion === 'string' ? obj.apiVersion : '', obj.kind);
  return st ? (struct(obj, st) as T) : obj;
}
