/**
 * Go's text/template over an object decoded from JSON, as kubectl's
 * `-o go-template` runs it: actions `{{.a.b}}`, `{{$x := ...}}`, `if`/`else
 * if`/`else`, `range` (with `$i, $e :=` and `else`), `with`, pipelines `|`,
 * parenthesised calls, trim markers `{{-`/`-}}`, comments; the builtins
 * `and or not len index print printf println eq ne lt le gt ge` and kubectl's
 * `exists` and `base64decode`. A missing map key prints `<no value>`
 * (missingkey=default), maps print as `map[k:v]`, lists as `[a b]`.
 */

export class TemplateError extends Error {}

type Tok = { t: 'text'; s: string } | { t: 'action'; s: string };

type Expr =
  | { t: 'field'; base: Expr | null; names: string[] } // base null: the dot
  | { t: 'var'; name: string; names: string[] }
  | { t: 'lit'; v: unknown }
  | { t: 'call'; fn: string; args: Expr[] }
  | { t: 'pipe'; cmds: Expr[] }
  | { t: 'dot' };

type Node =
  | { t: 'text'; s: string }
  | { t: 'out'; e: Expr; decl?: { names: string[]; assign: boolean } }
  | { t: 'if'; cond: Expr; then: Node[]; else: Node[]; with?: boolean }
  | { t: 'range'; e: Expr; vars: string[]; body: Node[]; else: Node[] };

const MISSING = Symbol('missing');

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      toks.push({ t: 'text', s: src.slice(i) });
      break;
    }
    let text = src.slice(i, open);
    let start = open + 2;
    if (src[start] === '-' && /\s/.test(src[start + 1] ?? '')) {
      text = text.replace(/\s+$/, '');
      start++;
    }
    if (text) toks.push({ t: 'text', s: text });
    // Find the closing braces outside string literals.
    let j = start;
    let quote = '';
    for (; j < src.length; j++) {
      const c = src[j]!;
      if (quote) {
        if (c === '\\' && quote === '"') j++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === '`' || c === "'") quote = c;
      else if (c === '}' && src[j + 1] === '}') break;
    }
    if (j >= src.length) throw new TemplateError('template: unclosed action');
    let body = src.slice(start, j);
    let next = j + 2;
    if (/\s-$/.test(body)) {
      body = body.slice(0, -1);
      const m = /^\s*/.exec(src.slice(next))!;
      next += m[0].length;
    }
    body = body.trim();
    if (!body.startsWith('/*')) toks.push({ t: 'action', s: body });
    i = next;
  }
  return toks;
}

/** Splits an action into words: strings, parens, pipes and `:=`/`=` stay whole. */
function words(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === '`' || c === "'") {
      let j = i + 1;
      while (j < s.length && s[j] !== c) j += s[j] === '\\' && c !== '`' ? 2 : 1;
      const end = j + 1;
      // A field chain after a parenthesis or literal is not meaningful; keep the literal.
      out.push(s.slice(i, end));
      i = end;
    } else if (c === '(' || c === ')' || c === '|' || c === ',') {
      // `(x).field`: the chain after ')' stays attached
      if (c === ')' && s[i + 1] === '.') {
        const m = /^\)(\.[A-Za-z0-9_.]+)/.exec(s.slice(i))!;
        out.push(')', m[1]!);
        i += m[0].length;
        continue;
      }
      out.push(c);
      i++;
    } else if (s.startsWith(':=', i)) {
      out.push(':=');
      i += 2;
    } else {
      const m = /^[^\s()|,]+/.exec(s.slice(i))!;
      out.push(m[0]);
      i += m[0].length;
    }
  }
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}

  parse(): Node[] {
    const [nodes, end] = this.list();
    if (end) throw new TemplateError(`template: unexpected {{${end}}}`);
    return nodes;
  }

  /** Nodes up to `end`/`else`; returns which keyword stopped it. */
  private list(): [Node[], string | undefined] {
    const nodes: Node[] = [];
    while (this.pos < this.toks.length) {
      const tok = this.toks[this.pos++]!;
      if (tok.t === 'text') {
        nodes.push({ t: 'text', s: tok.s });
        continue;
      }
      const w = words(tok.s);
      const head = w[0];
      if (head === 'end') return [nodes, 'end'];
      if (head === 'else') return [nodes, tok.s];
      if (head === 'if' || head === 'with') nodes.push(this.cond(w.slice(1), head === 'with'));
      else if (head === 'range') nodes.push(this.range(w.slice(1)));
      else if (head === 'define' || head === 'template' || head === 'block') throw new TemplateError(`template: {{${head}}} is not supported`);
      else nodes.push(this.out(w));
    }
    return [nodes, undefined];
  }

  private cond(w: string[], withBlock: boolean): Node {
    const node: Extract<Node, { t: 'if' }> = { t: 'if', cond: pipeline(w), then: [], else: [], ...(withBlock ? { with: true } : {}) };
    const [then, end] = this.list();
    node.then = then;
    if (!end) throw new TemplateError('template: unexpected EOF');
    if (end !== 'end') {
      const rest = words(end).slice(1);
      if (rest[0] === 'if' || rest[0] === 'with') node.else = [this.cond(rest.slice(1), rest[0] === 'with')];
      else {
        const [els, end2] = this.list();
        if (end2 !== 'end') throw new TemplateError('template: expected end');
        node.else = els;
      }
    }
    return node;
  }

  private range(w: string[]): Node {
    let vars: string[] = [];
    const decl = w.indexOf(':=');
    if (decl >= 0) {
      vars = w.slice(0, decl).filter((x) => x !== ',');
      w = w.slice(decl + 1);
    }
    const node: Extract<Node, { t: 'range' }> = { t: 'range', e: pipeline(w), vars, body: [], else: [] };
    const [body, end] = this.list();
    node.body = body;
    if (!end) throw new TemplateError('template: unexpected EOF');
    if (end !== 'end') {
      const [els, end2] = this.list();
      if (end2 !== 'end') throw new TemplateError('template: expected end');
      node.else = els;
    }
    return node;
  }

  private out(w: string[]): Node {
    const decl = w.findIndex((x) => x === ':=' || x === '=');
    if (decl > 0 && w[0]!.startsWith('$'))
      return { t: 'out', e: pipeline(w.slice(decl + 1)), decl: { names: w.slice(0, decl).filter((x) => x !== ','), assign: w[decl] === '=' } };
    return { t: 'out', e: pipeline(w) };
  }
}

function pipeline(w: string[]): Expr {
  const cmds: Expr[] = [];
  let cur: string[] = [];
  let depth = 0;
  for (const x of w) {
    if (x === '(') depth++;
    if (x === ')') depth--;
    if (x === '|' && depth === 0) {
      cmds.push(command(cur));
      cur = [];
    } else cur.push(x);
  }
  cmds.push(command(cur));
  return cmds.length === 1 ? cmds[0]! : { t: 'pipe', cmds };
}

function command(w: string[]): Expr {
  const args: Expr[] = [];
  for (let i = 0; i < w.length; i++) {
    const x = w[i]!;
    if (x === '(') {
      let depth = 1;
      let j = i + 1;
      for (; j < w.length && depth; j++) {
        if (w[j] === '(') depth++;
        if (w[j] === ')') depth--;
      }
      let e = pipeline(w.slice(i + 1, j - 1));
      if (w[j]?.startsWith('.')) {
        e = { t: 'field', base: e, names: w[j]!.split('.').filter(Boolean) };
        j++;
      }
      args.push(e);
      i = j - 1;
    } else args.push(operand(x));
  }
  if (!args.length) throw new TemplateError('template: missing value for command');
  const head = args[0]!;
  if (head.t === 'call' && head.args.length === 0) return { t: 'call', fn: head.fn, args: args.slice(1) };
  if (args.length > 1) throw new TemplateError(`template: can't give argument to non-function ${w[0]}`);
  return head;
}

function operand(x: string): Expr {
  if (x === '.') return { t: 'dot' };
  if (x.startsWith('.')) return { t: 'field', base: null, names: x.split('.').filter(Boolean) };
  if (x.startsWith('$')) {
    const [name, ...names] = x.split('.');
    return { t: 'var', name: name!, names };
  }
  if (x.startsWith('"')) return { t: 'lit', v: JSON.parse(x) };
  if (x.startsWith('`')) return { t: 'lit', v: x.slice(1, -1) };
  if (x.startsWith("'")) return { t: 'lit', v: x.slice(1, -1) };
  if (x === 'true' || x === 'false') return { t: 'lit', v: x === 'true' };
  if (x === 'nil') return { t: 'lit', v: null };
  if (/^[-+]?(\d|\.\d)/.test(x) && !Number.isNaN(Number(x))) return { t: 'lit', v: Number(x) };
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(x)) return { t: 'call', fn: x, args: [] };
  throw new TemplateError(`template: unexpected "${x}" in command`);
}

function truthy(v: unknown): boolean {
  if (v === MISSING || v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** Go's %v of a value decoded from JSON. */
export function goValue(v: unknown): string {
  if (v === MISSING) return '<no value>';
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goValue(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

function sprintf(format: string, args: unknown[]): string {
  let i = 0;
  return format.replace(/%([-+ 0#]*)(\d*)(?:\.(\d+))?([vsdqftxX%])/g, (_m, flags: string, width: string, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    const a = args[i++];
    let s: string;
    switch (verb) {
      case 'd':
        s = String(Math.trunc(Number(a)));
        break;
      case 'f':
        s = Number(a).toFixed(prec === undefined ? 6 : Number(prec));
        break;
      case 'q':
        s = JSON.stringify(typeof a === 'string' ? a : goValue(a));
        break;
      case 'x':
      case 'X':
        s = typeof a === 'number' ? a.toString(16) : Buffer.from(String(a)).toString('hex');
        if (verb === 'X') s = s.toUpperCase();
        break;
      case 't':
        s = String(Boolean(a));
        break;
      default:
        s = goValue(a);
    }
    if (width) s = flags.includes('-') ? s.padEnd(Number(width)) : s.padStart(Number(width), flags.includes('0') ? '0' : ' ');
    return s;
  });
}

function cmp(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateError('template: incompatible types for comparison');
}

const FUNCS: Record<string, (...a: unknown[]) => unknown> = {
  and: (...a) => a.find((x) => !truthy(x)) ?? a[a.length - 1],
  or: (...a) => a.find((x) => truthy(x)) ?? a[a.length - 1],
  not: (a) => !truthy(a),
  len: (a) => {
    if (typeof a === 'string' || Array.isArray(a)) return a.length;
    if (a && typeof a === 'object') return Object.keys(a).length;
    throw new TemplateError(`template: len of ${goValue(a)}`);
  },
  index: (a, ...keys) => {
    let v = a;
    for (const k of keys) {
      if (Array.isArray(v)) {
        if (typeof k !== 'number' || k < 0 || k >= v.length) throw new TemplateError(`template: index out of range: ${String(k)}`);
        v = v[k];
      } else if (v && typeof v === 'object') v = k !== null && String(k) in (v as object) ? (v as Record<string, unknown>)[String(k)] : null;
      else throw new TemplateError(`template: can't index item of type ${typeof v}`);
    }
    return v;
  },
  print: (...a) => a.map((x, i) => (i > 0 && typeof x !== 'string' && typeof a[i - 1] !== 'string' ? ' ' : '') + goValue(x)).join(''),
  println: (...a) => a.map(goValue).join(' ') + '\n',
  printf: (f, ...a) => sprintf(String(f), a),
  eq: (a, ...bs) => bs.some((b) => a === b || (a === null && b === MISSING) || (a === MISSING && b === null)),
  ne: (a, b) => a !== b,
  lt: (a, b) => cmp(a, b) < 0,
  le: (a, b) => cmp(a, b) <= 0,
  gt: (a, b) => cmp(a, b) > 0,
  ge: (a, b) => cmp(a, b) >= 0,
  exists: (a, ...keys) => {
    let v = a;
    for (const k of keys) {
      if (!v || typeof v !== 'object' || !(String(k) in (v as object))) return false;
      v = (v as Record<string, unknown>)[String(k)];
    }
    return true;
  },
  base64decode: (a) => Buffer.from(String(a), 'base64').toString('utf8'),
};

class Scope {
  constructor(
    readonly vars: Map<string, unknown>,
    readonly parent?: Scope,
  ) {}
  get(name: string): unknown {
    if (this.vars.has(name)) return this.vars.get(name);
    if (this.parent) return this.parent.get(name);
    throw new TemplateError(`template: undefined variable: ${name}`);
  }
  set(name: string, v: unknown): void {
    if (this.vars.has(name) || !this.parent) this.vars.set(name, v);
    else this.parent.set(name, v);
  }
}

function fields(v: unknown, names: string[]): unknown {
  for (const n of names) {
    if (v === MISSING || v === null || v === undefined) return v === MISSING ? MISSING : v === null ? MISSING : v;
    if (typeof v !== 'object' || Array.isArray(v))
      throw new TemplateError(`template: can't evaluate field ${n} in type ${Array.isArray(v) ? '[]interface {}' : typeof v}`);
    v = n in (v as object) ? (v as Record<string, unknown>)[n] : MISSING;
  }
  return v;
}

function evalExpr(e: Expr, dot: unknown, scope: Scope, piped?: unknown[]): unknown {
  switch (e.t) {
    case 'dot':
      return dot;
    case 'lit':
      return e.v;
    case 'field':
      return fields(e.base ? evalExpr(e.base, dot, scope) : dot, e.names);
    case 'var':
      return fields(scope.get(e.name), e.names);
    case 'call': {
      const fn = FUNCS[e.fn];
      if (!fn) throw new TemplateError(`template: function "${e.fn}" not defined`);
      const args = e.args.map((a) => evalExpr(a, dot, scope));
      return fn(...args, ...(piped ?? []));
    }
    case 'pipe': {
      let v: unknown = evalExpr(e.cmds[0]!, dot, scope);
      for (const c of e.cmds.slice(1)) v = evalExpr(c, dot, scope, [v]);
      return v;
    }
  }
}

function exec(nodes: Node[], dot: unknown, scope: Scope, out: string[]): void {
  for (const n of nodes) {
    switch (n.t) {
      case 'text':
        out.push(n.s);
        break;
      case 'out': {
        const v = evalExpr(n.e, dot, scope);
        if (n.decl) {
          if (n.decl.assign) scope.set(n.decl.names[0]!, v);
          else scope.vars.set(n.decl.names[0]!, v);
        } else out.push(v === null || v === undefined ? '<no value>' : goValue(v));
        break;
      }
      case 'if': {
        const v = evalExpr(n.cond, dot, scope);
        const inner = new Scope(new Map(), scope);
        if (truthy(v)) exec(n.then, n.with ? v : dot, inner, out);
        else exec(n.else, dot, inner, out);
        break;
      }
      case 'range': {
        const v = evalExpr(n.e, dot, scope);
        const entries: [unknown, unknown][] = Array.isArray(v)
          ? v.map((x, i) => [i, x])
          : v && typeof v === 'object'
            ? Object.keys(v)
                .sort()
                .map((k) => [k, (v as Record<string, unknown>)[k]])
            : typeof v === 'number'
              ? Array.from({ length: v }, (_, i) => [i, i])
              : [];
        if (!entries.length) {
          exec(n.else, dot, new Scope(new Map(), scope), out);
          break;
        }
        for (const [k, x] of entries) {
          const inner = new Scope(new Map(), scope);
          if (n.vars.length === 1) inner.vars.set(n.vars[0]!, x);
          if (n.vars.length === 2) {
            inner.vars.set(n.vars[0]!, k);
            inner.vars.set(n.vars[1]!, x);
          }
          exec(n.body, x, inner, out);
        }
        break;
      }
    }
  }
}

export function compileTemplate(src: string): Node[] {
  return new Parser(tokenize(src)).parse();
}

/** Runs a template over a JSON-decoded object. */
export function executeTemplate(src: string, data: unknown): string {
  const out: string[] = [];
  exec(compileTemplate(src), data, new Scope(new Map([['$', data]])), out);
  return out.join('');
}
