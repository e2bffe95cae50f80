/**
 * resource.Quantity (k8s.io/apimachinery/pkg/api/resource): a signed decimal
 * number with a binary (Ki, Mi, Gi, Ti, Pi, Ei), decimal (n, u, m, "", k, M, G,
 * T, P, E) or exponent (e3, E-2) suffix. Values are returned as JavaScript
 * numbers: exact for everything below 2^53, which covers cpu in millicores and
 * memory in bytes on any real node.
 *
 * Acceptance is upstream's `ParseQuantity`, scanner quirks included: the number
 * may lack digits (`.`, `-`, `1.`, `Mi` all parse, as 0 or 1), the suffix is
 * scanned from the letters `eEinumkKMGTP` then an optional sign and digits, and an
 * exponent is read as an int64 and narrowed to int32 as 1.33 does.
 */

/** Upstream's split expression; only its text is used, in the error message. */
export const QUANTITY_REGEXP = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** `resource.ErrFormatWrong` */
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${QUANTITY_REGEXP}'`;
/** `resource.ErrNumeric` */
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
/** `resource.ErrSuffix` */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const SUFFIX_LETTERS = 'eEinumkKMGTP';
const MAX_INT64_FACTORS = 18;
const NANO = -9;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export class QuantityError extends Error {}

interface Scanned {
  positive: boolean;
  /** sign and number as written (`-1.5`, `.`, ``) */
  value: string;
  /** integer digits without leading zeros; `0` when there are none */
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** upstream parseQuantityString: undefined means ErrFormatWrong. */
function scan(str: string): Scanned | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end) {
    if (str[0] === '-') {
      positive = false;
      pos++;
    } else if (str[0] === '+') pos++;
  }
  // leading zeros
  for (;;) {
    if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
    if (str[pos] !== '0') break;
    pos++;
  }
  let i = pos;
  while (i < end && isDigit(str.charCodeAt(i))) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  let num = str.slice(pos, i);
  pos = i;
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str.charCodeAt(i))) i++;
    if (i >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: '' };
    denom = str.slice(pos, i);
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  i = pos;
  while (i < end && SUFFIX_LETTERS.includes(str[i]!)) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  i = pos;
  while (i < end && isDigit(str.charCodeAt(i))) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  return undefined; // a character that is neither suffix letter nor exponent digit
}

interface Interpreted {
  base: 2 | 10;
  exponent: number;
  format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
}

/** upstream suffixer.interpret */
function interpret(s: string): Interpreted | undefined {
  if (s in DECIMAL) return { base: 10, exponent: DECIMAL[s]!, format: 'DecimalSI' };
  if (s in BINARY) return { base: 2, exponent: BINARY[s]!, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E')) {
    // strconv.ParseInt(s[1:], 10, 64), then int32(parsed)
    if (!/^[+-]?[0-9]+$/.test(s.slice(1))) return undefined;
    const n = BigInt(s.slice(1));
    if (n < INT64_MIN || n > INT64_MAX) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
  }
  return undefined;
}

interface Parsed extends Scanned, Interpreted {}

function parse(str: string): Parsed | string {
  if (str.length === 0) return QUANTITY_FORMAT_ERROR;
  const s = scan(str);
  if (!s) return QUANTITY_FORMAT_ERROR;
  const it = interpret(s.suffix);
  if (!it) return QUANTITY_SUFFIX_ERROR;
  // Upstream takes an int64 fast path when the digits fit; otherwise it parses
  // the number part with inf.Dec, which refuses a number without any digit.
  let precision: number;
  let scale = 0;
  if (it.format === 'BinarySI') {
    precision = it.exponent >= 0 && s.denom.length === 0 ? 15 - s.num.length - Math.trunc((it.exponent * 3) / 10) - 1 : -1;
  } else {
    scale = it.exponent;
    precision = MAX_INT64_FACTORS - (s.num.length + s.denom.length);
  }
  const fast = precision >= 0 && scale - s.denom.length >= NANO && (it.format !== 'BinarySI' || fitsInt64(s.num, it.exponent));
  if (!fast && !/[0-9]/.test(s.value)) return QUANTITY_NUMERIC_ERROR;
  return { ...s, ...it };
}

/** Whether num × 2^exp stays within int64 (upstream's int64Multiply on the fast path). */
function fitsInt64(num: string, exp: number): boolean {
  return BigInt(num) << BigInt(exp) <= INT64_MAX;
}

/**
 * Upstream's ParseQuantity verdict on `str`, exactly (no trimming): undefined when
 * it parses, else the error text (`quantities must match the regular expression
 * '...'`, `unable to parse numeric part of quantity`, `unable to parse quantity's suffix`).
 */
export function quantityError(str: string): string | undefined {
  if (str === '0') return undefined;
  const p = parse(str);
  return typeof p === 'string' ? p : undefined;
}

/** Go's unicode.IsSpace, which strings.TrimSpace trims. */
const isGoSpace = (c: number): boolean =>
  (c >= 9 && c <= 13) ||
  c === 32 ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;

/** Go's strings.TrimSpace (what Quantity.UnmarshalJSON applies before parsing). */
export function goTrimSpace(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isGoSpace(s.charCodeAt(a))) a++;
  while (b > a && isGoSpace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/**
 * Parses a quantity into its value; throws QuantityError (with upstream's
 * message) on one upstream refuses. Surrounding white space is ignored, as
 * upstream's JSON decoding of a Quantity ignores it.
 */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') {
    if (!Number.isFinite(q)) throw new QuantityError(QUANTITY_FORMAT_ERROR);
    return q;
  }
  const str = goTrimSpace(q);
  if (str === '0') return 0;
  const p = parse(str);
  if (typeof p === 'string') throw new QuantityError(p);
  const num = Number(`${p.num}.${p.denom || '0'}`);
  const v = p.base === 2 ? num * 2 ** p.exponent : scale(num, p.exponent);
  return p.positive || v === 0 ? v : -v;
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
