import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGoRegexp, goRegexpError } from './regexp.js';

const matches = (pattern: string, s: string): boolean => {
  const r = compileGoRegexp(pattern);
  assert.ok('re' in r, `${pattern} should compile: ${JSON.stringify(r)}`);
  return r.re.test(s);
};

test('patterns from real CRDs behave as Go matches them (unanchored search)', () => {
  const quantity = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
  assert.equal(matches(quantity, '100Mi'), true);
  assert.equal(matches(quantity, '1e3'), true);
  assert.equal(matches(quantity, '1Gb'), false);
  assert.equal(matches('^(http|https)://.+$', 'https://x'), true);
  assert.equal(matches('^(http|https)://.+$', 'ftp://x'), false);
  assert.equal(matches('^[\\w\\s:/.\\\\-]+$', 'C:\\dir/file-1 x'), true);
  assert.equal(matches('^2\\d{3}(?::2\\d{3}|$)', '2000:2999'), true);
  assert.equal(matches('b', 'abc'), true);
});

test('inline flags, including mid-pattern (?i) that JavaScript cannot express directly', () => {
  const days = '^((?i)sun|mon|tues|wednes|thurs|fri|satur)day(?:((:(sun|mon|tues|wednes|thurs|fri|satur)day)$)|$)';
  assert.equal(matches(days, 'SUNday'), true);
  assert.equal(matches(days, 'monday:friday'), true);
  assert.equal(matches(days, 'sunDAY'), false);
  assert.equal(matches('^(?i)(abort|warn)?$', 'WaRn'), true);
  assert.equal(matches('(?i:[a-c])x', 'Bx'), true);
  assert.equal(matches('(?i:[a-c])x', 'BX'), false);
  assert.equal(matches('(?s)^a.b$', 'a\nb'), true);
  assert.equal(matches('^a.b$', 'a\nb'), false);
  assert.equal(matches('^a.b$', 'a\rb'), true);
  assert.equal(matches('(?m)^b$', 'a\nb\nc'), true);
  assert.equal(matches('^b$', 'a\nb\nc'), false);
});

test('RE2-only syntax', () => {
  assert.equal(matches('\\Qa.b\\E', 'a.b'), true);
  assert.equal(matches('\\Qa.b\\E', 'axb'), false);
  assert.equal(matches('^[[:alpha:]]+$', 'abc'), true);
  assert.equal(matches('^[[:digit:]]+$', 'abc'), false);
  assert.equal(matches('^\\pL+$', 'héllo'), true);
  assert.equal(matches('^\\p{Greek}$', 'α'), true);
  assert.equal(matches('(?P<year>\\d{4})', '2024'), true);
  assert.equal(matches('\\Aab\\z', 'ab'), true);
  assert.equal(matches('\\Aab\\z', 'ab\n'), false);
  assert.equal(matches('a{,3}', 'a{,3}'), true);
  assert.equal(matches('^\\s$', '\u00a0'), false);
  assert.equal(matches('^\\x{263a}\\x41$', '☺A'), true);
  assert.equal(matches('^*a', 'a'), true);
  assert.equal(matches('[]a]', ']'), true);
});

test("what Go refuses yields Go's error text", () => {
  const cases: [string, string][] = [
    ['+', 'missing argument to repetition operator: `+`'],
    ['(*)', 'missing argument to repetition operator: `*`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['a{2}{3}', 'invalid nested repetition operator: `{2}{3}`'],
    ['(a', 'missing closing ): `(a`'],
    ['a)', 'unexpected ): `a)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['\\8', 'invalid escape sequence: `\\8`'],
    ['\\1', 'invalid escape sequence: `\\1`'],
    ['\\Z', 'invalid escape sequence: `\\Z`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['a{3,2}', 'invalid repeat count: `{3,2}`'],
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?<!a)', 'invalid named capture: `(?<!a)`'],
    ['(?<x-y>a)', 'invalid named capture: `(?<x-y>`'],
    ['\\p{Foo}', 'invalid character class range: `\\p{Foo}`'],
    ['[[:foo:]]', 'invalid character class range: `[:foo:]`'],
    ['a\\', 'trailing backslash at end of expression: ``'],
  ];
  for (const [p, e] of cases) assert.equal(goRegexpError(p), `error parsing regexp: ${e}`, p);
  assert.equal(goRegexpError('^[a-z]+$'), '');
});

test('results are cached and never throw', () => {
  assert.strictEqual(compileGoRegexp('^x$'), compileGoRegexp('^x$'));
  assert.doesNotThrow(() => compileGoRegexp('[[:^alpha:]]'));
});
