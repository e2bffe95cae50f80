import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './util.js';

test('durations in Go form and bare seconds', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('15s'), 15_000);
  assert.equal(parseDuration('1m0s'), 60_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('8760h'), 8760 * 3_600_000);
  assert.equal(parseDuration('30'), 30_000);
  for (const bad of ['', 's', '1x', '-1s', '1s5', 'ms']) assert.throws(() => parseDuration(bad), /invalid duration/);
});
