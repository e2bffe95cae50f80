import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume } from '../storage.js';
import { protectedFinalizers } from './controller.js';

const FINALIZER = 'kubernetes.io/pv-protection';
const volume = (phase: string, o: { deleting?: boolean; finalizers?: string[] } = {}): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'v', finalizers: o.finalizers ?? [FINALIZER], ...(o.deleting ? { deletionTimestamp: '2026-03-01T10:00:00Z' } : {}) },
  status: { phase },
});

test('a deleting volume keeps the finalizer while Bound, and loses it (only it) otherwise', () => {
  assert.equal(protectedFinalizers(volume('Bound', { deleting: true })), undefined);
  for (const phase of ['Available', 'Released', 'Failed', 'Pending']) {
    assert.deepEqual(protectedFinalizers(volume(phase, { deleting: true, finalizers: [FINALIZER, 'external-provisioner.volume.kubernetes.io/finalizer'] })), [
      'external-provisioner.volume.kubernetes.io/finalizer',
    ]);
  }
});

test('a live volume without the finalizer gets it', () => {
  assert.deepEqual(protectedFinalizers(volume('Available', { finalizers: ['x'] })), ['x', FINALIZER]);
  assert.equal(protectedFinalizers(volume('Available')), undefined);
  assert.equal(protectedFinalizers(volume('Released', { deleting: true, finalizers: [] })), undefined);
});
