import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { bytesQuantity, cpuQuantity, decimalQuantity, goDuration } from './format.js';

test('CPU nanocores are written as resource.Quantity canonicalizes a DecimalSI scale -9 value', () => {
  assert.equal(cpuQuantity(0), '0');
  assert.equal(cpuQuantity(1_234_567), '1234567n');
  assert.equal(cpuQuantity(123_000_000), '123m');
  assert.equal(cpuQuantity(120_000_000), '120m');
  assert.equal(cpuQuantity(1_500_000_000), '1500m');
  assert.equal(cpuQuantity(2_000_000_000), '2');
  assert.equal(cpuQuantity(5_000), '5u');
  assert.equal(cpuQuantity(50_000), '50u');
  assert.equal(cpuQuantity(43_629_237.9), '43629237n');
  assert.equal(decimalQuantity(3_000_000, 0), '3M');
});

test('memory bytes are BinarySI: Ki/Mi when a multiple of 1024, DecimalSI below 1024', () => {
  assert.equal(bytesQuantity(0), '0');
  assert.equal(bytesQuantity(512), '512');
  assert.equal(bytesQuantity(1000), '1k');
  assert.equal(bytesQuantity(1024), '1Ki');
  assert.equal(bytesQuantity(634_824 * 1024), '634824Ki');
  assert.equal(bytesQuantity(1_048_576), '1Mi');
  assert.equal(bytesQuantity(3 * 2 ** 30), '3Gi');
  assert.equal(bytesQuantity(1_234_567), '1234567');
});

test('windows are Go time.Duration strings', () => {
  assert.equal(goDuration(0), '0s');
  assert.equal(goDuration(15_002_000_000), '15.002s');
  assert.equal(goDuration(15_000_000_000), '15s');
  assert.equal(goDuration(300_000_000), '300ms');
  assert.equal(goDuration(1_500), '1.5µs');
  assert.equal(goDuration(999), '999ns');
  assert.equal(goDuration(1_234_567), '1.234567ms');
  assert.equal(goDuration(60_000_000_000), '1m0s');
  assert.equal(goDuration(90_500_000_000), '1m30.5s');
  assert.equal(goDuration(3_600_000_000_000 + 2 * 60e9 + 3e9), '1h2m3s');
  assert.equal(goDuration(-2e9), '-2s');
});
