/**
 * Field-level validation errors, the equivalent of upstream's
 * k8s.io/apimachinery/pkg/util/validation/field (`field.Error`,
 * `field.ErrorList`, `field.Path`).
 *
 * Guarantees:
 * - `fieldErrorMessage(e)` is byte-for-byte upstream's `(*field.Error).Error()`:
 *   `<field>: <Type text>[: <bad value>][: <detail>]`. Required, Forbidden,
 *   TooLong and InternalError never print the value; the others print it the
 *   way upstream's `ErrorBody` does: strings quoted like Go's `%q`
 *   (`strconv.Quote`), numbers and booleans bare (`%v`), `null`/`undefined` as
 *   `null`, and anything else (lists, maps, objects) as Go's `json.Marshal`
 *   would (HTML-escaped, map-like objects with sorted keys).
 * - The constructors set the same bad value and detail upstream's do (e.g.
 *   `tooLong` → `may not be more than N bytes`, `tooMany` → `must have at most
 *   N items`, `notSupported` → `supported values: "a", "b"`).
 * - `fieldErrorReason(e)` is the StatusCause `reason` (the error type string),
 *   `fieldErrorBody(e)` the StatusCause `message`, and `aggregateMessage(errs)`
 *   is `errs.ToAggregate().Error()`: '' for none, the message alone for one,
 *   `[a, b]` for several, duplicates dropped.
 */

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
}

/** Upstream's `ErrorType.String()`. */
const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** The text upstream prints for an error type (`Invalid value`, `Required value`, ...). */
export const fieldErrorTypeText = (t: FieldErrorType): string => TYPE_TEXT[t] ?? `<unknown error ${goQuote(String(t))}>`;

/** Upstream's `omitValue`: a bad value that is never printed. */
export const OMIT_VALUE: unique symbol = Symbol('omitValue');

/**
 * A field path, printed as upstream's `(*field.Path).String()`:
 * `path('spec').child('containers').index(0).child('name')` → `spec.containers[0].name`,
 * `.key('foo')` → `[foo]`.
 */
export class Path {
  constructor(private readonly s: string) {}
  /** `.name` (several names chain: `child('a', 'b')` → `.a.b`). */
  child(name: string, ...more: string[]): Path {
    let out = this.s ? `${this.s}.${name}` : name;
    for (const m of more) out += `.${m}`;
    return new Path(out);
  }
  /** `[i]` */
  index(i: number): Path {
    return new Path(`${this.s}[${i}]`);
  }
  /** `[key]` (unquoted, as upstream prints map keys). */
  key(k: string): Path {
    return new Path(`${this.s}[${k}]`);
  }
  toString(): string {
    return this.s;
  }
}

/** `field.NewPath(root, more...)`. */
export const path = (root: string, ...more: string[]): Path => more.reduce((p, m) => p.child(m), new Path(root));

export type PathLike = string | Path;
const str = (p: PathLike): string => String(p);

/** `field.Required`: the value is not printed. */
export const required = (p: PathLike, detail = ''): FieldError => ({ type: 'FieldValueRequired', field: str(p), badValue: '', detail });

/** `field.Invalid`. */
export const invalid = (p: PathLike, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field: str(p), badValue: value, detail });

/** `field.NotSupported`: detail `supported values: "a", "b"` (each quoted like Go's `strconv.Quote`). */
export const notSupported = (p: PathLike, value: unknown, validValues: readonly string[] = []): FieldError => ({
  type: 'FieldValueNotSupported',
  field: str(p),
  badValue: value,
  detail: validValues.length ? `supported values: ${validValues.map((v) => goQuote(String(v))).join(', ')}` : '',
});

/** `field.Duplicate`. */
export const duplicate = (p: PathLike, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: str(p), badValue: value, detail: '' });

/** `field.Forbidden`: the value is not printed. */
export const forbidden = (p: PathLike, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: str(p), badValue: '', detail });

/** `field.NotFound`. */
export const notFound = (p: PathLike, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: str(p), badValue: value, detail: '' });

/**
 * `field.TooLong`: the value is never printed (upstream stores
 * `<value omitted>`); detail `may not be more than N bytes` (`byte` for 1),
 * or `value is too long` when `max` is negative.
 */
export const tooLong = (p: PathLike, _value: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: str(p),
  badValue: '<value omitted>',
  detail: max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long',
});

/**
 * `field.TooMany`: prints the actual count (omitted when negative); detail
 * `must have at most N items` (`item` for 1), or `has too many items` when
 * `max` is negative.
 */
export const tooMany = (p: PathLike, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: str(p),
  badValue: actual >= 0 ? actual : OMIT_VALUE,
  detail: max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items',
});

/** `field.TypeInvalid`. */
export const typeInvalid = (p: PathLike, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueTypeInvalid',
  field: str(p),
  badValue: value,
  detail,
});

/** `field.InternalError`: the value is not printed; the detail is the error's message. */
export const internal = (p: PathLike, err: Error | string): FieldError => ({
  type: 'InternalError',
  field: str(p),
  badValue: err,
  detail: typeof err === 'string' ? err : err.message,
});

// ---- rendering --------------------------------------------------------------

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** Go's `strconv.Quote` (`%q`): `"a\"b\n"`, non-printable runes as `\x..`, `\u....`, `\U........`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0)!;
    // A lone surrogate cannot be valid UTF-8; Go's JSON decoder turns it into U+FFFD.
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22 || cp === 0x5c) {
      out += `\\${String.fromCodePoint(cp)}`;
      continue;
    }
    const c = String.fromCodePoint(cp);
    if (PRINTABLE.test(c)) {
      out += c;
      continue;
    }
    switch (cp) {
      case 0x07:
        out += '\\a';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      case 0x0b:
        out += '\\v';
        break;
      default:
        if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
        else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
        else out += `\\U${hex(cp, 8)}`;
    }
  }
  return `${out}"`;
}

/** Go's `%v` for a float64 (shortest form; exponent below 1e-4 and from 1e21, two-digit exponents). */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mant, expStr] = n.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 21) {
    const sign = exp < 0 ? '-' : '+';
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n); // for exponents -4..20 JS prints the plain form, as Go does
}

const isMapLike = (o: Record<string, unknown>) => Object.values(o).every((v) => typeof v === 'string');

/** Go's `json.Marshal`-like rendering: HTML-safe escaping, map-like objects with sorted keys. */
export function goJSON(v: unknown): string {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map((e) => (e === undefined ? null : walk(e)));
    if (x instanceof Error) return {};
    if (x !== null && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return walk((o as { toJSON(): unknown }).toJSON());
      const keys = Object.keys(o).filter((k) => o[k] !== undefined);
      if (isMapLike(o)) keys.sort();
      const out: Record<string, unknown> = {};
      for (const k of keys) out[k] = walk(o[k]);
      return out;
    }
    if (typeof x === 'bigint') return Number(x);
    return x;
  };
  const json = JSON.stringify(walk(v)) ?? 'null';
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}

/**
 * A bad value printed exactly as given: how kube-apiserver 1.33's ErrorBody
 * prints a Go value that is neither a string nor a number, with `%#v`
 * (`map[string]string{"app":"web"}`) or through its `String()` method (a
 * Quantity's `500m`, an IntOrString's `25%`, unquoted).
 */
export class GoValue {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** `%#v` of a `map[string]string`: keys sorted, `map[string]string(nil)` for null/undefined. */
export function goStringMap(m: Readonly<Record<string, unknown>> | null | undefined): GoValue {
  if (m === null || m === undefined) return new GoValue('map[string]string(nil)');
  const entries = Object.keys(m)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(String(m[k]))}`);
  return new GoValue(`map[string]string{${entries.join(', ')}}`);
}

/** `%#v` of a `[]string`: `[]string{"a", "b"}`, `[]string(nil)` for null/undefined. */
export function goStringSlice(a: readonly unknown[] | null | undefined): GoValue {
  if (a === null || a === undefined) return new GoValue('[]string(nil)');
  return new GoValue(`[]string{${a.map((v) => goQuote(String(v))).join(', ')}}`);
}

/** How upstream's `ErrorBody` prints a bad value. */
export function renderBadValue(v: unknown): string {
  if (v instanceof GoValue) return v.text;
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : goFloat(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === null || v === undefined) return 'null';
  return goJSON(v);
}

/** Upstream `(*field.Error).ErrorBody()`: the message without the field (a StatusCause's `message`). */
export function fieldErrorBody(e: FieldError): string {
  let s = fieldErrorTypeText(e.type);
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      break;
    default:
      if (e.badValue !== OMIT_VALUE) s += `: ${renderBadValue(e.badValue)}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** Upstream `(*field.Error).Error()`: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`. */
export function fieldErrorMessage(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** The StatusCause `reason` for a field error: its type string (`FieldValueInvalid`, ...). */
export const fieldErrorReason = (e: FieldError): string => e.type;

/** StatusCauses as upstream's `NewInvalid` builds them (one per error, not de-duplicated). */
export const fieldErrorCauses = (errs: readonly FieldError[]): { reason: string; message: string; field: string }[] =>
  errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));

/** `ErrorList.ToAggregate().Error()`: '' for none, one message alone, several as `[a, b]`; duplicates dropped. */
export function aggregateMessage(errs: readonly FieldError[]): string {
  return aggregateStrings(errs.map(fieldErrorMessage));
}

/** `utilerrors.NewAggregate(...).Error()` over plain messages. */
export function aggregateStrings(msgs: readonly string[]): string {
  const seen = new Set<string>();
  for (const m of msgs) seen.add(m);
  const uniq = [...seen];
  if (uniq.length === 0) return '';
  if (uniq.length === 1) return uniq[0]!;
  return `[${uniq.join(', ')}]`;
}
