import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeHandle, makeClass, makeNode, makePV, makePVC, nodeInfo, podWithClaims, type FakeCluster } from '../../framework/testing.js';
import { PodInfo, type CycleState, type Pod } from '../../framework/types.js';
import { ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits } from './index.js';

const DRIVER = 'hostpath.csi.kubeling.io';

function cluster(limit: number | undefined): FakeCluster {
  const claims = ['a', 'b', 'c'].map((n) => makePVC(n, { className: 'standard', volumeName: `pv-${n}`, bound: true }));
  return {
    pvcs: [...claims, makePVC('unbound', { className: 'standard' }), makePVC('unbound2', { className: 'standard' })],
    pvs: claims.map((c) => makePV(`pv-${c.metadata.name}`, { claim: c, csi: { driver: DRIVER, volumeHandle: `h-${c.metadata.name}` } })),
    classes: [makeClass('standard')],
    csiNodes: [
      {
        metadata: { name: 'n1' },
        spec: { drivers: [{ name: DRIVER, nodeID: 'n1', ...(limit !== undefined ? { allocatable: { count: limit } } : {}) }] },
      },
    ],
  };
}

function filter(c: FakeCluster, pod: Pod, onNode: Pod[]) {
  const p = new NodeVolumeLimits();
  p.setHandle(fakeHandle(c));
  const state: CycleState = new Map();
  const info = new PodInfo(pod);
  return p.preFilter(state, info) ?? p.filter(state, info, nodeInfo(makeNode('n1'), onNode));
}

test('unique CSI volumes on the node plus the new ones may not exceed the CSINode count', () => {
  const c = cluster(2);
  const existing = [podWithClaims('x', ['a'], { node: 'n1' }), podWithClaims('y', ['a'], { node: 'n1' })];
  assert.equal(filter(c, podWithClaims('new', ['b']), existing), null, 'a is counted once: 2 of 2');
  assert.deepEqual(filter(c, podWithClaims('new', ['b', 'c']), existing), {
    code: 'Unschedulable',
    reasons: [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED],
    plugin: 'NodeVolumeLimits',
  });
  assert.equal(filter(c, podWithClaims('new', ['a']), [podWithClaims('x', ['a', 'b'], { node: 'n1' })]), null, 'a volume already there is not new');
  assert.equal(filter(c, podWithClaims('new', ['unbound']), existing), null, 'an unbound claim counts under the provisioner: 2 of 2');
  assert.equal(filter(c, podWithClaims('new', ['unbound', 'unbound2']), existing)?.code, 'Unschedulable');
});

test('no limit, no CSINode driver entry, or a pod without claims: no check; a missing claim is unresolvable', () => {
  const many = [podWithClaims('x', ['a', 'b'], { node: 'n1' })];
  assert.equal(filter(cluster(undefined), podWithClaims('new', ['c']), many), null);
  assert.equal(filter({ ...cluster(1), csiNodes: [] }, podWithClaims('new', ['c']), many), null);
  assert.equal(filter(cluster(0), podWithClaims('new', []), many), null);
  assert.deepEqual(filter(cluster(1), podWithClaims('new', ['nope']), [])?.reasons, ['looking up PVC default/nope: persistentvolumeclaim "nope" not found']);
  assert.equal(filter(cluster(1), podWithClaims('new', ['nope']), [])?.code, 'UnschedulableAndUnresolvable');
});
