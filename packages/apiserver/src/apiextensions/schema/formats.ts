/**
 * The string formats a CRD schema may validate: k8s.io/kube-openapi
 * pkg/validation/strfmt's default registry (default.go, date.go, time.go,
 * duration.go, bson.go, with govalidator's checks), restricted to what
 * apiextensions-apiserver keeps (pkg/apiserver/validation/formats.go:
 * `supportedVersionedFormats`). Any other format — including `int32`,
 * `int64`, `float`, `double` — is dropped from the schema before validation,
 * so it never produces an error.
 *
 * Format names are normalised the way strfmt does (dashes removed:
 * `date-time` → `datetime`).
 */
import { isIPv4, isIPv6 } from 'node:net';

const normalize = (name: string): string => name.replaceAll('-', '');

/** Go's net.ParseIP (no zones, IPv4 without leading zeros). */
const parseIP = (s: string): boolean => isIPv4(s) || (isIPv6(s) && !s.includes('%'));

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
// strfmt.HostnamePattern (symbols and letters of any script allowed).
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$/u;
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGBCOLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const DATETIME_TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u0080-\\u{10ffff}]+";
const ADDR_SPEC = `(?:${ATEXT}(?:\\.${ATEXT})*|"(?:[^"\\\\\\r\\n]|\\\\.)*")@(?:${ATEXT}(?:\\.${ATEXT})*|\\[[^\\[\\]\\\\]*\\])`;
const EMAIL = new RegExp(`^\\s*(?:${ADDR_SPEC}|[^<>]*<${ADDR_SPEC}>)\\s*$`, 'u');

/** Go's time.Parse("2006-01-02", s). */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
  return d <= days;
}

/** strfmt.IsDateTime: a date, a `t`, then hh:mm:ss[.frac](z|±hh:mm) compared as strings. */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = DATETIME_TIME.exec(parts[1]!);
  return !!m && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** Go's time.ParseDuration. */
function isGoDuration(s: string): boolean {
  if (s === '0' || s === '+0' || s === '-0') return true;
  return /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.test(s);
}

const TIME_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

/** strfmt.ParseDuration: Go's syntax, or any `<digits> <unit>` pairs in the Scala style. */
function isDuration(s: string): boolean {
  if (isGoDuration(s)) return true;
  for (const m of s.matchAll(/((\d+)\s*([A-Za-zµ]+))/g)) {
    const unit = m[3]!.trim().toLowerCase();
    for (const variants of TIME_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v.toLowerCase() === unit)) return true;
    }
  }
  return false;
}

/** Whether `s` has an ASCII control character (which Go's URL parser refuses). */
export const hasControlChar = (s: string): boolean => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** Go's url.ParseRequestURI (govalidator.IsRequestURI). */
function isRequestURI(s: string): boolean {
  if (s === '' || hasControlChar(s)) return false;
  if (s === '*') return true;
  let rest = s;
  let scheme = '';
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(s);
  if (sm) {
    scheme = sm[1]!;
    rest = s.slice(sm[0].length);
  } else if (s.startsWith(':')) return false;
  const q = rest.indexOf('?');
  if (q >= 0) rest = rest.slice(0, q);
  const badEscape = (x: string): boolean => /%(?![0-9A-Fa-f]{2})/.test(x);
  if (!rest.startsWith('/')) return scheme !== '';
  if (scheme !== '' && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    rest = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    const host = at < 0 ? authority : authority.slice(at + 1);
    if (badEscape(authority)) return false;
    if (host.startsWith('[')) {
      const close = host.indexOf(']');
      if (close < 0 || !/^(:\d*)?$/.test(host.slice(close + 1))) return false;
    } else {
      const colon = host.lastIndexOf(':');
      if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return false;
      if (/[^A-Za-z0-9\-._~!$&'()*+,;=:%\u0080-\u{10ffff}]/u.test(host)) return false;
    }
  }
  return !badEscape(rest);
}

/** Go's net.ParseCIDR. */
function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const [addr, mask] = [s.slice(0, i), s.slice(i + 1)];
  if (!/^\d+$/.test(mask)) return false;
  const bits = isIPv4(addr) ? 32 : isIPv6(addr) && !addr.includes('%') ? 128 : -1;
  return bits > 0 && Number(mask) <= bits;
}

/** Go's net.ParseMAC (EUI-48, EUI-64, 20-octet IPoIB; `:`, `-` or `.` separated). */
function isMAC(s: string): boolean {
  if (s.length < 14) return false;
  const colonish = /^[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})*$/.exec(s);
  if (colonish) {
    const groups = s.split(colonish[1] ?? ':').length;
    const sepOk = !colonish[1] || s.split(colonish[1]).every((g) => g.length === 2);
    return sepOk && (groups === 6 || groups === 8 || groups === 20);
  }
  if (/^[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4})*$/.test(s)) {
    const groups = s.split('.').length;
    return groups === 3 || groups === 4 || groups === 10;
  }
  return false;
}

function isISBN(s: string, version: 10 | 13): boolean {
  const d = s.replace(/[\s-]+/g, '');
  if (version === 10) {
    if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(d)) return false;
    let sum = 0;
    for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
    sum += d[9] === 'X' ? 100 : 10 * Number(d[9]);
    return sum % 11 === 0;
  }
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(d[i]);
  return Number(d[12]) - ((10 - (sum % 10)) % 10) === 0;
}

/** govalidator.IsCreditCard: the issuer pattern over the digits, then the Luhn check. */
function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]+/g, '');
  if (!CREDIT_CARD.test(d)) return false;
  let sum = 0;
  let dbl = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (dbl) {
      n *= 2;
      if (n >= 10) n = (n % 10) + 1;
    }
    sum += n;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

function isHostname(s: string): boolean {
  if (!HOSTNAME.test(s) || Buffer.byteLength(s) > 255) return false;
  return s.split('.').every((p) => Buffer.byteLength(p) <= 63);
}

const VALIDATORS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: (s) => EMAIL.test(s),
  hostname: isHostname,
  ipv4: (s) => parseIP(s) && s.includes('.'),
  ipv6: (s) => parseIP(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN(s, 10) || isISBN(s, 13),
  isbn10: (s) => isISBN(s, 10),
  isbn13: (s) => isISBN(s, 13),
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** Whether the registry knows this format (apiextensions strips the others from CRD schemas). */
export const isKnownFormat = (format: string): boolean => Object.hasOwn(VALIDATORS, normalize(format));

/** Whether `value` is valid for a known `format`; unknown formats accept everything. */
export function validatesFormat(format: string, value: string): boolean {
  const v = VALIDATORS[normalize(format)];
  return v ? v(value) : true;
}
