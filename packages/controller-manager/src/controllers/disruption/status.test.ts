import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import type { PDBLike } from '@kubeling/component-helpers';
import {
  buildDisruptedPodMap,
  countHealthyPods,
  DELETION_TIMEOUT_MS,
  expectedPodCount,
  nextStatus,
  podsForPdb,
  scaledValue,
  staleDisruptionIn,
  type ScaleFinder,
} from './status.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const pod = (name: string, o: { ready?: boolean; owner?: string; deleting?: boolean; labels?: Record<string, string> } = {}): KubeObject => ({
  metadata: {
    name,
    namespace: 'ns',
    labels: o.labels ?? { app: 'web' },
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: `uid-${o.owner}`, controller: true }] } : {}),
    ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}),
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});
const pdb = (spec: PDBLike['spec'], status: PDBLike['status'] = undefined, generation = 1): PDBLike => ({
  metadata: { name: 'budget', namespace: 'ns', generation },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
  ...(status ? { status } : {}),
});

/** A finder over fixed scales that records what it was asked. */
function finder(scales: Record<string, number>): { find: ScaleFinder; asked: string[] } {
  const asked: string[] = [];
  const find: ScaleFinder = async (ref) => {
    asked.push(ref.name);
    return ref.name in scales ? { uid: ref.uid, scale: scales[ref.name]! } : undefined;
  };
  return { find, asked };
}

test('scaledValue: integers as they are, percentages rounded up, other strings refused as upstream', () => {
  assert.equal(scaledValue(2, 10, true), 2);
  assert.equal(scaledValue('25%', 10, true), 3);
  assert.equal(scaledValue('25%', 10, false), 2);
  assert.throws(() => scaledValue('three', 10, true), /invalid value for IntOrString: invalid type: string is not a percentage/);
  assert.throws(() => scaledValue('x%', 10, true), /invalid value "x%"/);
});

test('expected pods: integer minAvailable counts the pods; percentages and maxUnavailable use the controllers’ scale once each', async () => {
  const pods = [pod('a', { owner: 'rs1' }), pod('b', { owner: 'rs1' }), pod('c', { owner: 'rs2' })];
  assert.deepEqual(await expectedPodCount(pdb({ minAvailable: 2 }), pods, finder({}).find), { expectedCount: 3, desiredHealthy: 2, unmanaged: [] });
  const f = finder({ rs1: 4, rs2: 2 });
  assert.deepEqual(await expectedPodCount(pdb({ minAvailable: '50%' }), pods, f.find), { expectedCount: 6, desiredHealthy: 3, unmanaged: [] });
  assert.deepEqual(f.asked, ['rs1', 'rs2']);
  assert.deepEqual(await expectedPodCount(pdb({ maxUnavailable: 1 }), pods, finder({ rs1: 4, rs2: 2 }).find), {
    expectedCount: 6,
    desiredHealthy: 5,
    unmanaged: [],
  });
  assert.deepEqual(await expectedPodCount(pdb({ maxUnavailable: '100%' }), pods, finder({ rs1: 1, rs2: 1 }).find), {
    expectedCount: 2,
    desiredHealthy: 0,
    unmanaged: [],
  });
  // Unmanaged pods are reported, not counted; a controller no finder knows is an error.
  const mixed = [pod('a', { owner: 'rs1' }), pod('lonely')];
  assert.deepEqual(await expectedPodCount(pdb({ maxUnavailable: 0 }), mixed, finder({ rs1: 1 }).find), {
    expectedCount: 1,
    desiredHealthy: 1,
    unmanaged: ['lonely'],
  });
  await assert.rejects(expectedPodCount(pdb({ minAvailable: '10%' }), [pod('x', { owner: 'gone' })], finder({}).find), /found no controllers for pod "x"/);
});

test('the budget selects by its selector; an empty selector selects every pod of the namespace', () => {
  const pods = [pod('a'), pod('b', { labels: { app: 'db' } })];
  assert.deepEqual(
    podsForPdb(pdb({}), pods).map((p) => p.metadata.name),
    ['a'],
  );
  assert.equal(podsForPdb({ metadata: { name: 'all', namespace: 'ns' }, spec: { selector: {} } }, pods).length, 2);
  assert.equal(podsForPdb({ metadata: { name: 'none', namespace: 'ns' }, spec: {} }, pods).length, 0);
});

test('awaited evictions: kept until the pod is deleting or DELETION_TIMEOUT passes; healthy pods exclude them', () => {
  const recent = iso(NOW - 10_000);
  const old = iso(NOW - DELETION_TIMEOUT_MS - 1000);
  const pods = [pod('a'), pod('b'), pod('c', { deleting: true }), pod('d'), pod('e', { ready: false })];
  const budget = pdb(
    { minAvailable: 1 },
    { disruptedPods: { a: recent, b: old, c: recent, gone: recent }, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  );
  const { disrupted, recheckAt, notDeleted } = buildDisruptedPodMap(pods, budget, NOW);
  assert.deepEqual(disrupted, { a: recent });
  assert.equal(recheckAt, Date.parse(recent) + DELETION_TIMEOUT_MS);
  assert.deepEqual(
    notDeleted.map((p) => p.metadata.name),
    ['b'],
  );
  // a awaits its eviction, c is being deleted, e is not ready: b and d are healthy.
  assert.equal(countHealthyPods(pods, disrupted, NOW), 2);
});

test('status: disruptionsAllowed = healthy - desired (never below 0, 0 when no pods are expected), with the DisruptionAllowed condition', () => {
  const now = new Date(NOW);
  const s = nextStatus(pdb({ minAvailable: 2 }), 3, 2, 3, {}, now)!;
  assert.deepEqual(
    { ...s, conditions: s.conditions!.map((c) => [c.type, c.status, c.reason, c.observedGeneration]) },
    {
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      disruptionsAllowed: 1,
      disruptedPods: {},
      observedGeneration: 1,
      conditions: [['DisruptionAllowed', 'True', 'SufficientPods', 1]],
    },
  );
  assert.equal(nextStatus(pdb({ minAvailable: 2 }), 1, 2, 3, {}, now)!.disruptionsAllowed, 0);
  assert.equal(nextStatus(pdb({ minAvailable: 0 }), 2, 0, 0, {}, now)!.disruptionsAllowed, 0);
  const none = nextStatus(pdb({ minAvailable: 5 }), 1, 5, 3, {}, now)!;
  assert.deepEqual(
    none.conditions!.map((c) => [c.status, c.reason]),
    [['False', 'InsufficientPods']],
  );
  // Up to date: nothing to write. A new generation is written again.
  assert.equal(nextStatus(pdb({ minAvailable: 2 }, s), 3, 2, 3, {}, now), undefined);
  const again = nextStatus(pdb({ minAvailable: 2 }, s, 2), 3, 2, 3, {}, new Date(NOW + 5000))!;
  assert.equal(again.observedGeneration, 2);
  // The condition keeps its transition time while its status holds.
  assert.equal(again.conditions![0]!.lastTransitionTime, s.conditions![0]!.lastTransitionTime);
});

test('a DisruptionTarget condition goes stale after the timeout unless the pod is deleting, terminal, or the kubelet set it', () => {
  const withCond = (reason: string, at: number, extra: Partial<KubeObject> = {}): KubeObject => ({
    metadata: { name: 'p', ...(extra.metadata ?? {}) },
    status: { phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason, lastTransitionTime: iso(at) }] },
  });
  assert.equal(staleDisruptionIn(withCond('EvictionByEvictionAPI', NOW - 30_000), NOW, 120_000), 90_000);
  assert.equal(staleDisruptionIn(withCond('EvictionByEvictionAPI', NOW - 300_000), NOW, 120_000), 0);
  assert.equal(staleDisruptionIn(withCond('TerminationByKubelet', NOW - 300_000), NOW, 120_000), undefined);
  assert.equal(staleDisruptionIn(withCond('EvictionByEvictionAPI', NOW, { metadata: { name: 'p', deletionTimestamp: iso(NOW) } }), NOW), undefined);
  assert.equal(staleDisruptionIn(pod('plain'), NOW), undefined);
});
