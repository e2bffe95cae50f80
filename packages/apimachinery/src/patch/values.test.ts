import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson, goFloat, goTypeName, goValueString, jsonEqualDeep, jsonSize } from './values.js';

test('goValueString prints as Go %v prints decoded JSON', () => {
  assert.equal(goValueString({ b: 2, a: 'x', c: { z: true, y: null } }), 'map[a:x b:2 c:map[y:<nil> z:true]]');
  assert.equal(goValueString([1, 1.5, 'a b', [], {}]), '[1 1.5 a b [] map[]]');
  assert.equal(goValueString(null), '<nil>');
  assert.equal(goValueString({ B: 1, a: 1, $p: 1, é: 1, '😀': 1, ｚ: 1 }), 'map[$p:1 B:1 a:1 é:1 ｚ:1 😀:1]');
  assert.equal(goValueString('x', 's'), 'x');
  assert.equal(goValueString(5, 's'), '%!s(int64=5)');
  assert.equal(goValueString(1.5, 's'), '%!s(float64=1.5)');
  assert.equal(goValueString(true, 's'), '%!s(bool=true)');
  assert.equal(goValueString(null, 's'), '%!s(<nil>)');
});

test('goFloat is strconv.FormatFloat(f, g, -1, 64) with %v exponent limits', () => {
  assert.equal(goFloat(2), '2');
  assert.equal(goFloat(1.5), '1.5');
  assert.equal(goFloat(1e21), '1e+21');
  assert.equal(goFloat(1e20), '100000000000000000000');
  assert.equal(goFloat(1.25e22), '1.25e+22');
  assert.equal(goFloat(0.0001), '0.0001');
  assert.equal(goFloat(0.00001), '1e-05');
  assert.equal(goFloat(-1.5e-7), '-1.5e-07');
  assert.equal(goFloat(1e100), '1e+100');
  assert.equal(goFloat(123.456), '123.456');
  assert.equal(goValueString(1e21), '1e+21');
  // biome-ignore lint/correctness/noPrecisionLoss: the literal is past 2^53 on purpose
  assert.equal(goValueString(9007199254740993), '9007199254740992');
});

test('goTypeName', () => {
  assert.deepEqual(['s', 1, 1.5, 1e21, true, {}, [], null].map(goTypeName), [
    'string',
    'int64',
    'float64',
    'float64',
    'bool',
    'map[string]interface {}',
    '[]interface {}',
    '%!s(<nil>)',
  ]);
});

test('clone, equality, printing and sizing 10,000 levels deep', () => {
  let v: unknown = 1;
  for (let i = 0; i < 10_000; i++) v = i % 2 ? { a: v } : [v];
  const c = cloneJson(v);
  assert.notEqual(c, v);
  assert.equal(jsonEqualDeep(c, v), true);
  assert.equal(goValueString(c).length, 5_000 * '[]'.length + 5_000 * 'map[a:]'.length + 1);
  assert.equal(jsonSize(c), 5_000 * '[]'.length + 5_000 * '{"a":}'.length + 1);
  assert.equal(jsonSize({ a: '<x>', b: [1, null] }), JSON.stringify({ a: '<x>', b: [1, null] }).length + 10);
});
