/**
 * Label selector requirements, as upstream's labels.Requirement
 * (k8s.io/apimachinery/pkg/labels/selector.go): construction with upstream's
 * validation and messages, matching, and the canonical string form.
 *
 * - `newRequirement` validates as upstream's NewRequirement does: keys must be
 *   qualified names, values label values; Gt/Lt values must be 64-bit integers.
 * - `requirementMatches` follows upstream exactly (NotIn/!= match a missing
 *   key; Gt/Lt need an integer label value).
 * - `requirementString` is upstream's canonical form (values of a set
 *   requirement sorted).
 */
import { type FieldError, type PathLike, aggregateMessage, invalid, notSupported } from '../field-errors.js';
import { isQualifiedName, isValidLabelValue } from '../validation/format.js';

/** selection.Operator values: `=`, `==`, `!=`, `in`, `notin`, `exists`, `!` (does not exist), `gt`, `lt`. */
export type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** The operators that take values, in upstream's order (the parser's "expected" list). */
export const BINARY_OPERATORS: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
/** Every operator a requirement may have, in upstream's order. */
export const VALID_REQUIREMENT_OPERATORS: readonly Operator[] = [...BINARY_OPERATORS, 'exists', '!'];

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

/** A malformed selector string, or a LabelSelector that cannot be converted. */
export class SelectorParseError extends Error {
  /** The field errors behind the message, when it came from requirement validation. */
  readonly fieldErrors: readonly FieldError[];
  constructor(message: string, fieldErrors: readonly FieldError[] = []) {
    super(message);
    this.name = 'SelectorParseError';
    this.fieldErrors = fieldErrors;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64); undefined when it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** Byte-wise string order, as Go's sort.Strings. */
export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const sub = (base: string | undefined, name: string) => (base ? `${base}.${name}` : name);

/** The field errors upstream's NewRequirement reports (empty when valid). */
export function requirementErrors(key: string, operator: string, values: readonly string[] | null | undefined, basePath?: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  const base = basePath === undefined ? undefined : String(basePath);
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(invalid(sub(base, 'key'), key, keyErrs.join('; ')));
  const vals = values ?? [];
  const bad = values ?? null; // Go prints a nil slice as null
  const valuePath = sub(base, 'values');
  switch (operator) {
    case 'in':
    case 'notin':
      if (vals.length === 0) errs.push(invalid(valuePath, bad, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) errs.push(invalid(valuePath, bad, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (vals.length !== 0) errs.push(invalid(valuePath, bad, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (vals.length !== 1) errs.push(invalid(valuePath, bad, "for 'Gt', 'Lt' operators, exactly one value is required"));
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`${valuePath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
    default:
      errs.push(notSupported(sub(base, 'operator'), operator, VALID_REQUIREMENT_OPERATORS));
  }
  vals.forEach((v, i) => {
    const m = isValidLabelValue(v);
    if (m.length) errs.push(invalid(`${valuePath}[${i}][${key}]`, v, m.join('; ')));
  });
  return errs;
}

/**
 * upstream NewRequirement: validates and builds a requirement, throwing
 * SelectorParseError with the aggregated field errors (paths `key`,
 * `values[i][key]`, ... under `basePath`). `values` null stands for Go's nil slice.
 */
export function newRequirement(key: string, operator: string, values: readonly string[] | null | undefined, basePath?: PathLike): Requirement {
  const errs = requirementErrors(key, operator, values, basePath);
  if (errs.length) throw new SelectorParseError(aggregateMessage(errs), errs);
  return { key, operator: operator as Operator, values: [...(values ?? [])] };
}

const has = (labels: Readonly<Record<string, string>> | null | undefined, key: string): labels is Readonly<Record<string, string>> =>
  labels !== null && labels !== undefined && Object.hasOwn(labels, key);

/** upstream Requirement.Matches. */
export function requirementMatches(r: Requirement, labels: Readonly<Record<string, string>> | null | undefined): boolean {
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has(labels, r.key) && r.values.includes(labels[r.key]!);
    case 'notin':
    case '!=':
      return !has(labels, r.key) || !r.values.includes(labels[r.key]!);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key)) return false;
      const lv = parseInt64(String(labels[r.key]));
      if (lv === undefined || r.values.length !== 1) return false;
      const rv = parseInt64(r.values[0]!);
      if (rv === undefined) return false;
      return r.operator === 'gt' ? lv > rv : lv < rv;
    }
    default:
      return false;
  }
}

/** upstream Requirement.String: `k=v`, `k in (a,b)`, `!k`, `k>1`, ... (set values sorted). */
export function requirementString(r: Requirement): string {
  let s = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return s;
    case 'in':
      s += ' in ';
      break;
    case 'notin':
      s += ' notin ';
      break;
    case 'gt':
      s += '>';
      break;
    case 'lt':
      s += '<';
      break;
    default:
      s += r.operator;
  }
  const set = r.operator === 'in' || r.operator === 'notin';
  if (set) s += '(';
  s += r.values.length === 1 ? r.values[0] : [...r.values].sort(byString).join(',');
  if (set) s += ')';
  return s;
}
