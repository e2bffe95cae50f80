/**
 * resource.Quantity (k8s.io/apimachinery/pkg/api/resource): a signed decimal
 * number with a binary (Ki, Mi, Gi, Ti, Pi, Ei), decimal (n, u, m, "", k, M, G,
 * T, P, E) or exponent (e3, E-2) suffix. Values are returned as JavaScript
 * numbers: exact for everything below 2^53, which covers cpu in millicores and
 * memory in bytes on any real node.
 */

const QUANTITY = /^([+-]?[0-9]*\.?[0-9]*)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

export class QuantityError extends Error {}

/** Parses a quantity into its value; throws QuantityError on a malformed one. */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') {
    if (!Number.isFinite(q)) throw new QuantityError('quantities must match the regular expression');
    return q;
  }
  const s = q.trim();
  const m = QUANTITY.exec(s);
  if (!s || !m || m[1] === '' || m[1] === '+' || m[1] === '-' || m[1] === '.') throw new QuantityError('quantities must match the regular expression');
  const num = Number(m[1]);
  const suffix = m[2] ?? '';
  if (suffix in BINARY) return num * BINARY[suffix]!;
  if (suffix in DECIMAL) return scale(num, DECIMAL[suffix]!);
  return scale(num, Number(suffix.slice(1)));
}

/** num × 10^exp without the float noise of multiplying by 0.001. */
function scale(num: number, exp: number): number {
  return exp >= 0 ? num * 10 ** exp : num / 10 ** -exp;
}

/** Whether a quantity parses. */
export function isQuantity(q: unknown): boolean {
  if (typeof q !== 'string' && typeof q !== 'number') return false;
  try {
    parseQuantity(q);
    return true;
  } catch {
    return false;
  }
}

/** The value in thousandths, rounded up as Quantity.MilliValue does (cpu: "100m" → 100, "1" → 1000). */
export function milliValue(q: string | number): number {
  return Math.ceil(Math.round(parseQuantity(q) * 1e9) / 1e6);
}

/** The integer value, rounded up as Quantity.Value does (memory: "1Gi" → 1073741824, "1.5" → 2). */
export function intValue(q: string | number): number {
  return Math.ceil(Math.round(parseQuantity(q) * 1e6) / 1e6);
}
