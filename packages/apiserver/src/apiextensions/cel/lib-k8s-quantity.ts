/**
 * Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go)
 * over exact decimal values.
 *
 * A quantity is `n × 10^exp` with a bigint `n`, so `add`, `sub`, `compareTo`
 * and equality are exact as upstream's inf.Dec arithmetic is. Parsing accepts
 * exactly what `resource.ParseQuantity` accepts (the scanner is
 * @kubeling/apimachinery's `quantityError`), rounds up to nano precision and
 * caps the magnitude at 2^63-1, as ParseQuantity does.
 */
import { quantityError } from '@kubeling/apimachinery';
import { type Overload, global, member } from './registry.js';
import { K8sTypes, T } from './types.js';
import { CelError, INT64_MAX, INT64_MIN, OpaqueV, type Val } from './values.js';

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** Beyond this many decimal digits of exponent difference values are compared by magnitude only. */
const MAX_SCALE_GAP = 4000;

export class QuantityV extends OpaqueV {
  readonly typeName = 'kubernetes.Quantity';
  /** value = n × 10^exp */
  constructor(
    readonly n: bigint,
    readonly exp: number,
  ) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof QuantityV && compareQ(this, o) === 0;
  }
  sign(): number {
    return this.n === 0n ? 0 : this.n < 0n ? -1 : 1;
  }
}

/** Both values scaled to the smaller exponent. */
function align(a: QuantityV, b: QuantityV): [bigint, bigint, number] {
  const e = Math.min(a.exp, b.exp);
  return [a.n * 10n ** BigInt(a.exp - e), b.n * 10n ** BigInt(b.exp - e), e];
}

function digits(n: bigint): number {
  return (n < 0n ? -n : n).toString().length;
}

export function compareQ(a: QuantityV, b: QuantityV): number {
  if (a.sign() !== b.sign()) return a.sign() < b.sign() ? -1 : 1;
  if (a.sign() === 0) return 0;
  if (Math.abs(a.exp - b.exp) > MAX_SCALE_GAP) {
    // magnitudes differ by thousands of orders: the larger magnitude decides
    const ma = digits(a.n) + a.exp;
    const mb = digits(b.n) + b.exp;
    return (ma < mb ? -1 : 1) * a.sign();
  }
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function normalize(n: bigint, exp: number): QuantityV {
  let m = n;
  let e = exp;
  while (m !== 0n && m % 10n === 0n && e < 0) {
    m /= 10n;
    e++;
  }
  return new QuantityV(m, m === 0n ? 0 : e);
}

/** resource.ParseQuantity, exactly. */
export function parseQuantityExact(str: string): QuantityV {
  const err = quantityError(str);
  if (err) throw new CelError(err);
  const m = /^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[-+]?\d*)$/.exec(str);
  if (!m) throw new CelError(quantityError('') ?? 'invalid quantity');
  const neg = m[1] === '-';
  const int = m[2] ?? '';
  const frac = m[3] ?? '';
  const suffix = m[4] ?? '';
  let n = BigInt(`${int}${frac}` || '0');
  let exp = -frac.length;
  if (suffix in BINARY) n *= 2n ** BigInt(BINARY[suffix]!);
  else if (suffix in DECIMAL) exp += DECIMAL[suffix]!;
  else exp += Number(BigInt.asIntN(32, BigInt(suffix.slice(1))));
  // round up (away from zero) to nano precision
  if (exp < -9 && -9 - exp > digits(n) + 1) {
    // far below a nano: any non-zero value rounds up to 1n
    n = n === 0n ? 0n : 1n;
    exp = -9;
  } else if (exp < -9) {
    const div = 10n ** BigInt(-9 - exp);
    const q = n / div;
    n = n % div === 0n ? q : q + 1n;
    exp = -9;
  }
  // cap at the maximum int64 magnitude
  const cap = new QuantityV(INT64_MAX, 0);
  let q = normalize(neg ? -n : n, exp);
  if (compareQ(new QuantityV(q.n < 0n ? -q.n : q.n, q.exp), cap) > 0) q = new QuantityV(neg ? -INT64_MAX : INT64_MAX, 0);
  return q;
}

function addQ(a: QuantityV, b: QuantityV): QuantityV {
  if (b.n === 0n) return a;
  if (a.n === 0n) return b;
  const [x, y, e] = align(a, b);
  return normalize(x + y, e);
}

const negQ = (a: QuantityV) => new QuantityV(-a.n, a.exp);

/** Quantity.AsInt64: the value when it is an integer within int64. */
function asInt64(q: QuantityV): bigint | undefined {
  let v: bigint;
  if (q.exp >= 0) {
    if (q.exp > 19) return q.n === 0n ? 0n : undefined;
    v = q.n * 10n ** BigInt(q.exp);
  } else {
    const d = 10n ** BigInt(-q.exp);
    if (q.n % d !== 0n) return undefined;
    v = q.n / d;
  }
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

const qv = (v: Val) => v as QuantityV;
const isQ = (s: string) => {
  try {
    parseQuantityExact(s);
    return true;
  } catch {
    return false;
  }
};

export const quantity: Overload[] = [
  global('quantity', 'string_to_quantity', [T.string], K8sTypes.quantity, (a) => parseQuantityExact(a[0] as string)),
  global('isQuantity', 'is_quantity_string', [T.string], T.bool, (a) => isQ(a[0] as string)),
  member('sign', 'quantity_sign', [K8sTypes.quantity], T.int, (a) => BigInt(qv(a[0]!).sign())),
  member('isGreaterThan', 'quantity_is_greater_than', [K8sTypes.quantity, K8sTypes.quantity], T.bool, (a) => compareQ(qv(a[0]!), qv(a[1]!)) === 1),
  member('isLessThan', 'quantity_is_less_than', [K8sTypes.quantity, K8sTypes.quantity], T.bool, (a) => compareQ(qv(a[0]!), qv(a[1]!)) === -1),
  member('compareTo', 'quantity_compare_to', [K8sTypes.quantity, K8sTypes.quantity], T.int, (a) => BigInt(compareQ(qv(a[0]!), qv(a[1]!)))),
  member('asApproximateFloat', 'quantity_get_float', [K8sTypes.quantity], T.double, (a) => Number(`${qv(a[0]!).n}e${qv(a[0]!).exp}`)),
  member('asInteger', 'quantity_get_int', [K8sTypes.quantity], T.int, (a) => {
    const v = asInt64(qv(a[0]!));
    if (v === undefined) throw new CelError('cannot convert value to integer');
    return v;
  }),
  member('isInteger', 'quantity_is_integer', [K8sTypes.quantity], T.bool, (a) => asInt64(qv(a[0]!)) !== undefined),
  member('add', 'quantity_add', [K8sTypes.quantity, K8sTypes.quantity], K8sTypes.quantity, (a) => addQ(qv(a[0]!), qv(a[1]!))),
  member('add', 'quantity_add_int', [K8sTypes.quantity, T.int], K8sTypes.quantity, (a) => addQ(qv(a[0]!), new QuantityV(a[1] as bigint, 0))),
  member('sub', 'quantity_sub', [K8sTypes.quantity, K8sTypes.quantity], K8sTypes.quantity, (a) => addQ(qv(a[0]!), negQ(qv(a[1]!)))),
  member('sub', 'quantity_sub_int', [K8sTypes.quantity, T.int], K8sTypes.quantity, (a) => addQ(qv(a[0]!), new QuantityV(-(a[1] as bigint), 0))),
];
