/**
 * cel-go's strings extension at the version Kubernetes enables
 * (`ext.Strings(ext.StringsVersion(2))`, ext/strings.go and ext/formatting.go):
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
 * substring, trim, join, format and strings.quote. Indices count code points,
 * as cel-go's do, and the error texts are cel-go's.
 */
import { formatDouble } from './lib-std.js';
import { formatDuration, formatTimestamp } from './lib-time.js';
import { type Overload, global, member } from './registry.js';
import { listOf, T } from './types.js';
import { ArrayList, CelError, DurationV, ListV, MapV, TimestampV, TypeV, typeName, UintV, type Val } from './values.js';

const cps = (s: string) => [...s];
const str = (v: Val) => v as string;
const int = (v: Val) => Number(v as bigint);
const LS = listOf(T.string);

function charAt(s: string, i: number): string {
  const r = cps(s);
  if (i < 0 || i > r.length) throw new CelError(`index out of range: ${i}`);
  return r[i] ?? '';
}

function indexOf(s: string, sub: string, offset?: number): bigint {
  if (sub === '') return BigInt(offset ?? 0);
  const r = cps(s);
  const sr = cps(sub);
  const off = offset ?? 0;
  if (offset !== undefined && (off < 0 || off >= r.length)) throw new CelError(`index out of range: ${off}`);
  for (let i = off; i + sr.length <= r.length; i++) if (sr.every((c, k) => r[i + k] === c)) return BigInt(i);
  return -1n;
}

function lastIndexOf(s: string, sub: string, offset?: number): bigint {
  const r = cps(s);
  if (sub === '') return BigInt(offset ?? r.length);
  const sr = cps(sub);
  if (offset === undefined && r.length < sr.length) return -1n;
  const off = offset ?? r.length - 1;
  if (off < 0 || off >= r.length) throw new CelError(`index out of range: ${off}`);
  for (let i = Math.min(off, r.length - sr.length); i >= 0; i--) if (sr.every((c, k) => r[i + k] === c)) return BigInt(i);
  return -1n;
}

const asciiCase = (s: string, upper: boolean) => s.replace(upper ? /[a-z]+/g : /[A-Z]+/g, (m) => (upper ? m.toUpperCase() : m.toLowerCase()));

/** Go's strings.Replace. */
function replace(s: string, old: string, repl: string, n: number): string {
  if (n === 0 || old === repl) return s;
  if (old === '') {
    const r = cps(s);
    const out: string[] = [];
    let done = 0;
    for (let i = 0; i <= r.length; i++) {
      if (n < 0 || done < n) {
        out.push(repl);
        done++;
      }
      if (i < r.length) out.push(r[i]!);
    }
    return out.join('');
  }
  const parts = s.split(old);
  if (n < 0 || n >= parts.length - 1) return parts.join(repl);
  return parts.slice(0, n + 1).join(repl) + old + parts.slice(n + 1).join(old);
}

/** Go's strings.SplitN. */
function split(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const r = cps(s);
    if (n < 0 || n >= r.length) return r;
    return [...r.slice(0, n - 1), r.slice(n - 1).join('')];
  }
  const parts = s.split(sep);
  if (n < 0 || n >= parts.length) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

function substring(s: string, start: number, end?: number): string {
  const r = cps(s);
  const e = end ?? r.length;
  if (start < 0 || start > r.length) throw new CelError(`index out of range: ${start}`);
  if (e < 0 || e > r.length) throw new CelError(`index out of range: ${e}`);
  if (start > e) throw new CelError(`invalid substring range. start: ${start}, end: ${e}`);
  return r.slice(start, e).join('');
}

/** Go's strings.TrimSpace (unicode.IsSpace). */
const trim = (s: string) => s.replace(/^[\s\u0085]+|[\s\u0085]+$/gu, '');

/** cel-go's strings.quote. */
export function quote(s: string): string {
  const esc: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '\\': '\\\\', '"': '\\"' };
  let out = '"';
  for (const c of s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')) out += esc[c] ?? c;
  return `${out}"`;
}

/** A value as `%s` prints it (cel-go formatting: strings bare at the top, quoted inside lists and maps). */
export function formatString(v: Val, nested = false): string {
  if (typeof v === 'string') return nested ? quote(v) : v;
  if (typeof v === 'number') return formatDouble(v);
  if (v === null) return 'null';
  if (v instanceof UintV) return String(v.v);
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof TimestampV) return formatTimestamp(v);
  if (v instanceof DurationV) return formatDuration(v);
  if (v instanceof TypeV) return v.name;
  if (v instanceof ListV)
    return `[${v
      .items()
      .map((x) => formatString(x, true))
      .join(', ')}]`;
  if (v instanceof MapV) {
    const entries = v.keys().map((k) => [formatString(k, true), formatString(v.find(k)!, true)] as const);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${entries.map(([k, x]) => `${k}: ${x}`).join(', ')}}`;
  }
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  throw new CelError(`could not convert argument to string: type ${typeName(v)}`);
}

function toNumber(v: Val, clause: string): number | bigint {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UintV) return v.v;
  throw new CelError(`error during formatting: ${clause} clause can only be used on numbers, was given ${typeName(v)}`);
}

function fixed(n: number, prec: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  return n.toFixed(prec);
}

function scientific(n: number, prec: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  const [m, e] = n.toExponential(prec).split('e') as [string, string];
  const exp = Number(e);
  return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function radix(v: Val, base: number, clause: string, upper = false): string {
  if (typeof v === 'boolean' && base === 2) return v ? '1' : '0';
  if (base === 16 && typeof v === 'string') v = new TextEncoder().encode(v);
  if (base === 16 && v instanceof Uint8Array)
    return [...v]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('')
      [upper ? 'toUpperCase' : 'toLowerCase']();
  const n = toNumber(v, clause);
  if (typeof n === 'number') throw new CelError(`error during formatting: ${clause} clause can only be used on integers, was given double`);
  const out = n < 0n ? `-${(-n).toString(base)}` : n.toString(base);
  return upper ? out.toUpperCase() : out;
}

/** cel-go's `<string>.format(<list>)`. */
export function format(fmt: string, args: readonly Val[]): string {
  let out = '';
  let argi = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    if (fmt[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const m = /^(?:\.(\d+))?([a-zA-Z])/.exec(fmt.slice(i + 1));
    if (!m) throw new CelError('could not parse formatting clause: unexpected end of string');
    i += m[0].length;
    const prec = m[1] !== undefined ? Number(m[1]) : undefined;
    if (argi >= args.length) throw new CelError(`index ${argi} out of range`);
    const a = args[argi++]!;
    switch (m[2]) {
      case 's':
        out += formatString(a);
        break;
      case 'd': {
        const n = toNumber(a, 'decimal');
        if (typeof n === 'number') throw new CelError('error during formatting: decimal clause can only be used on integers, was given double');
        out += String(n);
        break;
      }
      case 'f':
        out += fixed(Number(toNumber(a, 'fixed-point')), prec ?? 6);
        break;
      case 'e':
        out += scientific(Number(toNumber(a, 'scientific')), prec ?? 6);
        break;
      case 'b':
        out += radix(a, 2, 'binary');
        break;
      case 'o':
        out += radix(a, 8, 'octal');
        break;
      case 'x':
        out += radix(a, 16, 'hex');
        break;
      case 'X':
        out += radix(a, 16, 'hex', true);
        break;
      default:
        throw new CelError(`could not parse formatting clause: unrecognized formatting clause "${m[2]}"`);
    }
  }
  return out;
}

export const strings: Overload[] = [
  member('charAt', 'string_char_at_int', [T.string, T.int], T.string, (a) => charAt(str(a[0]!), int(a[1]!))),
  member('indexOf', 'string_index_of_string', [T.string, T.string], T.int, (a) => indexOf(str(a[0]!), str(a[1]!))),
  member('indexOf', 'string_index_of_string_int', [T.string, T.string, T.int], T.int, (a) => indexOf(str(a[0]!), str(a[1]!), int(a[2]!))),
  member('lastIndexOf', 'string_last_index_of_string', [T.string, T.string], T.int, (a) => lastIndexOf(str(a[0]!), str(a[1]!))),
  member('lastIndexOf', 'string_last_index_of_string_int', [T.string, T.string, T.int], T.int, (a) => lastIndexOf(str(a[0]!), str(a[1]!), int(a[2]!))),
  member('lowerAscii', 'string_lower_ascii', [T.string], T.string, (a) => asciiCase(str(a[0]!), false)),
  member('upperAscii', 'string_upper_ascii', [T.string], T.string, (a) => asciiCase(str(a[0]!), true)),
  member('replace', 'string_replace_string_string', [T.string, T.string, T.string], T.string, (a) => replace(str(a[0]!), str(a[1]!), str(a[2]!), -1)),
  member('replace', 'string_replace_string_string_int', [T.string, T.string, T.string, T.int], T.string, (a) =>
    replace(str(a[0]!), str(a[1]!), str(a[2]!), int(a[3]!)),
  ),
  member('split', 'string_split_string', [T.string, T.string], LS, (a) => new ArrayList(split(str(a[0]!), str(a[1]!), -1))),
  member('split', 'string_split_string_int', [T.string, T.string, T.int], LS, (a) => new ArrayList(split(str(a[0]!), str(a[1]!), int(a[2]!)))),
  member('substring', 'string_substring_int', [T.string, T.int], T.string, (a) => substring(str(a[0]!), int(a[1]!))),
  member('substring', 'string_substring_int_int', [T.string, T.int, T.int], T.string, (a) => substring(str(a[0]!), int(a[1]!), int(a[2]!))),
  member('trim', 'string_trim', [T.string], T.string, (a) => trim(str(a[0]!))),
  member('join', 'list_join', [LS], T.string, (a) => (a[0] as ListV).items().join('')),
  member('join', 'list_join_string', [LS, T.string], T.string, (a) => (a[0] as ListV).items().join(str(a[1]!))),
  member('format', 'string_format', [T.string, listOf(T.dyn)], T.string, (a) => format(str(a[0]!), (a[1] as ListV).items())),
  global('strings.quote', 'strings_quote', [T.string], T.string, (a) => quote(str(a[0]!))),
];
