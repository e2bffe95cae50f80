/**
 * Expression source handling: a small CEL tokenizer, the rewrite that lets
 * @bufbuild/cel's parser (which has no optional-syntax grammar) read cel-go's
 * optional syntax (`a.?b`, `a[?k]`, `[?x]`, `{?k: v}`), and cel-go's issue
 * rendering (common/errors.go `ToDisplayString`):
 *
 *     ERROR: <input>:1:6: undefined field 'foo'
 *      | self.foo == 1
 *      | .....^
 */

export interface Token {
  kind: 'str' | 'num' | 'ident' | 'op';
  text: string;
  start: number;
  end: number;
}

const OPS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '.', ',', '(', ')', '[', ']', '{', '}'];
const isIdentStart = (c: string) => /[A-Za-z_]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_]/.test(c);

/** Tokenizes a CEL expression; unknown characters become single-character op tokens. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const start = i;
    // string literal, with optional r/b prefixes
    let j = i;
    while (j < src.length && j - i < 2 && /[rRbB]/.test(src[j]!)) j++;
    if (src[j] === '"' || src[j] === "'") {
      const raw = /[rR]/.test(src.slice(i, j));
      const q = src[j]!;
      const triple = src.slice(j, j + 3) === q.repeat(3);
      let k = j + (triple ? 3 : 1);
      for (;;) {
        if (k >= src.length) break;
        if (!raw && src[k] === '\\') {
          k += 2;
          continue;
        }
        if (triple ? src.slice(k, k + 3) === q.repeat(3) : src[k] === q) {
          k += triple ? 3 : 1;
          break;
        }
        if (!triple && src[k] === '\n') break;
        k++;
      }
      out.push({ kind: 'str', text: src.slice(start, k), start, end: k });
      i = k;
      continue;
    }
    if (isIdentStart(c)) {
      while (i < src.length && isIdentPart(src[i]!)) i++;
      out.push({ kind: 'ident', text: src.slice(start, i), start, end: i });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9a-fA-F]+[uU]?|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[uU]?)/.exec(src.slice(i));
      i += m ? m[0].length : 1;
      out.push({ kind: 'num', text: src.slice(start, i), start, end: i });
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i)) ?? c;
    i += op.length;
    out.push({ kind: 'op', text: op, start, end: i });
  }
  return out;
}

export const OPT_SELECT = '__kubeling_opt_sel__';
export const OPT_INDEX = '__kubeling_opt_idx__';
export const OPT_ELEM = '__kubeling_opt_elem__';
export const OPT_KEY = '__kubeling_opt_key__';

interface Edit {
  /** offset in the rewritten text where the edit's text begins */
  at: number;
  /** characters added minus characters removed */
  delta: number;
}

/** The result of rewriting optional syntax, with a mapping of rewritten offsets back to the original. */
export interface Rewritten {
  text: string;
  toOriginal(offset: number): number;
}

const OPERAND_END = (t: Token | undefined) => !!t && (t.kind !== 'op' || t.text === ')' || t.text === ']' || t.text === '}');

/**
 * Rewrites cel-go's optional syntax into calls of marker functions the
 * @bufbuild/cel grammar accepts; ast.ts turns the markers back into optional
 * selections, indexes and entries.
 */
export function rewriteOptionalSyntax(src: string): Rewritten {
  if (!src.includes('?')) return { text: src, toOriginal: (o) => o };
  const toks = tokenize(src);
  interface Ins {
    pos: number;
    remove: number;
    text: string;
  }
  const ins: Ins[] = [];
  // bracket stack: '(' / '[' index / '[' list / '{'
  const stack: { open: string; list: boolean; wrapClose?: string }[] = [];
  const pendingClose: { depth: number; closeAt: string[] }[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const prev = toks[i - 1];
    const next = toks[i + 1];
    if (t.kind !== 'op') continue;
    if (t.text === '.' && next?.text === '?' && toks[i + 2]?.kind === 'ident') {
      ins.push({ pos: next.start, remove: next.end - next.start, text: OPT_SELECT });
      i++;
      continue;
    }
    if (t.text === '(' || t.text === '[' || t.text === '{') {
      stack.push({ open: t.text, list: t.text === '[' && !OPERAND_END(prev) });
      if (next?.text === '?' && t.text !== '(') {
        const top = stack[stack.length - 1]!;
        const marker = t.text === '{' ? OPT_KEY : top.list ? OPT_ELEM : OPT_INDEX;
        ins.push({ pos: next.start, remove: 1, text: `${marker}(` });
        pendingClose.push({ depth: stack.length, closeAt: t.text === '{' ? [':'] : [',', ']'] });
        i++;
      }
      continue;
    }
    const p = pendingClose[pendingClose.length - 1];
    if (p && p.depth === stack.length && p.closeAt.includes(t.text)) {
      ins.push({ pos: t.start, remove: 0, text: ')' });
      pendingClose.pop();
    }
    if (t.text === ')' || t.text === ']' || t.text === '}') {
      stack.pop();
      continue;
    }
    if (t.text === ',' && next?.text === '?') {
      const top = stack[stack.length - 1];
      if (top && (top.open === '{' || top.list)) {
        ins.push({ pos: next.start, remove: 1, text: `${top.open === '{' ? OPT_KEY : OPT_ELEM}(` });
        pendingClose.push({ depth: stack.length, closeAt: top.open === '{' ? [':'] : [',', ']'] });
        i++;
      }
    }
  }
  if (!ins.length) return { text: src, toOriginal: (o) => o };
  ins.sort((a, b) => a.pos - b.pos);
  let text = '';
  let last = 0;
  const edits: Edit[] = [];
  for (const e of ins) {
    text += src.slice(last, e.pos);
    edits.push({ at: text.length, delta: e.text.length - e.remove });
    text += e.text;
    last = e.pos + e.remove;
  }
  text += src.slice(last);
  return {
    text,
    toOriginal(offset: number): number {
      let o = offset;
      for (const e of edits) if (e.at < offset) o -= Math.min(e.delta, offset - e.at);
      return Math.max(0, o);
    },
  };
}

/** Line/column (1-based line, 0-based column in code points) of an offset. */
export function location(src: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < src.length; i++) {
    if (src[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: [...src.slice(lineStart, offset)].length };
}

/** One issue as cel-go prints it, with the source snippet and a caret. */
export function formatIssue(src: string, offset: number, message: string): string {
  const { line, col } = location(src, offset);
  let out = `ERROR: <input>:${line}:${col + 1}: ${message}`;
  const snippet = src.split('\n')[line - 1];
  if (snippet !== undefined) {
    const s = snippet.replaceAll('\t', ' ');
    out += `\n | ${s}\n | ${'.'.repeat(Math.min(col, [...s].length))}^`;
  }
  return out;
}

export interface Issue {
  offset: number;
  message: string;
}

/** cel-go `Issues.String()`: issues sorted by position, one per block, joined by newlines. */
export function formatIssues(src: string, issues: readonly Issue[]): string {
  return [...issues]
    .sort((a, b) => a.offset - b.offset)
    .map((i) => formatIssue(src, i.offset, i.message))
    .join('\n');
}
