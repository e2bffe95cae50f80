import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from './framework/profile.js';
import { makeNode, makePod, nodeInfo, podInfo } from './framework/testing.js';
import type { CycleState, NodeInfo, PodInfo, Status } from './framework/types.js';
import { NOT_HELPFUL, pickCandidate, preempt } from './preemption.js';

const profile = buildConfig().profiles[0]!;
const fits = (pod: PodInfo, view: readonly NodeInfo[], node: NodeInfo): Status | null => {
  const state: CycleState = new Map();
  for (const pf of profile.preFilter) pf.preFilter(state, pod, view);
  for (const f of profile.filter) {
    const st = f.filter(state, pod, node);
    if (st) return st;
  }
  return null;
};

function diagnose(pod: PodInfo, nodes: NodeInfo[]): Map<string, Status> {
  const d = new Map<string, Status>();
  for (const n of nodes) {
    const st = fits(pod, nodes, n);
    if (st) d.set(n.name, st);
  }
  return d;
}

test('the fewest, least important victims on one node; pods of equal or higher priority stay', () => {
  const n1 = nodeInfo(makeNode('n1', { cpu: '2' }), [
    makePod('a', { cpu: '1', priority: 10, node: 'n1' }),
    makePod('b', { cpu: '1', priority: 1, node: 'n1' }),
  ]);
  const n2 = nodeInfo(makeNode('n2', { cpu: '2' }), [
    makePod('c', { cpu: '1', priority: 100, node: 'n2' }),
    makePod('d', { cpu: '1', priority: 100, node: 'n2' }),
  ]);
  const nodes = [n1, n2];
  const pod = podInfo('big', { cpu: '1', priority: 50 });
  const r = preempt({ profile, nodes, pdbs: [], fits }, pod, diagnose(pod, nodes));
  assert.equal(r.candidate?.node, 'n1');
  assert.deepEqual(
    r.candidate?.victims.map((v) => v.pod.metadata.name),
    ['b'],
  );
});

test('PodDisruptionBudgets steer the choice to the node that breaks none', () => {
  const n1 = nodeInfo(makeNode('n1', { cpu: '1' }), [makePod('guarded', { cpu: '1', priority: 0, node: 'n1', labels: { app: 'db' } })]);
  const n2 = nodeInfo(makeNode('n2', { cpu: '1' }), [makePod('free', { cpu: '1', priority: 5, node: 'n2' })]);
  const nodes = [n1, n2];
  const pdb = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'db', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'db' } } },
    status: { disruptionsAllowed: 0 },
  };
  const pod = podInfo('big', { cpu: '1', priority: 50 });
  const r = preempt({ profile, nodes, pdbs: [pdb], fits }, pod, diagnose(pod, nodes));
  assert.equal(r.candidate?.node, 'n2');
  assert.equal(r.candidate?.pdbViolations, 0);
});

test('nodes that fail for unresolvable reasons are not helped by preemption', () => {
  const n1 = nodeInfo(makeNode('n1', { taints: [{ key: 'k', effect: 'NoSchedule' }] }), [makePod('a', { priority: 0, node: 'n1' })]);
  const pod = podInfo('p', { priority: 50 });
  const r = preempt({ profile, nodes: [n1], pdbs: [], fits }, pod, diagnose(pod, [n1]));
  assert.equal(r.candidate, undefined);
  assert.equal(r.message, `preemption: 0/1 nodes are available: 1 ${NOT_HELPFUL}.`);
});

test('pickCandidate orders by violations, top victim priority, priority sum, count', () => {
  const v = (p: number) => podInfo(`v${p}-${Math.random()}`, { priority: p });
  const best = pickCandidate([
    { node: 'a', victims: [v(5)], pdbViolations: 1 },
    { node: 'b', victims: [v(9)], pdbViolations: 0 },
    { node: 'c', victims: [v(3), v(3)], pdbViolations: 0 },
    { node: 'd', victims: [v(3)], pdbViolations: 0 },
  ]);
  assert.equal(best?.node, 'd');
});
