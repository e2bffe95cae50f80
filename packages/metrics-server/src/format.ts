/**
 * How metrics-server writes its numbers: usage as resource.Quantity strings
 * in their canonical form (k8s.io/apimachinery pkg/api/resource quantity.go
 * CanonicalizeBytes), and the window as Go's time.Duration String.
 *
 * metrics-server builds CPU as a DecimalSI quantity of nanocores (scale -9)
 * and memory as a BinarySI quantity of bytes (sigs.k8s.io/metrics-server
 * pkg/storage/types.go uint64Quantity), so CPU reads "123m" or "1234567n" and
 * memory "634824Ki" or "1234567" when not a multiple of 1024.
 */

const DECIMAL_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * A non-negative integer `value × 10^scale` in canonical DecimalSI form: the
 * factors of ten go into the exponent, which is then lowered to a multiple of
 * three (int64Amount.AsCanonicalBytes).
 */
export function decimalQuantity(value: number, scale: number): string {
  let v = Math.trunc(value);
  if (v === 0) return '0';
  let exp = scale;
  while (v >= 10 && v % 10 === 0) {
    v /= 10;
    exp++;
  }
  const r = ((exp % 3) + 3) % 3;
  // exponent % 3 is 1 (or -2): one factor of ten back; 2 (or -1): two.
  if (r === 1) {
    v *= 10;
    exp -= 1;
  } else if (r === 2) {
    v *= 100;
    exp -= 2;
  }
  const suffix = DECIMAL_SUFFIX[exp];
  return suffix === undefined ? `${v}e${exp}` : `${v}${suffix}`;
}

/** CPU usage in nanocores, as metrics-server serializes it (DecimalSI, scale -9). */
export const cpuQuantity = (nanocores: number): string => decimalQuantity(Math.max(0, Math.floor(nanocores)), -9);

/**
 * Bytes as a BinarySI quantity: below 1024 it is written as DecimalSI (so
 * 1000 bytes is "1k"), otherwise the factors of 1024 become Ki, Mi, Gi….
 */
export function bytesQuantity(bytes: number): string {
  let v = Math.max(0, Math.floor(bytes));
  if (v === 0) return '0';
  if (v < 1024) return decimalQuantity(v, 0);
  let times = 0;
  while (v >= 1024 && v % 1024 === 0 && times < BINARY_SUFFIX.length - 1) {
    v /= 1024;
    times++;
  }
  return `${v}${BINARY_SUFFIX[times]}`;
}

/** The digits of `v / 10^prec` after the point, trailing zeros dropped (Go's fmtFrac). */
function frac(v: number, prec: number): [string, number] {
  let digits = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const d = v % 10;
    print = print || d !== 0;
    if (print) digits = `${d}${digits}`;
    v = Math.floor(v / 10);
  }
  return [print ? `.${digits}` : '', v];
}

/**
 * Go's time.Duration String for a whole number of nanoseconds: "0s", "300ms",
 * "1.5µs", "15.002s", "1m0s", "2h3m4.5s".
 */
export function goDuration(ns: number): string {
  let u = Math.abs(Math.trunc(ns));
  const sign = ns < 0 ? '-' : '';
  if (u === 0) return '0s';
  if (u < 1e9) {
    if (u < 1e3) return `${sign}${u}ns`;
    const [unit, prec] = u < 1e6 ? ['µs', 3] : ['ms', 6];
    const [f, whole] = frac(u, prec);
    return `${sign}${whole}${f}${unit}`;
  }
  const [f, secs] = frac(u, 9);
  u = secs;
  const s = u % 60;
  u = Math.floor(u / 60);
  if (u === 0) return `${sign}${s}${f}s`;
  const m = u % 60;
  const h = Math.floor(u / 60);
  return h === 0 ? `${sign}${m}m${s}${f}s` : `${sign}${h}h${m}m${s}${f}s`;
}
