import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slowStartBatch } from './slow-start.js';
import { Expectations } from './expectations.js';

test('batches grow 1, 2, 4, ... up to the count', async () => {
  let calls = 0;
  const r = await slowStartBatch(10, 1, async () => {
    calls++;
  });
  assert.deepEqual(r.batches, [1, 2, 4, 3]);
  assert.equal(r.succeeded, 10);
  assert.equal(calls, 10);
});

test('a failing batch stops the rest', async () => {
  let calls = 0;
  const r = await slowStartBatch(20, 1, async () => {
    calls++;
    if (calls > 2) throw new Error('quota');
  });
  assert.deepEqual(r.batches, [1, 2]);
  assert.equal(r.succeeded, 2);
  assert.equal(r.skipped, 17);
});

test('expectations hold a key until observed, or until they expire', () => {
  let now = 0;
  const e = new Expectations(() => now);
  e.expectCreations('ns/rs', 2);
  assert.equal(e.satisfied('ns/rs'), false);
  e.creationObserved('ns/rs');
  assert.equal(e.satisfied('ns/rs'), false);
  e.creationObserved('ns/rs');
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectDeletions('ns/rs', ['ns/p1']);
  assert.equal(e.satisfied('ns/rs'), false);
  now = 6 * 60_000;
  assert.equal(e.satisfied('ns/rs'), true);
});
