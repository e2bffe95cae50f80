import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkVolumeSatisfyClaim, findBestMatchForClaim } from './index.js';
import { pv, pvc } from './world.fixtures.js';

const best = (claim: ReturnType<typeof pvc>, volumes: ReturnType<typeof pv>[], delay = false) => findBestMatchForClaim(claim, volumes, delay)?.metadata.name;

test('the smallest Available volume of the claim class with enough capacity wins', () => {
  const volumes = [
    pv('big', { size: '10Gi' }),
    pv('fits', { size: '2Gi' }),
    pv('small', { size: '500Mi' }),
    pv('other-class', { size: '1Gi', cls: 'gold' }),
    pv('released', { size: '1Gi', phase: 'Released' }),
  ];
  assert.equal(best(pvc('c', { size: '1Gi' }), volumes), 'fits');
  assert.equal(best(pvc('c', { size: '1Gi', cls: 'gold' }), volumes), 'other-class');
  assert.equal(best(pvc('c', { size: '20Gi' }), volumes), undefined);
  // No storageClassName at all asks for the class "", as upstream's GetPersistentVolumeClaimClass.
  assert.equal(best(pvc('c', { size: '1Gi', cls: null }), volumes), 'fits');
  assert.equal(best(pvc('c', { size: '1Gi', annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' } }), volumes), 'other-class');
});

test('access modes: the claim modes must all be there, and the fewest-mode sets are searched first', () => {
  const volumes = [pv('rwo-rwx', { size: '1Gi', modes: ['ReadWriteOnce', 'ReadWriteMany'] }), pv('rwo', { size: '5Gi', modes: ['ReadWriteOnce'] })];
  assert.equal(best(pvc('c', { modes: ['ReadWriteOnce'] }), volumes), 'rwo', 'a RWO-only volume before a smaller RWO+RWX one');
  assert.equal(best(pvc('c', { modes: ['ReadWriteMany'] }), volumes), 'rwo-rwx');
  assert.equal(best(pvc('c', { modes: ['ReadOnlyMany'] }), volumes), undefined);
});

test('the claim selector filters on volume labels; a bad selector is an error', () => {
  const volumes = [pv('fast', { labels: { speed: 'fast' } }), pv('slow', { labels: { speed: 'slow' } })];
  assert.equal(best(pvc('c', { selector: { matchLabels: { speed: 'slow' } } }), volumes), 'slow');
  assert.equal(best(pvc('c', { selector: { matchExpressions: [{ key: 'speed', operator: 'In', values: ['fast'] }] } }), volumes), 'fast');
  assert.equal(best(pvc('c', { selector: { matchLabels: { speed: 'warp' } } }), volumes), undefined);
  assert.throws(
    () => best(pvc('c', { selector: { matchExpressions: [{ key: 'speed', operator: 'Near' }] } }), volumes),
    /^Error: error creating internal label selector for claim: ns\/c: "Near" is not a valid label selector operator$/,
  );
});

test('volumeMode must match (Filesystem by default); volumes being deleted are skipped', () => {
  assert.equal(best(pvc('c', { mode: 'Block' }), [pv('fs'), pv('block', { mode: 'Block' })]), 'block');
  assert.equal(best(pvc('c'), [pv('block', { mode: 'Block' }), pv('fs', { mode: 'Filesystem', size: '3Gi' })]), 'fs');
  assert.equal(best(pvc('c'), [pv('going', { deleting: true })]), undefined);
});

test('a volume pre-bound to the claim wins whatever its class, phase or size order; one bound to another claim never', () => {
  const volumes = [pv('free', { size: '1Gi' }), pv('mine', { size: '8Gi', cls: 'other', phase: 'Pending', claim: { name: 'c' } })];
  assert.equal(best(pvc('c'), volumes), 'mine');
  assert.equal(best(pvc('c'), [pv('theirs', { claim: { name: 'd', uid: 'uid-d' } })]), undefined);
  assert.equal(best(pvc('c'), [pv('old-c', { claim: { name: 'c', uid: 'an-earlier-c' } })]), undefined, 'a claim of the same name but another UID');
  assert.equal(best(pvc('c', { size: '10Gi' }), [pv('mine', { size: '8Gi', claim: { name: 'c' } })]), undefined, 'still needs the capacity');
});

test('WaitForFirstConsumer: only a pre-bound volume is taken, the scheduler chooses the rest', () => {
  assert.equal(best(pvc('c'), [pv('free')], true), undefined);
  assert.equal(best(pvc('c'), [pv('free'), pv('mine', { claim: { name: 'c', uid: 'uid-c' } })], true), 'mine');
});

test('checkVolumeSatisfyClaim gives upstream reasons', () => {
  assert.equal(checkVolumeSatisfyClaim(pv('v', { size: '2Gi' }), pvc('c')), undefined);
  assert.equal(checkVolumeSatisfyClaim(pv('v', { size: '1Mi' }), pvc('c')), 'requested PV is too small');
  assert.equal(checkVolumeSatisfyClaim(pv('v', { cls: 'gold' }), pvc('c')), 'storageClassName does not match');
  assert.equal(checkVolumeSatisfyClaim(pv('v', { mode: 'Block' }), pvc('c')), 'incompatible volumeMode');
  assert.equal(checkVolumeSatisfyClaim(pv('v', { modes: ['ReadOnlyMany'] }), pvc('c')), 'incompatible accessMode');
  assert.equal(checkVolumeSatisfyClaim(pv('v', { deleting: true }), pvc('c')), 'the volume is marked for deletion "v"');
});
