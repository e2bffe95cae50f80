/**
 * Field selectors (k8s.io/apimachinery/pkg/fields): `a=b`, `a==b`, `a!=b`,
 * comma-separated (AND), with `\,` `\=` `\\` escapes in values.
 */

export class FieldSelectorParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorParseError';
  }
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  matches(get: (field: string) => string | undefined): boolean;
  empty(): boolean;
  toString(): string;
  requiresExactMatch(field: string): string | undefined;
}

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');

function splitTerms(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unescape(v: string, whole: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n === '\\' || n === ',' || n === '=') {
        out += n;
        i++;
        continue;
      }
      throw new FieldSelectorParseError(`invalid field selector: '${whole}': invalid escape sequence`);
    }
    if (c === ',' || c === '=') throw new FieldSelectorParseError(`invalid field selector: '${whole}': unescaped '${c}'`);
    out += c;
  }
  return out;
}

export function parseFieldSelector(input: string): FieldSelector {
  const reqs: FieldRequirement[] = [];
  if (input.trim() !== '') {
    for (const term of splitTerms(input)) {
      if (term === '') continue;
      const m = /^([^=!\\]+?)(!=|==|=)(.*)$/.exec(term);
      if (!m) throw new FieldSelectorParseError(`invalid selector: '${input}'; can't understand '${term}'`);
      const field = m[1]!.trim();
      reqs.push({ field, operator: m[2] === '!=' ? '!=' : '=', value: unescape(m[3]!, input) });
    }
  }
  return {
    requirements: reqs,
    matches: (get) =>
      reqs.every((r) => {
        const v = get(r.field) ?? '';
        return r.operator === '=' ? v === r.value : v !== r.value;
      }),
    empty: () => reqs.length === 0,
    toString: () => reqs.map((r) => `${r.field}${r.operator}${escape(r.value)}`).join(','),
    requiresExactMatch: (field) => reqs.find((r) => r.field === field && r.operator === '=')?.value,
  };
}
