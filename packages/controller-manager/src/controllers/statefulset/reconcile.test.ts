import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { appsv1 } from '@kubeling/api';
import { podTemplateHash } from '../deployment/util.js';
import type { ControllerRevision, Pod, StatefulSet } from '../kinds.js';
import { reconcileStatefulSet, type StatefulSetPlan } from './reconcile.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const template = (image: string) => ({ metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image }] } });
const REV = (image: string) => `db-${podTemplateHash(template(image))}`;

interface SetOpts {
  replicas?: number;
  image?: string;
  parallel?: boolean;
  partition?: number;
  onDelete?: boolean;
  start?: number;
  claims?: boolean;
  status?: appsv1.StatefulSetStatus;
}
const set = (o: SetOpts = {}): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'ns', uid: 'set-uid', generation: 1 },
  spec: {
    replicas: o.replicas ?? 3,
    serviceName: 'db-headless',
    selector: { matchLabels: { app: 'db' } },
    template: template(o.image ?? 'v1'),
    ...(o.parallel ? { podManagementPolicy: 'Parallel' } : {}),
    ...(o.onDelete
      ? { updateStrategy: { type: 'OnDelete' } }
      : o.partition
        ? { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } } }
        : {}),
    ...(o.start ? { ordinals: { start: o.start } } : {}),
    ...(o.claims
      ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] }
      : {}),
  },
  ...(o.status ? { status: o.status } : {}),
});

const pod = (ordinal: number, o: { rev?: string; ready?: boolean; phase?: string; deleting?: boolean } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `db-${ordinal}`,
    namespace: 'ns',
    uid: `uid-${ordinal}`,
    labels: { app: 'db', 'controller-revision-hash': o.rev ?? REV('v1') },
    ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}),
  },
  spec: { containers: [{ name: 'c' }] },
  status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(NOW - 60_000) }] },
});
const revision = (image: string, n: number): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: { name: REV(image), namespace: 'ns' },
  data: { spec: { template: { ...template(image), $patch: 'replace' } } },
  revision: n,
});

const run = (s: StatefulSet, pods: Pod[], revisions: ControllerRevision[] = [revision('v1', 1)]) => reconcileStatefulSet({ set: s, pods, revisions, now: NOW });
const steps = (p: StatefulSetPlan) => p.actions.map((a) => (a.type === 'create' ? `create ${a.ordinal}` : `delete ${a.pod.metadata.name}`));

test('OrderedReady creates ordinal 0 first, with its stable identity, and waits for it to be Running and Ready', () => {
  const first = run(set(), []);
  assert.deepEqual(steps(first), ['create 0']);
  const a = first.actions[0]!;
  assert.equal(a.type, 'create');
  if (a.type !== 'create') return;
  assert.deepEqual(a.pod.metadata, {
    name: 'db-0',
    labels: { app: 'db', 'controller-revision-hash': REV('v1'), 'statefulset.kubernetes.io/pod-name': 'db-0', 'apps.kubernetes.io/pod-index': '0' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'set-uid', controller: true, blockOwnerDeletion: true }],
  });
  assert.deepEqual([a.pod.spec?.hostname, a.pod.spec?.subdomain], ['db-0', 'db-headless']);
  assert.equal(first.updateRevision, REV('v1'));
  assert.deepEqual(steps(run(set(), [pod(0, { ready: false })])), [], 'waits for db-0 to be ready');
  assert.deepEqual(steps(run(set(), [pod(0, { phase: 'Pending' })])), [], 'waits for db-0 to be running');
  assert.deepEqual(steps(run(set(), [pod(0)])), ['create 1']);
  assert.deepEqual(steps(run(set(), [pod(0), pod(1)])), ['create 2']);
  assert.deepEqual(steps(run(set({ start: 5 }), [])), ['create 5'], 'ordinals.start moves the first ordinal');
});

test('Parallel creates every missing pod at once, ready or not', () => {
  assert.deepEqual(steps(run(set({ parallel: true }), [])), ['create 0', 'create 1', 'create 2']);
  assert.deepEqual(steps(run(set({ parallel: true }), [pod(1, { ready: false })])), ['create 0', 'create 2']);
});

test('scale-down removes the highest ordinal first, one at a time under OrderedReady', () => {
  const pods = [pod(0), pod(1), pod(2), pod(3)];
  assert.deepEqual(steps(run(set({ replicas: 2 }), pods)), ['delete db-3']);
  assert.deepEqual(steps(run(set({ replicas: 2 }), [pod(0), pod(1), pod(2), pod(3, { deleting: true })])), [], 'waits for db-3 to go');
  assert.deepEqual(steps(run(set({ replicas: 2, parallel: true }), pods)), ['delete db-3', 'delete db-2']);
  // An unhealthy pod halts the scale-down unless it is the lowest unhealthy one.
  const unready = [pod(0, { ready: false }), pod(1, { ready: false }), pod(2, { ready: false })];
  assert.deepEqual(steps(run(set({ replicas: 0 }), unready)), [], 'db-0 is the first unhealthy pod: db-2 waits for it');
  assert.deepEqual(steps(run(set({ replicas: 0 }), [pod(0, { ready: false }), pod(1), pod(2)])), ['delete db-2'], 'healthy pods go');
  assert.deepEqual(steps(run(set({ replicas: 0 }), [pod(0, { ready: false })])), ['delete db-0'], 'the first unhealthy pod itself goes');
  assert.deepEqual(steps(run(set({ replicas: 0, parallel: true }), unready)), ['delete db-2', 'delete db-1', 'delete db-0'], 'Parallel does not wait');
});

test('a failed pod is deleted so that it is made again', () => {
  assert.deepEqual(steps(run(set(), [pod(0), pod(1, { phase: 'Failed' }), pod(2)])), ['delete db-1']);
  assert.deepEqual(steps(run(set(), [pod(0), pod(1, { phase: 'Failed', deleting: true })])), [], 'waits while it terminates');
});

test('volumeClaimTemplates give each pod its own claim, mounted under the template name', () => {
  const p = run(set({ claims: true }), []);
  const a = p.actions[0]!;
  if (a.type !== 'create') return assert.fail('expected a create');
  assert.deepEqual(a.claims, [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-db-0', namespace: 'ns', labels: { app: 'db' } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
  ]);
  assert.deepEqual(a.pod.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }]);
});

test('RollingUpdate replaces pods from the highest ordinal down, one at a time, down to the partition', () => {
  const revisions = [revision('v1', 1), revision('v2', 2)];
  const status = { replicas: 3, currentRevision: REV('v1') };
  const v2 = (o: SetOpts = {}) => set({ image: 'v2', status, ...o });
  assert.deepEqual(steps(run(v2(), [pod(0), pod(1), pod(2)], revisions)), ['delete db-2']);
  // db-2 is back at v2 but not ready yet: wait.
  assert.deepEqual(steps(run(v2(), [pod(0), pod(1), pod(2, { rev: REV('v2'), ready: false })], revisions)), []);
  assert.deepEqual(steps(run(v2(), [pod(0), pod(1), pod(2, { rev: REV('v2') })], revisions)), ['delete db-1']);
  // With partition 2, db-0 and db-1 stay at the current revision, and are made from it when missing.
  assert.deepEqual(steps(run(v2({ partition: 2 }), [pod(0), pod(1), pod(2, { rev: REV('v2') })], revisions)), []);
  const remade = run(v2({ partition: 2 }), [pod(0), pod(2, { rev: REV('v2') })], revisions).actions[0]!;
  if (remade.type !== 'create') return assert.fail('expected a create');
  assert.equal(remade.ordinal, 1);
  assert.equal(remade.pod.metadata.labels?.['controller-revision-hash'], REV('v1'));
  assert.equal(remade.pod.spec?.containers?.[0]?.image, 'v1', 'from the current revision');
  // OnDelete leaves pods to their users.
  assert.deepEqual(steps(run(v2({ onDelete: true }), [pod(0), pod(1), pod(2)], revisions)), []);
});

test('status: the update revision becomes current once every pod runs it and is ready; unused revisions are pruned', () => {
  const revisions = [revision('v0', 1), revision('v1', 2), revision('v2', 3)];
  const mid = run(
    set({ image: 'v2', status: { replicas: 3, currentRevision: REV('v1') } }),
    [pod(0), pod(1, { rev: REV('v2') }), pod(2, { rev: REV('v2') })],
    revisions,
  );
  assert.deepEqual(mid.status, {
    observedGeneration: 1,
    replicas: 3,
    readyReplicas: 3,
    currentReplicas: 1,
    updatedReplicas: 2,
    currentRevision: REV('v1'),
    updateRevision: REV('v2'),
    collisionCount: 0,
    availableReplicas: 3,
  });
  const done = run(set({ image: 'v2', status: mid.status! }), [pod(0, { rev: REV('v2') }), pod(1, { rev: REV('v2') }), pod(2, { rev: REV('v2') })], revisions);
  assert.equal(done.status?.currentRevision, REV('v2'));
  assert.equal(done.status?.currentReplicas, 3);
  assert.equal(
    run(set({ image: 'v2', status: done.status! }), [pod(0, { rev: REV('v2') }), pod(1, { rev: REV('v2') }), pod(2, { rev: REV('v2') })], revisions).status,
    undefined,
    'unchanged',
  );
  assert.deepEqual(mid.pruneRevisions, [], 'within the default limit');
  const limited = reconcileStatefulSet({
    set: { ...set({ image: 'v2' }), spec: { ...set({ image: 'v2' }).spec!, revisionHistoryLimit: 0 } },
    pods: [pod(0, { rev: REV('v2') })],
    revisions,
    now: NOW,
  });
  assert.deepEqual(
    limited.pruneRevisions.map((r) => r.metadata.name),
    [REV('v0'), REV('v1')],
  );
});
