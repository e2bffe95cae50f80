/**
 * kubectl's JSONPath templates (client-go util/jsonpath): text with `{...}`
 * actions — fields `.a.b`, `['a.b']`, indexes and slices `[0]`, `[-1]`,
 * `[1:3]`, `[*]`, recursive descent `..name`, filters `[?(@.type=="Ready")]`,
 * unions `[a,b]`, string literals, and `{range ...}...{end}`. Several results
 * print space-separated; maps and lists print as JSON. Missing keys print
 * nothing (kubectl's `--allow-missing-template-keys` default).
 */

type Node = { t: 'text'; s: string } | { t: 'path'; steps: Step[]; literal?: string } | { t: 'range'; steps: Step[]; body: Node[] };

type Step =
  | { t: 'root' }
  | { t: 'cur' }
  | { t: 'field'; name: string }
  | { t: 'recursive'; name: string }
  | { t: 'wild' }
  | { t: 'index'; i: number }
  | { t: 'slice'; start?: number; end?: number; step?: number }
  | { t: 'union'; names: string[] }
  | { t: 'filter'; left: Step[]; op?: string; right?: Step[] | string | number | boolean | null };

export class JSONPathError extends Error {}

/** `.metadata.name` → `{.metadata.name}`; `{...}` kept (kubectl's RelaxedJSONPathExpression). */
export function relaxed(expr: string): string {
  const e = expr.trim();
  if (e.startsWith('{') && e.endsWith('}')) return e;
  const inner = e.startsWith('.') || e.startsWith('$') || e.startsWith('[') ? e : `.${e}`;
  return `{${inner}}`;
}

export function compile(template: string): Node[] {
  const nodes: Node[] = [];
  const stack: Node[][] = [nodes];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const top = stack[stack.length - 1]!;
    if (open < 0) {
      top.push({ t: 'text', s: template.slice(i) });
      break;
    }
    if (open > i) top.push({ t: 'text', s: template.slice(i, open) });
    const close = findClose(template, open);
    const action = template.slice(open + 1, close).trim();
    i = close + 1;
    if (action === 'end') {
      if (stack.length === 1) throw new JSONPathError('not in range, nothing to end');
      stack.pop();
    } else if (action.startsWith('range ')) {
      const r: Node = { t: 'range', steps: parsePath(action.slice(6).trim()), body: [] };
      top.push(r);
      stack.push(r.body);
    } else if (action.startsWith('"') || action.startsWith("'")) {
      top.push({ t: 'text', s: unquote(action) });
    } else top.push({ t: 'path', steps: parsePath(action) });
  }
  if (stack.length > 1) throw new JSONPathError('unclosed action');
  return nodes;
}

function findClose(s: string, open: number): number {
  let quote = '';
  for (let j = open + 1; j < s.length; j++) {
    const c = s[j]!;
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '}') return j;
  }
  throw new JSONPathError('unclosed action');
}

function unquote(s: string): string {
  const q = s[0];
  const body = s.slice(1, s.endsWith(q!) ? -1 : undefined);
  return body.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c as 'n'] ?? c);
}

function parsePath(src: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  if (src[0] === '$') {
    steps.push({ t: 'root' });
    i = 1;
  } else if (src[0] === '@') {
    steps.push({ t: 'cur' });
    i = 1;
  }
  const ident = () => {
    // `\.` keeps a dot inside a name (`labels.kubernetes\.io/hostname`), as client-go reads it.
    const m = /^(?:\\.|[^.[\]\s()=!<>,\\])*/.exec(src.slice(i))![0];
    i += m.length;
    return m.replace(/\\(.)/g, '$1');
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '.') {
      if (src[i + 1] === '.') {
        i += 2;
        steps.push({ t: 'recursive', name: ident() });
        continue;
      }
      i++;
      if (src[i] === '*') {
        i++;
        steps.push({ t: 'wild' });
        continue;
      }
      const name = ident();
      if (name) steps.push({ t: 'field', name });
    } else if (c === '[') {
      const end = matchingBracket(src, i);
      steps.push(parseBracket(src.slice(i + 1, end).trim()));
      i = end + 1;
    } else if (c === ' ') i++;
    else {
      const name = ident();
      if (!name) throw new JSONPathError(`unrecognized character in action: ${JSON.stringify(c)}`);
      steps.push({ t: 'field', name });
    }
  }
  return steps;
}

function matchingBracket(s: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let j = open; j < s.length; j++) {
    const c = s[j]!;
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  throw new JSONPathError('unterminated array');
}

function parseBracket(b: string): Step {
  if (b === '*') return { t: 'wild' };
  if (b.startsWith('?')) {
    const m = /^\?\s*\((.*)\)$/s.exec(b);
    if (!m) throw new JSONPathError(`invalid filter ${b}`);
    const expr = m[1]!.trim();
    const op = /(==|!=|<=|>=|<|>|=~)/.exec(expr);
    if (!op) return { t: 'filter', left: parsePath(expr) };
    const left = parsePath(expr.slice(0, op.index).trim());
    const rhs = expr.slice(op.index + op[0].length).trim();
    let right: Step[] | string | number | boolean | null;
    if (rhs.startsWith('"') || rhs.startsWith("'")) right = unquote(rhs);
    else if (rhs === 'true' || rhs === 'false') right = rhs === 'true';
    else if (rhs === 'nil' || rhs === 'null') right = null;
    else if (rhs !== '' && !Number.isNaN(Number(rhs))) right = Number(rhs);
    else right = parsePath(rhs);
    return { t: 'filter', left, op: op[0], right };
  }
  if (/^-?\d*:-?\d*(:-?\d*)?$/.test(b)) {
    const [s, e, st] = b.split(':').map((x) => (x === '' ? undefined : Number(x)));
    return { t: 'slice', ...(s !== undefined ? { start: s } : {}), ...(e !== undefined ? { end: e } : {}), ...(st !== undefined ? { step: st } : {}) };
  }
  if (/^-?\d+$/.test(b)) return { t: 'index', i: Number(b) };
  const names = b
    .split(',')
    .map((x) => x.trim())
    .map((x) => (x.startsWith("'") || x.startsWith('"') ? unquote(x) : x));
  return names.length === 1 ? { t: 'field', name: names[0]! } : { t: 'union', names };
}

function walk(steps: Step[], root: unknown, cur: unknown): unknown[] {
  let vals: unknown[] = [cur];
  for (const s of steps) {
    const next: unknown[] = [];
    for (const v of vals) {
      switch (s.t) {
        case 'root':
          next.push(root);
          break;
        case 'cur':
          next.push(v);
          break;
        case 'field':
          if (v && typeof v === 'object' && !Array.isArray(v) && s.name in (v as object)) next.push((v as Record<string, unknown>)[s.name]);
          break;
        case 'union':
          for (const n of s.names) if (v && typeof v === 'object' && n in (v as object)) next.push((v as Record<string, unknown>)[n]);
          break;
        case 'wild':
          if (Array.isArray(v)) next.push(...v);
          else if (v && typeof v === 'object')
            next.push(
              ...Object.keys(v)
                .sort()
                .map((k) => (v as Record<string, unknown>)[k]),
            );
          break;
        case 'index':
          if (Array.isArray(v)) {
            const i = s.i < 0 ? v.length + s.i : s.i;
            if (i < 0 || i >= v.length) throw new JSONPathError(`array index out of bounds: index ${s.i}, length ${v.length}`);
            next.push(v[i]);
          }
          break;
        case 'slice':
          if (Array.isArray(v)) {
            const norm = (x: number | undefined, d: number) => (x === undefined ? d : x < 0 ? Math.max(0, v.length + x) : Math.min(x, v.length));
            const step = s.step ?? 1;
            for (let i = norm(s.start, 0); i < norm(s.end, v.length); i += step) next.push(v[i]);
          }
          break;
        case 'recursive':
          collect(v, s.name, next);
          break;
        case 'filter': {
          const items = Array.isArray(v) ? v : [];
          for (const item of items) if (matches(s, root, item)) next.push(item);
          break;
        }
      }
    }
    vals = next;
  }
  return vals;
}

function collect(v: unknown, name: string, out: unknown[]): void {
  if (Array.isArray(v)) for (const x of v) collect(x, name, out);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (name in o) out.push(o[name]);
    for (const k of Object.keys(o).sort()) collect(o[k], name, out);
  }
}

function matches(f: Extract<Step, { t: 'filter' }>, root: unknown, item: unknown): boolean {
  const lefts = walk(f.left, root, item);
  if (!f.op) return lefts.length > 0 && lefts.some((x) => x !== false && x !== null && x !== undefined);
  if (!lefts.length) return false;
  const r = Array.isArray(f.right) ? walk(f.right as Step[], root, item)[0] : f.right;
  const l = lefts[0];
  switch (f.op) {
    case '==':
      return l === r || String(l) === String(r);
    case '!=':
      return !(l === r || String(l) === String(r));
    case '<':
      return Number(l) < Number(r);
    case '>':
      return Number(l) > Number(r);
    case '<=':
      return Number(l) <= Number(r);
    case '>=':
      return Number(l) >= Number(r);
    case '=~':
      return new RegExp(String(r)).test(String(l));
  }
  return false;
}

/** JSON as Go's encoding/json writes an unstructured object: keys sorted, no spaces. */
export function goJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${goJSON(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return goJSON(v);
  return String(v);
}

function exec(nodes: Node[], root: unknown, cur: unknown, out: string[]): void {
  for (const n of nodes) {
    if (n.t === 'text') out.push(n.s);
    else if (n.t === 'path') out.push(walk(n.steps, root, cur).map(text).join(' '));
    else {
      let items = walk(n.steps, root, cur);
      if (items.length === 1 && Array.isArray(items[0])) items = items[0] as unknown[];
      for (const item of items) exec(n.body, root, item, out);
    }
  }
}

/** Runs a template over an object; `{.a}` on a missing key prints nothing. */
export function evaluate(template: string, obj: unknown): string {
  const out: string[] = [];
  exec(compile(template), obj, obj, out);
  return out.join('');
}

/** The values a single expression selects (custom-columns cells, `wait --for=jsonpath`). */
export function select(expr: string, obj: unknown): unknown[] {
  const nodes = compile(relaxed(expr));
  const p = nodes.find((n) => n.t === 'path');
  if (p?.t !== 'path') return [];
  return walk(p.steps, obj, obj);
}
