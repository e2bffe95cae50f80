import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeHandle, makeClass, makeNode, makePV, makePVC, nodeInfo, podWithClaims } from '../../framework/testing.js';
import { PodInfo, type CycleState } from '../../framework/types.js';
import { ERR_REASON_CONFLICT, VolumeZone } from './index.js';

const ZONE = 'topology.kubernetes.io/zone';

function plugin() {
  const bound = makePVC('data', { className: 'standard', volumeName: 'pv1', bound: true });
  const beta = makePVC('old', { className: 'standard', volumeName: 'pv2', bound: true });
  const p = new VolumeZone();
  p.setHandle(
    fakeHandle({
      pvcs: [bound, beta, makePVC('wffc', { className: 'standard' }), makePVC('imm', { className: 'fast' })],
      pvs: [
        makePV('pv1', { claim: bound, labels: { [ZONE]: 'z1__z2' } }),
        makePV('pv2', { claim: beta, labels: { 'failure-domain.beta.kubernetes.io/zone': 'z3' } }),
      ],
      classes: [makeClass('standard'), makeClass('fast', { mode: 'Immediate' })],
    }),
  );
  return p;
}

function check(p: VolumeZone, claims: string[], labels: Record<string, string>) {
  const state: CycleState = new Map();
  const pod = new PodInfo(podWithClaims('p', claims));
  return p.preFilter(state, pod) ?? p.filter(state, pod, nodeInfo(makeNode('n', { labels })));
}

test("a bound PV's zone labels must match the node's; nodes without zone labels take anything", () => {
  const p = plugin();
  assert.equal(check(p, ['data'], { [ZONE]: 'z2' }), null, 'one of the zones');
  assert.deepEqual(check(p, ['data'], { [ZONE]: 'z9' }), { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_CONFLICT], plugin: 'VolumeZone' });
  assert.equal(check(p, ['data'], {}), null);
  assert.equal(check(p, ['old'], { [ZONE]: 'z3' }), null, 'the beta label matches the GA one');
  assert.equal(check(p, ['wffc'], { [ZONE]: 'z9' }), null, 'unbound WaitForFirstConsumer claims are left to VolumeBinding');
  assert.deepEqual(check(p, ['imm'], {})?.reasons, ['PersistentVolume had no name']);
  assert.deepEqual(check(p, ['none'], {})?.reasons, ['persistentvolumeclaim "none" not found']);
});
