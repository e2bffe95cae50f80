import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleTimes } from './controller.js';

test('last and next schedule times', () => {
  const t = scheduleTimes('*/5 * * * *', undefined, new Date('2026-03-01T10:07:30Z'));
  assert.equal(t.last.toISOString(), '2026-03-01T10:05:00.000Z');
  assert.equal(t.next.toISOString(), '2026-03-01T10:10:00.000Z');
  const exact = scheduleTimes('*/5 * * * *', undefined, new Date('2026-03-01T10:10:00Z'));
  assert.equal(exact.last.toISOString(), '2026-03-01T10:10:00.000Z');
  const tz = scheduleTimes('0 9 * * *', 'Europe/Paris', new Date('2026-03-01T12:00:00Z'));
  assert.equal(tz.last.toISOString(), '2026-03-01T08:00:00.000Z');
  assert.equal(scheduleTimes('@hourly', undefined, new Date('2026-03-01T12:30:00Z')).next.toISOString(), '2026-03-01T13:00:00.000Z');
});
