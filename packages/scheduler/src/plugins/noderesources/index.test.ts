import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, makePod, nodeInfo, podInfo } from '../../framework/testing.js';
import { NodeResourcesBalancedAllocation, NodeResourcesFit } from './index.js';

test('Fit: requests against allocatable minus what is placed, every shortfall named', () => {
  const p = new NodeResourcesFit();
  const node = nodeInfo(makeNode('n1', { cpu: '2', memory: '4Gi', pods: 2 }), [makePod('a', { cpu: '1500m', memory: '1Gi' })]);
  assert.equal(p.filter(null, podInfo('b', { cpu: '500m', memory: '3Gi' }), node), null, 'exactly fits');
  assert.deepEqual(p.filter(null, podInfo('b', { cpu: '501m', memory: '3Gi' }), node)?.reasons, ['Insufficient cpu']);
  assert.deepEqual(p.filter(null, podInfo('b', { cpu: '1', memory: '4Gi' }), node)?.reasons, ['Insufficient cpu', 'Insufficient memory']);
  assert.deepEqual(p.filter(null, podInfo('b', { extra: { 'example.com/gpu': '1' } }), node)?.reasons, ['Insufficient example.com/gpu']);
  const gpuNode = nodeInfo(makeNode('n2', { extra: { 'example.com/gpu': '2' } }));
  assert.equal(p.filter(null, podInfo('b', { extra: { 'example.com/gpu': '2' } }), gpuNode), null);
  node.addPod(podInfo('c'));
  assert.deepEqual(p.filter(null, podInfo('d'), node)?.reasons, ['Too many pods']);
});

test('Fit scores LeastAllocated by default and MostAllocated when configured', () => {
  const empty = nodeInfo(makeNode('n1', { cpu: '4', memory: '8Gi' }));
  const half = nodeInfo(makeNode('n2', { cpu: '4', memory: '8Gi' }), [makePod('a', { cpu: '2', memory: '4Gi' })]);
  const pod = podInfo('p', { cpu: '1', memory: '2Gi' });
  const least = new NodeResourcesFit();
  assert.equal(least.score(null, pod, empty), 75);
  assert.equal(least.score(null, pod, half), 25);
  const most = new NodeResourcesFit({ scoringStrategy: { type: 'MostAllocated' } });
  assert.equal(most.score(null, pod, empty), 25);
  assert.equal(most.score(null, pod, half), 75);
  // A pod with no requests still counts 100m / 200Mi for scoring.
  assert.equal(least.score(null, podInfo('z'), empty), Math.floor((((4000 - 100) * 100) / 4000 + ((8 * 1024 - 200) * 100) / (8 * 1024)) / 2));
});

test('BalancedAllocation prefers nodes whose cpu and memory fractions stay even', () => {
  const p = new NodeResourcesBalancedAllocation();
  const node = nodeInfo(makeNode('n1', { cpu: '4', memory: '4Gi' }));
  assert.equal(p.score(null, podInfo('a', { cpu: '2', memory: '2Gi' }), node), 100);
  assert.equal(p.score(null, podInfo('b', { cpu: '4', memory: '1Gi' }), node), Math.floor((1 - 0.375) * 100));
});
