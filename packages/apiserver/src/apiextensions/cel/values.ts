/**
 * Runtime values of the CEL evaluator, after cel-go's common/types:
 *
 * | CEL type | JS representation |
 * | --- | --- |
 * | int | bigint (kept within int64) |
 * | uint | `UintV` |
 * | double | number |
 * | bool, string, null | boolean, string, null |
 * | bytes | Uint8Array |
 * | list | `ListV` (array-backed, or lazily converted JSON in unstructured.ts) |
 * | map, object | `MapV` (objects answer field selection; cel-go's unstructuredMap) |
 * | timestamp, duration | `TimestampV`, `DurationV` |
 * | type | `TypeV` |
 * | optional_type | `OptionalV` |
 * | library types (Quantity, URL, IP, CIDR, Format) | subclasses of `OpaqueV` |
 *
 * Errors are `CelError` values: functions throw them, the interpreter carries
 * them as values so `&&`, `||` and the comprehension macros can absorb them
 * as cel-go does.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const UINT64_MAX = 2n ** 64n - 1n;

/** A CEL evaluation error (cel-go types.Err). Thrown by functions, carried as a value by the interpreter. */
export class CelError {
  constructor(readonly message: string) {}
  toString(): string {
    return this.message;
  }
}

export class UintV {
  constructor(readonly v: bigint) {}
}

export class TimestampV {
  /** Seconds since the Unix epoch and nanoseconds within the second (0..999999999). */
  constructor(
    readonly sec: bigint,
    readonly nanos: number,
  ) {}
}

export class DurationV {
  constructor(readonly nanos: bigint) {}
}

/** A type value (`type(x)`, or an identifier such as `int`). */
export class TypeV {
  constructor(readonly name: string) {}
}

export class OptionalV {
  constructor(readonly value: Val | undefined) {}
  get hasValue(): boolean {
    return this.value !== undefined;
  }
}
export const OPTIONAL_NONE = new OptionalV(undefined);

/** Base of the library value types (Quantity, URL, IP, CIDR, Format). */
export abstract class OpaqueV {
  abstract readonly typeName: string;
  abstract equals(other: OpaqueV): boolean;
  /** The value's size for the runtime cost model (traits.Sizer); 1 when it has none. */
  size(): number {
    return 1;
  }
}

export type ListType = 'atomic' | 'set' | 'map';

export abstract class ListV {
  listType: ListType = 'atomic';
  /** x-kubernetes-list-map-keys (escaped) when listType is map. */
  mapKeys: readonly string[] | undefined;
  abstract get size(): number;
  abstract get(i: number): Val;
  abstract items(): Val[];
}

export class ArrayList extends ListV {
  constructor(private readonly elems: Val[]) {
    super();
  }
  get size(): number {
    return this.elems.length;
  }
  get(i: number): Val {
    return this.elems[i]!;
  }
  items(): Val[] {
    return this.elems;
  }
}

export abstract class MapV {
  /** True for an object of a schema with properties: its keys are escaped field names. */
  isObject = false;
  abstract get size(): number;
  /** The value at a key, or undefined when absent. */
  abstract find(key: Val): Val | undefined;
  abstract keys(): Val[];
  /** A representation-specific equality (objects of unstructured data), or undefined for the generic one. */
  customEquals(_other: MapV): boolean | undefined {
    return undefined;
  }
}

/** A map key as a JS map key; numeric keys compare across int, uint and integral doubles. */
export function keyOf(k: Val): string | undefined {
  if (typeof k === 'string') return `s${k}`;
  if (typeof k === 'bigint') return `n${k}`;
  if (k instanceof UintV) return `n${k.v}`;
  if (typeof k === 'boolean') return k ? 'b1' : 'b0';
  if (typeof k === 'number' && Number.isInteger(k)) return `n${BigInt(k)}`;
  return undefined;
}

export class NativeMap extends MapV {
  private readonly m = new Map<string, [Val, Val]>();
  constructor(entries: Iterable<[Val, Val]> = []) {
    super();
    for (const [k, v] of entries) {
      const kk = keyOf(k);
      if (kk === undefined) throw new CelError('unsupported key type');
      this.m.set(kk, [k, v]);
    }
  }
  get size(): number {
    return this.m.size;
  }
  find(key: Val): Val | undefined {
    const kk = keyOf(key);
    return kk === undefined ? undefined : this.m.get(kk)?.[1];
  }
  keys(): Val[] {
    return [...this.m.values()].map((e) => e[0]);
  }
}

export type Val = bigint | number | string | boolean | null | Uint8Array | UintV | TimestampV | DurationV | TypeV | OptionalV | OpaqueV | ListV | MapV;

export const isError = (v: unknown): v is CelError => v instanceof CelError;

/** The runtime type name of a value (what `type(v)` names, and what cel-go prints). */
export function typeName(v: Val): string {
  if (v === null) return 'null_type';
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof UintV) return 'uint';
  if (v instanceof ListV) return 'list';
  if (v instanceof MapV) return 'map';
  if (v instanceof TimestampV) return 'google.protobuf.Timestamp';
  if (v instanceof DurationV) return 'google.protobuf.Duration';
  if (v instanceof TypeV) return 'type';
  if (v instanceof OptionalV) return 'optional_type';
  return (v as OpaqueV).typeName;
}

/** Checks an int result is within int64 (cel-go errIntOverflow). */
export function checkInt(n: bigint): bigint {
  if (n < INT64_MIN || n > INT64_MAX) throw new CelError('integer overflow');
  return n;
}

export function checkUint(n: bigint): UintV {
  if (n < 0n || n > UINT64_MAX) throw new CelError('unsigned integer overflow');
  return new UintV(n);
}

/** Number of code points, as CEL measures strings. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

/** traits.Sizer size of a value, or 1 for values without a size (cel-go CostTracker.actualSize). */
export function actualSize(v: Val | CelError): number {
  if (typeof v === 'string') return codePointLength(v);
  if (v instanceof Uint8Array) return v.length;
  if (v instanceof ListV || v instanceof MapV) return v.size;
  if (v instanceof OpaqueV) return v.size();
  return 1;
}

const numeric = (v: Val): number | bigint | undefined => {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UintV) return v.v;
  return undefined;
};

/** Compares two numbers of any CEL numeric type exactly (cel-go cross-type numeric comparison). -1/0/1, or NaN. */
export function compareNumeric(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && Number.isNaN(a)) return Number.NaN;
  if (typeof b === 'number' && Number.isNaN(b)) return Number.NaN;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  // bigint vs double: compare exactly, treating the double's integral part as a bigint.
  const [x, y, flip] = typeof a === 'bigint' ? [a, b as number, 1] : [b as bigint, a as number, -1];
  if (y === Number.POSITIVE_INFINITY) return -flip;
  if (y === Number.NEGATIVE_INFINITY) return flip;
  const fl = Math.floor(y);
  const yi = BigInt(fl);
  if (x < yi) return -flip;
  if (x > yi) return flip;
  return y > fl ? -flip : 0;
}

/** CEL heterogeneous equality (cel-go `Equal`, with Kubernetes' set and map-list semantics). */
export function celEquals(a: Val, b: Val): boolean {
  if (a === b) return !(typeof a === 'number' && Number.isNaN(a));
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && compareNumeric(na, nb) === 0;
  if (a === null || b === null) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof ListV) return b instanceof ListV && listEquals(a, b);
  if (a instanceof MapV) return b instanceof MapV && mapEquals(a, b);
  if (a instanceof TimestampV) return b instanceof TimestampV && a.sec === b.sec && a.nanos === b.nanos;
  if (a instanceof DurationV) return b instanceof DurationV && a.nanos === b.nanos;
  if (a instanceof TypeV) return b instanceof TypeV && a.name === b.name;
  if (a instanceof OptionalV) {
    if (!(b instanceof OptionalV)) return false;
    if (a.value === undefined || b.value === undefined) return a.value === b.value;
    return celEquals(a.value, b.value);
  }
  if (a instanceof OpaqueV) return b instanceof OpaqueV && a.typeName === b.typeName && a.equals(b);
  return false;
}

function listEquals(a: ListV, b: ListV): boolean {
  if (a.size !== b.size) return false;
  const ai = a.items();
  const bi = b.items();
  if (a.listType === 'set') {
    // x-kubernetes-list-type=set: order does not matter (unstructuredSetList.Equal).
    return bi.every((x) => ai.some((y) => celEquals(y, x)));
  }
  if (a.listType === 'map' && a.mapKeys?.length) {
    // x-kubernetes-list-type=map: elements are matched by their keys (unstructuredMapList.Equal).
    const keys = a.mapKeys;
    const keyMatch = (x: Val, y: Val) => x instanceof MapV && y instanceof MapV && keys.every((k) => celEqualsOpt(x.find(k), y.find(k)));
    return bi.every((x) => {
      const y = ai.find((e) => keyMatch(e, x));
      return y !== undefined && celEquals(y, x);
    });
  }
  for (let i = 0; i < ai.length; i++) if (!celEquals(ai[i]!, bi[i]!)) return false;
  return true;
}

const celEqualsOpt = (a: Val | undefined, b: Val | undefined) => (a === undefined || b === undefined ? a === b : celEquals(a, b));

function mapEquals(a: MapV, b: MapV): boolean {
  const custom = a.customEquals(b);
  if (custom !== undefined) return custom;
  if (a.size !== b.size) return false;
  for (const k of a.keys()) {
    const av = a.find(k);
    const bv = b.find(k);
    if (av === undefined || bv === undefined) {
      if (av !== bv) return false;
      continue;
    }
    if (!celEquals(av, bv)) return false;
  }
  return true;
}

/** Wraps a JS array as a CEL list. */
export const list = (items: Val[]): ArrayList => new ArrayList(items);

/** Builds a CEL map with string keys from a JS record. */
export const mapFromRecord = (r: Record<string, Val>): NativeMap => new NativeMap(Object.entries(r));
