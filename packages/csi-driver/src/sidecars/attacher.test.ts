/**
 * The node's external-attacher with fake listers, API and CSI: finalizers
 * before ControllerPublishVolume, the status it records, errors into
 * attachError, detach on deletion, and the PV finalizer's release.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Attacher } from './attacher.js';
import { attachmentUpdateMatters } from './loops.js';
import { driverInfo, FakeLister, fakeCsi, grpcError, recordingApi, silentLog } from './testing.js';
import type { CSINode, PersistentVolume, VolumeAttachment } from './types.js';

const DRIVER = 'hostpath.csi.kubeling.io';
const FIN = 'external-attacher/hostpath-csi-kubeling-io';

function va(over: { deleting?: boolean; finalizers?: string[]; attached?: boolean; node?: string; attacher?: string } = {}): VolumeAttachment {
  return {
    metadata: {
      name: 'csi-abc',
      resourceVersion: '5',
      ...(over.finalizers ? { finalizers: over.finalizers } : {}),
      ...(over.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: { attacher: over.attacher ?? DRIVER, nodeName: over.node ?? 'n1', source: { persistentVolumeName: 'pv-1' } },
    ...(over.attached ? { status: { attached: true } } : {}),
  };
}

function pv(over: { finalizers?: string[]; deleting?: boolean } = {}): PersistentVolume {
  return {
    metadata: {
      name: 'pv-1',
      resourceVersion: '3',
      finalizers: over.finalizers ?? ['kubernetes.io/pv-protection'],
      ...(over.deleting ? { deletionTimestamp: 'x' } : {}),
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      csi: { driver: DRIVER, volumeHandle: 'vol-1', fsType: 'ext4', volumeAttributes: { a: 'b' } },
      mountOptions: ['ro'],
    },
  };
}

function setup(o: { vas?: VolumeAttachment[]; pvs?: PersistentVolume[]; csiNodes?: CSINode[]; csi?: Record<string, (r: any) => unknown> } = {}) {
  const { api, calls } = recordingApi();
  const csi = fakeCsi({ ControllerPublishVolume: () => ({ publish_context: { device: '/dev/x' } }), ...(o.csi ?? {}) });
  const a = new Attacher({
    driver: driverInfo(),
    csi: csi.csi,
    api,
    attachments: new FakeLister(o.vas ?? [va()]),
    volumes: new FakeLister(o.pvs ?? [pv()]),
    csiNodes: new FakeLister(o.csiNodes ?? []),
    log: silentLog,
  });
  return { a, api, calls, csiCalls: csi.calls };
}

test('attach: PV finalizer, VA finalizer and node ID, ControllerPublishVolume, then attached with the publish context', async () => {
  const t = setup({ csiNodes: [{ metadata: { name: 'n1' }, spec: { drivers: [{ name: DRIVER, nodeID: 'node-id-from-csinode' }] } }] });
  await t.a.reconcileAttachment('csi-abc');
  assert.deepEqual(
    t.calls.map((c) => [c.op, ...c.args]),
    [
      ['patchPV', 'pv-1', { metadata: { finalizers: ['kubernetes.io/pv-protection', FIN], resourceVersion: '3' } }],
      [
        'patchVA',
        'csi-abc',
        { metadata: { resourceVersion: '5', finalizers: [FIN], annotations: { 'csi.alpha.kubernetes.io/node-id': 'node-id-from-csinode' } } },
      ],
      ['patchVAStatus', 'csi-abc', { status: { attached: true, attachmentMetadata: { device: '/dev/x' }, attachError: null } }],
    ],
  );
  assert.deepEqual(t.csiCalls, [
    {
      method: 'ControllerPublishVolume',
      req: {
        volume_id: 'vol-1',
        node_id: 'node-id-from-csinode',
        volume_capability: { mount: { fs_type: 'ext4', mount_flags: ['ro'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
        readonly: false,
        volume_context: { a: 'b' },
        secrets: {},
      },
    },
  ]);
});

test('attachments of other nodes or drivers, and attached ones, are left alone', async () => {
  for (const v of [va({ node: 'n2' }), va({ attacher: 'other.io/x' }), va({ attached: true })]) {
    const t = setup({ vas: [v] });
    await t.a.reconcileAttachment('csi-abc');
    assert.deepEqual([t.calls, t.csiCalls], [[], []]);
  }
});

test('a failed publish is saved as attachError and retried', async () => {
  const t = setup({ csi: { ControllerPublishVolume: () => Promise.reject(grpcError(5, 'volume vol-1 not found')) } });
  await assert.rejects(t.a.reconcileAttachment('csi-abc'), /failed to attach: rpc error: code = NotFound desc = volume vol-1 not found/);
  const last = t.calls.at(-1)!;
  assert.equal(last.op, 'patchVAStatus');
  const err = (last.args[1] as { status: { attachError: { time: string; message: string } } }).status.attachError;
  assert.equal(err.message, 'rpc error: code = NotFound desc = volume vol-1 not found');
  assert.match(err.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('a PV being deleted or missing is not attached, and no finalizer is added', async () => {
  const del = setup({ pvs: [pv({ deleting: true })] });
  await assert.rejects(del.a.reconcileAttachment('csi-abc'), /PersistentVolume "pv-1" is marked for deletion/);
  assert.deepEqual(
    del.calls.map((c) => c.op),
    ['patchVAStatus'],
  );
  const gone = setup({ pvs: [] });
  await assert.rejects(gone.a.reconcileAttachment('csi-abc'), /persistentvolume "pv-1" not found/);
  assert.deepEqual(gone.csiCalls, []);
});

test('detach: ControllerUnpublishVolume, status detached, then the finalizer goes', async () => {
  const deleting = va({ deleting: true, finalizers: [FIN, 'other/keep'], attached: true });
  const t = setup({ vas: [deleting], pvs: [pv({ finalizers: [FIN] })] });
  t.api.patchVAStatus = async (name, patch) => {
    t.calls.push({ op: 'patchVAStatus', args: [name, patch] });
    return { ...deleting, metadata: { ...deleting.metadata, resourceVersion: '8' } };
  };
  await t.a.reconcileAttachment('csi-abc');
  assert.deepEqual(t.csiCalls, [{ method: 'ControllerUnpublishVolume', req: { volume_id: 'vol-1', node_id: 'n1', secrets: {} } }]);
  assert.deepEqual(t.calls[0]!.args, ['csi-abc', { status: { attached: false, detachError: null, attachmentMetadata: null } }]);
  assert.equal(t.calls[1]!.op, 'patchVA');
  assert.deepEqual(t.calls[1]!.args[1], { metadata: { finalizers: ['other/keep'], resourceVersion: '8' } });
  const none = setup({ vas: [va({ deleting: true })] });
  await none.a.reconcileAttachment('csi-abc');
  assert.deepEqual(none.csiCalls, [], 'no finalizer: nothing to detach');
});

test('a failed unpublish keeps the finalizer and records detachError', async () => {
  const t = setup({ vas: [va({ deleting: true, finalizers: [FIN] })], csi: { ControllerUnpublishVolume: () => Promise.reject(grpcError(14, 'gone away')) } });
  await assert.rejects(t.a.reconcileAttachment('csi-abc'), /failed to detach/);
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['patchVAStatus'],
  );
  assert.ok((t.calls[0]!.args[1] as { status: { detachError?: unknown } }).status.detachError);
});

test('a deleted PV keeps the attacher finalizer while an attachment names it', async () => {
  const held = setup({ pvs: [pv({ finalizers: [FIN], deleting: true })] });
  await held.a.reconcileVolume('pv-1');
  assert.deepEqual(held.calls, []);
  const free = setup({ vas: [], pvs: [pv({ finalizers: ['kubernetes.io/pv-protection', FIN], deleting: true })] });
  await free.a.reconcileVolume('pv-1');
  assert.deepEqual(
    free.calls.map((c) => c.args),
    [['pv-1', { metadata: { finalizers: ['kubernetes.io/pv-protection'], resourceVersion: '3' } }]],
  );
});

test('status-only error writes do not requeue an attachment', () => {
  const base = va();
  const withError = { ...base, metadata: { ...base.metadata, resourceVersion: '6' }, status: { attachError: { message: 'x', time: 't' } } };
  assert.equal(attachmentUpdateMatters(base, withError), false);
  assert.equal(attachmentUpdateMatters(base, { ...withError, metadata: { ...withError.metadata, deletionTimestamp: 'now' } }), true);
  assert.equal(attachmentUpdateMatters(base, base), true, 'a resync');
});
