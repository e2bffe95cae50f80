import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FieldSelectorParseError,
  andFieldSelectors,
  escapeFieldValue,
  everythingFields,
  fieldSelectorFromSet,
  oneTermEqualSelector,
  parseAndTransformFieldSelector,
  parseFieldSelector,
  unescapeFieldValue,
} from './fields.js';

test('terms, operators and matching', () => {
  const f = parseFieldSelector('metadata.name=x,status.phase!=Running');
  assert.deepEqual(f.requirements, [
    { field: 'metadata.name', operator: '=', value: 'x' },
    { field: 'status.phase', operator: '!=', value: 'Running' },
  ]);
  const obj: Record<string, string> = { 'metadata.name': 'x', 'status.phase': 'Pending' };
  assert.equal(
    f.matches((k) => obj[k]),
    true,
  );
  assert.equal(f.matches({ 'metadata.name': 'x', 'status.phase': 'Running' }), false);
  assert.equal(f.matches({ 'metadata.name': 'y' }), false);
  // an absent field reads as ''
  assert.equal(
    parseFieldSelector('spec.nodeName=').matches(() => undefined),
    true,
  );
  assert.equal(parseFieldSelector('spec.nodeName!=').matches({}), false);
  assert.deepEqual(parseFieldSelector('a==b').requirements, [{ field: 'a', operator: '=', value: 'b' }]);
  assert.equal(parseFieldSelector('a==b').toString(), 'a=b');
});

test('order, empty terms and no trimming, as upstream', () => {
  assert.equal(parseFieldSelector('b=1,a=2').toString(), 'a=2,b=1');
  assert.equal(parseFieldSelector(',,a=b,').toString(), 'a=b');
  assert.equal(parseFieldSelector('').empty(), true);
  assert.equal(parseFieldSelector('').toString(), '');
  assert.equal(parseFieldSelector('').matches({ x: 'y' }), true);
  assert.equal(parseFieldSelector('a=b').empty(), false);
  assert.deepEqual(parseFieldSelector('a = b').requirements, [{ field: 'a ', operator: '=', value: ' b' }]);
  // the first operator splits the term
  assert.deepEqual(parseFieldSelector('a!=b\\=c').requirements, [{ field: 'a', operator: '!=', value: 'b=c' }]);
});

test('escaping', () => {
  assert.equal(parseFieldSelector('a=b\\,c').requirements[0]!.value, 'b,c');
  assert.equal(parseFieldSelector('x=a\\=b\\\\').requirements[0]!.value, 'a=b\\');
  assert.equal(parseFieldSelector('x=a\\=b\\\\,y=\\,').toString(), 'x=a\\=b\\\\,y=\\,');
  assert.equal(escapeFieldValue('a,b=c\\'), 'a\\,b\\=c\\\\');
  assert.equal(unescapeFieldValue(escapeFieldValue('a,b=c\\')), 'a,b=c\\');
  assert.equal(unescapeFieldValue('plain'), 'plain');
});

test('errors carry upstream text', () => {
  const bad: [string, string][] = [
    ['nonsense', "invalid selector: 'nonsense'; can't understand 'nonsense'"],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
  ];
  for (const [input, message] of bad) {
    assert.throws(
      () => parseFieldSelector(input),
      (e: unknown) => e instanceof FieldSelectorParseError && e.message === message,
      input,
    );
  }
});

test('exact-match fast paths', () => {
  const f = parseFieldSelector('spec.nodeName=node-1,metadata.name!=x');
  assert.equal(f.requiresExactMatch('spec.nodeName'), 'node-1');
  assert.equal(f.requiresExactMatch('metadata.name'), undefined);
  assert.equal(f.requiresExactMatch('other'), undefined);
  assert.equal(oneTermEqualSelector('metadata.name', 'web').requiresExactMatch('metadata.name'), 'web');
  assert.equal(everythingFields().requiresExactMatch('metadata.name'), undefined);
});

test('constructors and transforms', () => {
  assert.equal(fieldSelectorFromSet({ 'metadata.name': 'a' }).toString(), 'metadata.name=a');
  assert.equal(fieldSelectorFromSet(null).empty(), true);
  assert.equal(andFieldSelectors(oneTermEqualSelector('a', '1'), parseFieldSelector('b!=2')).toString(), 'a=1,b!=2');
  const t = parseAndTransformFieldSelector('spec.host=n1', (f, v) => [f === 'spec.host' ? 'spec.nodeName' : f, v]);
  assert.equal(t.toString(), 'spec.nodeName=n1');
  assert.throws(() =>
    parseAndTransformFieldSelector('bogus=1', (f) => {
      throw new Error(`field label not supported: ${f}`);
    }),
  );
});
