/**
 * Go (RE2) regular expressions, as CRD `pattern`s are written, run on
 * JavaScript's engine.
 *
 * `compileGoRegexp` parses the RE2 syntax Go's regexp/syntax accepts (Perl
 * flags: `(?imsU)`, `(?flags:re)`, `(?P<name>re)`, `\Q…\E`, `\A`, `\z`, POSIX
 * classes, `\pL`/`\p{Greek}`, repeat counts up to 1000) and produces an
 * equivalent ECMAScript `RegExp` (unicode mode), or Go's own error text
 * (`error parsing regexp: missing argument to repetition operator: `+``) for
 * what Go refuses. Differences it bridges: Go's `.` only excludes `\n`, `\s`
 * is ASCII-only, inline flags may start mid-pattern (case folding is expanded
 * into classes; Node 20 has no `(?i:…)`), `^`/`$` are text anchors unless
 * `(?m)`, and assertions may be repeated. A pattern that is valid Go but that
 * this translator cannot express yields `{ unsupported: true }`, never a
 * throw: callers then skip the check instead of failing a request.
 */

export type GoRegexp = { re: RegExp } | { error: string } | { unsupported: true };

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

const ERR = 'error parsing regexp: ';
const fail = (code: string, expr: string): GoRegexpError => new GoRegexpError(`${ERR}${code}: \`${expr}\``);
class GoRegexpError extends Error {}
class Unsupported extends Error {}

const GENERAL_CATEGORIES = new Set('C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(' '));

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\u{0}-\\u{7f}',
  blank: '\\t ',
  cntrl: '\\u{0}-\\u{1f}\\u{7f}',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`\\{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Perl classes inside and outside a character class (Go's are ASCII-only). */
const PERL: Record<string, [string, string]> = {
  d: ['0-9', '[0-9]'],
  D: ['', '[^0-9]'],
  s: ['\\t\\n\\f\\r ', '[\\t\\n\\f\\r ]'],
  S: ['', '[^\\t\\n\\f\\r ]'],
  w: ['0-9A-Za-z_', '[0-9A-Za-z_]'],
  W: ['', '[^0-9A-Za-z_]'],
};

const isAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);

/** A code point as an ECMAScript (unicode mode) source atom. */
function lit(cp: number): string {
  const c = String.fromCodePoint(cp);
  if (/^[0-9A-Za-z _,:;'"<>=!@#%&~`-]$/.test(c)) return c;
  return `\\u{${cp.toString(16)}}`;
}

/** A code point inside a JS character class (`-` must be escaped there). */
const clit = (cp: number): string => (cp === 0x2d ? '\\-' : lit(cp));

/** Case variants of a code point (simple folding; enough for RE2's `(?i)` on real patterns). */
function caseVariants(cp: number): number[] {
  const c = String.fromCodePoint(cp);
  const out = new Set<number>([cp]);
  for (const v of [c.toLowerCase(), c.toUpperCase()]) if ([...v].length === 1) out.add(v.codePointAt(0)!);
  return [...out];
}

class Translator {
  private pos = 0;
  private out = '';
  private flags: Flags = { i: false, m: false, s: false };
  private readonly stack: { flags: Flags; atomStart: number }[] = [];
  /** Output index where the last repeatable item starts; -1 after `(`, `|` or at the start. */
  private atomStart = -1;
  private atomIsAssertion = false;
  /** Pattern index of the previous repetition operator while no new atom followed it. */
  private lastRepeat = -1;

  constructor(private readonly src: string) {}

  translate(): string {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s[this.pos]!;
      switch (c) {
        case '(':
          this.group();
          break;
        case ')':
          this.closeGroup();
          break;
        case '|':
          this.pos++;
          this.out += '|';
          this.atomStart = -1;
          this.lastRepeat = -1;
          break;
        case '*':
        case '+':
        case '?':
          this.repeat(this.pos, this.pos + 1, c);
          break;
        case '{': {
          // Go reads `{n}`, `{n,}`, `{n,m}` (no leading zeros) as a repeat; any other `{` is a literal.
          const m = /^\{(0|[1-9]\d*)(?:(,)(0|[1-9]\d*)?)?\}/.exec(s.slice(this.pos));
          if (!m) {
            this.atom(() => '\\{', 1);
            break;
          }
          const lo = Number(m[1]);
          const hi = m[2] === undefined ? lo : m[3] === undefined ? -1 : Number(m[3]);
          if (lo > 1000 || hi > 1000 || (hi >= 0 && lo > hi)) throw fail('invalid repeat count', m[0]);
          this.repeat(this.pos, this.pos + m[0].length, m[0]);
          break;
        }
        case '.':
          this.atom(() => (this.flags.s ? '[\\s\\S]' : '[^\\n]'), 1);
          break;
        case '^':
          this.atom(() => (this.flags.m ? '(?:^|(?<=\\n))' : '^'), 1, true);
          break;
        case '$':
          this.atom(() => (this.flags.m ? '(?:$|(?=\\n))' : '$'), 1, true);
          break;
        case '[':
          this.atom(() => this.charClass(), 0);
          break;
        case '\\':
          this.escape();
          break;
        default: {
          const cp = s.codePointAt(this.pos)!;
          this.atom(() => this.literal(cp), cp > 0xffff ? 2 : 1);
        }
      }
    }
    if (this.stack.length > 0) throw fail('missing closing )', s);
    return this.out;
  }

  private atom(emit: () => string, advance: number, assertion = false): void {
    const start = this.out.length;
    this.pos += advance;
    this.out += emit();
    this.atomStart = start;
    this.atomIsAssertion = assertion;
    this.lastRepeat = -1;
  }

  private literal(cp: number): string {
    if (!this.flags.i) return lit(cp);
    const v = caseVariants(cp);
    return v.length === 1 ? lit(cp) : `[${v.map(lit).join('')}]`;
  }

  private repeat(opStart: number, opEnd: number, op: string): void {
    let end = opEnd;
    let text = op;
    if (this.src[end] === '?') {
      end++;
      text += '?';
    }
    if (this.lastRepeat >= 0) throw fail('invalid nested repetition operator', this.src.slice(this.lastRepeat, end));
    if (this.atomStart < 0) throw fail('missing argument to repetition operator', text);
    if (this.atomIsAssertion) {
      this.out = `${this.out.slice(0, this.atomStart)}(?:${this.out.slice(this.atomStart)})`;
      this.atomIsAssertion = false;
    }
    this.out += text;
    this.lastRepeat = opStart;
    this.pos = end;
  }

  private group(): void {
    const s = this.src;
    const rest = s.slice(this.pos);
    if (rest.startsWith('(?')) {
      // (?P<name>re) and, since Go 1.22, (?<name>re); lookbehinds land here too and are refused the same way.
      if (rest.length > 4 && ((rest[2] === 'P' && rest[3] === '<') || rest[2] === '<')) {
        const begin = rest[2] === '<' ? 3 : 4;
        const end = rest.indexOf('>');
        if (end < 0) throw fail('invalid named capture', rest);
        if (!/^[A-Za-z0-9_]+$/.test(rest.slice(begin, end))) throw fail('invalid named capture', rest.slice(0, end + 1));
        this.open('(', end + 1);
        return;
      }
      // flags: (?imsU-imsU) or (?imsU-imsU:re)
      let i = 2;
      let neg = false;
      let sawFlag = false;
      const f = { ...this.flags };
      for (; i < rest.length; i++) {
        const c = rest[i]!;
        if (c === 'i' || c === 'm' || c === 's' || c === 'U') {
          if (c !== 'U') f[c] = !neg;
          sawFlag = true;
          continue;
        }
        if (c === '-') {
          if (neg) break;
          neg = true;
          sawFlag = false;
          continue;
        }
        if ((c === ':' || c === ')') && !(neg && !sawFlag)) {
          if (c === ')') {
            this.flags = f;
            this.pos += i + 1;
            return;
          }
          this.stack.push({ flags: this.flags, atomStart: this.out.length });
          this.flags = f;
          this.out += '(?:';
          this.pos += i + 1;
          this.atomStart = -1;
          this.lastRepeat = -1;
          return;
        }
        break;
      }
      throw fail('invalid or unsupported Perl syntax', rest.slice(0, Math.min(i + 1, rest.length)));
    }
    this.open('(', 1);
  }

  private open(emit: string, advance: number): void {
    this.stack.push({ flags: this.flags, atomStart: this.out.length });
    this.flags = { ...this.flags };
    this.out += emit;
    this.pos += advance;
    this.atomStart = -1;
    this.lastRepeat = -1;
  }

  private closeGroup(): void {
    const top = this.stack.pop();
    if (!top) throw fail('unexpected )', this.src);
    this.flags = top.flags;
    this.out += ')';
    this.pos++;
    this.atomStart = top.atomStart;
    this.atomIsAssertion = false;
    this.lastRepeat = -1;
  }

  private escape(): void {
    const s = this.src;
    const c = s[this.pos + 1];
    if (c === undefined) throw fail('trailing backslash at end of expression', '');
    switch (c) {
      case 'A':
        return this.atom(() => '(?<![\\s\\S])', 2, true);
      case 'z':
        return this.atom(() => '(?![\\s\\S])', 2, true);
      case 'b':
        return this.atom(() => '\\b', 2, true);
      case 'B':
        return this.atom(() => '\\B', 2, true);
      case 'Q': {
        const end = s.indexOf('\\E', this.pos + 2);
        const text = s.slice(this.pos + 2, end < 0 ? s.length : end);
        this.pos = end < 0 ? s.length : end + 2;
        for (const ch of text) {
          const cp = ch.codePointAt(0)!;
          this.atom(() => this.literal(cp), 0);
        }
        return;
      }
    }
    if (PERL[c]) return this.atom(() => PERL[c]![1], 2);
    if (c === 'p' || c === 'P') return this.atom(() => this.unicodeClass(false), 0);
    const { cp, len } = this.escapedChar(this.pos);
    this.atom(() => this.literal(cp), len);
  }

  /** A single-character escape at `at` (pointing at the backslash): its code point and length. */
  private escapedChar(at: number): { cp: number; len: number } {
    const s = this.src;
    const c = s[at + 1]!;
    const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };
    if (simple[c] !== undefined) return { cp: simple[c]!, len: 2 };
    if (c >= '1' && c <= '7' && !/[0-7]/.test(s[at + 2] ?? '')) throw fail('invalid escape sequence', s.slice(at, at + 2));
    if (c >= '0' && c <= '7') {
      const m = /^[0-7]{1,3}/.exec(s.slice(at + 1))!;
      return { cp: Number.parseInt(m[0], 8), len: 1 + m[0].length };
    }
    if (c === 'x') {
      const braced = /^\{([0-9A-Fa-f]+)\}/.exec(s.slice(at + 2));
      if (braced) {
        const cp = Number.parseInt(braced[1]!, 16);
        if (cp > 0x10ffff) throw fail('invalid escape sequence', s.slice(at, at + 2 + braced[0].length));
        return { cp, len: 2 + braced[0].length };
      }
      const two = /^[0-9A-Fa-f]{2}/.exec(s.slice(at + 2));
      if (!two) throw fail('invalid escape sequence', s.slice(at, Math.min(s.length, at + 4)));
      return { cp: Number.parseInt(two[0], 16), len: 4 };
    }
    const cp = s.codePointAt(at + 1)!;
    if (cp < 0x80 && !isAlnum(c)) return { cp, len: 2 };
    throw fail('invalid escape sequence', s.slice(at, at + (cp > 0xffff ? 3 : 2)));
  }

  /** `\pL`, `\p{Greek}`, `\PL`, `\p{^L}` at this.pos; returns the JS class (or class body when `inClass`). */
  private unicodeClass(inClass: boolean): string {
    const s = this.src;
    let negate = s[this.pos + 1] === 'P';
    let name: string;
    let len: number;
    if (s[this.pos + 2] === '{') {
      const end = s.indexOf('}', this.pos + 3);
      if (end < 0) throw fail('invalid character class range', s.slice(this.pos));
      name = s.slice(this.pos + 3, end);
      len = end + 1 - this.pos;
    } else {
      if (this.pos + 2 >= s.length) throw fail('invalid character class range', s.slice(this.pos));
      name = String.fromCodePoint(s.codePointAt(this.pos + 2)!);
      len = 2 + name.length;
    }
    const text = s.slice(this.pos, this.pos + len);
    if (name.startsWith('^')) {
      negate = !negate;
      name = name.slice(1);
    }
    let body: string;
    if (name === 'Any') body = negate ? '' : '\\u{0}-\\u{10ffff}';
    else if (GENERAL_CATEGORIES.has(name)) body = `\\${negate ? 'P' : 'p'}{${name}}`;
    else {
      try {
        new RegExp(`\\p{Script=${name}}`, 'u');
      } catch {
        throw fail('invalid character class range', text);
      }
      body = `\\${negate ? 'P' : 'p'}{Script=${name}}`;
    }
    this.pos += len;
    if (name === 'Any' && negate) return inClass ? '' : '[^\\u{0}-\\u{10ffff}]';
    return inClass ? body : `[${body}]`;
  }

  /** A `[...]` class starting at this.pos; advances past it. */
  private charClass(): string {
    const s = this.src;
    const start = this.pos;
    this.pos++;
    let negated = false;
    if (s[this.pos] === '^') {
      negated = true;
      this.pos++;
    }
    const parts: string[] = [];
    let first = true;
    while (true) {
      if (this.pos >= s.length) throw fail('missing closing ]', s.slice(start));
      const c = s[this.pos]!;
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && s[this.pos + 1] === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(s.slice(this.pos));
        if (m) {
          if (!POSIX[m[2]!]) throw fail('invalid character class range', m[0]);
          if (m[1]) throw new Unsupported();
          parts.push(POSIX[m[2]!]!);
          this.pos += m[0].length;
          continue;
        }
      }
      if (c === '\\' && PERL[s[this.pos + 1] ?? '']) {
        const [inside] = PERL[s[this.pos + 1]!]!;
        if (!inside) throw new Unsupported();
        parts.push(inside);
        this.pos += 2;
        continue;
      }
      if (c === '\\' && (s[this.pos + 1] === 'p' || s[this.pos + 1] === 'P')) {
        parts.push(this.unicodeClass(true));
        continue;
      }
      const lo = this.classChar();
      if (s[this.pos] === '-' && s[this.pos + 1] !== ']' && this.pos + 1 < s.length) {
        const rangeStart = this.pos - lo.len;
        this.pos++;
        const hi = this.classChar();
        if (hi.cp < lo.cp) throw fail('invalid character class range', s.slice(rangeStart, this.pos));
        parts.push(this.classRange(lo.cp, hi.cp));
      } else parts.push(this.classRange(lo.cp, lo.cp));
    }
    this.pos++;
    const body = parts.join('');
    if (!body) return negated ? '[\\s\\S]' : '[^\\s\\S]';
    return `[${negated ? '^' : ''}${body}]`;
  }

  private classChar(): { cp: number; len: number } {
    const s = this.src;
    if (s[this.pos] === '\\') {
      if (this.pos + 1 >= s.length) throw fail('trailing backslash at end of expression', '');
      const e = this.escapedChar(this.pos);
      this.pos += e.len;
      return e;
    }
    const cp = s.codePointAt(this.pos)!;
    const len = cp > 0xffff ? 2 : 1;
    this.pos += len;
    return { cp, len };
  }

  private classRange(lo: number, hi: number): string {
    const one = (a: number, b: number): string => (a === b ? clit(a) : `${clit(a)}-${clit(b)}`);
    let out = one(lo, hi);
    if (!this.flags.i) return out;
    // Fold ASCII letter ranges, and single characters of any script.
    const fold = (from: number, to: number, delta: number): void => {
      const a = Math.max(lo, from);
      const b = Math.min(hi, to);
      if (a <= b) out += one(a + delta, b + delta);
    };
    fold(0x61, 0x7a, -0x20);
    fold(0x41, 0x5a, 0x20);
    if (lo === hi && lo > 0x7f) for (const v of caseVariants(lo)) if (v !== lo) out += clit(v);
    return out;
  }
}

const cache = new Map<string, GoRegexp>();

/**
 * Compiles a Go regular expression. Results are cached per pattern (CRD
 * schemas reuse a few patterns on every request).
 */
export function compileGoRegexp(pattern: string): GoRegexp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let res: GoRegexp;
  try {
    const source = new Translator(pattern).translate();
    res = { re: new RegExp(source || '(?:)', 'u') };
  } catch (e) {
    res = e instanceof GoRegexpError ? { error: e.message } : { unsupported: true };
  }
  if (cache.size > 2000) cache.clear();
  cache.set(pattern, res);
  return res;
}

/** Go's error for a pattern it refuses, or '' when it compiles. */
export function goRegexpError(pattern: string): string {
  const r = compileGoRegexp(pattern);
  return 'error' in r ? r.error : '';
}
