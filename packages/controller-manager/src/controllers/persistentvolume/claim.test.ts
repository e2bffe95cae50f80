import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syncClaim } from './claim.js';
import { pv, pvc, sc, unscheduledPod, world } from './world.fixtures.js';

const EXTERNAL =
  "Waiting for a volume to be created either by the external provisioner 'hostpath.csi.kubeling.io' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.";

test('static binding: volume first (claimRef, Bound), then the claim (volumeName, annotations, Bound with the volume modes and capacity)', async () => {
  const modes = ['ReadWriteOnce', 'ReadOnlyMany'];
  const w = world({ volumes: [pv('big', { size: '10Gi', modes }), pv('fits', { size: '2Gi', modes })], claims: [pvc('c')] });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.deepEqual(w.writes, ['update pv/fits', 'status pv/fits', 'update pvc/ns/c', 'status pvc/ns/c']);
  const v = w.volumes.get('fits')!;
  assert.deepEqual(v.spec?.claimRef, { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'c', uid: 'uid-c', apiVersion: 'v1', resourceVersion: '1' });
  assert.equal(v.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.deepEqual(v.status, { phase: 'Bound', lastPhaseTransitionTime: '2026-03-01T10:00:00Z' });
  const c = w.claims.get('ns/c')!;
  assert.equal(c.spec?.volumeName, 'fits');
  assert.deepEqual(c.metadata.annotations, { 'pv.kubernetes.io/bound-by-controller': 'yes', 'pv.kubernetes.io/bind-completed': 'yes' });
  assert.deepEqual(c.status, { phase: 'Bound', accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], capacity: { storage: '2Gi' } });
  assert.equal(w.volumes.get('big')!.spec?.claimRef, undefined);
  // Synced again: nothing left to write.
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.equal(w.writes.length, 4);
});

test('a claim naming its volume binds to it; the claim is not marked bound-by-controller, the volume is', async () => {
  const w = world({ volumes: [pv('small', { size: '1Gi' }), pv('wanted', { size: '5Gi' })], claims: [pvc('c', { volumeName: 'wanted' })] });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.equal(w.volumes.get('wanted')!.spec?.claimRef?.uid, 'uid-c');
  assert.equal(w.volumes.get('wanted')!.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.deepEqual(w.claims.get('ns/c')!.metadata.annotations, { 'pv.kubernetes.io/bind-completed': 'yes' });
  assert.equal(w.claims.get('ns/c')!.status?.phase, 'Bound');
});

test('a claim naming a volume that cannot serve it, or that is missing, or taken, stays Pending', async () => {
  const w = world({
    volumes: [pv('tiny', { size: '10Mi' }), pv('taken', { claim: { name: 'other', uid: 'uid-other' } })],
    claims: [pvc('a', { volumeName: 'tiny', phase: '' })],
  });
  await syncClaim(w.binder, w.claims.get('ns/a')!);
  assert.deepEqual(w.events, [
    { kind: 'PersistentVolumeClaim', type: 'Warning', reason: 'VolumeMismatch', message: 'Cannot bind to requested volume "tiny": requested PV is too small' },
  ]);
  assert.equal(w.claims.get('ns/a')!.status?.phase, 'Pending');

  const m = world({ claims: [pvc('b', { volumeName: 'nowhere' })] });
  await syncClaim(m.binder, m.claims.get('ns/b')!);
  assert.deepEqual([m.writes, m.events], [[], []], 'Pending already: nothing to write, tried again on the next sync');

  const t = world({ volumes: [pv('taken', { claim: { name: 'other', uid: 'uid-other' } })], claims: [pvc('c', { volumeName: 'taken' })] });
  await syncClaim(t.binder, t.claims.get('ns/c')!);
  assert.deepEqual(t.events, [
    { kind: 'PersistentVolumeClaim', type: 'Warning', reason: 'FailedBinding', message: 'volume "taken" already bound to a different claim.' },
  ]);
  assert.deepEqual(t.writes, []);
});

test('WaitForFirstConsumer: no binding without a selected node, and the event says who is awaited', async () => {
  const classes = [sc('local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer')];
  const w = world({ volumes: [pv('free', { cls: 'local' })], claims: [pvc('c', { cls: 'local' })], classes });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.deepEqual(w.writes, []);
  assert.deepEqual(
    w.events.map((e) => [e.reason, e.message]),
    [['WaitForFirstConsumer', 'waiting for first consumer to be created before binding']],
  );

  const p = world({ claims: [pvc('c', { cls: 'local' })], classes, pods: [unscheduledPod('web', 'c')] });
  await syncClaim(p.binder, p.claims.get('ns/c')!);
  assert.deepEqual(
    p.events.map((e) => [e.type, e.reason, e.message]),
    [['Normal', 'WaitForPodScheduled', 'waiting for pod web to be scheduled']],
  );

  const two = world({ claims: [pvc('c', { cls: 'local' })], classes, pods: [unscheduledPod('a', 'c'), unscheduledPod('b', 'c')] });
  await syncClaim(two.binder, two.claims.get('ns/c')!);
  assert.equal(two.events[0]!.message, 'waiting for pods a,b to be scheduled');
});

test('a volume the scheduler pre-bound under WaitForFirstConsumer is bound', async () => {
  const classes = [sc('local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer')];
  const w = world({ volumes: [pv('chosen', { cls: 'local', claim: { name: 'c', uid: 'uid-c' } })], claims: [pvc('c', { cls: 'local' })], classes });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.equal(w.claims.get('ns/c')!.spec?.volumeName, 'chosen');
  assert.equal(w.claims.get('ns/c')!.status?.phase, 'Bound');
  assert.equal(w.volumes.get('chosen')!.status?.phase, 'Bound');
  assert.equal(w.volumes.get('chosen')!.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined, 'the scheduler chose, not us');
});

test('dynamic provisioning by an external provisioner: the claim is annotated and an ExternalProvisioning event says so', async () => {
  for (const mode of ['Immediate', 'WaitForFirstConsumer']) {
    const annotations = mode === 'Immediate' ? {} : { 'volume.kubernetes.io/selected-node': 'node-1' };
    const w = world({ claims: [pvc('c', { cls: 'standard', annotations })], classes: [sc('standard', 'hostpath.csi.kubeling.io', mode)] });
    await syncClaim(w.binder, w.claims.get('ns/c')!);
    assert.deepEqual(w.writes, ['update pvc/ns/c'], mode);
    assert.deepEqual(w.claims.get('ns/c')!.metadata.annotations, {
      ...annotations,
      'volume.beta.kubernetes.io/storage-provisioner': 'hostpath.csi.kubeling.io',
      'volume.kubernetes.io/storage-provisioner': 'hostpath.csi.kubeling.io',
    });
    assert.deepEqual(w.events, [{ kind: 'PersistentVolumeClaim', type: 'Normal', reason: 'ExternalProvisioning', message: EXTERNAL }]);
    // Next sync: annotations stand, the event is repeated (the recorder counts it).
    await syncClaim(w.binder, w.claims.get('ns/c')!);
    assert.equal(w.writes.length, 1);
    assert.equal(w.events.length, 2);
  }
});

test('a missing class or an in-tree provisioner fails provisioning; no class at all is a FailedBinding', async () => {
  const missing = world({ claims: [pvc('c', { cls: 'gold' })] });
  await syncClaim(missing.binder, missing.claims.get('ns/c')!);
  assert.deepEqual(
    missing.events.map((e) => [e.type, e.reason, e.message]),
    [['Warning', 'ProvisioningFailed', 'storageclass.storage.k8s.io "gold" not found']],
  );
  assert.deepEqual(missing.writes, []);

  const inTree = world({ claims: [pvc('c', { cls: 'local' })], classes: [sc('local', 'kubernetes.io/no-provisioner')] });
  await syncClaim(inTree.binder, inTree.claims.get('ns/c')!);
  assert.deepEqual(
    inTree.events.map((e) => e.message),
    ['no volume plugin matched name: kubernetes.io/no-provisioner'],
  );

  const none = world({ claims: [pvc('c', { cls: '', phase: '' })] });
  await syncClaim(none.binder, none.claims.get('ns/c')!);
  assert.deepEqual(
    none.events.map((e) => [e.reason, e.message]),
    [['FailedBinding', 'no persistent volumes available for this claim and no storage class is set']],
  );
  assert.equal(none.claims.get('ns/c')!.status?.phase, 'Pending');
});

test('a claim without any class gets the newest default class, and nothing else that sync', async () => {
  const older = {
    ...sc('old', 'hostpath.csi.kubeling.io', 'Immediate', true),
    metadata: { ...sc('old', 'x', 'Immediate', true).metadata, creationTimestamp: '2026-01-01T00:00:00Z' },
  };
  const newer = {
    ...sc('new', 'hostpath.csi.kubeling.io', 'Immediate', true),
    metadata: { ...sc('new', 'x', 'Immediate', true).metadata, creationTimestamp: '2026-02-01T00:00:00Z' },
  };
  const w = world({ claims: [pvc('c', { cls: null })], classes: [older, newer, sc('plain', 'hostpath.csi.kubeling.io')] });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.deepEqual(w.writes, ['update pvc/ns/c']);
  assert.equal(w.claims.get('ns/c')!.spec?.storageClassName, 'new');
  assert.deepEqual(w.events, []);
  const explicit = world({ claims: [pvc('c', { cls: '' })], classes: [newer] });
  await syncClaim(explicit.binder, explicit.claims.get('ns/c')!);
  assert.equal(explicit.claims.get('ns/c')!.spec?.storageClassName, '', 'an explicit "" asks for no class');
});

test('a bound claim whose volume is gone, or names another claim, is Lost, with one event', async () => {
  const bound = { 'pv.kubernetes.io/bind-completed': 'yes' };
  const w = world({ claims: [pvc('c', { volumeName: 'gone', annotations: bound, phase: 'Bound' })] });
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.equal(w.claims.get('ns/c')!.status?.phase, 'Lost');
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.deepEqual(
    w.events.map((e) => [e.type, e.reason, e.message]),
    [['Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!']],
  );

  const unref = world({ claims: [pvc('c', { annotations: bound, phase: 'Bound' })] });
  await syncClaim(unref.binder, unref.claims.get('ns/c')!);
  assert.equal(unref.events[0]!.message, 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');

  const mis = world({
    volumes: [pv('v', { claim: { name: 'other', uid: 'uid-other' }, phase: 'Bound' })],
    claims: [pvc('c', { volumeName: 'v', annotations: bound, phase: 'Bound' })],
  });
  await syncClaim(mis.binder, mis.claims.get('ns/c')!);
  assert.deepEqual(
    mis.events.map((e) => [e.reason, e.message]),
    [['ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly']],
  );
  assert.equal(mis.claims.get('ns/c')!.status?.phase, 'Lost');
});

test('a bound claim whose volume lost its claimRef is bound again; a stale write loses with a Conflict', async () => {
  const bound = { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
  const claim = pvc('c', { volumeName: 'v', annotations: bound, phase: 'Bound' });
  claim.status = { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } };
  const w = world({ volumes: [pv('v', { phase: 'Available' })], claims: [claim] });
  const stale = structuredClone(w.claims.get('ns/c')!);
  await syncClaim(w.binder, w.claims.get('ns/c')!);
  assert.equal(w.volumes.get('v')!.spec?.claimRef?.uid, 'uid-c');
  assert.equal(w.volumes.get('v')!.status?.phase, 'Bound');
  // The claim was already fully bound: only the volume changed.
  assert.deepEqual(w.writes, ['update pv/v', 'status pv/v']);
  w.claims.get('ns/c')!.metadata.resourceVersion = '7';
  w.volumes.set('v', pv('v', { phase: 'Available' }));
  await assert.rejects(() => syncClaim(w.binder, { ...stale, status: { phase: 'Pending' } }), /the object has been modified/);
});
