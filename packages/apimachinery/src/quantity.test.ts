import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goTrimSpace, intValue, isQuantity, milliValue, parseQuantity, QuantityError, quantityError } from './quantity.js';

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

const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

test('malformed quantities are refused with upstream ParseQuantity errors', () => {
  for (const bad of ['', 'abc', '1Qi', '1 Gi', '1.2.3', '1..2', 'lots', ' 1', '1 ', '1.1.M', '1+1.0M', '0.1am', 'aoeu', '1e+1x', '{}', 'true', '1KI', '1kb']) {
    assert.equal(quantityError(bad), FORMAT, bad);
  }
  for (const bad of ['1Gu', '0.1mi', '.5i', '1i', '-3.01i', '-3.01e-', '1e', '1e+', '1ee3', '1e99999999999999999999', '1m1', '1Ki1']) {
    assert.equal(quantityError(bad), SUFFIX, bad);
  }
  // no digit at all, on the path where upstream parses the number with inf.Dec
  for (const bad of ['Pi', 'Ei', '.Ei', '-Pi', '.e-10', 'e-10', '-E-12']) assert.equal(quantityError(bad), NUMERIC, bad);
  for (const bad of ['', 'abc', '1Qi', '1 Gi', '1.2.3']) assert.equal(isQuantity(bad), false, bad);
  assert.throws(
    () => parseQuantity('x'),
    (e: unknown) => e instanceof QuantityError && e.message === FORMAT,
  );
  assert.throws(
    () => parseQuantity('1Gu'),
    (e: unknown) => e instanceof QuantityError && e.message === SUFFIX,
  );
});

test('quantities upstream accepts, scanner quirks included', () => {
  for (const ok of [
    '0',
    '1',
    '100m',
    '1Gi',
    '1.5',
    '.5',
    '1.',
    '1.G',
    '.',
    '-',
    '+',
    '-.',
    'Mi',
    'k',
    'Ti',
    '0.000000000001Ki',
    '1e3',
    '1E-3',
    '1.3E+6',
    '12E',
    '9Ei',
    '1e4294967297',
    '+1',
    '-1.5Gi',
    '00012',
    '3.001n',
  ]) {
    assert.equal(quantityError(ok), undefined, ok);
    assert.equal(isQuantity(ok), true, ok);
  }
  assert.equal(parseQuantity('.'), 0);
  assert.equal(parseQuantity('-'), 0);
  assert.equal(parseQuantity('Mi'), 0);
  assert.equal(parseQuantity('1.G'), 1e9);
  assert.equal(parseQuantity('.5'), 0.5);
  assert.equal(parseQuantity('1e4294967297'), 10); // 1.33 narrows the exponent to int32
  assert.equal(parseQuantity(' 2Ki\n'), 2048); // surrounding space, as the JSON decoding of a Quantity trims it
});

test("goTrimSpace trims what Go's strings.TrimSpace trims", () => {
  assert.equal(goTrimSpace(' \t\n\v\f\r1\u0085\u00a0\u2000\u3000'), '1');
  assert.equal(goTrimSpace('\ufeff1'), '\ufeff1');
  assert.equal(goTrimSpace('1'), '1');
});
