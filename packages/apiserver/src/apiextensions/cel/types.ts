/**
 * CEL's static type model as cel-go's checker sees it (cel-go common/types/types.go,
 * checker/types.go): primitive kinds, list/map, struct (object) types with
 * declared fields, opaque types with parameters (optional_type, net.IP,
 * net.CIDR), type-of-type, and type parameters used in overload signatures.
 *
 * `formatType` prints a type the way cel-go's checker prints it in error
 * messages (`list(string)`, `map(string, int)`, `google.protobuf.Timestamp`);
 * `isAssignable` is cel-go's `internalIsAssignable` including its
 * type-parameter substitution and the legacy nullability of struct, opaque,
 * timestamp and duration types.
 */

export type PrimitiveKind = 'int' | 'uint' | 'double' | 'bool' | 'string' | 'bytes' | 'null_type' | 'dyn' | 'error' | 'timestamp' | 'duration';

export interface PrimitiveType {
  readonly kind: PrimitiveKind;
}
export interface ListType {
  readonly kind: 'list';
  readonly elem: CelType;
}
export interface MapType {
  readonly kind: 'map';
  readonly key: CelType;
  readonly value: CelType;
}
/** A struct (message) type. Schema objects carry their fields; library types (kubernetes.Quantity) carry none. */
export interface StructType {
  readonly kind: 'struct';
  readonly name: string;
  readonly fields?: ReadonlyMap<string, CelType>;
}
export interface OpaqueType {
  readonly kind: 'opaque';
  readonly name: string;
  readonly params: readonly CelType[];
}
export interface TypeType {
  readonly kind: 'type';
  readonly param?: CelType;
}
export interface TypeParam {
  readonly kind: 'param';
  readonly name: string;
}

export type CelType = PrimitiveType | ListType | MapType | StructType | OpaqueType | TypeType | TypeParam;

const prim = (kind: PrimitiveKind): PrimitiveType => Object.freeze({ kind });
export const T = {
  int: prim('int'),
  uint: prim('uint'),
  double: prim('double'),
  bool: prim('bool'),
  string: prim('string'),
  bytes: prim('bytes'),
  null: prim('null_type'),
  dyn: prim('dyn'),
  error: prim('error'),
  timestamp: prim('timestamp'),
  duration: prim('duration'),
} as const;

export const listOf = (elem: CelType): ListType => ({ kind: 'list', elem });
export const mapOf = (key: CelType, value: CelType): MapType => ({ kind: 'map', key, value });
export const structOf = (name: string, fields?: ReadonlyMap<string, CelType>): StructType =>
  fields ? { kind: 'struct', name, fields } : { kind: 'struct', name };
export const opaqueOf = (name: string, ...params: CelType[]): OpaqueType => ({ kind: 'opaque', name, params });
export const optionalOf = (t: CelType): OpaqueType => opaqueOf('optional_type', t);
export const typeOf = (param?: CelType): TypeType => (param ? { kind: 'type', param } : { kind: 'type' });
export const param = (name: string): TypeParam => ({ kind: 'param', name });

/** Kubernetes library types (k8s.io/apiserver/pkg/cel: QuantityType, URLType, FormatType are object types; IP and CIDR opaque). */
export const K8sTypes = {
  quantity: structOf('kubernetes.Quantity'),
  url: structOf('kubernetes.URL'),
  format: structOf('kubernetes.NamedFormat'),
  ip: opaqueOf('net.IP'),
  cidr: opaqueOf('net.CIDR'),
} as const;

export const isOptionalType = (t: CelType): t is OpaqueType => t.kind === 'opaque' && t.name === 'optional_type';

/** cel-go's `FormatCELType`. */
export function formatType(t: CelType): string {
  switch (t.kind) {
    case 'timestamp':
      return 'google.protobuf.Timestamp';
    case 'duration':
      return 'google.protobuf.Duration';
    case 'error':
      return '*error*';
    case 'list':
      return `list(${formatType(t.elem)})`;
    case 'map':
      return `map(${formatType(t.key)}, ${formatType(t.value)})`;
    case 'struct':
      return t.name;
    case 'opaque':
      return t.params.length ? `${t.name}(${t.params.map(formatType).join(', ')})` : t.name;
    case 'type':
      return t.param ? `type(${formatType(t.param)})` : 'type';
    case 'param':
      return t.name;
    default:
      return t.kind;
  }
}

/** Structural equality of types (cel-go `IsExactType`). */
export function sameType(a: CelType, b: CelType): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'list':
      return sameType(a.elem, (b as ListType).elem);
    case 'map':
      return sameType(a.key, (b as MapType).key) && sameType(a.value, (b as MapType).value);
    case 'struct':
      return a.name === (b as StructType).name;
    case 'opaque': {
      const o = b as OpaqueType;
      return a.name === o.name && a.params.length === o.params.length && a.params.every((p, i) => sameType(p, o.params[i]!));
    }
    case 'type': {
      const o = b as TypeType;
      if (!a.param || !o.param) return !a.param && !o.param;
      return sameType(a.param, o.param);
    }
    case 'param':
      return a.name === (b as TypeParam).name;
    default:
      return true;
  }
}

/** Type-parameter substitutions, as cel-go's checker `mapping`. */
export type Mapping = Map<string, CelType>;

const isDynOrError = (t: CelType) => t.kind === 'dyn' || t.kind === 'error';

/** cel-go `substitute`: replace bound type params; unbound ones become dyn when `typeParamToDyn`. */
export function substitute(m: Mapping, t: CelType, typeParamToDyn: boolean): CelType {
  switch (t.kind) {
    case 'param': {
      const s = m.get(t.name);
      if (s) return substitute(m, s, typeParamToDyn);
      return typeParamToDyn ? T.dyn : t;
    }
    case 'list':
      return listOf(substitute(m, t.elem, typeParamToDyn));
    case 'map':
      return mapOf(substitute(m, t.key, typeParamToDyn), substitute(m, t.value, typeParamToDyn));
    case 'opaque':
      return t.params.length ? { kind: 'opaque', name: t.name, params: t.params.map((p) => substitute(m, p, typeParamToDyn)) } : t;
    case 'type':
      return t.param ? typeOf(substitute(m, t.param, typeParamToDyn)) : t;
    default:
      return t;
  }
}

function occursIn(m: Mapping, name: string, t: CelType): boolean {
  switch (t.kind) {
    case 'param': {
      if (t.name === name) return true;
      const s = m.get(t.name);
      return s ? occursIn(m, name, s) : false;
    }
    case 'list':
      return occursIn(m, name, t.elem);
    case 'map':
      return occursIn(m, name, t.key) || occursIn(m, name, t.value);
    case 'opaque':
      return t.params.some((p) => occursIn(m, name, p));
    case 'type':
      return t.param ? occursIn(m, name, t.param) : false;
    default:
      return false;
  }
}

/** Null is assignable to struct, opaque, timestamp and duration types (cel-go `isLegacyNullable`). */
const isLegacyNullable = (t: CelType) => t.kind === 'struct' || t.kind === 'opaque' || t.kind === 'timestamp' || t.kind === 'duration';

function assign(m: Mapping, t1: CelType, t2: CelType): boolean {
  if (sameType(t1, t2)) return true;
  if (t2.kind === 'param') {
    const s = m.get(t2.name);
    if (s) {
      if (assign(m, t1, s)) {
        m.set(t2.name, mostGeneral(s, t1));
        return true;
      }
      return false;
    }
    if (!occursIn(m, t2.name, t1)) {
      m.set(t2.name, t1);
      return true;
    }
  }
  if (t1.kind === 'param') {
    const s = m.get(t1.name);
    if (s) {
      if (assign(m, s, t2)) {
        m.set(t1.name, mostGeneral(s, t2));
        return true;
      }
      return false;
    }
    if (!occursIn(m, t1.name, t2)) {
      m.set(t1.name, t2);
      return true;
    }
  }
  if (isDynOrError(t1) || isDynOrError(t2)) return true;
  if (t1.kind === 'null_type') return isLegacyNullable(t2);
  if (t2.kind === 'null_type') return isLegacyNullable(t1);
  switch (t1.kind) {
    case 'list':
      return t2.kind === 'list' && assign(m, t1.elem, t2.elem);
    case 'map':
      return t2.kind === 'map' && assign(m, t1.key, t2.key) && assign(m, t1.value, t2.value);
    case 'opaque':
      return t2.kind === 'opaque' && t1.name === t2.name && t1.params.length === t2.params.length && t1.params.every((p, i) => assign(m, p, t2.params[i]!));
    case 'type':
      return t2.kind === 'type';
    default:
      return false;
  }
}

/** Whether t2 is assignable to t1; on success the substitutions are committed to `m`. */
export function isAssignable(m: Mapping, t1: CelType, t2: CelType): boolean {
  const copy = new Map(m);
  if (!assign(copy, t1, t2)) return false;
  m.clear();
  for (const [k, v] of copy) m.set(k, v);
  return true;
}

/** Whether every element of `actual` is assignable to the corresponding `formal` (committed only if all are). */
export function isAssignableList(m: Mapping, formal: readonly CelType[], actual: readonly CelType[]): boolean {
  if (formal.length !== actual.length) return false;
  const copy = new Map(m);
  for (let i = 0; i < formal.length; i++) if (!assign(copy, formal[i]!, actual[i]!)) return false;
  m.clear();
  for (const [k, v] of copy) m.set(k, v);
  return true;
}

/** cel-go `isEqualOrLessSpecific`: t1 matches t2 through dyn or type params. */
function isEqualOrLessSpecific(t1: CelType, t2: CelType): boolean {
  if (t1.kind === 'dyn' || t1.kind === 'param') return true;
  if (t2.kind === 'dyn' || t2.kind === 'param') return false;
  if (t1.kind !== t2.kind) return false;
  switch (t1.kind) {
    case 'list':
      return isEqualOrLessSpecific(t1.elem, (t2 as ListType).elem);
    case 'map':
      return isEqualOrLessSpecific(t1.key, (t2 as MapType).key) && isEqualOrLessSpecific(t1.value, (t2 as MapType).value);
    case 'opaque': {
      const o = t2 as OpaqueType;
      return t1.name === o.name && t1.params.length === o.params.length && t1.params.every((p, i) => isEqualOrLessSpecific(p, o.params[i]!));
    }
    case 'type':
      return true;
    default:
      return sameType(t1, t2);
  }
}

/** cel-go `mostGeneral`: the less specific of two compatible types. */
export function mostGeneral(a: CelType, b: CelType): CelType {
  return isEqualOrLessSpecific(a, b) ? a : b;
}

/** Whether a type's values have a fixed size for the cost model (cel-go checker `isScalar`). */
export function isScalarType(t: CelType): boolean {
  switch (t.kind) {
    case 'bool':
    case 'double':
    case 'duration':
    case 'int':
    case 'timestamp':
    case 'uint':
      return true;
    case 'opaque':
      return t.name === 'optional_type' && t.params[0] !== undefined && isScalarType(t.params[0]);
    default:
      return false;
  }
}
