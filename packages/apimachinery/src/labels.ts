/**
 * Label selectors, as upstream's k8s.io/apimachinery/pkg/labels and
 * metav1.LabelSelectorAsSelector.
 *
 * - `parseLabelSelector` reads the string syntax (`?labelSelector=`):
 *   `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`,
 *   `k<1`, comma meaning AND, blanks (space, tab, CR, LF) ignored between
 *   tokens. It is a port of upstream's lexer and parser, so it accepts and
 *   rejects the same inputs and fails with the same messages (`unable to parse
 *   requirement: <nil>: Invalid value: "a/b/c": ...`, `found 'x', expected: ','
 *   or 'end of string'`, ...). Keys must be qualified names, values label
 *   values; Gt/Lt values must be 64-bit integers.
 * - `selectorFromLabelSelector` converts a LabelSelector object: null/undefined
 *   selects nothing, an empty one everything; operators In/NotIn/Exists/
 *   DoesNotExist; bad keys, values and operators throw as upstream does.
 * - Selectors keep their requirements sorted by key (stable); `toString()` is
 *   upstream's canonical form (values of a set requirement sorted), which is
 *   what Scale's `status.selector` shows. `matches` follows upstream exactly
 *   (NotIn/!= match a missing key; Gt/Lt need an integer label value).
 *
 * All parse and conversion failures throw `SelectorParseError`.
 */
import { type FieldError, type PathLike, aggregateMessage, goQuote, invalid, notSupported } from './field-errors.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

/** selection.Operator values: `=`, `==`, `!=`, `in`, `notin`, `exists`, `!` (does not exist), `gt`, `lt`. */
export type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

const BINARY_OPERATORS: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];
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

export interface LabelSelector {
  /** The requirements, ANDed, sorted by key. */
  readonly requirements: readonly Requirement[];
  /** Whether the labels satisfy every requirement (a nothing-selector matches nothing). */
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean;
  /** True when the selector does not restrict anything (no requirements). */
  empty(): boolean;
  /** Upstream's canonical string form; '' for everything and for nothing. */
  toString(): string;
  /** The one value the selector requires `label` to have (`=`, `==`, or `in` with one value), if any. */
  requiresExactMatch(label: string): string | undefined;
  /** A new selector with more requirements (kept sorted by key). */
  add(...reqs: Requirement[]): LabelSelector;
}

// ---- requirements ------------------------------------------------------------

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's strconv.ParseInt(s, 10, 64); undefined when it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

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
  labels !== null && labels !== undefined && Object.prototype.hasOwnProperty.call(labels, key);

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

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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

// ---- selectors ------------------------------------------------------------------

class InternalSelector implements LabelSelector {
  readonly requirements: readonly Requirement[];
  constructor(reqs: readonly Requirement[]) {
    this.requirements = Object.freeze([...reqs]);
  }
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels));
  }
  empty(): boolean {
    return this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
  requiresExactMatch(label: string): string | undefined {
    const r = this.requirements.find((x) => x.key === label);
    if (!r) return undefined;
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
    return undefined;
  }
  add(...reqs: Requirement[]): LabelSelector {
    // Array.prototype.sort is stable, so requirements on one key keep their order.
    return new InternalSelector([...this.requirements, ...reqs].sort((a, b) => byString(a.key, b.key)));
  }
}

const NOTHING: LabelSelector = Object.freeze({
  requirements: Object.freeze([]) as readonly Requirement[],
  matches: () => false,
  empty: () => false,
  toString: () => '',
  requiresExactMatch: () => undefined,
  add(): LabelSelector {
    return NOTHING;
  },
});

/** labels.Everything(): matches all labels. */
export const everything = (): LabelSelector => new InternalSelector([]);

/** labels.Nothing(): matches no labels (what a null LabelSelector means). */
export const nothing = (): LabelSelector => NOTHING;

/** labels.MatchesNothing: true only for the nothing-selector. */
export const matchesNothing = (s: LabelSelector): boolean => s === NOTHING;

/** labels.SelectorFromSet (no validation): `k=v` for each entry; empty or null selects everything. */
export function selectorFromSet(labels: Readonly<Record<string, string>> | null | undefined): LabelSelector {
  const reqs = Object.entries(labels ?? {}).map(([key, v]): Requirement => ({ key, operator: '=', values: [v] }));
  return everything().add(...reqs);
}

/** labels.ValidatedSelectorFromSet: like selectorFromSet, but keys and values are validated. */
export function validatedSelectorFromSet(labels: Readonly<Record<string, string>> | null | undefined): LabelSelector {
  return everything().add(...Object.entries(labels ?? {}).map(([k, v]) => newRequirement(k, '=', [v])));
}

// ---- the string syntax (a port of upstream's Lexer and Parser) -----------------

type Token = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const STRING2TOKEN = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['in', 'in'],
  ['<', '<'],
  ['!=', '!='],
  ['notin', 'notin'],
  ['(', '('],
]);

const EOF = '\0';
const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string) => ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';

class Lexer {
  private pos = 0;
  constructor(private readonly s: string) {}

  private read(): string {
    return this.pos < this.s.length ? this.s[this.pos++]! : EOF;
  }

  private unread(): void {
    this.pos--;
  }

  private scanIDOrKeyword(): [Token, string] {
    let buf = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOF) break;
      if (isSpecialSymbol(ch) || isWhitespace(ch)) {
        this.unread();
        break;
      }
      buf += ch;
    }
    const t = STRING2TOKEN.get(buf);
    return t ? [t, buf] : ['id', buf];
  }

  private scanSpecialSymbol(): [Token, string] {
    let last: [Token, string] | undefined;
    let buf = '';
    for (;;) {
      const ch = this.read();
      if (ch === EOF) break;
      if (!isSpecialSymbol(ch)) {
        this.unread();
        break;
      }
      buf += ch;
      const t = STRING2TOKEN.get(buf);
      if (t) last = [t, buf];
      else if (last) {
        this.unread();
        break;
      }
    }
    return last ?? ['error', `error expected: keyword found '${buf}'`];
  }

  lex(): [Token, string] {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (ch === EOF) return ['eos', ''];
    this.unread();
    return isSpecialSymbol(ch) ? this.scanSpecialSymbol() : this.scanIDOrKeyword();
  }
}

/** Where a token is read: in values, `in`/`notin` are plain identifiers. */
type Context = 'keyAndOperator' | 'values';

class Parser {
  private readonly items: [Token, string][] = [];
  private position = 0;

  constructor(
    input: string,
    private readonly basePath: string | undefined,
  ) {
    const lexer = new Lexer(input);
    for (;;) {
      const item = lexer.lex();
      this.items.push(item);
      if (item[0] === 'eos') break;
    }
  }

  private at(i: number, ctx: Context): [Token, string] {
    const [tok, lit] = this.items[Math.min(i, this.items.length - 1)]!;
    return ctx === 'values' && (tok === 'in' || tok === 'notin') ? ['id', lit] : [tok, lit];
  }

  private lookahead(ctx: Context): [Token, string] {
    return this.at(this.position, ctx);
  }

  private consume(ctx: Context): [Token, string] {
    return this.at(this.position++, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const [tok, lit] = this.lookahead('values');
      switch (tok) {
        case 'id':
        case '!': {
          try {
            reqs.push(this.parseRequirement());
          } catch (e) {
            const err = e as SelectorParseError;
            throw new SelectorParseError(`unable to parse requirement: ${err.message}`, err.fieldErrors ?? []);
          }
          const [t, l] = this.consume('values');
          if (t === 'eos') return reqs;
          if (t === ',') {
            const [t2, l2] = this.lookahead('values');
            if (t2 !== 'id' && t2 !== '!') throw new SelectorParseError(`found '${l2}', expected: identifier after ','`);
            break;
          }
          throw new SelectorParseError(`found '${l}', expected: ',' or 'end of string'`);
        }
        case 'eos':
          return reqs;
        default:
          throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const [key, inferred] = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return newRequirement(key, inferred, [], this.basePath);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort(byString), this.basePath);
  }

  private parseKeyAndInferOperator(): [string, Operator | ''] {
    let op: Operator | '' = '';
    let [tok, lit] = this.consume('values');
    if (tok === '!') {
      op = '!';
      [tok, lit] = this.consume('values');
    }
    if (tok !== 'id') throw new SelectorParseError(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length) {
      const e = invalid(this.basePath ?? '<nil>', lit, keyErrs.join('; '));
      throw new SelectorParseError(aggregateMessage([e]), [e]);
    }
    const [next] = this.lookahead('values');
    if ((next === 'eos' || next === ',') && op !== '!') op = 'exists';
    return [lit, op];
  }

  private parseOperator(): Operator {
    const [tok, lit] = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new SelectorParseError(`found '${lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    let [tok, lit] = this.consume('values');
    if (tok !== '(') throw new SelectorParseError(`found '${lit}' expected: '('`);
    [tok, lit] = this.lookahead('values');
    switch (tok) {
      case 'id':
      case ',': {
        const s = this.parseIdentifiersList();
        if (this.consume('values')[0] !== ')') throw new SelectorParseError(`found '${lit}', expected: ')'`);
        return s;
      }
      case ')':
        this.consume('values');
        return new Set(['']);
      default:
        throw new SelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const [tok, lit] = this.consume('values');
      if (tok === 'id') {
        s.add(lit);
        const [tok2, lit2] = this.lookahead('values');
        if (tok2 === ',') continue;
        if (tok2 === ')') return s;
        throw new SelectorParseError(`found '${lit2}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        if (s.size === 0) s.add(''); // "(,"
        const [tok2] = this.lookahead('values');
        if (tok2 === ')') {
          s.add(''); // ",)"
          return s;
        }
        if (tok2 === ',') s.add(''); // ",,"
        continue;
      }
      throw new SelectorParseError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const [ahead] = this.lookahead('values');
    if (ahead === 'eos' || ahead === ',') return new Set(['']);
    const [tok, lit] = this.consume('values');
    if (tok === 'id') return new Set([lit]);
    throw new SelectorParseError(`found '${lit}', expected: identifier`);
  }
}

/**
 * labels.Parse: the `labelSelector` string syntax. `basePath` is upstream's
 * `field.WithPath` option (it prefixes the paths in validation messages).
 */
export function parseLabelSelector(s: string, basePath?: PathLike): LabelSelector {
  const reqs = new Parser(s, basePath === undefined ? undefined : String(basePath)).parse();
  return everything().add(...reqs);
}

// ---- LabelSelector objects (metav1) ---------------------------------------------

export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null | undefined;
  matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] | null | undefined }[] | null | undefined;
}

const EXPRESSION_OPERATORS: Readonly<Record<string, Operator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * metav1.LabelSelectorAsSelector: null/undefined → nothing, no matchLabels and
 * no matchExpressions → everything; otherwise the ANDed requirements. Throws
 * SelectorParseError for invalid keys/values (`key: Invalid value: ...`,
 * `values[0][k]: Invalid value: ...`) and operators (`"Foo" is not a valid
 * label selector operator`).
 */
export function selectorFromLabelSelector(ls: LabelSelectorObject | null | undefined): LabelSelector {
  if (ls === null || ls === undefined) return nothing();
  const matchLabels = Object.entries(ls.matchLabels ?? {});
  const matchExpressions = ls.matchExpressions ?? [];
  if (matchLabels.length + matchExpressions.length === 0) return everything();
  const reqs: Requirement[] = [];
  for (const [k, v] of matchLabels) reqs.push(newRequirement(k, '=', [v]));
  for (const e of matchExpressions) {
    const op = Object.prototype.hasOwnProperty.call(EXPRESSION_OPERATORS, e.operator) ? EXPRESSION_OPERATORS[e.operator] : undefined;
    if (!op) throw new SelectorParseError(`${goQuote(String(e.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, e.values && e.values.length ? [...e.values] : null));
  }
  return everything().add(...reqs);
}

/** Alias with upstream's name. */
export const labelSelectorAsSelector = selectorFromLabelSelector;

/**
 * The selector string of a LabelSelector object, as Scale's `status.selector`
 * carries it (`app=web,tier in (db)`); '' for null, empty or invalid selectors.
 */
export function labelSelectorToString(ls: LabelSelectorObject | null | undefined): string {
  try {
    return selectorFromLabelSelector(ls).toString();
  } catch {
    return '';
  }
}

/** metav1.FormatLabelSelector (kubectl's SELECTOR column): `<none>` when empty, `<error>` when invalid. */
export function formatLabelSelector(ls: LabelSelectorObject | null | undefined): string {
  let s: string;
  try {
    s = selectorFromLabelSelector(ls).toString();
  } catch {
    return '<error>';
  }
  return s.length ? s : '<none>';
}
