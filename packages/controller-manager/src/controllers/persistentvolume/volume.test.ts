import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostPathDeletable, syncVolume } from './volume.js';
import { pv, pvc, world } from './world.fixtures.js';

const sync = async (w: ReturnType<typeof world>, name: string) => syncVolume(w.binder, w.volumes.get(name)!);
const eventsOf = (w: ReturnType<typeof world>) => w.events.map((e) => [e.kind, e.type, e.reason, e.message]);
const gone = { name: 'c', uid: 'uid-c' };

test('phases: no claimRef or a reservation without UID is Available; a volume whose claim names it is Bound', async () => {
  const w = world({
    volumes: [pv('free', { phase: 'Pending' }), pv('reserved', { phase: 'Pending', claim: { name: 'c' } }), pv('bound', { phase: 'Available', claim: gone })],
    claims: [pvc('c', { volumeName: 'bound' })],
  });
  for (const n of ['free', 'reserved', 'bound']) await sync(w, n);
  assert.deepEqual(
    ['free', 'reserved', 'bound'].map((n) => w.volumes.get(n)!.status),
    [
      { phase: 'Available', lastPhaseTransitionTime: '2026-03-01T10:00:00Z' },
      { phase: 'Available', lastPhaseTransitionTime: '2026-03-01T10:00:00Z' },
      { phase: 'Bound', lastPhaseTransitionTime: '2026-03-01T10:00:00Z' },
    ],
  );
  await sync(w, 'bound');
  assert.equal(w.writes.length, 3, 'a phase already set is not written again');
});

test('half a binding (a provisioner or the scheduler set the claimRef): the claim is synced to finish it', async () => {
  const w = world({ volumes: [pv('v', { claim: gone })], claims: [pvc('c')] });
  await sync(w, 'v');
  assert.deepEqual(w.enqueued, ['ns/c']);
  const block = world({ volumes: [pv('v', { claim: gone, mode: 'Block' })], claims: [pvc('c')] });
  await sync(block, 'v');
  assert.deepEqual(block.enqueued, []);
  assert.deepEqual(eventsOf(block), [
    ['PersistentVolume', 'Warning', 'VolumeMismatch', 'Cannot bind PersistentVolume to requested PersistentVolumeClaim "c" due to incompatible volumeMode.'],
    [
      'PersistentVolumeClaim',
      'Warning',
      'VolumeMismatch',
      'Cannot bind PersistentVolume "v" to requested PersistentVolumeClaim due to incompatible volumeMode.',
    ],
  ]);
});

test('Retain: the claim gone, the volume is Released and stays so', async () => {
  const w = world({ volumes: [pv('v', { claim: gone, phase: 'Bound' })] });
  await sync(w, 'v');
  await sync(w, 'v');
  assert.equal(w.volumes.get('v')!.status?.phase, 'Released');
  assert.deepEqual(w.writes, ['status pv/v']);
  assert.deepEqual(w.events, []);
});

test('a claim of the same name but another UID is a new claim: the volume is released', async () => {
  const w = world({ volumes: [pv('v', { claim: { name: 'c', uid: 'the-first-c' }, phase: 'Bound' })], claims: [pvc('c')] });
  await sync(w, 'v');
  assert.equal(w.volumes.get('v')!.status?.phase, 'Released');
});

test('Delete by an external provisioner, or of a CSI volume: Released, left to the provisioner', async () => {
  const external = pv('ext', { claim: gone, phase: 'Bound', policy: 'Delete', annotations: { 'pv.kubernetes.io/provisioned-by': 'hostpath.csi.kubeling.io' } });
  const csi = pv('csi', { claim: gone, phase: 'Bound', policy: 'Delete', source: { csi: { driver: 'hostpath.csi.kubeling.io', volumeHandle: 'h1' } } });
  const w = world({ volumes: [external, csi] });
  await sync(w, 'ext');
  await sync(w, 'csi');
  assert.deepEqual([w.volumes.get('ext')!.status?.phase, w.volumes.get('csi')!.status?.phase], ['Released', 'Released']);
  assert.deepEqual(w.events, []);
  assert.deepEqual(w.removed, []);
});

test('Delete of a host path under /tmp removes the directory and the volume; other paths and local volumes fail', async () => {
  const w = world({
    volumes: [
      pv('tmp', { claim: gone, phase: 'Bound', policy: 'Delete', source: { hostPath: { path: '/tmp/data/v1' } } }),
      pv('data', { claim: gone, phase: 'Bound', policy: 'Delete', source: { hostPath: { path: '/var/lib/data' } } }),
      pv('local', { claim: gone, phase: 'Bound', policy: 'Delete', source: { local: { path: '/mnt/disk' } } }),
      pv('iscsi', { claim: gone, phase: 'Bound', policy: 'Delete', source: { iscsi: { targetPortal: 'x' } } }),
    ],
  });
  for (const n of ['tmp', 'data', 'local', 'iscsi']) await sync(w, n);
  assert.deepEqual(w.removed, ['/tmp/data/v1']);
  assert.equal(w.volumes.has('tmp'), false);
  assert.deepEqual(
    ['data', 'local', 'iscsi'].map((n) => w.volumes.get(n)!.status?.phase),
    ['Failed', 'Failed', 'Failed'],
  );
  assert.deepEqual(eventsOf(w), [
    ['PersistentVolume', 'Warning', 'VolumeFailedDelete', 'host_path deleter only supports /tmp/.+ but received provided /var/lib/data'],
    ['PersistentVolume', 'Warning', 'VolumeFailedDelete', 'error getting deleter volume plugin for volume "local": no deletable volume plugin matched'],
    ['PersistentVolume', 'Warning', 'VolumeFailedDelete', 'error getting deleter volume plugin for volume "iscsi": no volume plugin matched'],
  ]);
  assert.equal(w.volumes.get('data')!.status?.message, 'host_path deleter only supports /tmp/.+ but received provided /var/lib/data');
  // Failed volumes are tried again on each sync, without another event.
  await sync(w, 'data');
  assert.equal(w.events.length, 3);
});

test('Recycle: no recycler runs here, the volume fails as upstream does without a recycler plugin', async () => {
  const w = world({ volumes: [pv('v', { claim: gone, phase: 'Bound', policy: 'Recycle' })] });
  await sync(w, 'v');
  assert.equal(w.volumes.get('v')!.status?.phase, 'Failed');
  assert.deepEqual(eventsOf(w), [['PersistentVolume', 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!']]);
});

test('an unknown reclaim policy fails the volume', async () => {
  const w = world({ volumes: [pv('v', { claim: gone, phase: 'Bound', policy: 'Shred' })] });
  await sync(w, 'v');
  assert.deepEqual(eventsOf(w), [['PersistentVolume', 'Warning', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy']]);
});

test('a claim bound to another volume: a binding the controller made is undone; a user pre-binding keeps its reservation', async () => {
  const ours = pv('ours', { claim: gone, phase: 'Bound', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes', keep: 'me' } });
  const users = pv('users', { claim: gone, phase: 'Bound' });
  const w = world({ volumes: [ours, users], claims: [pvc('c', { volumeName: 'elsewhere' })] });
  await sync(w, 'ours');
  await sync(w, 'users');
  assert.equal(w.volumes.get('ours')!.spec?.claimRef, undefined);
  assert.deepEqual(w.volumes.get('ours')!.metadata.annotations, { keep: 'me' });
  assert.deepEqual(w.volumes.get('users')!.spec?.claimRef, { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'c' });
  assert.deepEqual(
    ['ours', 'users'].map((n) => w.volumes.get(n)!.status?.phase),
    ['Available', 'Available'],
  );
});

test('a dynamically provisioned Delete volume whose claim went elsewhere is released for its provisioner', async () => {
  const v = pv('v', { claim: gone, phase: 'Bound', policy: 'Delete', annotations: { 'pv.kubernetes.io/provisioned-by': 'hostpath.csi.kubeling.io' } });
  const w = world({ volumes: [v], claims: [pvc('c', { volumeName: 'other' })] });
  await sync(w, 'v');
  assert.equal(w.volumes.get('v')!.status?.phase, 'Released');
  assert.equal(w.volumes.get('v')!.spec?.claimRef?.uid, 'uid-c');
});

test('the host path deleter takes only normal paths under /tmp', () => {
  for (const p of ['/tmp/x', '/tmp/a/b', '/tmp/.hidden']) assert.equal(hostPathDeletable(p), true, p);
  for (const p of ['/tmp', '/tmp/', '/tmp/x/', '/var/tmp/x', '/home/u/tmp/x', '/tmp/../etc', '/tmp//x', '/tmp/./x', 'tmp/x', '/']) {
    assert.equal(hostPathDeletable(p), false, p);
  }
});
