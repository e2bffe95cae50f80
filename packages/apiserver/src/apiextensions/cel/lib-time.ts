/**
 * Timestamps and durations (cel-go common/types/timestamp.go, duration.go and
 * the standard library's conversions and accessors): RFC 3339 parsing and
 * printing, Go duration syntax, arithmetic with range checks, and the
 * `getFullYear`/`getHours`/... accessors with an optional time zone (an IANA
 * name or a `±HH:MM` offset; UTC by default, as Kubernetes sets
 * `cel.DefaultUTCTimeZone(true)`).
 */
import { type Overload, global, member } from './registry.js';
import { T } from './types.js';
import { CelError, DurationV, INT64_MAX, INT64_MIN, TimestampV, type Val } from './values.js';

const NS = 1_000_000_000n;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds (cel-go's timestamp range). */
const MIN_SEC = -62135596800n;
const MAX_SEC = 253402300799n;

function checkTs(sec: bigint, nanos: number): TimestampV {
  if (sec < MIN_SEC || sec > MAX_SEC) throw new CelError('timestamp out of range');
  return new TimestampV(sec, nanos);
}
function checkDur(n: bigint): DurationV {
  if (n < INT64_MIN || n > INT64_MAX) throw new CelError('integer overflow');
  return new DurationV(n);
}

const tsNanos = (t: TimestampV) => t.sec * NS + BigInt(t.nanos);
function tsFromNanos(n: bigint): TimestampV {
  let sec = n / NS;
  let rem = n % NS;
  if (rem < 0n) {
    rem += NS;
    sec -= 1n;
  }
  return checkTs(sec, Number(rem));
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp as Go's time.Parse(time.RFC3339, s). */
export function parseTimestamp(s: string, re: RegExp = RFC3339): TimestampV {
  const m = re.exec(s);
  const fail = () => new CelError(`parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(s)} as "2006"`);
  if (!m) throw fail();
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 59) throw fail();
  const frac = m[7] ? Number(m[7].slice(1).padEnd(9, '0')) : 0;
  let offset = 0;
  const tz = m[8] ?? 'Z';
  if (tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1;
    offset = sign * (Number(tz.slice(1, 3)) * 3600 + Number(tz.slice(4, 6)) * 60);
  }
  const days = daysFromCivil(y, mo, d);
  const sec = BigInt(days) * 86400n + BigInt(h * 3600 + mi * 60 + se - offset);
  return checkTs(sec, frac);
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z0: number): { y: number; m: number; d: number } {
  const z = z0 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

interface Civil {
  y: number;
  m: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
  dow: number;
  doy: number;
}

function civil(sec: bigint, nanos: number): Civil {
  const days = Number(sec >= 0n ? sec / 86400n : (sec - 86399n) / 86400n);
  const rem = Number(sec - BigInt(days) * 86400n);
  const { y, m, d } = civilFromDays(days);
  return {
    y,
    m,
    d,
    h: Math.floor(rem / 3600),
    mi: Math.floor((rem % 3600) / 60),
    s: rem % 60,
    ms: Math.floor(nanos / 1e6),
    dow: (((days + 4) % 7) + 7) % 7,
    doy: days - daysFromCivil(y, 1, 1),
  };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Go's time.Time.Format(time.RFC3339Nano) in UTC, as cel-go's string(timestamp). */
export function formatTimestamp(t: TimestampV): string {
  const c = civil(t.sec, t.nanos);
  const frac = t.nanos ? `.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${pad(c.y, 4)}-${pad(c.m)}-${pad(c.d)}T${pad(c.h)}:${pad(c.mi)}:${pad(c.s)}${frac}Z`;
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** Go's strconv.Atoi. */
function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new CelError(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  return Number(s);
}

/** The offset in seconds of a time zone at an instant: `[+-]H:MM` (cel-go timeZone), `UTC`, or an IANA name. */
function zoneOffset(tz: string, sec: bigint): number {
  const colon = tz.indexOf(':');
  if (colon >= 0) {
    const hr = atoi(tz.slice(0, colon));
    const min = atoi(tz.slice(colon + 1));
    return (tz[0] === '-' ? hr * 60 - min : hr * 60 + min) * 60;
  }
  if (tz === 'UTC' || tz === '') return 0;
  let fmt = zoneFormats.get(tz);
  if (!fmt) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new CelError(`unknown time zone ${tz}`);
    }
    if (zoneFormats.size > 100) zoneFormats.clear();
    zoneFormats.set(tz, fmt);
  }
  const ms = Number(sec) * 1000;
  const parts = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return Math.round((local - ms) / 1000);
}

function localCivil(args: Val[]): Civil {
  const t = args[0] as TimestampV;
  const off = args.length > 1 ? zoneOffset(args[1] as string, t.sec) : 0;
  return civil(t.sec + BigInt(off), t.nanos);
}

const DURATION_UNITS: Record<string, bigint> = { ns: 1n, us: 1000n, µs: 1000n, μs: 1000n, ms: 1_000_000n, s: NS, m: 60n * NS, h: 3600n * NS };

/** Go's time.ParseDuration. */
export function parseDuration(s: string): DurationV {
  const bad = () => new CelError(`time: invalid duration ${JSON.stringify(s)}`);
  let str = s;
  let neg = false;
  if (str[0] === '-' || str[0] === '+') {
    neg = str[0] === '-';
    str = str.slice(1);
  }
  if (str === '0') return new DurationV(0n);
  if (str === '') throw bad();
  let total = 0n;
  while (str !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(str)!;
    if (m[0] === '' || m[0] === '.') throw bad();
    str = str.slice(m[0].length);
    const u = /^[^\d.]+/.exec(str)?.[0];
    if (!u) throw new CelError(`time: missing unit in duration ${JSON.stringify(s)}`);
    const unit = DURATION_UNITS[u];
    if (unit === undefined) throw new CelError(`time: unknown unit ${JSON.stringify(u)} in duration ${JSON.stringify(s)}`);
    str = str.slice(u.length);
    const whole = BigInt(m[1] || '0') * unit;
    const fracDigits = m[2] ?? '';
    const frac = fracDigits ? (BigInt(fracDigits) * unit) / 10n ** BigInt(fracDigits.length) : 0n;
    total += whole + frac;
    if (total > 2n ** 63n) throw bad();
  }
  if (!neg && total > INT64_MAX) throw bad();
  return new DurationV(neg ? -total : total);
}

/** cel-go's string(duration): seconds, shortest decimal, with an `s` suffix. */
export function formatDuration(d: DurationV): string {
  const neg = d.nanos < 0n;
  const a = neg ? -d.nanos : d.nanos;
  const sec = a / NS;
  const frac = (a % NS).toString().padStart(9, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${sec}${frac ? `.${frac}` : ''}s`;
}

const ts = (v: Val) => v as TimestampV;
const du = (v: Val) => v as DurationV;

function accessor(name: string, id: string, f: (c: Civil) => number): Overload[] {
  return [
    member(name, id, [T.timestamp], T.int, (a) => BigInt(f(localCivil(a)))),
    member(name, `${id}_with_tz`, [T.timestamp, T.string], T.int, (a) => BigInt(f(localCivil(a)))),
  ];
}

export const time: Overload[] = [
  global('timestamp', 'timestamp_to_timestamp', [T.timestamp], T.timestamp, (a) => a[0]!),
  global('timestamp', 'string_to_timestamp', [T.string], T.timestamp, (a) => parseTimestamp(a[0] as string)),
  global('timestamp', 'int64_to_timestamp', [T.int], T.timestamp, (a) => checkTs(a[0] as bigint, 0)),
  global('duration', 'duration_to_duration', [T.duration], T.duration, (a) => a[0]!),
  global('duration', 'string_to_duration', [T.string], T.duration, (a) => parseDuration(a[0] as string)),
  global('int', 'timestamp_to_int64', [T.timestamp], T.int, (a) => ts(a[0]!).sec),
  global('int', 'duration_to_int64', [T.duration], T.int, (a) => du(a[0]!).nanos),
  global('string', 'timestamp_to_string', [T.timestamp], T.string, (a) => formatTimestamp(ts(a[0]!))),
  global('string', 'duration_to_string', [T.duration], T.string, (a) => formatDuration(du(a[0]!))),
  global('_+_', 'add_timestamp_duration', [T.timestamp, T.duration], T.timestamp, (a) => tsFromNanos(tsNanos(ts(a[0]!)) + du(a[1]!).nanos)),
  global('_+_', 'add_duration_timestamp', [T.duration, T.timestamp], T.timestamp, (a) => tsFromNanos(tsNanos(ts(a[1]!)) + du(a[0]!).nanos)),
  global('_+_', 'add_duration_duration', [T.duration, T.duration], T.duration, (a) => checkDur(du(a[0]!).nanos + du(a[1]!).nanos)),
  global('_-_', 'subtract_timestamp_timestamp', [T.timestamp, T.timestamp], T.duration, (a) => checkDur(tsNanos(ts(a[0]!)) - tsNanos(ts(a[1]!)))),
  global('_-_', 'subtract_timestamp_duration', [T.timestamp, T.duration], T.timestamp, (a) => tsFromNanos(tsNanos(ts(a[0]!)) - du(a[1]!).nanos)),
  global('_-_', 'subtract_duration_duration', [T.duration, T.duration], T.duration, (a) => checkDur(du(a[0]!).nanos - du(a[1]!).nanos)),
  ...accessor('getFullYear', 'timestamp_to_year', (c) => c.y),
  ...accessor('getMonth', 'timestamp_to_month', (c) => c.m - 1),
  ...accessor('getDayOfYear', 'timestamp_to_day_of_year', (c) => c.doy),
  ...accessor('getDayOfMonth', 'timestamp_to_day_of_month', (c) => c.d - 1),
  ...accessor('getDate', 'timestamp_to_day_of_month_1_based', (c) => c.d),
  ...accessor('getDayOfWeek', 'timestamp_to_day_of_week', (c) => c.dow),
  ...accessor('getHours', 'timestamp_to_hours', (c) => c.h),
  ...accessor('getMinutes', 'timestamp_to_minutes', (c) => c.mi),
  ...accessor('getSeconds', 'timestamp_to_seconds', (c) => c.s),
  ...accessor('getMilliseconds', 'timestamp_to_milliseconds', (c) => c.ms),
  member('getHours', 'duration_to_hours', [T.duration], T.int, (a) => du(a[0]!).nanos / (3600n * NS)),
  member('getMinutes', 'duration_to_minutes', [T.duration], T.int, (a) => du(a[0]!).nanos / (60n * NS)),
  member('getSeconds', 'duration_to_seconds', [T.duration], T.int, (a) => du(a[0]!).nanos / NS),
  member('getMilliseconds', 'duration_to_milliseconds', [T.duration], T.int, (a) => du(a[0]!).nanos / 1_000_000n),
];

/** Lenient RFC 3339 for OpenAPI `date-time` data (strfmt.ParseDateTime also takes a space or no zone). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?$/;

/** Parses an OpenAPI `date-time` string (data of a `format: date-time` schema). */
export const parseDateTime = (s: string): TimestampV => parseTimestamp(s, DATE_TIME);

/** Parses an OpenAPI `date` string as midnight UTC. */
export function parseDate(s: string): TimestampV {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12 || Number(m[3]) < 1 || Number(m[3]) > daysIn(Number(m[1]), Number(m[2]))) {
    throw new CelError(`parsing time ${JSON.stringify(s)} as "2006-01-02": cannot parse ${JSON.stringify(s)} as "2006"`);
  }
  return checkTs(BigInt(daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]))) * 86400n, 0);
}
