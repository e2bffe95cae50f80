import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../kinds.js';
import type { VolumeAttachment } from '../storage.js';
import { desiredVolumes, type DesiredVolume } from './desired.js';
import { MAX_WAIT_FOR_UNMOUNT_MS, multiAttachMessage, planNode } from './reconcile.js';
import { DRIVER, attachment, boundClaim, csiVolume, node, podOn, uniqueName } from './volumes.fixtures.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');

/** The desired volumes of web on n1 using pv1 (through claim data). */
const wants = (nodeName = 'n1', modes = ['ReadWriteOnce']): Map<string, DesiredVolume> =>
  desiredVolumes(nodeName, {
    pods: [podOn('web', nodeName, ['data'])],
    claim: () => boundClaim('data', 'pv1'),
    volume: () => csiVolume('pv1', 'data', { modes }),
    driver: () => undefined,
  });

const plan = (o: {
  node?: Node | undefined;
  desired?: Map<string, DesiredVolume>;
  attachments?: VolumeAttachment[];
  requested?: Map<string, number>;
  now?: number;
}) =>
  planNode({
    nodeName: 'n1',
    node: 'node' in o ? o.node : node('n1'),
    desired: o.desired ?? new Map(),
    attachments: o.attachments ?? [],
    uniqueNameOf: (va) => uniqueName(va.spec.source.persistentVolumeName!),
    detachRequestedAt: o.requested ?? new Map(),
    now: o.now ?? NOW,
  });

test('a desired volume without an attachment gets one, named and shaped as the CSI attacher makes it', () => {
  const p = plan({ desired: wants() });
  assert.deepEqual(p.create, [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: attachment('pv1', 'n1').metadata.name },
      spec: { attacher: DRIVER, nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    },
  ]);
  assert.equal(p.volumesAttached, undefined, 'nothing attached yet, nothing to report');
});

test('once the attachment reports attached, the node lists the volume in volumesAttached', () => {
  const p = plan({ desired: wants(), attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.deepEqual(p.create, []);
  assert.deepEqual(p.volumesAttached, [{ name: uniqueName('pv1'), devicePath: '' }]);
  assert.equal(p.attached.length, 1);
  const again = plan({ node: node('n1', { attached: [uniqueName('pv1')] }), desired: wants(), attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.equal(again.volumesAttached, undefined, 'already listed');
});

test('an attach error is reported, not retried by another attachment', () => {
  const p = plan({ desired: wants(), attachments: [attachment('pv1', 'n1', { error: 'rpc error: code = NotFound desc = no volume' })] });
  assert.deepEqual(p.create, []);
  assert.deepEqual(
    p.attachErrors.map((e) => e.message),
    ['rpc error: code = NotFound desc = no volume'],
  );
});

test('ReadWriteOnce attached on another node: Multi-Attach, no attachment; a detach in progress there is waited for quietly', () => {
  const elsewhere = plan({ desired: wants(), attachments: [attachment('pv1', 'n2', { attached: true })] });
  assert.deepEqual(elsewhere.create, []);
  assert.deepEqual(
    elsewhere.blocked.map((b) => b.otherNodes),
    [['n2']],
  );
  const detaching = plan({ desired: wants(), attachments: [attachment('pv1', 'n2', { attached: true, deleting: true })] });
  assert.deepEqual([detaching.create, detaching.blocked], [[], []]);
  const many = plan({ desired: wants('n1', ['ReadWriteMany']), attachments: [attachment('pv1', 'n2', { attached: true })] });
  assert.equal(many.create.length, 1, 'ReadWriteMany may attach to both');
});

test('Multi-Attach messages name the pods of the pod namespace and count the others', () => {
  assert.equal(
    multiAttachMessage('pv1', 'ns', [
      { namespace: 'ns', name: 'a' },
      { namespace: 'ns', name: 'b' },
      { namespace: 'other', name: 'c' },
    ]),
    'Multi-Attach error for volume "pv1" Volume is already used by pod(s) a, b and 1 pod(s) in different namespaces',
  );
  assert.equal(
    multiAttachMessage('pv1', 'ns', [{ namespace: 'other', name: 'c' }]),
    'Multi-Attach error for volume "pv1" Volume is already used by 1 pod(s) in different namespaces',
  );
  assert.equal(
    multiAttachMessage('pv1', 'ns', []),
    `Multi-Attach error for volume "pv1" Volume is already exclusively attached to one node and can't be attached to another`,
  );
});

test('no pod needs it and the node does not use it: out of volumesAttached and detached', () => {
  const p = plan({ node: node('n1', { attached: [uniqueName('pv1')] }), attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.deepEqual(
    p.detach.map((va) => va.spec.source.persistentVolumeName),
    ['pv1'],
  );
  assert.deepEqual(p.volumesAttached, []);
});

test('still mounted (volumesInUse) on a Ready node: the detach waits, and the volume stays reported', () => {
  const n = node('n1', { attached: [uniqueName('pv1')], inUse: [uniqueName('pv1')] });
  const p = plan({ node: n, attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.deepEqual(p.detach, []);
  assert.equal(p.volumesAttached, undefined);
  assert.deepEqual([...p.waiting.values()], [NOW]);
  assert.equal(p.requeueAfterMs, undefined, 'a Ready node is waited for as long as it takes');
  // Much later, still Ready: still waiting.
  const later = plan({ node: n, attachments: [attachment('pv1', 'n1', { attached: true })], requested: p.waiting, now: NOW + 2 * MAX_WAIT_FOR_UNMOUNT_MS });
  assert.deepEqual(later.detach, []);
});

test('a not-Ready node gets maxWaitForUnmountDuration (6 min); an out-of-service node or a deleted one none', () => {
  const n = node('n1', { attached: [uniqueName('pv1')], inUse: [uniqueName('pv1')], ready: false });
  const first = plan({ node: n, attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.deepEqual(first.detach, []);
  assert.equal(first.requeueAfterMs, MAX_WAIT_FOR_UNMOUNT_MS + 1000);
  const timedOut = plan({
    node: n,
    attachments: [attachment('pv1', 'n1', { attached: true })],
    requested: first.waiting,
    now: NOW + MAX_WAIT_FOR_UNMOUNT_MS + 1,
  });
  assert.equal(timedOut.detach.length, 1);
  const oos = node('n1', { attached: [uniqueName('pv1')], inUse: [uniqueName('pv1')], outOfService: true });
  assert.equal(plan({ node: oos, attachments: [attachment('pv1', 'n1', { attached: true })] }).detach.length, 1);
  const gone = plan({ node: undefined, attachments: [attachment('pv1', 'n1', { attached: true })] });
  assert.equal(gone.detach.length, 1);
  assert.equal(gone.volumesAttached, undefined, 'no node to write to');
});

test('attachments of other nodes and ones already being deleted are left alone', () => {
  const p = plan({ attachments: [attachment('pv1', 'n2', { attached: true }), attachment('pv2', 'n1', { attached: true, deleting: true })] });
  assert.deepEqual(p.detach, []);
});
