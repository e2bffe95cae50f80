import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { appsv1 } from '@kubeling/api';
import { podTemplateHash } from '../deployment/util.js';
import type { ControllerRevision, DaemonSet, Node, Pod } from '../kinds.js';
import { DAEMON_TOLERATIONS, reconcileDaemonSet, targetNode } from './reconcile.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

const template = (image: string, tolerations?: { key: string; operator: string; effect: string }[]) => ({
  metadata: { labels: { app: 'agent' } },
  spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image }], ...(tolerations ? { tolerations } : {}) },
});
const ds = (
  o: {
    image?: string;
    tolerations?: { key: string; operator: string; effect: string }[];
    strategy?: appsv1.DaemonSetUpdateStrategy;
    revisionHistoryLimit?: number;
    status?: appsv1.DaemonSetStatus;
  } = {},
): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'kube-system', uid: 'ds-uid', generation: 3 },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: template(o.image ?? 'v2', o.tolerations),
    ...(o.strategy ? { updateStrategy: o.strategy } : {}),
    ...(o.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: o.revisionHistoryLimit } : {}),
  },
  ...(o.status ? { status: o.status } : {}),
});
const HASH_V2 = podTemplateHash(template('v2'));

const node = (name: string, labels: Record<string, string>, taints: { key: string; effect: string; value?: string }[] = []): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
  spec: { taints },
});
const NODES = [
  node('n1', { disk: 'ssd' }),
  node('n2', { disk: 'ssd' }, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]),
  node('n3', { disk: 'hdd' }),
  node('n4', { disk: 'ssd' }, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]),
];

const pod = (name: string, onNode: string, o: { hash?: string; ready?: boolean; deleting?: boolean; labels?: Record<string, string> } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'kube-system',
    uid: `uid-${name}`,
    labels: o.labels ?? { app: 'agent', 'controller-revision-hash': o.hash ?? HASH_V2 },
    ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}),
  },
  spec: { nodeName: onNode, containers: [{ name: 'c' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(NOW - 60_000) }] },
});

const run = (d: DaemonSet, pods: Pod[], nodes = NODES, revisions: ControllerRevision[] = []) => reconcileDaemonSet({ ds: d, pods, nodes, revisions, now: NOW });

test('one pod per eligible node: nodeSelector and untolerated NoSchedule taints rule nodes out', () => {
  const p = run(ds(), []);
  assert.deepEqual(
    p.create.map((c) => c.node),
    ['n1', 'n4'],
    'n2 is tainted, n3 has the wrong disk; the unschedulable taint is tolerated by daemon pods',
  );
  const made = p.create[0]!.pod;
  assert.equal(targetNode(made), 'n1');
  assert.deepEqual(made.spec?.affinity, {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
    },
  });
  assert.deepEqual(made.spec?.tolerations, DAEMON_TOLERATIONS);
  assert.deepEqual(made.metadata, {
    generateName: 'agent-',
    labels: { app: 'agent', 'controller-revision-hash': HASH_V2 },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true, blockOwnerDeletion: true }],
  });
  // A toleration in the template opens the tainted node.
  const tolerant = run(ds({ tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] }), []);
  assert.deepEqual(
    tolerant.create.map((c) => c.node),
    ['n1', 'n2', 'n4'],
  );
  assert.equal(tolerant.create[0]!.pod.spec?.tolerations?.length, DAEMON_TOLERATIONS.length + 1);
});

test('extra pods on a node and pods on nodes no longer eligible are deleted; terminating and unselected pods are not counted', () => {
  const pods = [pod('a', 'n1'), pod('b', 'n1'), pod('c', 'n3'), pod('gone', 'n4', { deleting: true }), pod('stray', 'n4', { labels: { app: 'other' } })];
  const p = run(ds(), pods);
  assert.deepEqual(
    p.create.map((c) => c.node),
    ['n4'],
  );
  assert.deepEqual(
    p.delete.map((x) => x.metadata.name),
    ['b', 'c'],
  );
  assert.deepEqual(p.status, {
    currentNumberScheduled: 1,
    numberMisscheduled: 1,
    desiredNumberScheduled: 2,
    numberReady: 1,
    observedGeneration: 3,
    updatedNumberScheduled: 1,
    numberAvailable: 1,
    numberUnavailable: 1,
  });
});

test("a failed daemon pod is deleted, outside its node's backoff; a new one comes once it is gone", () => {
  const failed = { ...pod('f', 'n1'), status: { phase: 'Failed' } };
  const p = run(ds(), [failed, pod('ok', 'n4')]);
  assert.deepEqual(
    p.delete.map((x) => x.metadata.name),
    ['f'],
  );
  assert.deepEqual(p.failedOn, ['n1']);
  assert.deepEqual(p.create, [], 'not while the failed pod is there');
  const waiting = reconcileDaemonSet({ ds: ds(), pods: [failed, pod('ok', 'n4')], nodes: NODES, revisions: [], now: NOW, inFailedBackoff: (n) => n === 'n1' });
  assert.deepEqual([waiting.delete, waiting.failedOn, waiting.create], [[], [], []], 'in backoff: left for later');
  assert.deepEqual(
    run(ds(), [pod('ok', 'n4')]).create.map((c) => c.node),
    ['n1'],
  );
});

test('rolling update replaces outdated pods at most maxUnavailable at a time', () => {
  const nodes = [node('n1', { disk: 'ssd' }), node('n2', { disk: 'ssd' }), node('n3', { disk: 'ssd' })];
  const old = podTemplateHash(template('v1'));
  const outdated = [pod('a', 'n1', { hash: old }), pod('b', 'n2', { hash: old }), pod('c', 'n3', { hash: old })];
  assert.deepEqual(
    run(ds(), outdated, nodes).delete.map((x) => x.metadata.name),
    ['a'],
  );
  const two = ds({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } });
  assert.deepEqual(
    run(two, outdated, nodes).delete.map((x) => x.metadata.name),
    ['a', 'b'],
  );
  // An outdated pod that is not available is replaced at once, and spends the budget.
  const oneDown = [pod('a', 'n1', { hash: old, ready: false }), pod('b', 'n2', { hash: old }), pod('c', 'n3', { hash: old })];
  assert.deepEqual(
    run(ds(), oneDown, nodes).delete.map((x) => x.metadata.name),
    ['a'],
  );
  // A rollback: the pod of the bad revision (not available) goes, the others, already on the template, stay.
  const rolledBack = [pod('a', 'n1'), pod('b', 'n2', { hash: old, ready: false }), pod('c', 'n3')];
  assert.deepEqual(
    run(ds(), rolledBack, nodes).delete.map((x) => x.metadata.name),
    ['b'],
  );
  // OnDelete leaves them alone.
  assert.deepEqual(run(ds({ strategy: { type: 'OnDelete' } }), outdated, nodes).delete, []);
  const status = run(ds(), outdated, nodes).status;
  assert.equal(status?.updatedNumberScheduled, undefined, 'zero updated pods is left out');
  assert.equal(status?.numberAvailable, 3);
});

test('status is written only when it changed', () => {
  const first = run(ds(), [pod('a', 'n1'), pod('b', 'n4')]);
  assert.ok(first.status);
  assert.equal(run(ds({ status: first.status }), [pod('a', 'n1'), pod('b', 'n4')]).status, undefined);
});

test('revisions no pod uses go past revisionHistoryLimit, oldest first', () => {
  const rev = (hash: string, revision: number): ControllerRevision => ({ metadata: { name: `agent-${hash}`, namespace: 'kube-system' }, revision });
  const old = podTemplateHash(template('v1'));
  const revisions = [rev('aaa', 1), rev('bbb', 2), rev(old, 3), rev(HASH_V2, 4)];
  const p = run(ds({ revisionHistoryLimit: 1 }), [pod('a', 'n1', { hash: old })], NODES, revisions);
  assert.deepEqual(
    p.pruneRevisions.map((r) => r.metadata.name),
    ['agent-aaa'],
    'the current revision and the one a pod runs stay',
  );
});
