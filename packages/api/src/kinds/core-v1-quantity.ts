/**
 * resource.Quantity as core/v1 validation reads it (upstream's
 * k8s.io/apimachinery/pkg/api/resource): exact parsing into nano-units with
 * ParseQuantity's quirks, the canonical string form, and comparison.
 */

/** A parsed resource.Quantity: its value in nano-units (rounded up as upstream does) and its format. */
export interface ExactQuantity {
  negative: boolean;
  /** |value| × 10⁹, rounded away from zero; capped at (2⁶³−1) × 10⁹ unless the value fits an int64 amount (`10E` stays 10¹⁹). */
  nanos: bigint;
  format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
  /** The string upstream keeps and prints back when it was already canonical. */
  cached?: string;
}

/** One unit in nano-units. */
export const NANO = 1_000_000_000n;
const MAX_NANOS = (2n ** 63n - 1n) * NANO;
const BINARY_EXP: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * resource.ParseQuantity, exactly, its scanner's quirks included (`.`, `1.` and
 * `Mi` parse; an exponent is narrowed to int32); undefined for what upstream
 * refuses (the decoder reports those).
 */
export function parseExactQuantity(q: unknown): ExactQuantity | undefined {
  if (typeof q === 'number') {
    if (!Number.isFinite(q)) return undefined;
    q = String(q);
  }
  if (typeof q !== 'string') return undefined;
  const str = q.trim();
  if (str === '0') return { negative: false, nanos: 0n, format: 'DecimalSI', cached: '0' };
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)$/.exec(str);
  if (!m || str === '') return undefined;
  const [, sign, rawNum = '', rawDenom, suffix = ''] = m;
  let base: 2 | 10;
  let exp: number;
  let format: ExactQuantity['format'];
  if (suffix in DECIMAL_EXP) [base, exp, format] = [10, DECIMAL_EXP[suffix]!, 'DecimalSI'];
  else if (suffix in BINARY_EXP) [base, exp, format] = [2, BINARY_EXP[suffix]!, 'BinarySI'];
  else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    const n = BigInt(suffix.slice(1));
    if (n < -(2n ** 63n) || n > 2n ** 63n - 1n) return undefined;
    [base, exp, format] = [10, Number(BigInt.asIntN(32, n)), 'DecimalExponent'];
  } else return undefined;
  const num = rawNum.replace(/^0+/, '') || '0';
  const denom = rawDenom ?? '';
  const negative = sign === '-';

  // ParseQuantity's fast path (int64 amounts) neither rounds nor caps, and keeps
  // the input as the printed form when it is canonical already.
  let cached: string | undefined;
  let fastPath = false;
  if (base === 10) {
    const scale = exp - denom.length;
    const shifted = num + denom;
    fastPath = 18 - shifted.length >= 0 && scale >= -9;
    if (fastPath && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') cached = str;
  } else if (denom === '' && 15 - num.length - Math.trunc((exp * 3) / 10) - 1 >= 0) {
    const value = BigInt(num);
    fastPath = value * 2n ** BigInt(exp) <= 2n ** 63n - 1n;
    if (fastPath && exp % 10 === 0 && (value & 7n) !== 0n) cached = str;
  }
  // The slow path parses the number with inf.Dec, which wants a digit.
  if (!fastPath && !/[0-9]/.test(rawNum + denom)) return undefined;

  let unscaled = BigInt(num + denom);
  let scale10 = -denom.length;
  if (base === 10) scale10 += exp;
  else unscaled *= 2n ** BigInt(exp);
  const digits = unscaled.toString().length;
  let nanos: bigint;
  if (unscaled === 0n) nanos = 0n;
  // Far beyond int64 (capped, or an absurd int64 amount such as 1e2000000000: kept huge, not computed).
  else if (scale10 + 9 + digits > 40) nanos = fastPath ? 10n ** 60n : MAX_NANOS;
  else if (scale10 >= -9) nanos = unscaled * 10n ** BigInt(scale10 + 9);
  // Far below a nano: rounded up to one.
  else if (-9 - scale10 > digits) nanos = 1n;
  else {
    const div = 10n ** BigInt(-9 - scale10);
    nanos = unscaled / div + (unscaled % div === 0n ? 0n : 1n);
  }
  if (!fastPath && nanos > MAX_NANOS) nanos = MAX_NANOS;
  return { negative: negative && nanos !== 0n, nanos, format, ...(cached !== undefined ? { cached } : {}) };
}

/** Quantity.String(): the canonical form (`1000m` → `1`, `1024Mi` → `1Gi`, `0.5` → `500m`, `1000` → `1k`). */
export function canonicalQuantity(q: unknown): string {
  const p = typeof q === 'object' && q !== null && 'nanos' in q ? (q as ExactQuantity) : parseExactQuantity(q);
  if (!p) return String(q);
  if (p.cached !== undefined) return p.cached;
  if (p.nanos === 0n) return '0';
  const sign = p.negative ? '-' : '';
  let format = p.format;
  if (format === 'BinarySI' && (p.nanos < 1024n * NANO || p.nanos % NANO !== 0n)) format = 'DecimalSI';
  if (format === 'BinarySI') {
    let v = p.nanos / NANO;
    let e = 0;
    while (v >= 1024n && v % 1024n === 0n) {
      v /= 1024n;
      e++;
    }
    return `${sign}${v}${BINARY_SUFFIX[e]}`;
  }
  let v = p.nanos;
  let e = -9;
  while (v >= 10n && v % 10n === 0n) {
    v /= 10n;
    e++;
  }
  const e3 = Math.floor(e / 3) * 3;
  v *= 10n ** BigInt(e - e3);
  const suffix = format === 'DecimalSI' ? (DECIMAL_SUFFIX[e3] ?? '') : e3 === 0 ? '' : `e${e3}`;
  return `${sign}${v}${suffix}`;
}

const signedNanos = (p: ExactQuantity) => (p.negative ? -p.nanos : p.nanos);

/** Quantity.Cmp: -1, 0 or 1; undefined when either does not parse. */
export function compareQuantities(a: unknown, b: unknown): number | undefined {
  const x = parseExactQuantity(a);
  const y = parseExactQuantity(b);
  if (!x || !y) return undefined;
  const d = signedNanos(x) - signedNanos(y);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
