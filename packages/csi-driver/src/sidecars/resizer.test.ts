/**
 * The node's external-resizer with fake listers, API and CSI: which claims it
 * expands, the status it writes before and after ControllerExpandVolume
 * (Resizing, allocatedResources, FileSystemResizePending or the new
 * capacity), the PV's capacity, events, and failures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimUpdateMatters, FS_RESIZE_PENDING_MESSAGE, Resizer } from './resizer.js';
import { driverInfo, FakeLister, fakeCsi, grpcError, recorder, recordingApi, silentLog, TOPOLOGY_KEY } from './testing.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from './types.js';

const DRIVER = 'hostpath.csi.kubeling.io';

function pvc(over: { request?: string; capacity?: string; status?: Partial<NonNullable<PersistentVolumeClaim['status']>> } = {}): PersistentVolumeClaim {
  return {
    metadata: { name: 'data', namespace: 'default', uid: 'u-1', resourceVersion: '11' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: over.request ?? '2Gi' } }, storageClassName: 'standard', volumeName: 'pv-1' },
    status: {
      phase: 'Bound',
      capacity: { storage: over.capacity ?? '1Gi' },
      conditions: [{ type: 'Other', status: 'True' }],
      ...(over.status ?? {}),
    },
  };
}

function pv(over: { capacity?: string; node?: string; driver?: string; uid?: string } = {}): PersistentVolume {
  return {
    metadata: { name: 'pv-1' },
    spec: {
      capacity: { storage: over.capacity ?? '1Gi' },
      accessModes: ['ReadWriteOnce'],
      claimRef: { namespace: 'default', name: 'data', uid: over.uid ?? 'u-1' },
      csi: { driver: over.driver ?? DRIVER, volumeHandle: 'vol-1' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: [over.node ?? 'n1'] }] }] } },
    },
  };
}

const sc = (allow = true): StorageClass => ({ metadata: { name: 'standard' }, provisioner: DRIVER, allowVolumeExpansion: allow });

function setup(o: { claim?: PersistentVolumeClaim; pv?: PersistentVolume; sc?: StorageClass; csi?: Record<string, (r: any) => unknown> } = {}) {
  const { api, calls } = recordingApi();
  const csi = fakeCsi({
    ControllerExpandVolume: (req) => ({ capacity_bytes: req.capacity_range.required_bytes, node_expansion_required: true }),
    ...(o.csi ?? {}),
  });
  const rec = recorder();
  const r = new Resizer({
    driver: driverInfo(),
    csi: csi.csi,
    api,
    claims: new FakeLister([o.claim ?? pvc()]),
    volumes: new FakeLister([o.pv ?? pv()]),
    classes: new FakeLister([o.sc ?? sc()]),
    event: rec.event,
    log: silentLog,
  });
  return { r, calls, csiCalls: csi.calls, events: rec.events };
}

type StatusPatch = { metadata?: { resourceVersion?: string }; status: Record<string, any> };

test('expansion with node expansion required: Resizing, ControllerExpandVolume, PV capacity, FileSystemResizePending', async () => {
  const t = setup();
  await t.r.reconcileClaim('default/data');
  const [mark, pvPatch, pending] = t.calls;
  assert.equal(mark!.op, 'patchClaimStatus');
  const m = mark!.args[2] as StatusPatch;
  assert.deepEqual(m.metadata, { resourceVersion: '11' });
  assert.deepEqual(m.status.allocatedResources, { storage: '2Gi' });
  assert.deepEqual(m.status.allocatedResourceStatuses, { storage: 'ControllerResizeInProgress' });
  assert.deepEqual(
    m.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]),
    [
      ['Other', 'True'],
      ['Resizing', 'True'],
    ],
  );
  assert.deepEqual(t.csiCalls[0], {
    method: 'ControllerExpandVolume',
    req: {
      volume_id: 'vol-1',
      capacity_range: { required_bytes: String(2 * 2 ** 30) },
      volume_capability: { mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
      secrets: {},
    },
  });
  assert.deepEqual(pvPatch!.args, ['pv-1', { spec: { capacity: { storage: '2Gi' } } }]);
  const p = pending!.args[2] as StatusPatch;
  assert.deepEqual(p.status.allocatedResourceStatuses, { storage: 'NodeResizePending' });
  const cond = p.status.conditions.find((c: { type: string }) => c.type === 'FileSystemResizePending');
  assert.equal(cond.message, FS_RESIZE_PENDING_MESSAGE);
  assert.equal(
    p.status.conditions.some((c: { type: string }) => c.type === 'Resizing'),
    false,
  );
  assert.deepEqual(
    t.events.map((e) => [e.type, e.reason, e.message]),
    [
      ['Normal', 'Resizing', 'External resizer is resizing volume pv-1'],
      ['Normal', 'FileSystemResizeRequired', 'Require file system resize of volume on node'],
    ],
  );
});

test('expansion without node expansion: the claim’s capacity and the end of the resize conditions', async () => {
  const t = setup({ csi: { ControllerExpandVolume: () => ({ capacity_bytes: String(3 * 2 ** 30), node_expansion_required: false }) } });
  await t.r.reconcileClaim('default/data');
  const done = t.calls.at(-1)!.args[2] as StatusPatch;
  assert.deepEqual(done.status, {
    capacity: { storage: '3Gi' },
    conditions: [{ type: 'Other', status: 'True' }],
    allocatedResourceStatuses: { storage: null },
  });
  assert.deepEqual(t.events.at(-1), { name: 'data', type: 'Normal', reason: 'VolumeResizeSuccessful', message: 'Resize volume succeeded' });
});

test('claims that need nothing, or are not this resizer’s, are left alone', async () => {
  const cases = [
    { claim: pvc({ request: '1Gi' }) },
    { claim: pvc({ status: { phase: 'Pending' } }) },
    { pv: pv({ driver: 'other.io/x' }) },
    { pv: pv({ node: 'n2' }) },
    { pv: pv({ uid: 'someone-else' }) },
    { sc: sc(false) },
    {
      claim: pvc({ status: { allocatedResourceStatuses: { storage: 'NodeResizePending' }, allocatedResources: { storage: '2Gi' } } }),
      pv: pv({ capacity: '2Gi' }),
    },
  ];
  for (const c of cases) {
    const t = setup(c);
    await t.r.reconcileClaim('default/data');
    assert.deepEqual([t.calls, t.csiCalls], [[], []], JSON.stringify(c));
  }
});

test('an unfinished expansion resumes at the recorded size without rewriting the status', async () => {
  const t = setup({
    claim: pvc({ request: '5Gi', status: { allocatedResources: { storage: '2Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } }),
  });
  await t.r.reconcileClaim('default/data');
  assert.equal(t.csiCalls[0]!.req.capacity_range.required_bytes, String(2 * 2 ** 30));
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['patchPV', 'patchClaimStatus'],
  );
});

test('an infeasible size is marked ControllerResizeInfeasible with a ControllerResizeError condition', async () => {
  const t = setup({ csi: { ControllerExpandVolume: () => Promise.reject(grpcError(11, 'too big')) } });
  await assert.rejects(
    t.r.reconcileClaim('default/data'),
    /resize volume "pv-1" by resizer "hostpath.csi.kubeling.io" failed: rpc error: code = OutOfRange desc = too big/,
  );
  const failed = t.calls.at(-1)!.args[2] as StatusPatch;
  assert.equal(failed.metadata, undefined, 'written whatever the version');
  assert.deepEqual(failed.status.allocatedResourceStatuses, { storage: 'ControllerResizeInfeasible' });
  const err = failed.status.conditions.find((c: { type: string }) => c.type === 'ControllerResizeError');
  assert.equal(err.message, 'rpc error: code = OutOfRange desc = too big');
  assert.equal(t.events.at(-1)!.reason, 'VolumeResizeFailed');
});

test('a timed-out expansion leaves the claim in progress and is retried', async () => {
  const t = setup({ csi: { ControllerExpandVolume: () => Promise.reject(grpcError(4, 'deadline')) } });
  await assert.rejects(t.r.reconcileClaim('default/data'));
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['patchClaimStatus'],
  );
});

test('only larger requests, a new resizer or a resync requeue a claim', () => {
  const a = pvc();
  const bigger = { ...a, metadata: { ...a.metadata, resourceVersion: '12' }, spec: { ...a.spec, resources: { requests: { storage: '3Gi' } } } };
  const status = { ...a, metadata: { ...a.metadata, resourceVersion: '12' } };
  assert.equal(claimUpdateMatters(a, bigger), true);
  assert.equal(claimUpdateMatters(a, status), false);
  assert.equal(claimUpdateMatters(a, a), true);
});
