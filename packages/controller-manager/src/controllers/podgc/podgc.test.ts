import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { orphanCandidates, terminatedToDelete, unscheduledTerminating } from './controller.js';

const pod = (name: string, o: { phase?: string; node?: string; created?: string; deleting?: boolean } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'default',
    uid: name,
    creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
    ...(o.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}),
  },
  spec: { containers: [], ...(o.node ? { nodeName: o.node } : {}) },
  status: { ...(o.phase ? { phase: o.phase } : {}) },
});

test('terminated pods beyond the threshold go, oldest first; running ones never', () => {
  const pods = [
    pod('a', { phase: 'Succeeded', created: '2026-01-03T00:00:00Z' }),
    pod('b', { phase: 'Failed', created: '2026-01-01T00:00:00Z' }),
    pod('c', { phase: 'Succeeded', created: '2026-01-02T00:00:00Z' }),
    pod('r', { phase: 'Running' }),
  ];
  assert.deepEqual(
    terminatedToDelete(pods, 1).map((p) => p.metadata.name),
    ['b', 'c'],
  );
  assert.deepEqual(terminatedToDelete(pods, 3), []);
  assert.deepEqual(terminatedToDelete(pods, 0), [], 'a threshold of 0 turns this off, as upstream');
});

test('orphans are pods on nodes the cache does not know; unscheduled terminating pods are found', () => {
  const pods = [
    pod('on-n1', { node: 'n1' }),
    pod('on-ghost', { node: 'ghost' }),
    pod('pending'),
    pod('stuck', { deleting: true }),
    pod('done-stuck', { deleting: true, phase: 'Succeeded' }),
  ];
  assert.deepEqual(
    orphanCandidates(pods, new Set(['n1'])).map((p) => p.metadata.name),
    ['on-ghost'],
  );
  assert.deepEqual(
    unscheduledTerminating(pods).map((p) => p.metadata.name),
    ['stuck'],
  );
});
