/**
 * cel-go's optional types (`cel.OptionalTypes()`, enabled by Kubernetes from
 * 1.28): optional.of, optional.ofNonZeroValue, optional.none, hasValue,
 * value, or, orValue. The syntax parts (`a.?b`, `a[?k]`, `[?x]`, `{?k: v}`)
 * are handled by ast.ts, checker.ts and interpreter.ts; `optMap` and
 * `optFlatMap` expand to these functions in ast.ts. Also the internal
 * `cel.@mapInsert` the two-variable `transformMap` macro uses.
 */
import { type Overload, global, member } from './registry.js';
import { mapOf, optionalOf, param, T } from './types.js';
import { CelError, DurationV, keyOf, ListV, MapV, NativeMap, OPTIONAL_NONE, OptionalV, TimestampV, UintV, type Val } from './values.js';

const V = param('V');
const K = param('K');
const OV = optionalOf(V);

/** cel-go IsZeroValue. */
function isZero(v: Val): boolean {
  if (v === null || v === false || v === '' || v === 0n || v === 0) return true;
  if (v instanceof UintV) return v.v === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (v instanceof ListV || v instanceof MapV) return v.size === 0;
  if (v instanceof DurationV) return v.nanos === 0n;
  if (v instanceof TimestampV) return v.sec === -62135596800n && v.nanos === 0;
  return false;
}

const opt = (v: Val) => v as OptionalV;

export const optional: Overload[] = [
  global('optional.of', 'optional_of', [V], OV, (a) => new OptionalV(a[0]!), ['V']),
  global('optional.ofNonZeroValue', 'optional_ofNonZeroValue', [V], OV, (a) => (isZero(a[0]!) ? OPTIONAL_NONE : new OptionalV(a[0]!)), ['V']),
  global('optional.none', 'optional_none', [], OV, () => OPTIONAL_NONE, ['V']),
  member('hasValue', 'optional_hasValue', [OV], T.bool, (a) => opt(a[0]!).hasValue, ['V']),
  member(
    'value',
    'optional_value',
    [OV],
    V,
    (a) => {
      const v = opt(a[0]!).value;
      if (v === undefined) throw new CelError('optional.none() dereference');
      return v;
    },
    ['V'],
  ),
  member('or', 'optional_or_optional', [OV, OV], OV, (a) => (opt(a[0]!).hasValue ? a[0]! : a[1]!), ['V']),
  member('orValue', 'optional_orValue_value', [OV, V], V, (a) => opt(a[0]!).value ?? a[1]!, ['V']),
  global(
    'cel.@mapInsert',
    'cel_@mapInsert_map_key_value',
    [mapOf(K, V), K, V],
    mapOf(K, V),
    (a) => {
      const m = a[0] as MapV;
      if (m.find(a[1]!) !== undefined) throw new CelError(`insert failed: key ${keyOf(a[1]!)?.slice(1)} already exists`);
      return new NativeMap([...m.keys().map((k) => [k, m.find(k)!] as [Val, Val]), [a[1]!, a[2]!]]);
    },
    ['K', 'V'],
  ),
];
