import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from '../kinds.js';
import { finishedAt, needsCleanup, ttlLeft } from './controller.js';

const job = (ttl: number | undefined, conditions: { type: string; status: string; lastTransitionTime?: string }[], deleting = false): Job =>
  ({
    metadata: { name: 'j', namespace: 'ns', ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: { template: { spec: { containers: [] } }, ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }) },
    status: { conditions },
  }) as unknown as Job;

const DONE = '2025-01-01T00:00:00Z';
const T = Date.parse(DONE);

test('a Job finishes with a True Complete or Failed condition, at its transition time', () => {
  assert.equal(finishedAt(job(10, [{ type: 'Complete', status: 'True', lastTransitionTime: DONE }])), T);
  assert.equal(finishedAt(job(10, [{ type: 'Failed', status: 'True', lastTransitionTime: DONE }])), T);
  assert.equal(finishedAt(job(10, [{ type: 'Complete', status: 'False', lastTransitionTime: DONE }])), undefined);
  assert.throws(() => finishedAt(job(10, [{ type: 'Complete', status: 'True' }])), /unable to find the time when the Job ns\/j finished/);
});

test('cleanup needs a TTL, a finished Job and no deletion under way; the time left counts from the finish', () => {
  const done = [{ type: 'Complete', status: 'True', lastTransitionTime: DONE }];
  assert.equal(needsCleanup(job(undefined, done)), false);
  assert.equal(needsCleanup(job(5, [])), false);
  assert.equal(needsCleanup(job(5, done, true)), false);
  assert.equal(ttlLeft(job(5, done), T + 2000), 3000);
  assert.equal(ttlLeft(job(0, done), T + 2000), -2000);
  assert.equal(ttlLeft(job(5, []), T), undefined);
});
