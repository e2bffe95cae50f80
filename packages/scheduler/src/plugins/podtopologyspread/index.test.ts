import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, makePod, nodeInfo, podInfo } from '../../framework/testing.js';
import type { CycleState } from '../../framework/types.js';
import { ERR_CONSTRAINTS, ERR_MISSING_LABEL, PodTopologySpread } from './index.js';

const spread = (when: string, maxSkew = 1, key = 'kubernetes.io/hostname') => ({
  topologySpreadConstraints: [{ maxSkew, topologyKey: key, whenUnsatisfiable: when, labelSelector: { matchLabels: { app: 'web' } } }],
});
const web = (name: string, node: string) => makePod(name, { labels: { app: 'web' }, node });

test('DoNotSchedule keeps the skew within maxSkew and refuses nodes without the key', () => {
  const p = new PodTopologySpread();
  const nodes = [nodeInfo(makeNode('n1'), [web('a', 'n1'), web('b', 'n1')]), nodeInfo(makeNode('n2'), [web('c', 'n2')]), nodeInfo(makeNode('n3'))];
  const pod = podInfo('new', { labels: { app: 'web' }, spec: spread('DoNotSchedule') });
  const state: CycleState = new Map();
  assert.equal(p.preFilter(state, pod, nodes), null);
  assert.deepEqual(p.filter(state, pod, nodes[0]!)?.reasons, [ERR_CONSTRAINTS]);
  assert.deepEqual(p.filter(state, pod, nodes[1]!)?.reasons, [ERR_CONSTRAINTS]);
  assert.equal(p.filter(state, pod, nodes[2]!), null);
  const zoned = podInfo('z', { labels: { app: 'web' }, spec: spread('DoNotSchedule', 1, 'zone') });
  const s2: CycleState = new Map();
  p.preFilter(s2, zoned, nodes);
  const st = p.filter(s2, zoned, nodes[2]!);
  assert.equal(st?.code, 'UnschedulableAndUnresolvable');
  assert.deepEqual(st?.reasons, [ERR_MISSING_LABEL]);
});

test('only nodes matching the pod node affinity count as domains', () => {
  const p = new PodTopologySpread();
  const nodes = [nodeInfo(makeNode('n1', { labels: { pool: 'a' } }), [web('a', 'n1')]), nodeInfo(makeNode('n2', { labels: { pool: 'b' } }))];
  const pod = podInfo('new', { labels: { app: 'web' }, spec: { ...spread('DoNotSchedule'), nodeSelector: { pool: 'a' } } });
  const state: CycleState = new Map();
  p.preFilter(state, pod, nodes);
  // n2 is not a domain (the pod cannot go there), so n1's skew is 1+1-1 = 1.
  assert.equal(p.filter(state, pod, nodes[0]!), null);
});

test('ScheduleAnyway scores emptier domains higher', () => {
  const p = new PodTopologySpread();
  const nodes = [nodeInfo(makeNode('n1'), [web('a', 'n1'), web('b', 'n1')]), nodeInfo(makeNode('n2'), [web('c', 'n2')]), nodeInfo(makeNode('n3'))];
  const pod = podInfo('new', { labels: { app: 'web' }, spec: spread('ScheduleAnyway') });
  const state: CycleState = new Map();
  p.preScore(state, pod, nodes);
  const scores = nodes.map((n) => p.score(state, pod, n));
  p.normalize(state, pod, scores);
  assert.ok(scores[2]! > scores[1]! && scores[1]! > scores[0]!, `scores ${scores}`);
  assert.equal(scores[2], 100);
});
