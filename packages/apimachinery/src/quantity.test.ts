import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intValue, isQuantity, milliValue, parseQuantity } from './quantity.js';

test('quantities parse with binary, decimal and exponent suffixes', () => {
  assert.equal(milliValue('100m'), 100);
  assert.equal(milliValue('1'), 1000);
  assert.equal(milliValue('0.5'), 500);
  assert.equal(milliValue(2), 2000);
  assert.equal(milliValue('1u'), 1); // rounded up
  assert.equal(intValue('1Gi'), 1073741824);
  assert.equal(intValue('128Mi'), 134217728);
  assert.equal(intValue('1G'), 1e9);
  assert.equal(intValue('1e3'), 1000);
  assert.equal(intValue('1.5'), 2);
  assert.equal(intValue('110'), 110);
  assert.equal(parseQuantity('-2k'), -2000);
  assert.equal(parseQuantity('12E-1'), 1.2);
});

test('malformed quantities are refused', () => {
  for (const bad of ['', 'abc', '1Qi', '1 Gi', '.', '+', '1.2.3', 'Mi']) assert.equal(isQuantity(bad), false, bad);
  assert.throws(() => parseQuantity('x'));
});
