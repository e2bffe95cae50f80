import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Pod } from '../kinds.js';
import type { CSIDriver, PersistentVolume, PersistentVolumeClaim } from '../storage.js';
import { attachmentName, desiredVolumes } from './desired.js';
import { DRIVER, boundClaim, csiVolume, driver, podOn, uniqueName } from './volumes.fixtures.js';

const desired = (pods: Pod[], claims: PersistentVolumeClaim[], volumes: PersistentVolume[], drivers: CSIDriver[] = []) =>
  desiredVolumes('n1', {
    pods,
    claim: (k) => claims.find((c) => `${c.metadata.namespace}/${c.metadata.name}` === k),
    volume: (n) => volumes.find((v) => v.metadata.name === n),
    driver: (n) => drivers.find((d) => d.metadata.name === n),
  });

test('the attachment name is csi- and the sha256 of handle, driver and node, as the CSI attacher names it', () => {
  assert.equal(attachmentName('h', DRIVER, 'n1'), `csi-${createHash('sha256').update(`h${DRIVER}n1`).digest('hex')}`);
});

test('a running pod on a bound claim of a CSI volume needs it attached (no CSIDriver object: attach required)', () => {
  const d = desired([podOn('web', 'n1', ['data'])], [boundClaim('data', 'pv1')], [csiVolume('pv1', 'data')]);
  assert.deepEqual(
    [...d.values()].map((v) => [v.attachmentName, v.uniqueName, v.pvName, v.driver, v.claimKey, v.multiAttach, v.pods.map((p) => p.metadata.name)]),
    [[attachmentName('handle-pv1', DRIVER, 'n1'), uniqueName('pv1'), 'pv1', DRIVER, 'ns/data', false, ['web']]],
  );
});

test('pods sharing a volume need one attachment; ReadWriteMany volumes may be on several nodes', () => {
  const d = desired(
    [podOn('a', 'n1', ['data']), podOn('b', 'n1', ['data'])],
    [boundClaim('data', 'pv1')],
    [csiVolume('pv1', 'data', { modes: ['ReadWriteMany'] })],
  );
  assert.equal(d.size, 1);
  assert.deepEqual(
    [...d.values()][0]!.pods.map((p) => p.metadata.name),
    ['a', 'b'],
  );
  assert.equal([...d.values()][0]!.multiAttach, true);
});

test('nothing to attach: a driver without attach, a terminated pod, an unbound claim, a claimRef of another UID, a non-CSI volume', () => {
  const claims = [boundClaim('data', 'pv1')];
  const volumes = [csiVolume('pv1', 'data')];
  assert.equal(desired([podOn('web', 'n1', ['data'])], claims, volumes, [driver(DRIVER, false)]).size, 0);
  assert.equal(desired([podOn('web', 'n1', ['data'])], claims, volumes, [driver(DRIVER, true)]).size, 1);
  assert.equal(desired([podOn('web', 'n1', ['data'], { phase: 'Succeeded' })], claims, volumes).size, 0);
  assert.equal(desired([podOn('web', 'n1', ['data'])], [boundClaim('data', 'pv1', { phase: 'Pending' })], volumes).size, 0);
  assert.equal(
    desired([podOn('web', 'n1', ['data'])], claims, [
      { ...csiVolume('pv1', 'data'), spec: { ...csiVolume('pv1', 'data').spec, claimRef: { name: 'data', namespace: 'ns', uid: 'old' } } },
    ]).size,
    0,
  );
  const host = { ...csiVolume('pv1', 'data'), spec: { claimRef: { name: 'data', namespace: 'ns', uid: 'uid-data' }, hostPath: { path: '/tmp/x' } } };
  assert.equal(desired([podOn('web', 'n1', ['data'])], claims, [host]).size, 0);
});

test('a generic ephemeral volume counts through its <pod>-<volume> claim, when the pod owns it', () => {
  const pod = podOn('web', 'n1', [], { ephemeral: ['scratch'] });
  const volumes = [csiVolume('pv1', 'web-scratch')];
  assert.equal(desired([pod], [boundClaim('web-scratch', 'pv1', { owner: 'uid-web' })], volumes).size, 1);
  assert.equal(desired([pod], [boundClaim('web-scratch', 'pv1', { owner: 'someone-else' })], volumes).size, 0);
});
