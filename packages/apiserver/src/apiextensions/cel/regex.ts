/**
 * Regular expressions with RE2 syntax, as cel-go's `matches` and the
 * Kubernetes regex library (`find`, `findAll`) use Go's regexp package.
 *
 * `matches` runs on @bufbuild/re2 (the RE2 engine @bufbuild/cel itself uses
 * for `matches`), loaded through @bufbuild/cel's own dependency so RE2
 * semantics and syntax errors hold. `find`/`findAll` need match positions,
 * which that engine's public API does not give, so they run on a JavaScript
 * RegExp translated from the RE2 pattern (flags groups, `\z`, `\A`, POSIX
 * classes, `(?P<name>`); both engines pick the leftmost-first match, so for
 * patterns within that common syntax the results agree. The RE2 engine first
 * decides whether there is any match, so the backtracking engine never runs
 * on an input without one (where catastrophic backtracking happens). Invalid patterns are
 * reported with Go's `error parsing regexp: ...` text where the engine gives
 * it.
 */
import { createRequire } from 'node:module';
import { CelError } from './values.js';

interface Re2Pattern {
  test(input: string): boolean;
}
interface Re2Static {
  compile(pattern: string): Re2Pattern;
}

function loadRe2(): Re2Static | undefined {
  try {
    const req = createRequire(import.meta.url);
    const celReq = createRequire(req.resolve('@bufbuild/cel'));
    return (celReq('@bufbuild/re2') as { RE2JS: Re2Static }).RE2JS;
  } catch {
    return undefined;
  }
}
const RE2 = loadRe2();

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Translates RE2 syntax into an equivalent JavaScript RegExp (with the `u` flag). */
export function toJsRegExp(pattern: string, global = false): RegExp {
  let flags = 'u';
  let p = pattern;
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    for (const f of lead[1]!) if ((f === 'i' || f === 's' || f === 'm') && !flags.includes(f)) flags += f;
    p = p.slice(lead[0].length);
  }
  p = p
    .replace(/\(\?P</g, '(?<')
    .replace(/\\z/g, '(?![\\s\\S])')
    .replace(/\\A/g, '^')
    .replace(/\[:(\^?)([a-z]+):\]/g, (m, neg: string, name: string) => {
      const cls = POSIX[name];
      if (!cls) return m;
      return neg ? `^${cls}` : cls;
    })
    .replace(/\\([pP])([A-Za-z])(?!\{)/g, '\\$1{$2}');
  // [[...]] produced by POSIX classes inside a bracket: drop the doubled brackets.
  p = p.replace(/\[\[([^\]]*)\]\]/g, '[$1]');
  try {
    return new RegExp(p, global ? `${flags}g` : flags);
  } catch (e) {
    throw new CelError(`error parsing regexp: ${(e as Error).message}`);
  }
}

const cache = new Map<string, { re2?: Re2Pattern; js?: RegExp }>();
const CACHE_MAX = 500;

function entry(pattern: string): { re2?: Re2Pattern; js?: RegExp } {
  let e = cache.get(pattern);
  if (!e) {
    if (cache.size >= CACHE_MAX) cache.clear();
    e = {};
    cache.set(pattern, e);
  }
  return e;
}

/** Whether `input` contains a match of the RE2 `pattern` (cel-go `matches`). */
export function regexMatches(pattern: string, input: string): boolean {
  const e = entry(pattern);
  if (RE2) {
    if (!e.re2) {
      try {
        e.re2 = RE2.compile(pattern);
      } catch (err) {
        throw new CelError((err as Error).message);
      }
    }
    return e.re2.test(input);
  }
  e.js ??= toJsRegExp(pattern);
  return e.js.test(input);
}

/** Validates a pattern, returning Go's error text or undefined. */
export function regexError(pattern: string): string | undefined {
  try {
    if (RE2) RE2.compile(pattern);
    else toJsRegExp(pattern);
    return undefined;
  } catch (err) {
    return err instanceof CelError ? err.message : (err as Error).message;
  }
}

/** The first match of `pattern` in `input`, or '' (Go's Regexp.FindString). */
export function regexFind(pattern: string, input: string): string {
  const err = regexError(pattern);
  if (err) throw new CelError(`Illegal regex: ${err}`);
  if (!regexMatches(pattern, input)) return '';
  const m = toJsRegExp(pattern).exec(input);
  return m ? m[0] : '';
}

/** Up to n matches (all when n < 0) of `pattern` in `input` (Go's Regexp.FindAllString). */
export function regexFindAll(pattern: string, input: string, n: number): string[] {
  const err = regexError(pattern);
  if (err) throw new CelError(`Illegal regex: ${err}`);
  if (n === 0 || !regexMatches(pattern, input)) return [];
  const re = toJsRegExp(pattern, true);
  const out: string[] = [];
  let prevEnd = -1;
  for (const m of input.matchAll(re)) {
    // Go skips an empty match right after the previous match.
    if (m[0] === '' && m.index === prevEnd) continue;
    out.push(m[0]);
    prevEnd = m.index + m[0].length;
    if (n > 0 && out.length >= n) break;
  }
  return out;
}
