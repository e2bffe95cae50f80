/**
 * Label selectors (k8s.io/apimachinery/pkg/labels): the string syntax
 * (`a=b,c!=d,e in (f,g),h notin (i),j,!k,l>1`) and LabelSelector objects
 * (matchLabels + matchExpressions), with upstream's validation of keys and
 * values. Parse errors throw SelectorParseError.
 */
import { isQualifiedName, isValidLabelValue } from './validation.js';

export type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export class SelectorParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorParseError';
  }
}

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  matches(labels: Record<string, string> | undefined): boolean;
  empty(): boolean;
  toString(): string;
}

function validateKey(k: string): void {
  const errs = isQualifiedName(k);
  if (errs.length) throw new SelectorParseError(`key: Invalid value: ${JSON.stringify(k)}: ${errs.join('; ')}`);
}

function validateValue(v: string): void {
  const errs = isValidLabelValue(v);
  if (errs.length) throw new SelectorParseError(`values[0][${v}]: Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`);
}

function reqString(r: Requirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return `${r.key} in (${[...r.values].sort().join(',')})`;
    case 'notin':
      return `${r.key} notin (${[...r.values].sort().join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

function matchReq(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(v!);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has) return false;
      const n = Number(v);
      const want = Number(r.values[0]);
      if (!Number.isInteger(n)) return false;
      return r.operator === 'gt' ? n > want : n < want;
    }
  }
}

function makeSelector(reqs: Requirement[]): LabelSelector {
  const sorted = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements: sorted,
    matches: (labels) => sorted.every((r) => matchReq(r, labels ?? {})),
    empty: () => sorted.length === 0,
    toString: () => sorted.map(reqString).join(','),
  };
}

/** Everything matches. */
export const everything = (): LabelSelector => makeSelector([]);

/** Nothing matches (a null LabelSelector). */
export const nothing = (): LabelSelector => ({ requirements: [], matches: () => false, empty: () => false, toString: () => '<none>' });

const TOKEN = /\s*(!=|==|=|>|<|\(|\)|,|!|[^\s!=<>(),]+)/y;

export function parseLabelSelector(input: string): LabelSelector {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  const s = input.trim();
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < s.length) {
    TOKEN.lastIndex = pos;
    m = TOKEN.exec(s);
    if (!m) throw new SelectorParseError(`unable to parse requirement: found unexpected character at ${pos}`);
    tokens.push(m[1]!);
    pos = TOKEN.lastIndex;
    while (pos < s.length && /\s/.test(s[pos]!)) pos++;
  }
  const reqs: Requirement[] = [];
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const isIdent = (t: string | undefined) => t !== undefined && !['!=', '==', '=', '>', '<', '(', ')', ',', '!'].includes(t);
  while (i < tokens.length) {
    let t = next();
    if (t === '!') {
      const key = next();
      if (!isIdent(key)) throw new SelectorParseError(`unable to parse requirement: found '${key ?? ''}', expected: identifier`);
      validateKey(key!);
      reqs.push({ key: key!, operator: '!', values: [] });
    } else {
      if (!isIdent(t)) throw new SelectorParseError(`unable to parse requirement: found '${t}', expected: !, identifier`);
      const key = t!;
      validateKey(key);
      const op = peek();
      if (op === undefined || op === ',') {
        reqs.push({ key, operator: 'exists', values: [] });
      } else if (op === '=' || op === '==' || op === '!=') {
        next();
        let v = peek();
        if (v === undefined || v === ',') v = '';
        else {
          if (!isIdent(v)) throw new SelectorParseError(`unable to parse requirement: found '${v}', expected: identifier`);
          next();
        }
        validateValue(v);
        reqs.push({ key, operator: op, values: [v] });
      } else if (op === '>' || op === '<') {
        next();
        const v = next();
        if (!isIdent(v) || !/^-?\d+$/.test(v!)) throw new SelectorParseError(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
        reqs.push({ key, operator: op === '>' ? 'gt' : 'lt', values: [v!] });
      } else if (op === 'in' || op === 'notin') {
        next();
        if (next() !== '(') throw new SelectorParseError(`unable to parse requirement: found '${tokens[i - 1] ?? ''}', expected: '('`);
        const values: string[] = [];
        for (;;) {
          t = next();
          if (t === undefined) throw new SelectorParseError("unable to parse requirement: found '', expected: ')'");
          if (t === ')') break;
          if (t === ',') {
            if (peek() === ',' || peek() === ')') values.push('');
            continue;
          }
          if (!isIdent(t)) throw new SelectorParseError(`unable to parse requirement: found '${t}', expected: ',', ')' or identifier`);
          values.push(t);
        }
        if (!values.length) values.push('');
        for (const v of values) validateValue(v);
        reqs.push({ key, operator: op, values });
      } else {
        throw new SelectorParseError(`unable to parse requirement: found '${op}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    const sep = peek();
    if (sep === undefined) break;
    if (sep !== ',') throw new SelectorParseError(`found '${sep}', expected: ',' or 'end of string'`);
    next();
    if (peek() === undefined) throw new SelectorParseError("found '', expected: !, identifier");
  }
  return makeSelector(reqs);
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] | undefined }[] | undefined;
}

/** metav1.LabelSelectorAsSelector: null → nothing, empty → everything. */
export function selectorFromLabelSelector(ls: LabelSelectorObject | null | undefined): LabelSelector {
  if (ls === null || ls === undefined) return nothing();
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(ls.matchLabels ?? {})) {
    validateKey(k);
    validateValue(v);
    reqs.push({ key: k, operator: '=', values: [v] });
  }
  for (const e of ls.matchExpressions ?? []) {
    validateKey(e.key);
    const values = [...(e.values ?? [])];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!values.length) throw new SelectorParseError(`values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`);
        for (const v of values) validateValue(v);
        reqs.push({ key: e.key, operator: e.operator === 'In' ? 'in' : 'notin', values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length) throw new SelectorParseError(`values: Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`);
        reqs.push({ key: e.key, operator: e.operator === 'Exists' ? 'exists' : '!', values: [] });
        break;
      default:
        throw new SelectorParseError(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    }
  }
  return makeSelector(reqs);
}

export const selectorFromSet = (labels: Record<string, string>): LabelSelector =>
  makeSelector(Object.entries(labels).map(([k, v]) => ({ key: k, operator: '=' as const, values: [v] })));

/** The string form of a LabelSelector object (what Scale's status.selector shows). */
export function labelSelectorToString(ls: LabelSelectorObject | null | undefined): string {
  if (!ls) return '';
  try {
    return selectorFromLabelSelector(ls).toString();
  } catch {
    return '';
  }
}
