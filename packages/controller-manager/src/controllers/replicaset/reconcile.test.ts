import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ReplicaSet } from '../kinds.js';
import { BURST_REPLICAS, claimPods, reconcileReplicaSet, replicaSetStatus } from './reconcile.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

const rs = (replicas: number, o: { minReadySeconds?: number; deleting?: boolean; status?: ReplicaSet['status'] } = {}): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'rs-uid', generation: 2, ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}) },
  spec: {
    replicas,
    ...(o.minReadySeconds ? { minReadySeconds: o.minReadySeconds } : {}),
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web', tier: 'front' }, annotations: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
  ...(o.status ? { status: o.status } : {}),
});

interface PodOpts {
  node?: string;
  phase?: string;
  ready?: boolean;
  readySince?: number;
  created?: number;
  restarts?: number;
  deleting?: boolean;
  owner?: string | null;
  labels?: Record<string, string>;
}
const pod = (name: string, o: PodOpts = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    labels: o.labels ?? { app: 'web', tier: 'front' },
    creationTimestamp: iso(o.created ?? NOW - 3_600_000),
    ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}),
    ...(o.owner === null ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: o.owner ?? 'rs-uid', controller: true }] }),
  },
  spec: { containers: [{ name: 'c' }], ...(o.node ? { nodeName: o.node } : {}) },
  status: {
    phase: o.phase ?? 'Running',
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(o.readySince ?? NOW - 600_000) }],
    containerStatuses: [{ name: 'c', restartCount: o.restarts ?? 0 }],
  },
});

const plan = (r: ReplicaSet, owned: Pod[], expectationsSatisfied = true) => reconcileReplicaSet({ rs: r, owned, expectationsSatisfied, now: NOW });

test('creates the missing pods from the template, owned by the ReplicaSet', () => {
  const p = plan(rs(3), [pod('a', { node: 'n1' })]);
  assert.equal(p.create, 2);
  assert.deepEqual(p.delete, []);
  assert.deepEqual(p.template.metadata, {
    generateName: 'web-',
    labels: { app: 'web', tier: 'front' },
    annotations: { a: 'b' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }],
  });
  assert.deepEqual(p.template.spec, { containers: [{ name: 'c', image: 'nginx' }] });
  assert.equal(plan(rs(2 * BURST_REPLICAS), []).create, BURST_REPLICAS, 'one sync creates at most a burst');
});

test('finished and terminating pods are replaced, and counted apart', () => {
  const owned = [pod('run', { node: 'n1' }), pod('done', { node: 'n1', phase: 'Succeeded' }), pod('going', { node: 'n1', deleting: true })];
  const p = plan(rs(2), owned);
  assert.equal(p.create, 1);
  assert.deepEqual(p.status, { replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1, terminatingReplicas: 1, observedGeneration: 2 });
});

test('deletes the surplus, unscheduled then pending then not ready then the newest first', () => {
  const owned = [
    pod('old-ready', { node: 'n1', created: NOW - 7_200_000 }),
    pod('new-ready', { node: 'n1', created: NOW - 60_000 }),
    pod('not-ready', { node: 'n1', ready: false }),
    pod('pending', { node: 'n1', phase: 'Pending', ready: false }),
    pod('unscheduled', { phase: 'Pending', ready: false }),
  ];
  const names = (n: number) => plan(rs(n), owned).delete.map((x) => x.metadata.name);
  assert.deepEqual(names(2), ['unscheduled', 'pending', 'not-ready']);
  assert.deepEqual(names(1), ['unscheduled', 'pending', 'not-ready', 'new-ready']);
  assert.deepEqual(names(5), []);
  // Among equals, the pod that restarted more goes first.
  const restarts = [pod('calm', { node: 'n1' }), pod('flappy', { node: 'n1', restarts: 4 })];
  assert.deepEqual(
    plan(rs(1), restarts).delete.map((x) => x.metadata.name),
    ['flappy'],
  );
});

test('nothing is created or deleted while expectations are pending or the ReplicaSet is deleting', () => {
  assert.equal(plan(rs(3), [], false).create, 0);
  assert.deepEqual(plan(rs(0), [pod('a')], false).delete, []);
  const deleting = plan(rs(3, { deleting: true }), []);
  assert.equal(deleting.create, 0);
  assert.deepEqual(deleting.status, { replicas: 0, observedGeneration: 2 }, 'status is still reported');
});

test('claiming keeps, adopts and releases pods; a deleting ReplicaSet only keeps', () => {
  const pods = [
    pod('mine'),
    pod('mine-relabelled', { labels: { app: 'other' } }),
    pod('orphan', { owner: null }),
    pod('orphan-going', { owner: null, deleting: true }),
    pod('orphan-elsewhere', { owner: null, labels: { app: 'other' } }),
    pod('someone-elses', { owner: 'other-uid' }),
  ];
  assert.deepEqual(
    claimPods(rs(3), pods).map((c) => [c.pod.metadata.name, c.action]),
    [
      ['mine', 'own'],
      ['mine-relabelled', 'release'],
      ['orphan', 'adopt'],
    ],
  );
  assert.deepEqual(
    claimPods(rs(3, { deleting: true }), pods).map((c) => [c.pod.metadata.name, c.action]),
    [['mine', 'own']],
  );
});

test('status: written only when it changed; a failure to create sets ReplicaFailure and keeps its transition time', () => {
  const owned = [pod('a', { node: 'n1' }), pod('b', { node: 'n1', ready: false })];
  const fresh = plan(rs(2), owned);
  assert.deepEqual(fresh.status, { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 2 });
  assert.equal(plan(rs(2, { status: fresh.status! }), owned).status, undefined, 'an unchanged status is not written');
  const failed = replicaSetStatus(rs(3), owned, NOW, new Error('quota exceeded'));
  assert.deepEqual(failed.conditions, [
    { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota exceeded', lastTransitionTime: iso(NOW) },
  ]);
  const again = replicaSetStatus(rs(3, { status: failed }), owned, NOW + 60_000, new Error('quota exceeded'));
  assert.equal(again.conditions?.[0]?.lastTransitionTime, iso(NOW));
  assert.equal(replicaSetStatus(rs(3, { status: failed }), owned, NOW).conditions, undefined, 'success clears it');
});

test('minReadySeconds: ready pods not yet available are counted apart and looked at again', () => {
  const owned = [pod('young', { node: 'n1', readySince: NOW - 5_000 }), pod('old', { node: 'n1', readySince: NOW - 60_000 })];
  const p = plan(rs(2, { minReadySeconds: 30 }), owned);
  assert.equal(p.status?.readyReplicas, 2);
  assert.equal(p.status?.availableReplicas, 1);
  assert.equal(p.requeueAfterMs, 30_000);
  assert.equal(plan(rs(2), owned).requeueAfterMs, undefined);
});
