import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference } from '@kubeling/api';
import type { Pod, StatefulSet } from '../kinds.js';
import type { PersistentVolumeClaim } from '../storage.js';
import { claimOwnerRefs, claimOwnerUpToDate, claimsForPod, podClaimIsStale } from './claims.js';
import { reconcileStatefulSet } from './reconcile.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const SET_REF: OwnerReference = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'set-uid', controller: true, blockOwnerDeletion: true };
const podRef = (n: number, uid = `uid-${n}`): OwnerReference => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name: `db-${n}`,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});

const set = (replicas: number, policy?: { whenDeleted?: string; whenScaled?: string }): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'ns', uid: 'set-uid', generation: 1 },
  spec: {
    replicas,
    serviceName: 'db',
    selector: { matchLabels: { app: 'db' } },
    template: { metadata: { labels: { app: 'db', tier: 'data' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    volumeClaimTemplates: [
      {
        metadata: { name: 'data', labels: { backup: 'daily' }, annotations: { note: 'kept' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' },
      },
    ],
    ...(policy ? { persistentVolumeClaimRetentionPolicy: policy } : {}),
  },
});

const claim = (n: number, refs: OwnerReference[] = []): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `data-db-${n}`, namespace: 'ns', uid: `claim-${n}`, ...(refs.length ? { ownerReferences: refs } : {}) },
});

const pod = (n: number, phase = 'Running'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `db-${n}`,
    namespace: 'ns',
    uid: `uid-${n}`,
    labels: { app: 'db' },
    ownerReferences: [SET_REF],
  },
  spec: { containers: [{ name: 'c' }] },
  status: { phase, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T11:00:00Z' }] },
});

test('a claim is the template with its labels and annotations, named <template>-<pod>, plus the selector labels', () => {
  const claims = claimsForPod(set(1), 'db-0');
  assert.deepEqual(claims.get('data'), {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-db-0', namespace: 'ns', labels: { backup: 'daily', app: 'db' }, annotations: { note: 'kept' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' },
  });
});

test('owner references by policy: Retain none; WhenDeleted=Delete the set; WhenScaled=Delete the condemned pod', () => {
  const s = (p?: { whenDeleted?: string; whenScaled?: string }) => set(2, p);
  assert.deepEqual(claimOwnerRefs(claim(0), s(), { name: 'db-0', uid: 'uid-0' }, 0), []);
  assert.deepEqual(claimOwnerRefs(claim(0), s({ whenDeleted: 'Delete' }), { name: 'db-0', uid: 'uid-0' }, 0), [SET_REF]);
  assert.deepEqual(claimOwnerRefs(claim(0), s({ whenScaled: 'Delete' }), { name: 'db-0', uid: 'uid-0' }, 0), [], 'in range: kept on scale');
  assert.deepEqual(claimOwnerRefs(claim(5), s({ whenScaled: 'Delete' }), { name: 'db-5', uid: 'uid-5' }, 5), [podRef(5)]);
  assert.deepEqual(claimOwnerRefs(claim(5), s({ whenScaled: 'Delete', whenDeleted: 'Delete' }), { name: 'db-5', uid: 'uid-5' }, 5), [podRef(5)]);
  assert.deepEqual(claimOwnerRefs(claim(0, [SET_REF]), s(), { name: 'db-0', uid: 'uid-0' }, 0), [], 'a policy back to Retain drops the reference');
});

test('up to date: a claim matching the policy, or one another controller controls, is left alone', () => {
  const del = set(2, { whenDeleted: 'Delete' });
  assert.equal(claimOwnerUpToDate(claim(0, [SET_REF]), del, { name: 'db-0', uid: 'uid-0' }, 0), true);
  assert.equal(claimOwnerUpToDate(claim(0), del, { name: 'db-0', uid: 'uid-0' }, 0), false);
  assert.equal(claimOwnerUpToDate(claim(0, [{ ...SET_REF, controller: false }]), del, { name: 'db-0', uid: 'uid-0' }, 0), false, 'must be the controller');
  const other: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Backup', name: 'b', uid: 'b', controller: true };
  assert.equal(claimOwnerUpToDate(claim(0, [other]), del, { name: 'db-0', uid: 'uid-0' }, 0), true);
  assert.deepEqual(claimOwnerRefs(claim(0, [other, SET_REF]), del, { name: 'db-0', uid: 'uid-0' }, 0), [other], 'scrubbed of ours under another controller');
  const stale: OwnerReference = { ...SET_REF, uid: 'an-older-set' };
  assert.equal(claimOwnerUpToDate(claim(0, [stale]), del, { name: 'db-0', uid: 'uid-0' }, 0), true, 'a stale reference: not ours to touch');
});

test('under WhenScaled=Delete a claim still owned by an earlier pod of the name is stale and blocks the pod', () => {
  const s = set(2, { whenScaled: 'Delete' });
  const existing = new Map([['data-db-1', claim(1, [podRef(1, 'the-earlier-db-1')])]]);
  assert.equal(podClaimIsStale(s, { name: 'db-1' }, existing), true);
  assert.equal(podClaimIsStale(set(2), { name: 'db-1' }, existing), false, 'Retain: claims are reused');
  const p = reconcileStatefulSet({ set: s, pods: [pod(0)], revisions: [], claims: existing, now: NOW });
  assert.deepEqual(p.actions, [], 'db-1 waits for the garbage collector');
});

test('a pod whose claim is being deleted waits for it to go', () => {
  const deleting = { ...claim(0), metadata: { ...claim(0).metadata, deletionTimestamp: '2026-01-01T11:00:00Z' } };
  const p = reconcileStatefulSet({ set: set(1), pods: [], revisions: [], claims: new Map([['data-db-0', deleting]]), now: NOW });
  assert.deepEqual(p.actions, []);
});

test('new pods get their claims owned as the policy says; condemned pods claims are re-owned before they go', () => {
  const s = set(1, { whenScaled: 'Delete', whenDeleted: 'Delete' });
  const create = reconcileStatefulSet({ set: s, pods: [], revisions: [], claims: new Map(), now: NOW });
  const a = create.actions[0]!;
  assert.equal(a.type, 'create');
  if (a.type === 'create') assert.deepEqual(a.claims[0]!.metadata?.ownerReferences, [SET_REF]);

  const claims = new Map([
    ['data-db-0', claim(0, [SET_REF])],
    ['data-db-1', claim(1, [SET_REF])],
  ]);
  const down = reconcileStatefulSet({ set: s, pods: [pod(0), pod(1)], revisions: [], claims, now: NOW });
  assert.deepEqual(
    down.claimUpdates.map((c) => [c.metadata.name, c.metadata.ownerReferences]),
    [['data-db-1', [podRef(1)]]],
  );
  assert.deepEqual(
    down.actions.map((x) => (x.type === 'delete' ? x.pod.metadata.name : x.type)),
    ['db-1'],
  );
});

test('Retain: claims are kept across pod deletion and scale-down, never owned; an existing claim is not made again', () => {
  const claims = new Map([['data-db-0', claim(0)]]);
  const p = reconcileStatefulSet({ set: set(1), pods: [], revisions: [], claims, now: NOW });
  const a = p.actions[0]!;
  if (a.type !== 'create') return assert.fail('expected a create');
  assert.deepEqual(a.claims, [], 'the claim of the deleted pod is reused');
  assert.deepEqual(a.pod.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }]);
  const down = reconcileStatefulSet({ set: set(0), pods: [pod(0)], revisions: [], claims, now: NOW });
  assert.deepEqual(down.claimUpdates, []);
});

test('a Pending pod whose claim is missing gets it made again', () => {
  const p = reconcileStatefulSet({ set: set(1), pods: [pod(0, 'Pending')], revisions: [], claims: new Map(), now: NOW });
  assert.deepEqual(
    p.claimCreates.map((c) => [c.podName, c.claim.metadata?.name]),
    [['db-0', 'data-db-0']],
  );
  assert.deepEqual(reconcileStatefulSet({ set: set(1), pods: [pod(0)], revisions: [], claims: new Map(), now: NOW }).claimCreates, [], 'a running pod is not');
});
