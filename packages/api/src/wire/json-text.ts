/**
 * The JSON text Go writes for an API object, written directly (no copy of the
 * object is built): the same rules as json.ts `toGoJson`, whose
 * `JSON.stringify` this equals, at about the cost of a plain `JSON.stringify`.
 * Each struct's plan is computed once: its fields' quoted keys, and the text
 * written for an absent field (undefined: nothing is written).
 */
import type { WireField, WireStruct, WireType } from './model.js';
import { zeroOf } from './json.js';
import { kindStruct, wireStruct } from './registry.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface FieldPlan {
  json: string;
  /** `"json":` */
  key: string;
  f: WireField;
  /** The text of an absent field; undefined when nothing is written. */
  absent: string | undefined;
  /** omitempty of a kind Go can find empty (not a struct). */
  omitEmpty: boolean;
}

interface TextPlan {
  fields: FieldPlan[];
  known: Set<string>;
}

const plans = new Map<string, TextPlan>();

function planOf(st: WireStruct): TextPlan {
  let p = plans.get(st.key);
  if (p) return p;
  const fields: FieldPlan[] = [];
  const add = (s: WireStruct) => {
    for (const f of s.fields) {
      if (f.noJson) continue;
      const inner = f.inline && f.type.k === 'struct' ? wireStruct(f.type.name) : undefined;
      if (inner) {
        add(inner);
        continue;
      }
      const canBeEmpty = f.ptr || (f.type.k !== 'struct' && f.type.k !== 'special');
      const omitEmpty = f.omitempty && canBeEmpty;
      fields.push({ json: f.json, key: `${JSON.stringify(f.json)}:`, f, absent: omitEmpty ? undefined : JSON.stringify(zeroOf(f)), omitEmpty });
    }
  };
  p = { fields, known: new Set() };
  plans.set(st.key, p);
  add(st);
  for (const f of p.fields) p.known.add(f.json);
  return p;
}

/** Go's isEmptyValue of a present value (for fields that can be empty), as json.ts judges it. */
function empty(v: unknown, f: WireField): boolean {
  if (v === null) return true;
  if (f.ptr) return false;
  const k = f.type.k;
  if (k === 'scalar') return v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
  if (k === 'slice' || k === 'wrapper') return Array.isArray(v) && v.length === 0;
  return k === 'map' && isObj(v) && Object.keys(v).length === 0;
}

function structText(obj: Obj, st: WireStruct): string {
  const plan = planOf(st);
  let s = '{';
  let sep = '';
  for (const p of plan.fields) {
    const v = obj[p.json];
    let text: string | undefined;
    if (v === undefined) text = p.absent;
    else if (p.omitEmpty && empty(v, p.f)) continue;
    else text = valueText(v, p.f.type, p.f.ptr);
    if (text === undefined) continue;
    s += sep + p.key + text;
    sep = ',';
  }
  for (const k in obj) {
    if (plan.known.has(k) || !Object.hasOwn(obj, k)) continue;
    const text = JSON.stringify(obj[k]);
    if (text === undefined) continue;
    s += `${sep}${JSON.stringify(k)}:${text}`;
    sep = ',';
  }
  return `${s}}`;
}

function valueText(v: unknown, t: WireType, ptr: boolean): string {
  switch (t.k) {
    case 'struct': {
      if (isObj(v)) {
        const st = wireStruct(t.name);
        return st ? structText(v, st) : JSON.stringify(v);
      }
      if (v === null && !ptr) return JSON.stringify(zeroOf({ ptr: false, type: t }));
      return JSON.stringify(v);
    }
    case 'slice':
    case 'wrapper': {
      if (!Array.isArray(v)) return JSON.stringify(v);
      let s = '[';
      for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + (v[i] === undefined ? 'null' : valueText(v[i], t.of, false));
      return `${s}]`;
    }
    case 'map': {
      if (!isObj(v)) return JSON.stringify(v);
      let s = '{';
      let sep = '';
      for (const k of Object.keys(v).sort()) {
        const x = v[k];
        if (x === undefined) continue;
        s += `${sep}${JSON.stringify(k)}:${valueText(x, t.of, false)}`;
        sep = ',';
      }
      return `${s}}`;
    }
    case 'special':
      if (t.s === 'Quantity' && typeof v === 'number') return JSON.stringify(String(v));
      if (t.s === 'RawExtension') return goJsonText(v);
      return JSON.stringify(v) ?? 'null';
    default:
      return JSON.stringify(v) ?? 'null';
  }
}

/** `JSON.stringify(toGoJson(obj))`, faster: an object by its apiVersion and kind as Go writes it; plain JSON for a kind the tables do not know. */
export function goJsonText(obj: unknown): string {
  if (isObj(obj) && typeof obj.kind === 'string') {
    const st = kindStruct(typeof obj.apiVersion === 'string' ? obj.apiVersion : '', obj.kind);
    if (st) return structText(obj, st);
  }
  return JSON.stringify(obj) ?? 'null';
}
