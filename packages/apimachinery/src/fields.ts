/**
 * Field selectors, as upstream's k8s.io/apimachinery/pkg/fields.
 *
 * - `parseFieldSelector` reads the `fieldSelector` syntax: terms `a=b`, `a==b`
 *   or `a!=b` joined by commas (AND). In values, `\,` `\=` and `\\` escape the
 *   special characters; an unescaped `,`/`=` or an unknown escape is an error.
 *   The first `!=`, `==` or `=` in a term splits it; nothing is trimmed (as
 *   upstream: `a = b` is field `a ` and value ` b`). Empty terms are skipped.
 * - Terms are kept in the order upstream keeps them: sorted as raw strings.
 *   `toString()` re-escapes values, so it round-trips through the parser.
 * - `matches(get)` compares with `get(field) ?? ''` (an absent field is '');
 *   `requiresExactMatch(field)` is the value of the first `=`/`==` term on
 *   that field, for `metadata.name=x` / `spec.nodeName=x` fast paths.
 *
 * Parse failures throw `FieldSelectorParseError` with upstream's text:
 * `invalid selector: '<s>'; can't understand '<term>'`,
 * `invalid field selector: invalid escape sequence: \x`,
 * `invalid field selector: unescaped character in value: 61` (a code point, as Go prints a rune).
 */

export class FieldSelectorParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorParseError';
  }
}

/** selection.Equals (`=`, also what `==` parses to) or selection.NotEquals (`!=`). */
export type FieldOperator = '=' | '!=';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

/** Values of an object's selectable fields: a lookup function or a plain map. */
export type FieldGetter = ((field: string) => string | undefined) | Readonly<Record<string, string | undefined>>;

/** fields.TransformFunc: rewrites a term's field and value (e.g. field label conversion); throw to reject. */
export type FieldTransform = (field: string, value: string) => [field: string, value: string];

export interface FieldSelector {
  /** The terms, ANDed, in upstream's order. */
  readonly requirements: readonly FieldRequirement[];
  /** Whether every term holds; an absent field reads as ''. */
  matches(get: FieldGetter): boolean;
  /** True when there are no terms. */
  empty(): boolean;
  /** `a=b,c!=d` with values escaped. */
  toString(): string;
  /** The value the first `=`/`==` term on `field` requires, if any. */
  requiresExactMatch(field: string): string | undefined;
  /** A new selector with `fn` applied to every term. */
  transform(fn: FieldTransform): FieldSelector;
}

/** fields.EscapeValue: `\` → `\\`, `,` → `\,`, `=` → `\=`. */
export const escapeFieldValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`);

/** fields.UnescapeValue. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') {
        out += c;
        inSlash = false;
        continue;
      }
      throw new FieldSelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw new FieldSelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new FieldSelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on commas not escaped by a backslash; escapes stay in the terms. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): [lhs: string, op: (typeof TERM_OPERATORS)[number], rhs: string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

const getter = (get: FieldGetter) => (typeof get === 'function' ? get : (f: string) => (Object.hasOwn(get, f) ? get[f] : undefined));

function makeSelector(reqs: readonly FieldRequirement[]): FieldSelector {
  const requirements = Object.freeze(reqs.map((r) => Object.freeze({ ...r })));
  return {
    requirements,
    matches(get) {
      const g = getter(get);
      return requirements.every((r) => {
        const v = g(r.field) ?? '';
        return r.operator === '=' ? v === r.value : v !== r.value;
      });
    },
    empty: () => requirements.length === 0,
    toString: () => requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(','),
    requiresExactMatch: (field) => requirements.find((r) => r.operator === '=' && r.field === field)?.value,
    transform(fn) {
      return makeSelector(
        requirements.map((r) => {
          const [field, value] = fn(r.field, r.value);
          return { field, operator: r.operator, value };
        }),
      );
    },
  };
}

/** fields.Everything(). */
export const everythingFields = (): FieldSelector => makeSelector([]);

/** fields.ParseSelector. */
export function parseFieldSelector(selector: string): FieldSelector {
  const parts = splitTerms(selector).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw new FieldSelectorParseError(`invalid selector: '${selector}'; can't understand '${part}'`);
    const [field, op, rhs] = t;
    reqs.push({ field, operator: op === '!=' ? '!=' : '=', value: unescapeFieldValue(rhs) });
  }
  return makeSelector(reqs);
}

/** fields.ParseAndTransformSelector. */
export const parseAndTransformFieldSelector = (selector: string, fn: FieldTransform): FieldSelector => parseFieldSelector(selector).transform(fn);

/** fields.SelectorFromSet: `field=value` for each entry (null → everything). */
export const fieldSelectorFromSet = (set: Readonly<Record<string, string>> | null | undefined): FieldSelector =>
  makeSelector(Object.entries(set ?? {}).map(([field, value]) => ({ field, operator: '=', value })));

/** fields.OneTermEqualSelector. */
export const oneTermEqualSelector = (field: string, value: string): FieldSelector => makeSelector([{ field, operator: '=', value }]);

/** fields.OneTermNotEqualSelector. */
export const oneTermNotEqualSelector = (field: string, value: string): FieldSelector => makeSelector([{ field, operator: '!=', value }]);

/** fields.AndSelectors. */
export const andFieldSelectors = (...selectors: FieldSelector[]): FieldSelector => makeSelector(selectors.flatMap((s) => [...s.requirements]));
