/**
 * The JSON forms of the types whose marshalers Kubernetes writes by hand:
 * metav1.Time (RFC 3339, whole seconds: meta/v1 time.go), metav1.MicroTime
 * (RFC 3339 with six fractional digits: micro_time.go) and metav1.Duration (Go's
 * time.Duration text: duration.go and the Go standard library's time package).
 */

/** Seconds since the epoch as metav1.Time writes them: `2006-01-02T15:04:05Z`. */
export function formatTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  if (Number.isNaN(d.getTime())) throw new Error(`time out of range: ${seconds}s`);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Seconds and nanoseconds as metav1.MicroTime writes them: `2006-01-02T15:04:05.000000Z`. */
export function formatMicroTime(seconds: number, nanos: number): string {
  const base = formatTime(seconds);
  const micros = Math.floor(nanos / 1000);
  return `${base.slice(0, -1)}.${String(micros).padStart(6, '0')}Z`;
}

/** An RFC 3339 time as seconds and nanoseconds since the epoch; undefined when it does not parse. */
export function parseTime(text: string): { seconds: number; nanos: number } | undefined {
  // The form kubeling and Go write, `2006-01-02T15:04:05Z`, without a regular expression.
  if (text.length === 20 && text[4] === '-' && text[7] === '-' && text[10] === 'T' && text[13] === ':' && text[16] === ':' && text[19] === 'Z') {
    const [y, mo, d, h, mi, se] = [+text.slice(0, 4), +text.slice(5, 7), +text.slice(8, 10), +text.slice(11, 13), +text.slice(14, 16), +text.slice(17, 19)];
    if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && se < 60) {
      const ms = Date.UTC(y, mo - 1, d, h, mi, se);
      // Date.UTC takes years below 100 as 19xx: those, and days past a month's end, go the long way.
      if (y >= 100 && new Date(ms).getUTCDate() === d) return { seconds: ms / 1000, nanos: 0 };
    }
  }
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/i.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]!.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  return { seconds: Math.floor(ms / 1000), nanos: m[2] ? Number(m[2].padEnd(9, '0')) : 0 };
}

/** Go's `time.Duration.String()` of a count of nanoseconds. */
export function formatDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const neg = nanos < 0n;
  let u = neg ? -nanos : nanos;
  let out: string;
  if (u < 1_000_000_000n) {
    // Under a second: the largest unit that keeps the integer part non-zero.
    if (u < 1000n) out = `${u}ns`;
    else if (u < 1_000_000n) out = `${frac(u, 3)}µs`;
    else out = `${frac(u, 6)}ms`;
  } else {
    const secs = `${frac(u % 60_000_000_000n, 9)}s`;
    u /= 60_000_000_000n;
    out = secs;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/** `v` / 10^prec with its fraction, trailing zeros (and a bare point) dropped, as Go's fmtFrac writes it. */
function frac(v: bigint, prec: number): string {
  const p = 10n ** BigInt(prec);
  const f = (v % p).toString().padStart(prec, '0').replace(/0+$/, '');
  return f ? `${v / p}.${f}` : `${v / p}`;
}

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n,
  μs: 1000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's `time.ParseDuration`: nanoseconds, or undefined when the text is no duration. */
export function parseDuration(text: string): bigint | undefined {
  let s = text;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (!s) return undefined;
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (s) {
    const m = re.exec(s);
    if (!m || (!m[1] && !m[2])) return undefined;
    const unit = UNITS[m[3]!]!;
    total += BigInt(m[1] || '0') * unit;
    if (m[2]) total += (BigInt(m[2]) * unit) / 10n ** BigInt(m[2].length);
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}
