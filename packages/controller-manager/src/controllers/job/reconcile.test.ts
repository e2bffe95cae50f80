import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { batchv1 } from '@kubeling/api';
import type { Job, Pod } from '../kinds.js';
import { reconcileJob } from './reconcile.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

const job = (spec: Partial<batchv1.JobSpec> = {}, status?: batchv1.JobStatus): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'work', namespace: 'ns', uid: 'job-uid' },
  spec: {
    template: { metadata: { labels: { 'job-name': 'work' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
    ...spec,
  },
  ...(status ? { status } : {}),
});

let n = 0;
const pod = (phase: string, o: { ready?: boolean; finishedAt?: number; deleting?: boolean } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `work-${n++}`, namespace: 'ns', uid: `uid-${n}`, ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}) },
  spec: { containers: [{ name: 'c' }] },
  status: {
    phase,
    conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False', lastTransitionTime: iso(NOW - 3_600_000) }],
    ...(o.finishedAt !== undefined ? { containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 1, finishedAt: iso(o.finishedAt) } } }] } : {}),
  },
});

const run = (j: Job, pods: Pod[], now = NOW) => reconcileJob({ job: j, pods, now });
const condTypes = (j: ReturnType<typeof run>) => j.status?.conditions?.map((c) => [c.type, c.reason]);

test('parallelism pods run at once, never more than the completions still needed', () => {
  const p = run(job({ parallelism: 2, completions: 5 }), []);
  assert.equal(p.create, 2);
  assert.deepEqual(p.template.metadata, {
    generateName: 'work-',
    labels: { 'job-name': 'work' },
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'work', uid: 'job-uid', controller: true, blockOwnerDeletion: true }],
  });
  assert.deepEqual(p.status, { startTime: iso(NOW), ready: 0, terminating: 0 });
  assert.equal(run(job({ parallelism: 2, completions: 5 }), [pod('Running', { ready: true })]).create, 1);
  assert.equal(
    run(job({ parallelism: 2, completions: 5 }), [pod('Succeeded'), pod('Succeeded'), pod('Succeeded'), pod('Succeeded')]).create,
    1,
    'one completion left',
  );
  const surplus = run(job({ parallelism: 1, completions: 5 }), [pod('Running'), pod('Running'), pod('Running')]);
  assert.equal(surplus.create, 0);
  assert.equal(surplus.delete.length, 2);
  assert.equal(run(job({ parallelism: 3, suspend: true }), []).create, 0, 'a suspended Job makes no pods');
});

test('completions reached: Complete with SuccessCriteriaMet, completionTime, remaining pods deleted', () => {
  const running = pod('Running');
  const p = run(job({ parallelism: 2, completions: 3 }), [pod('Succeeded'), pod('Succeeded'), pod('Succeeded'), running]);
  assert.deepEqual(p.delete, [running]);
  assert.equal(p.create, 0);
  assert.deepEqual(condTypes(p), [
    ['SuccessCriteriaMet', 'CompletionsReached'],
    ['Complete', 'CompletionsReached'],
  ]);
  assert.equal(p.status?.completionTime, iso(NOW));
  assert.equal(p.status?.succeeded, 3);
  assert.deepEqual(p.event, { type: 'Normal', reason: 'Completed', message: 'Job completed' });
  // Without completions, the first success with nothing else running completes it.
  assert.deepEqual(
    condTypes(run(job(), [pod('Succeeded')]))?.map(([t]) => t),
    ['SuccessCriteriaMet', 'Complete'],
  );
});

test('more failures than backoffLimit: Failed with FailureTarget, active pods deleted, nothing created', () => {
  const running = pod('Running');
  const p = run(job({ backoffLimit: 2 }), [
    pod('Failed', { finishedAt: NOW - 1000 }),
    pod('Failed', { finishedAt: NOW - 1000 }),
    pod('Failed', { finishedAt: NOW - 1000 }),
    running,
  ]);
  assert.deepEqual(condTypes(p), [
    ['FailureTarget', 'BackoffLimitExceeded'],
    ['Failed', 'BackoffLimitExceeded'],
  ]);
  assert.deepEqual(p.delete, [running]);
  assert.equal(p.create, 0);
  assert.equal(p.status?.failed, 3);
  assert.equal(p.event?.type, 'Warning');
  // At the limit it still retries.
  assert.equal(
    condTypes(
      run(job({ backoffLimit: 3 }), [
        pod('Failed', { finishedAt: NOW - 600_000 }),
        pod('Failed', { finishedAt: NOW - 600_000 }),
        pod('Failed', { finishedAt: NOW - 600_000 }),
      ]),
    ),
    undefined,
  );
});

test('a failed pod is replaced after an exponential back-off', () => {
  const once = run(job(), [pod('Failed', { finishedAt: NOW - 4_000 })]);
  assert.equal(once.create, 0);
  assert.equal(once.requeueAfterMs, 6_000, '10 s after the failure');
  const twice = run(job(), [pod('Failed', { finishedAt: NOW - 4_000 }), pod('Failed', { finishedAt: NOW - 30_000 })]);
  assert.equal(twice.requeueAfterMs, 16_000, '20 s after the last failure');
  assert.equal(run(job(), [pod('Failed', { finishedAt: NOW - 11_000 })]).create, 1, 'the back-off has passed');
});

test('activeDeadlineSeconds fails the Job once passed and is looked at again until then', () => {
  const started = { startTime: iso(NOW - 100_000) };
  const late = run(job({ activeDeadlineSeconds: 60 }, started), [pod('Running')]);
  assert.deepEqual(
    condTypes(late)?.map(([, reason]) => reason),
    ['DeadlineExceeded', 'DeadlineExceeded'],
  );
  assert.equal(late.delete.length, 1);
  const early = run(job({ activeDeadlineSeconds: 300 }, started), [pod('Running')]);
  assert.equal(early.requeueAfterMs, 200_010);
  assert.equal(condTypes(early), undefined);
});

test('a finished Job does nothing more, and its counts do not go down when its pods go', () => {
  const done: batchv1.JobStatus = { startTime: iso(NOW - 60_000), succeeded: 3, conditions: [{ type: 'Complete', status: 'True' }], ready: 0, terminating: 0 };
  const p = run(job({ completions: 3 }, done), []);
  assert.equal(p.create, 0);
  assert.deepEqual(p.delete, []);
  assert.equal(p.status, undefined, 'nothing changed');
  assert.equal(run(job({ completions: 3 }, done), [pod('Running', { deleting: true })]).status?.terminating, 1);
});
