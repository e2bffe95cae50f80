import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, makePod, nodeInfo, podInfo } from '../../framework/testing.js';
import type { CycleState, NodeInfo, PodInfo } from '../../framework/types.js';
import { ERR_AFFINITY, ERR_ANTI_AFFINITY, ERR_EXISTING_ANTI_AFFINITY, InterPodAffinity } from './index.js';

const zone = (z: string) => ({ 'topology.kubernetes.io/zone': z });
const term = (labels: Record<string, string>, topologyKey = 'topology.kubernetes.io/zone', extra: object = {}) => ({
  labelSelector: { matchLabels: labels },
  topologyKey,
  ...extra,
});

function filterAll(pod: PodInfo, nodes: NodeInfo[]): (string | null)[] {
  const p = new InterPodAffinity();
  const state: CycleState = new Map();
  assert.equal(p.preFilter(state, pod, nodes), null);
  return nodes.map((n) => p.filter(state, pod, n)?.reasons[0] ?? null);
}

function scoreAll(pod: PodInfo, nodes: NodeInfo[]): number[] {
  const p = new InterPodAffinity();
  const state: CycleState = new Map();
  p.preScore(state, pod, nodes);
  const scores = nodes.map((n) => p.score(state, pod, n));
  p.normalize(state, pod, scores);
  return scores;
}

test('required affinity: only domains holding a matching pod; the first of a group may go anywhere with the key', () => {
  const db = makePod('db', { labels: { app: 'db' }, node: 'a1' });
  const nodes = [
    nodeInfo(makeNode('a1', { labels: zone('a') }), [db]),
    nodeInfo(makeNode('a2', { labels: zone('a') })),
    nodeInfo(makeNode('b1', { labels: zone('b') })),
    nodeInfo(makeNode('nolabel')),
  ];
  const web = podInfo('web', {
    labels: { app: 'web' },
    spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' })] } } },
  });
  assert.deepEqual(filterAll(web, nodes), [null, null, ERR_AFFINITY, ERR_AFFINITY]);
  // Affinity to its own kind with none placed yet: any node that has the key.
  const first = podInfo('c1', {
    labels: { app: 'cache' },
    spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' })] } } },
  });
  assert.deepEqual(filterAll(first, nodes), [null, null, null, ERR_AFFINITY]);
  // Another namespace's pod does not count unless the term names it.
  const other = podInfo('web2', {
    namespace: 'other',
    labels: { app: 'web' },
    spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' })] } } },
  });
  assert.deepEqual(filterAll(other, nodes), [ERR_AFFINITY, ERR_AFFINITY, ERR_AFFINITY, ERR_AFFINITY]);
  const all = podInfo('web3', {
    namespace: 'other',
    labels: { app: 'web' },
    spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, undefined, { namespaceSelector: {} })] } } },
  });
  assert.deepEqual(filterAll(all, nodes), [null, null, ERR_AFFINITY, ERR_AFFINITY]);
});

test("required anti-affinity: one per hostname; placed pods' anti-affinity keeps the incoming pod away", () => {
  const anti = { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, 'kubernetes.io/hostname')] } } };
  const placed = makePod('w1', { labels: { app: 'web' }, node: 'n1', spec: anti });
  const nodes = [nodeInfo(makeNode('n1'), [placed]), nodeInfo(makeNode('n2'))];
  assert.deepEqual(filterAll(podInfo('w2', { labels: { app: 'web' }, spec: anti }), nodes), [ERR_ANTI_AFFINITY, null]);
  // No anti-affinity of its own, but the placed pod's rule names it.
  assert.deepEqual(filterAll(podInfo('w3', { labels: { app: 'web' } }), nodes), [ERR_EXISTING_ANTI_AFFINITY, null]);
  assert.deepEqual(filterAll(podInfo('other', { labels: { app: 'db' } }), nodes), [null, null]);
});

test("preferred terms score: towards matching pods, away from anti-affinity matches; placed pods' preferences count", () => {
  const cache = makePod('cache', { labels: { app: 'cache' }, node: 'a1' });
  const noisy = makePod('noisy', { labels: { app: 'noisy' }, node: 'b1' });
  const nodes = [
    nodeInfo(makeNode('a1', { labels: zone('a') }), [cache]),
    nodeInfo(makeNode('b1', { labels: zone('b') }), [noisy]),
    nodeInfo(makeNode('c1', { labels: zone('c') })),
  ];
  const pod = podInfo('app', {
    labels: { app: 'app' },
    spec: {
      affinity: {
        podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term({ app: 'cache' }) }] },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: term({ app: 'noisy' }) }] },
      },
    },
  });
  assert.deepEqual(scoreAll(pod, nodes), [100, 0, 33]);
  // A placed pod that prefers the incoming pod near it pulls it over.
  const fan = makePod('fan', {
    labels: { app: 'fan' },
    node: 'c1',
    spec: { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: term({ app: 'plain' }) }] } } },
  });
  const nodes2 = [nodeInfo(makeNode('a1', { labels: zone('a') })), nodeInfo(makeNode('c1', { labels: zone('c') }), [fan])];
  assert.deepEqual(scoreAll(podInfo('plain', { labels: { app: 'plain' } }), nodes2), [0, 100]);
  assert.deepEqual(scoreAll(podInfo('none'), nodes2), [0, 0]);
});
