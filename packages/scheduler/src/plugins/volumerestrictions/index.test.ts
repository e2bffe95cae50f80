import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeHandle, makeNode, makePod, makePVC, nodeInfo, podWithClaims } from '../../framework/testing.js';
import { PodInfo, type CycleState, type Pod } from '../../framework/types.js';
import { ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT, VolumeRestrictions } from './index.js';

const withVolumes = (name: string, volumes: unknown[], node?: string): Pod =>
  makePod(name, { ...(node ? { node } : {}), spec: { containers: [{ name: 'c', image: 'x' }], volumes: volumes as never } });

function check(p: VolumeRestrictions, pod: Pod, nodePods: Pod[], others: Pod[] = []) {
  const state: CycleState = new Map();
  const node = nodeInfo(makeNode('n1'), nodePods);
  const pre = p.preFilter(state, new PodInfo(pod), [node, nodeInfo(makeNode('n2'), others)]);
  return pre ?? p.filter(state, new PodInfo(pod), node);
}

test('disk conflicts: GCE PD unless all read-only, EBS always, iSCSI and RBD unless all read-only', () => {
  const p = new VolumeRestrictions();
  p.setHandle(fakeHandle({}));
  const gce = (ro: boolean) => ({ name: 'g', gcePersistentDisk: { pdName: 'disk', readOnly: ro } });
  assert.deepEqual(check(p, withVolumes('a', [gce(false)]), [withVolumes('b', [gce(false)], 'n1')]), {
    code: 'Unschedulable',
    reasons: [ERR_REASON_DISK_CONFLICT],
    plugin: 'VolumeRestrictions',
  });
  assert.equal(check(p, withVolumes('a', [gce(true)]), [withVolumes('b', [gce(true)], 'n1')]), null, 'both read-only');
  const ebs = { name: 'e', awsElasticBlockStore: { volumeID: 'vol-1', readOnly: true } };
  assert.equal(check(p, withVolumes('a', [ebs]), [withVolumes('b', [ebs], 'n1')])?.code, 'Unschedulable');
  const rbd = (mons: string[], ro = false) => ({ name: 'r', rbd: { monitors: mons, image: 'img', readOnly: ro } });
  assert.equal(check(p, withVolumes('a', [rbd(['m1', 'm2'])]), [withVolumes('b', [rbd(['m2'])], 'n1')])?.code, 'Unschedulable', 'a shared monitor');
  assert.equal(check(p, withVolumes('a', [rbd(['m1'])]), [withVolumes('b', [rbd(['m3'])], 'n1')]), null);
  const iscsi = { name: 'i', iscsi: { iqn: 'iqn.2001-04.com.example:storage', readOnly: false } };
  assert.equal(check(p, withVolumes('a', [iscsi]), [withVolumes('b', [iscsi], 'n1')])?.code, 'Unschedulable');
  assert.equal(check(p, withVolumes('a', [iscsi]), [], [withVolumes('b', [iscsi], 'n2')]), null, 'another node');
});

test('ReadWriteOncePod: a claim a scheduled pod already uses makes the pod Unschedulable on every node', () => {
  const p = new VolumeRestrictions();
  p.setHandle(fakeHandle({ pvcs: [makePVC('solo', { accessModes: ['ReadWriteOncePod'] }), makePVC('shared', { accessModes: ['ReadWriteMany'] })] }));
  const user = podWithClaims('user', ['solo'], { node: 'n2' });
  assert.deepEqual(check(p, podWithClaims('new', ['solo']), [], [user]), {
    code: 'Unschedulable',
    reasons: [ERR_REASON_RWOP_CONFLICT],
    plugin: 'VolumeRestrictions',
  });
  assert.equal(check(p, podWithClaims('new', ['solo']), [], []), null, 'nobody uses it');
  assert.equal(check(p, podWithClaims('new', ['shared']), [], [podWithClaims('u', ['shared'], { node: 'n2' })]), null, 'ReadWriteMany is shared');
  assert.equal(check(p, podWithClaims('new', ['solo'], { namespace: 'other' }), [], [user])?.code, 'UnschedulableAndUnresolvable', 'not in that namespace');
});

test('PreFilter: a claim that does not exist rejects the pod everywhere', () => {
  const p = new VolumeRestrictions();
  p.setHandle(fakeHandle({}));
  assert.deepEqual(p.preFilter(new Map(), new PodInfo(podWithClaims('a', ['missing'])), []), {
    code: 'UnschedulableAndUnresolvable',
    reasons: ['persistentvolumeclaim "missing" not found'],
    plugin: 'VolumeRestrictions',
  });
});
