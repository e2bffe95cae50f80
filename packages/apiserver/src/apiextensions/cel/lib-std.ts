/**
 * The CEL standard library (cel-go checker/standard.go declarations,
 * interpreter/functions implementations): operators, comparisons (with
 * Kubernetes' CrossTypeNumericComparisons), arithmetic with cel-go's overflow
 * errors, size, `in`, indexing, conversions between scalar types, `type` and
 * `dyn`, and the string predicates. Timestamp and duration functions are in
 * lib-time.ts.
 */
import { regexMatches } from './regex.js';
import { type Overload, global, member } from './registry.js';
import { type CelType, listOf, mapOf, param, T, typeOf } from './types.js';
import {
  ArrayList,
  actualSize,
  CelError,
  celEquals,
  checkInt,
  checkUint,
  compareNumeric,
  DurationV,
  type ListV,
  MapV,
  TimestampV,
  TypeV,
  typeName,
  UintV,
  type Val,
} from './values.js';

const A = param('A');
const B = param('B');
const LA = listOf(A);
const MAB = mapOf(A, B);

const i = (v: Val) => v as bigint;
const u = (v: Val) => (v as UintV).v;
const d = (v: Val) => v as number;
const s = (v: Val) => v as string;

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) if (a[k] !== b[k]) return a[k]! < b[k]! ? -1 : 1;
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}

/** Orders two values of comparable kinds (-1/0/1, NaN when unordered). */
export function compareValues(a: Val, b: Val): number {
  const na = typeof a === 'bigint' || typeof a === 'number' ? a : a instanceof UintV ? a.v : undefined;
  const nb = typeof b === 'bigint' || typeof b === 'number' ? b : b instanceof UintV ? b.v : undefined;
  if (na !== undefined && nb !== undefined) return compareNumeric(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b);
  if (a instanceof TimestampV && b instanceof TimestampV) return a.sec !== b.sec ? (a.sec < b.sec ? -1 : 1) : Math.sign(a.nanos - b.nanos);
  if (a instanceof DurationV && b instanceof DurationV) return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
  throw new CelError('no such overload');
}

type Cmp = (c: number) => boolean;
const ORDERED: [string, CelType][] = [
  ['bool', T.bool],
  ['int64', T.int],
  ['uint64', T.uint],
  ['double', T.double],
  ['string', T.string],
  ['bytes', T.bytes],
  ['timestamp', T.timestamp],
  ['duration', T.duration],
];
const CROSS: [string, CelType, CelType][] = [
  ['int64_uint64', T.int, T.uint],
  ['int64_double', T.int, T.double],
  ['uint64_int64', T.uint, T.int],
  ['uint64_double', T.uint, T.double],
  ['double_int64', T.double, T.int],
  ['double_uint64', T.double, T.uint],
];

function comparisons(op: string, idBase: string, pred: Cmp): Overload[] {
  const impl = (args: Val[]) => {
    const c = compareValues(args[0]!, args[1]!);
    return !Number.isNaN(c) && pred(c);
  };
  return [
    ...ORDERED.map(([n, t]) => global(op, `${idBase}_${n}`, [t, t], T.bool, impl)),
    ...CROSS.map(([n, a, b]) => global(op, `${idBase}_${n}`, [a, b], T.bool, impl)),
  ];
}

function addList(a: ListV, b: ListV): ListV {
  let items: Val[];
  if (a.listType === 'set') {
    // set lists: union keeping the left positions (unstructuredSetList.Add)
    items = [...a.items()];
    for (const x of b.items()) if (!items.some((y) => celEquals(y, x))) items.push(x);
  } else if (a.listType === 'map' && a.mapKeys?.length) {
    // map lists: merge by keys, right values win (unstructuredMapList.Add)
    const keys = a.mapKeys;
    items = [...a.items()];
    const sameKey = (x: Val, y: Val) => x instanceof MapV && y instanceof MapV && keys.every((k) => celEqualsOpt(x.find(k), y.find(k)));
    for (const x of b.items()) {
      const at = items.findIndex((y) => sameKey(y, x));
      if (at >= 0) items[at] = x;
      else items.push(x);
    }
  } else {
    items = [...a.items(), ...b.items()];
  }
  const out = new ArrayList(items);
  out.listType = a.listType;
  out.mapKeys = a.mapKeys;
  return out;
}
const celEqualsOpt = (a: Val | undefined, b: Val | undefined) => (a === undefined || b === undefined ? a === b : celEquals(a, b));

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Index into a list: cel-go accepts int, uint and integral doubles. */
export function listIndex(l: ListV, idx: Val): Val {
  let n: bigint;
  if (typeof idx === 'bigint') n = idx;
  else if (idx instanceof UintV) n = idx.v;
  else if (typeof idx === 'number' && Number.isInteger(idx)) n = BigInt(idx);
  else throw new CelError(`unsupported index type '${typeName(idx)}' in list`);
  if (n < 0n || n >= BigInt(l.size)) throw new CelError(outOfRange(l, n));
  return l.get(Number(n));
}

/** The out-of-range message of cel-go lists, or of Kubernetes' unstructured lists. */
const outOfRange = (l: ListV, n: bigint) =>
  (l as ListV & { unstructured?: boolean }).unstructured ? `index out of bounds: ${n}` : `index '${n}' out of range in list size '${l.size}'`;

/** Map lookup, `no such key` when absent (cel-go, and unstructuredMap.Get). */
export function mapIndex(m: MapV, key: Val): Val {
  const v = m.find(key);
  if (v === undefined) throw new CelError(`no such key: ${formatKey(key)}`);
  return v;
}

const formatKey = (k: Val): string => (k instanceof UintV ? String(k.v) : String(k));

/** Go's strconv.ParseFloat syntax (decimal and special values; hex floats are not supported). */
const GO_FLOAT = /^[+-]?((\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|infinity|nan)$/i;

function parseGoInt(str: string, fn: string): bigint {
  if (!/^[+-]?\d+$/.test(str)) throw new CelError(`strconv.${fn}: parsing ${JSON.stringify(str)}: invalid syntax`);
  return BigInt(str);
}

/** Go's strconv.FormatFloat(f, 'g', -1, 64), as cel-go's string(double). */
export function formatDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mant, expStr] = n.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 21 || (exp >= 6 && exp >= mant.replace(/[-.]/g, '').length)) {
    return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return n.toFixed(Math.max(0, mant.replace(/[-.]/g, '').length - 1 - exp));
}

function stringToBool(v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new CelError(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

function doubleToInt(v: number): bigint {
  if (!(v > -(2 ** 63) - 1 && v < 2 ** 63)) throw new CelError('integer overflow');
  return checkInt(BigInt(Math.trunc(v)));
}

export const std: Overload[] = [
  // logic (evaluated by the interpreter, declared for the checker)
  global('_&&_', 'logical_and', [T.bool, T.bool], T.bool),
  global('_||_', 'logical_or', [T.bool, T.bool], T.bool),
  global('_?_:_', 'conditional', [T.bool, A, A], A, undefined, ['A']),
  global('@not_strictly_false', 'not_strictly_false', [T.bool], T.bool),
  global('!_', 'logical_not', [T.bool], T.bool, (a) => !a[0]),
  global('_==_', 'equals', [A, A], T.bool, (a) => celEquals(a[0]!, a[1]!), ['A']),
  global('_!=_', 'not_equals', [A, A], T.bool, (a) => !celEquals(a[0]!, a[1]!), ['A']),
  ...comparisons('_<_', 'less', (c) => c < 0),
  ...comparisons('_<=_', 'less_equals', (c) => c <= 0),
  ...comparisons('_>_', 'greater', (c) => c > 0),
  ...comparisons('_>=_', 'greater_equals', (c) => c >= 0),
  // arithmetic
  global('_+_', 'add_int64', [T.int, T.int], T.int, (a) => checkInt(i(a[0]!) + i(a[1]!))),
  global('_+_', 'add_uint64', [T.uint, T.uint], T.uint, (a) => checkUint(u(a[0]!) + u(a[1]!))),
  global('_+_', 'add_double', [T.double, T.double], T.double, (a) => d(a[0]!) + d(a[1]!)),
  global('_+_', 'add_string', [T.string, T.string], T.string, (a) => s(a[0]!) + s(a[1]!)),
  global('_+_', 'add_bytes', [T.bytes, T.bytes], T.bytes, (a) => concatBytes(a[0] as Uint8Array, a[1] as Uint8Array)),
  global('_+_', 'add_list', [LA, LA], LA, (a) => addList(a[0] as ListV, a[1] as ListV), ['A']),
  global('_-_', 'subtract_int64', [T.int, T.int], T.int, (a) => checkInt(i(a[0]!) - i(a[1]!))),
  global('_-_', 'subtract_uint64', [T.uint, T.uint], T.uint, (a) => checkUint(u(a[0]!) - u(a[1]!))),
  global('_-_', 'subtract_double', [T.double, T.double], T.double, (a) => d(a[0]!) - d(a[1]!)),
  global('_*_', 'multiply_int64', [T.int, T.int], T.int, (a) => checkInt(i(a[0]!) * i(a[1]!))),
  global('_*_', 'multiply_uint64', [T.uint, T.uint], T.uint, (a) => checkUint(u(a[0]!) * u(a[1]!))),
  global('_*_', 'multiply_double', [T.double, T.double], T.double, (a) => d(a[0]!) * d(a[1]!)),
  global('_/_', 'divide_int64', [T.int, T.int], T.int, (a) => {
    if (i(a[1]!) === 0n) throw new CelError('division by zero');
    return checkInt(i(a[0]!) / i(a[1]!));
  }),
  global('_/_', 'divide_uint64', [T.uint, T.uint], T.uint, (a) => {
    if (u(a[1]!) === 0n) throw new CelError('division by zero');
    return new UintV(u(a[0]!) / u(a[1]!));
  }),
  global('_/_', 'divide_double', [T.double, T.double], T.double, (a) => d(a[0]!) / d(a[1]!)),
  global('_%_', 'modulo_int64', [T.int, T.int], T.int, (a) => {
    if (i(a[1]!) === 0n) throw new CelError('modulus by zero');
    if (i(a[1]!) === -1n) return 0n;
    return i(a[0]!) % i(a[1]!);
  }),
  global('_%_', 'modulo_uint64', [T.uint, T.uint], T.uint, (a) => {
    if (u(a[1]!) === 0n) throw new CelError('modulus by zero');
    return new UintV(u(a[0]!) % u(a[1]!));
  }),
  global('-_', 'negate_int64', [T.int], T.int, (a) => checkInt(-i(a[0]!))),
  global('-_', 'negate_double', [T.double], T.double, (a) => -d(a[0]!)),
  // size
  global('size', 'size_string', [T.string], T.int, (a) => BigInt(actualSize(a[0]!))),
  global('size', 'size_bytes', [T.bytes], T.int, (a) => BigInt(actualSize(a[0]!))),
  global('size', 'size_list', [LA], T.int, (a) => BigInt(actualSize(a[0]!)), ['A']),
  global('size', 'size_map', [MAB], T.int, (a) => BigInt(actualSize(a[0]!)), ['A', 'B']),
  member('size', 'string_size', [T.string], T.int, (a) => BigInt(actualSize(a[0]!))),
  member('size', 'bytes_size', [T.bytes], T.int, (a) => BigInt(actualSize(a[0]!))),
  member('size', 'list_size', [LA], T.int, (a) => BigInt(actualSize(a[0]!)), ['A']),
  member('size', 'map_size', [MAB], T.int, (a) => BigInt(actualSize(a[0]!)), ['A', 'B']),
  // membership and indexing
  global('@in', 'in_list', [A, LA], T.bool, (a) => (a[1] as ListV).items().some((x) => celEquals(x, a[0]!)), ['A']),
  global('@in', 'in_map', [A, MAB], T.bool, (a) => (a[1] as MapV).find(a[0]!) !== undefined, ['A', 'B']),
  global('_[_]', 'index_list', [LA, T.int], A, (a) => listIndex(a[0] as ListV, a[1]!), ['A']),
  global('_[_]', 'index_map', [MAB, A], B, (a) => mapIndex(a[0] as MapV, a[1]!), ['A', 'B']),
  // strings
  member('contains', 'contains_string', [T.string, T.string], T.bool, (a) => s(a[0]!).includes(s(a[1]!))),
  member('endsWith', 'ends_with_string', [T.string, T.string], T.bool, (a) => s(a[0]!).endsWith(s(a[1]!))),
  member('startsWith', 'starts_with_string', [T.string, T.string], T.bool, (a) => s(a[0]!).startsWith(s(a[1]!))),
  member('matches', 'matches_string', [T.string, T.string], T.bool, (a) => regexMatches(s(a[1]!), s(a[0]!))),
  global('matches', 'matches', [T.string, T.string], T.bool, (a) => regexMatches(s(a[1]!), s(a[0]!))),
  // conversions
  global('int', 'int64_to_int64', [T.int], T.int, (a) => a[0]!),
  global('int', 'uint64_to_int64', [T.uint], T.int, (a) => checkInt(u(a[0]!))),
  global('int', 'double_to_int64', [T.double], T.int, (a) => doubleToInt(d(a[0]!))),
  global('int', 'string_to_int64', [T.string], T.int, (a) => {
    const n = parseGoInt(s(a[0]!), 'ParseInt');
    if (n < -(2n ** 63n) || n >= 2n ** 63n) throw new CelError(`strconv.ParseInt: parsing ${JSON.stringify(a[0])}: value out of range`);
    return n;
  }),
  global('uint', 'uint64_to_uint64', [T.uint], T.uint, (a) => a[0]!),
  global('uint', 'int64_to_uint64', [T.int], T.uint, (a) => checkUint(i(a[0]!))),
  global('uint', 'double_to_uint64', [T.double], T.uint, (a) => {
    const v = d(a[0]!);
    if (!(v > -1 && v < 2 ** 64)) throw new CelError('unsigned integer overflow');
    return new UintV(BigInt(Math.trunc(v)));
  }),
  global('uint', 'string_to_uint64', [T.string], T.uint, (a) => {
    const str = s(a[0]!);
    if (!/^\+?\d+$/.test(str)) throw new CelError(`strconv.ParseUint: parsing ${JSON.stringify(str)}: invalid syntax`);
    const n = BigInt(str);
    if (n >= 2n ** 64n) throw new CelError(`strconv.ParseUint: parsing ${JSON.stringify(str)}: value out of range`);
    return new UintV(n);
  }),
  global('double', 'double_to_double', [T.double], T.double, (a) => a[0]!),
  global('double', 'int64_to_double', [T.int], T.double, (a) => Number(i(a[0]!))),
  global('double', 'uint64_to_double', [T.uint], T.double, (a) => Number(u(a[0]!))),
  global('double', 'string_to_double', [T.string], T.double, (a) => {
    const str = s(a[0]!);
    if (!GO_FLOAT.test(str)) throw new CelError(`strconv.ParseFloat: parsing ${JSON.stringify(str)}: invalid syntax`);
    const l = str.toLowerCase().replace(/^\+/, '');
    if (l.endsWith('inf') || l.endsWith('infinity')) return l.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    if (l.endsWith('nan')) return Number.NaN;
    return Number(l.replaceAll('_', ''));
  }),
  global('bool', 'bool_to_bool', [T.bool], T.bool, (a) => a[0]!),
  global('bool', 'string_to_bool', [T.string], T.bool, (a) => stringToBool(s(a[0]!))),
  global('bytes', 'bytes_to_bytes', [T.bytes], T.bytes, (a) => a[0]!),
  global('bytes', 'string_to_bytes', [T.string], T.bytes, (a) => new TextEncoder().encode(s(a[0]!))),
  global('string', 'string_to_string', [T.string], T.string, (a) => a[0]!),
  global('string', 'bool_to_string', [T.bool], T.string, (a) => String(a[0])),
  global('string', 'int64_to_string', [T.int], T.string, (a) => String(a[0])),
  global('string', 'uint64_to_string', [T.uint], T.string, (a) => String(u(a[0]!))),
  global('string', 'double_to_string', [T.double], T.string, (a) => formatDouble(d(a[0]!))),
  global('string', 'bytes_to_string', [T.bytes], T.string, (a) => {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(a[0] as Uint8Array);
    } catch {
      throw new CelError('invalid UTF-8 in bytes, cannot convert to string');
    }
  }),
  global('type', 'type', [A], typeOf(A), (a) => new TypeV(typeName(a[0]!)), ['A']),
  global('dyn', 'to_dyn', [A], T.dyn, (a) => a[0]!, ['A']),
];

/** Type identifiers of the standard environment (`int`, `string`, `list`, ...), with the type each denotes. */
export const STD_TYPE_IDENTS: Record<string, CelType> = {
  int: T.int,
  uint: T.uint,
  double: T.double,
  bool: T.bool,
  string: T.string,
  bytes: T.bytes,
  null_type: T.null,
  list: listOf(T.dyn),
  map: mapOf(T.dyn, T.dyn),
  type: typeOf(),
  'google.protobuf.Timestamp': T.timestamp,
  'google.protobuf.Duration': T.duration,
};
