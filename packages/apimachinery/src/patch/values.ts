/**
 * JSON value helpers for the patch code. Patches and documents may be nested up
 * to 10,000 levels deep (the HTTP layer's decoder limit), deeper than V8's own
 * recursive helpers manage (`structuredClone` and `JSON.stringify` overflow the
 * stack a few thousand levels down), so everything here walks with an explicit
 * stack. `run` executes generator functions that `yield` the sub-computations
 * they would otherwise call recursively, so deep merges keep a flat native stack.
 */
import { goFloat } from '../field-errors.js';

type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const hasOwn = (o: object, k: string): boolean => Object.hasOwn(o, k);

/** Sets an own property, also for `__proto__` (plain assignment would change the prototype). */
export function setKey(o: Obj, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/** An own property's value, or undefined (never an inherited one such as `constructor`). */
export const own = (o: Obj, k: string): unknown => (hasOwn(o, k) ? o[k] : undefined);

/**
 * A deep copy of a JSON value. `dropMember(key, value)` leaves out object
 * members, `dropElement(value)` list elements, at every depth.
 */
export function cloneJson<T>(v: T, dropMember?: (k: string, x: unknown) => boolean, dropElement?: (x: unknown) => boolean): T {
  if (typeof v !== 'object' || v === null) return v;
  const root: unknown = Array.isArray(v) ? [] : {};
  const stack: [unknown, unknown][] = [[v, root]];
  while (stack.length) {
    const [src, dst] = stack.pop()!;
    if (Array.isArray(src)) {
      const d = dst as unknown[];
      for (const x of src) {
        if (dropElement?.(x)) continue;
        if (typeof x === 'object' && x !== null) {
          const c = Array.isArray(x) ? [] : {};
          d.push(c);
          stack.push([x, c]);
        } else d.push(x);
      }
    } else {
      const s = src as Obj;
      const d = dst as Obj;
      for (const k of Object.keys(s)) {
        const x = s[k];
        if (dropMember?.(k, x)) continue;
        if (typeof x === 'object' && x !== null) {
          const c = Array.isArray(x) ? [] : {};
          setKey(d, k, c);
          stack.push([x, c]);
        } else setKey(d, k, x);
      }
    }
  }
  return root as T;
}

/** Structural equality of JSON values (key order ignored, members holding undefined ignored). */
export function jsonEqualDeep(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (isObject(x)) {
      if (!isObject(y)) return false;
      const kx = Object.keys(x).filter((k) => x[k] !== undefined);
      const ky = Object.keys(y).filter((k) => y[k] !== undefined);
      if (kx.length !== ky.length) return false;
      for (const k of kx) {
        if (!hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
      continue;
    }
    return false;
  }
  return true;
}

/**
 * Go's `==` on two decoded JSON values held in `interface{}`: scalars compare by
 * value. (Go panics on maps and slices; here they compare structurally.)
 */
export const goEqual = (a: unknown, b: unknown): boolean =>
  a === b || (a === undefined && b === null) || (a === null && b === undefined) || (typeof a === 'object' && a !== null && jsonEqualDeep(a, b));

/** Length of the value's compact JSON as Go's encoding/json writes it (HTML characters escaped). */
export function jsonSize(v: unknown): number {
  let n = 0;
  const stack: unknown[] = [v];
  while (stack.length) {
    const x = stack.pop();
    if (Array.isArray(x)) {
      n += 2 + Math.max(0, x.length - 1);
      for (const e of x) stack.push(e);
    } else if (isObject(x)) {
      const keys = Object.keys(x).filter((k) => x[k] !== undefined);
      n += 2 + Math.max(0, keys.length - 1) + keys.length;
      for (const k of keys) {
        n += stringSize(k);
        stack.push(x[k]);
      }
    } else if (typeof x === 'string') n += stringSize(x);
    else n += String(JSON.stringify(x) ?? 'null').length;
  }
  return n;
}

const stringSize = (s: string) => JSON.stringify(s).length + 5 * (s.match(/[<>&\u2028\u2029]/g)?.length ?? 0);

/**
 * Runs a generator function that yields the generators it would otherwise call
 * recursively; each yield answers with the yielded generator's return value.
 * An error thrown anywhere ends the whole run.
 */
export function run<T>(g: Generator<unknown, T, unknown>): T {
  const stack: Generator<unknown, unknown, unknown>[] = [g];
  let input: unknown;
  for (;;) {
    const r = stack[stack.length - 1]!.next(input);
    if (r.done) {
      stack.pop();
      if (!stack.length) return r.value as T;
      input = r.value;
    } else {
      stack.push(r.value as Generator<unknown, unknown, unknown>);
      input = undefined;
    }
  }
}

// ---- Go's fmt, as upstream's error messages print decoded JSON ----

/** Byte order of the UTF-8 encodings, which is code point order (Go sorts map keys so). */
function compareBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

const INT64_LIMIT = 2 ** 63;

/** A number decoded the way upstream's decoder keeps it: integers as int64, the rest as float64. */
const isInt64 = (n: number) => Number.isInteger(n) && Math.abs(n) < INT64_LIMIT;

export { goFloat };

function goNumber(n: number): string {
  return isInt64(n) ? BigInt(n).toString() : goFloat(n);
}

/** Go's reflect type name of a decoded JSON value (`%!s(<nil>)` for nil, as `%s` prints a nil reflect.Type). */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return isInt64(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return 'string';
}

/**
 * Go's fmt of a decoded JSON value: `%v` (the default) prints maps as
 * `map[k1:v1 k2:v2]` with sorted keys, slices as `[a b]`, strings bare, nil as
 * `<nil>`; `%s` prints non-strings as `%!s(int64=5)`.
 */
export function goValueString(v: unknown, verb: 'v' | 's' = 'v'): string {
  if (verb === 's' && (v === null || v === undefined)) return '%!s(<nil>)';
  const out: string[] = [];
  // Each task is either text to write or a value to print.
  const stack: ({ text: string } | { value: unknown })[] = [{ value: v }];
  while (stack.length) {
    const t = stack.pop()!;
    if ('text' in t) {
      out.push(t.text);
      continue;
    }
    const x = t.value;
    if (x === null || x === undefined) out.push('<nil>');
    else if (Array.isArray(x)) {
      stack.push({ text: ']' });
      for (let i = x.length - 1; i >= 0; i--) {
        stack.push({ value: x[i] });
        if (i > 0) stack.push({ text: ' ' });
      }
      stack.push({ text: '[' });
    } else if (typeof x === 'object') {
      const o = x as Obj;
      const keys = Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort(compareBytes);
      stack.push({ text: ']' });
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: o[keys[i]!] });
        stack.push({ text: `${keys[i]}:` });
        if (i > 0) stack.push({ text: ' ' });
      }
      stack.push({ text: 'map[' });
    } else if (typeof x === 'string') out.push(x);
    else if (typeof x === 'number') out.push(verb === 's' ? `%!s(${goTypeName(x)}=${goNumber(x)})` : goNumber(x));
    else if (typeof x === 'boolean') out.push(verb === 's' ? `%!s(bool=${x})` : String(x));
    else out.push(String(x));
  }
  return out.join('');
}

/** First positions of values in a list, found in constant time for scalars (goEqual semantics). */
export class ValueIndex {
  private readonly strings = new Map<string, number>();
  // numbers and booleans (Map tells 1 from true), null and undefined as null
  private readonly others = new Map<unknown, number>();
  private readonly composites: [unknown, number][] = [];

  add(v: unknown, at: number): void {
    if (typeof v === 'string') {
      if (!this.strings.has(v)) this.strings.set(v, at);
    } else if (typeof v === 'object' && v !== null) this.composites.push([v, at]);
    else {
      const k = v === undefined ? null : v;
      if (!this.others.has(k)) this.others.set(k, at);
    }
  }

  get(v: unknown): number {
    if (typeof v === 'string') return this.strings.get(v) ?? -1;
    if (typeof v === 'object' && v !== null) {
      for (const [x, at] of this.composites) if (jsonEqualDeep(x, v)) return at;
      return -1;
    }
    return this.others.get(v === undefined ? null : v) ?? -1;
  }

  has(v: unknown): boolean {
    return this.get(v) >= 0;
  }

  static of(list: readonly unknown[], value?: (x: unknown) => unknown): ValueIndex {
    const ix = new ValueIndex();
    for (let i = 0; i < list.length; i++) ix.add(value ? value(list[i]) : list[i], i);
    return ix;
  }
}
