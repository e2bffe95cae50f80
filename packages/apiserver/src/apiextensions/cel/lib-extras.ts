/**
 * cel-go's math (ext/math.go) and base64 encoder (ext/encoders.go)
 * extensions. Kubernetes' base environment (k8s.io/apiserver/pkg/cel/
 * environment/base.go) does not enable these, so the CRD environment leaves
 * them out; other users (policies, tests) can add them with
 * `celEnv({ libraries: ['math', 'encoders'] })`.
 *
 * `math.greatest`/`math.least` are macros in cel-go taking one list or any
 * number of numeric arguments; here they are overloads of one list or one to
 * six numbers (mixed numeric arguments give dyn).
 */
import { compareValues } from './lib-std.js';
import { type Overload, global } from './registry.js';
import { type CelType, listOf, T } from './types.js';
import { CelError, checkInt, type ListV, UintV, type Val } from './values.js';

const NUMS: [string, CelType][] = [
  ['int', T.int],
  ['uint', T.uint],
  ['double', T.double],
];

function pick(args: Val[], prefer: number, name: string): Val {
  const xs = args.length === 1 && typeof args[0] === 'object' && args[0] !== null && 'items' in args[0] ? (args[0] as ListV).items() : args;
  if (!xs.length) throw new CelError(`${name}(list) argument must not be empty`);
  let r = xs[0] as Val;
  for (const x of xs.slice(1)) {
    if (!(typeof x === 'bigint' || typeof x === 'number' || x instanceof UintV)) throw new CelError('no such overload');
    if (compareValues(x, r) === prefer) r = x;
  }
  return r;
}

function extremum(fn: string, prefer: number): Overload[] {
  const out: Overload[] = [];
  for (const [n, t] of NUMS) {
    out.push(global(fn, `${fn}_${n}`, [t], t, (a) => a[0]!));
    out.push(global(fn, `${fn}_list_${n}`, [listOf(t)], t, (a) => pick(a, prefer, fn)));
  }
  for (let k = 2; k <= 6; k++) out.push(global(fn, `${fn}_dyn_${k}`, new Array(k).fill(T.dyn), T.dyn, (a) => pick(a, prefer, fn)));
  return out;
}

const dbl = (f: (x: number) => number | boolean) => (a: Val[]) => f(a[0] as number);
const int = (v: Val) => v as bigint;
const uint = (v: Val) => (v as UintV).v;

function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

export const math: Overload[] = [
  ...extremum('math.greatest', 1),
  ...extremum('math.least', -1),
  global('math.ceil', 'math_ceil_double', [T.double], T.double, dbl(Math.ceil)),
  global('math.floor', 'math_floor_double', [T.double], T.double, dbl(Math.floor)),
  global('math.round', 'math_round_double', [T.double], T.double, dbl(roundHalfAway)),
  global('math.trunc', 'math_trunc_double', [T.double], T.double, dbl(Math.trunc)),
  global('math.sqrt', 'math_sqrt_double', [T.double], T.double, dbl(Math.sqrt)),
  global(
    'math.isInf',
    'math_isInf_double',
    [T.double],
    T.bool,
    dbl((x) => x === Number.POSITIVE_INFINITY || x === Number.NEGATIVE_INFINITY),
  ),
  global('math.isNaN', 'math_isNaN_double', [T.double], T.bool, dbl(Number.isNaN)),
  global('math.isFinite', 'math_isFinite_double', [T.double], T.bool, dbl(Number.isFinite)),
  global('math.abs', 'math_abs_int', [T.int], T.int, (a) => checkInt(int(a[0]!) < 0n ? -int(a[0]!) : int(a[0]!))),
  global('math.abs', 'math_abs_uint', [T.uint], T.uint, (a) => a[0]!),
  global('math.abs', 'math_abs_double', [T.double], T.double, dbl(Math.abs)),
  global('math.sign', 'math_sign_int', [T.int], T.int, (a) => (int(a[0]!) > 0n ? 1n : int(a[0]!) < 0n ? -1n : 0n)),
  global('math.sign', 'math_sign_uint', [T.uint], T.uint, (a) => new UintV(uint(a[0]!) > 0n ? 1n : 0n)),
  global('math.sign', 'math_sign_double', [T.double], T.double, dbl(Math.sign)),
  global('math.bitAnd', 'math_bitAnd_int_int', [T.int, T.int], T.int, (a) => int(a[0]!) & int(a[1]!)),
  global('math.bitAnd', 'math_bitAnd_uint_uint', [T.uint, T.uint], T.uint, (a) => new UintV(uint(a[0]!) & uint(a[1]!))),
  global('math.bitOr', 'math_bitOr_int_int', [T.int, T.int], T.int, (a) => int(a[0]!) | int(a[1]!)),
  global('math.bitOr', 'math_bitOr_uint_uint', [T.uint, T.uint], T.uint, (a) => new UintV(uint(a[0]!) | uint(a[1]!))),
  global('math.bitXor', 'math_bitXor_int_int', [T.int, T.int], T.int, (a) => int(a[0]!) ^ int(a[1]!)),
  global('math.bitXor', 'math_bitXor_uint_uint', [T.uint, T.uint], T.uint, (a) => new UintV(uint(a[0]!) ^ uint(a[1]!))),
  global('math.bitNot', 'math_bitNot_int_int', [T.int], T.int, (a) => ~int(a[0]!)),
  global('math.bitNot', 'math_bitNot_uint_uint', [T.uint], T.uint, (a) => new UintV(BigInt.asUintN(64, ~uint(a[0]!)))),
  global('math.bitShiftLeft', 'math_bitShiftLeft_int_int', [T.int, T.int], T.int, (a) => shift(int(a[0]!), int(a[1]!), true, 64, true)),
  global('math.bitShiftLeft', 'math_bitShiftLeft_uint_int', [T.uint, T.int], T.uint, (a) => new UintV(shift(uint(a[0]!), int(a[1]!), true, 64, false))),
  global('math.bitShiftRight', 'math_bitShiftRight_int_int', [T.int, T.int], T.int, (a) => shift(int(a[0]!), int(a[1]!), false, 64, true)),
  global('math.bitShiftRight', 'math_bitShiftRight_uint_int', [T.uint, T.int], T.uint, (a) => new UintV(shift(uint(a[0]!), int(a[1]!), false, 64, false))),
];

function shift(v: bigint, by: bigint, left: boolean, bits: number, signed: boolean): bigint {
  if (by < 0n) throw new CelError(`math.bitShift${left ? 'Left' : 'Right'}() negative offset: ${by}`);
  if (by >= BigInt(bits)) return 0n;
  // cel-go shifts right logically (as uint64) for ints too
  const u = BigInt.asUintN(bits, v);
  const r = left ? BigInt.asUintN(bits, u << by) : u >> by;
  return signed ? BigInt.asIntN(bits, r) : r;
}

export const encoders: Overload[] = [
  global('base64.encode', 'base64_encode_bytes', [T.bytes], T.string, (a) => Buffer.from(a[0] as Uint8Array).toString('base64')),
  global('base64.decode', 'base64_decode_string', [T.string], T.bytes, (a) => {
    const s = a[0] as string;
    const m = /[^A-Za-z0-9+/=]/.exec(s) ?? (/=[^=]/.exec(s) ? { index: s.indexOf('=') } : null);
    if (m) throw new CelError(`illegal base64 data at input byte ${m.index}`);
    return new Uint8Array(Buffer.from(s, 'base64'));
  }),
];
