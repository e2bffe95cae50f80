/**
 * The node-deployment provisioner's decisions with fake listers, API and CSI:
 * which claims it provisions, the CreateVolume request and the PV it makes,
 * events, Immediate-binding ownership, failures and retries, and deletion of
 * Released volumes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conflict } from '@kubeling/apimachinery';
import { Provisioner, type ProvisionerDeps } from './provisioner.js';
import { driverInfo, FakeLister, fakeCsi, grpcError, recorder, recordingApi, silentLog, TOPOLOGY_KEY } from './testing.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeAttachment } from './types.js';

const DRIVER = 'hostpath.csi.kubeling.io';

function claim(over: { annotations?: Record<string, string>; spec?: PersistentVolumeClaim['spec']; name?: string } = {}): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: over.name ?? 'data',
      namespace: 'default',
      uid: 'u-1',
      resourceVersion: '7',
      annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER, 'volume.kubernetes.io/selected-node': 'n1', ...(over.annotations ?? {}) },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: 'standard',
      volumeMode: 'Filesystem',
      ...(over.spec ?? {}),
    },
  };
}

function sc(over: Partial<StorageClass> = {}): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'standard' },
    provisioner: DRIVER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    parameters: { 'csi.storage.k8s.io/fstype': 'ext4', tier: 'fast' },
    mountOptions: ['noatime'],
    ...over,
  };
}

function setup(
  o: {
    claims?: PersistentVolumeClaim[];
    classes?: StorageClass[];
    volumes?: PersistentVolume[];
    vas?: VolumeAttachment[];
    csi?: Record<string, (r: any) => unknown>;
  } = {},
) {
  const { api, calls } = recordingApi();
  const csi = fakeCsi({
    CreateVolume: (req) => ({
      volume: {
        volume_id: `vol-${req.name}`,
        capacity_bytes: req.capacity_range.required_bytes,
        volume_context: { path: '/x' },
        accessible_topology: [{ segments: { [TOPOLOGY_KEY]: 'n1' } }],
      },
    }),
    GetCapacity: () => ({ available_capacity: String(10 * 2 ** 30) }),
    ...(o.csi ?? {}),
  });
  const rec = recorder();
  let now = 1_000_000;
  let capacityChanges = 0;
  const deps: ProvisionerDeps = {
    driver: driverInfo(),
    identity: 'id-1',
    csi: csi.csi,
    api,
    claims: new FakeLister(o.claims ?? [claim()]),
    volumes: new FakeLister(o.volumes ?? []),
    classes: new FakeLister(o.classes ?? [sc()]),
    attachments: new FakeLister(o.vas ?? []),
    event: rec.event,
    log: silentLog,
    ownerBaseDelayMs: 1000,
    ownerMaxDelayMs: 8000,
    now: () => now,
    random: () => 0,
    onCapacityChange: () => capacityChanges++,
  };
  return { p: new Provisioner(deps), deps, calls, csiCalls: csi.calls, events: rec.events, tick: (ms: number) => (now += ms), capacity: () => capacityChanges };
}

test('a WaitForFirstConsumer claim selected on this node gets a volume and a PV', async () => {
  const t = setup();
  assert.equal(await t.p.reconcileClaim('default/data'), undefined);
  const create = t.csiCalls.find((c) => c.method === 'CreateVolume')!;
  assert.deepEqual(create.req, {
    name: 'pvc-u-1',
    capacity_range: { required_bytes: String(2 ** 30) },
    volume_capabilities: [{ mount: { fs_type: 'ext4', mount_flags: ['noatime'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    parameters: { tier: 'fast' },
    accessibility_requirements: { requisite: [{ segments: { [TOPOLOGY_KEY]: 'n1' } }], preferred: [{ segments: { [TOPOLOGY_KEY]: 'n1' } }] },
  });
  const pv = t.calls.find((c) => c.op === 'createPV')!.args[0] as PersistentVolume;
  assert.deepEqual(pv, {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: 'pvc-u-1',
      annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER },
      finalizers: ['external-provisioner.volume.kubernetes.io/finalizer'],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      csi: {
        driver: DRIVER,
        volumeHandle: 'vol-pvc-u-1',
        fsType: 'ext4',
        volumeAttributes: { 'storage.kubernetes.io/csiProvisionerIdentity': 'id-1', path: '/x' },
      },
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: 'u-1', apiVersion: 'v1', resourceVersion: '7' },
      storageClassName: 'standard',
      mountOptions: ['noatime'],
      persistentVolumeReclaimPolicy: 'Delete',
      volumeMode: 'Filesystem',
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: ['n1'] }] }] } },
    },
  });
  assert.deepEqual(t.events, [
    { name: 'data', type: 'Normal', reason: 'Provisioning', message: 'External provisioner is provisioning volume for claim "default/data"' },
    { name: 'data', type: 'Normal', reason: 'ProvisioningSucceeded', message: 'Successfully provisioned volume pvc-u-1' },
  ]);
  assert.equal(t.capacity(), 1);
});

test('claims that are not this instance’s are left alone', async () => {
  const cases: PersistentVolumeClaim[] = [
    claim({ annotations: { 'volume.kubernetes.io/selected-node': 'n2' } }),
    claim({ annotations: { 'volume.kubernetes.io/storage-provisioner': 'other.io/driver' } }),
    claim({ spec: { volumeName: 'pv-x', storageClassName: 'standard' } }),
  ];
  const noNode = claim();
  delete noNode.metadata.annotations!['volume.kubernetes.io/selected-node'];
  cases.push(noNode);
  for (const c of cases) {
    const t = setup({ claims: [c] });
    assert.equal(await t.p.reconcileClaim('default/data'), undefined);
    assert.equal(t.csiCalls.length, 0);
    assert.equal(t.calls.length, 0);
  }
});

test('an existing PV means the claim was provisioned already', async () => {
  const t = setup({ volumes: [{ metadata: { name: 'pvc-u-1' } }] });
  await t.p.reconcileClaim('default/data');
  assert.equal(t.csiCalls.length, 0);
});

test('a missing class is retried; bad claims get ProvisioningFailed', async () => {
  await assert.rejects(setup({ classes: [] }).p.reconcileClaim('default/data'), /storageClass "standard" not found/);
  const sel = setup({ claims: [claim({ spec: { selector: { matchLabels: { a: 'b' } }, storageClassName: 'standard' } })] });
  await assert.rejects(sel.p.reconcileClaim('default/data'), /claim Selector is not supported/);
  assert.deepEqual(
    sel.events.map((e) => [e.reason, e.message]),
    [['ProvisioningFailed', 'claim Selector is not supported']],
  );
  const param = setup({ classes: [sc({ parameters: { 'csi.storage.k8s.io/bogus': 'x' } })] });
  await assert.rejects(param.p.reconcileClaim('default/data'));
  assert.match(param.events[0]!.message, /found unknown parameter key "csi.storage.k8s.io\/bogus" with reserved namespace csi.storage.k8s.io\//);
});

test('out of space on the selected node hands the claim back to the scheduler', async () => {
  const t = setup({ csi: { CreateVolume: () => Promise.reject(grpcError(8, 'not enough space')) } });
  assert.equal(await t.p.reconcileClaim('default/data'), undefined);
  assert.deepEqual(t.events.at(-1), {
    name: 'data',
    type: 'Warning',
    reason: 'ProvisioningFailed',
    message: 'rpc error: code = ResourceExhausted desc = not enough space',
  });
  const upd = t.calls.find((c) => c.op === 'updateClaim')!.args[0] as PersistentVolumeClaim;
  assert.equal(upd.metadata.annotations!['volume.kubernetes.io/selected-node'], undefined);
  assert.equal(upd.metadata.resourceVersion, '7');
});

test('other CreateVolume errors are retried with the error as the event', async () => {
  const t = setup({ csi: { CreateVolume: () => Promise.reject(grpcError(13, 'disk on fire')) } });
  await assert.rejects(t.p.reconcileClaim('default/data'), /rpc error: code = Internal desc = disk on fire/);
  assert.equal(t.events.at(-1)!.reason, 'ProvisioningFailed');
  assert.equal(t.calls.length, 0);
});

test('a volume smaller than asked is deleted again and reported', async () => {
  const t = setup({ csi: { CreateVolume: () => ({ volume: { volume_id: 'v', capacity_bytes: '10' } }) } });
  await assert.rejects(t.p.reconcileClaim('default/data'), /created volume capacity 10 less than requested capacity 1073741824/);
  assert.deepEqual(t.csiCalls.at(-1), { method: 'DeleteVolume', req: { volume_id: 'v' } });
});

test('a PV the API refused is created again without a second CreateVolume', async () => {
  const t = setup();
  let failures = 1;
  const create = t.deps.api.createPV;
  t.deps.api.createPV = (pv) => (failures-- > 0 ? Promise.reject(new Error('etcd is down')) : create(pv));
  await assert.rejects(t.p.reconcileClaim('default/data'), /error saving volume pvc-u-1: etcd is down/);
  await t.p.reconcileClaim('default/data');
  assert.equal(t.csiCalls.filter((c) => c.method === 'CreateVolume').length, 1);
  assert.equal(t.events.at(-1)!.reason, 'ProvisioningSucceeded');
});

test('Immediate binding: wait, check capacity, then write this node as selected-node', async () => {
  const c = claim();
  delete c.metadata.annotations!['volume.kubernetes.io/selected-node'];
  const t = setup({ claims: [c], classes: [sc({ volumeBindingMode: 'Immediate' })] });
  assert.deepEqual(await t.p.reconcileClaim('default/data'), { requeueAfterMs: 1000 });
  assert.equal(t.calls.length, 0);
  t.tick(1000);
  assert.equal(await t.p.reconcileClaim('default/data'), undefined);
  assert.equal(t.csiCalls[0]!.method, 'GetCapacity');
  assert.deepEqual(t.csiCalls[0]!.req.accessible_topology, { segments: { [TOPOLOGY_KEY]: 'n1' } });
  const upd = t.calls[0]!.args[0] as PersistentVolumeClaim;
  assert.equal(upd.metadata.annotations!['volume.kubernetes.io/selected-node'], 'n1');
  assert.equal(c.metadata.annotations!['volume.kubernetes.io/selected-node'], undefined, 'the lister’s object is not edited');
});

test('Immediate binding: a lost race waits longer; no capacity means no attempt', async () => {
  const c = claim();
  delete c.metadata.annotations!['volume.kubernetes.io/selected-node'];
  const t = setup({ claims: [c], classes: [sc({ volumeBindingMode: 'Immediate' })] });
  t.deps.api.updateClaim = () => Promise.reject(conflict({ group: '', resource: 'persistentvolumeclaims' }, 'data', 'the object has been modified'));
  await t.p.reconcileClaim('default/data');
  t.tick(1000);
  assert.deepEqual(await t.p.reconcileClaim('default/data'), { requeueAfterMs: 2000 });
  const small = setup({ claims: [c], classes: [sc({ volumeBindingMode: 'Immediate' })], csi: { GetCapacity: () => ({ available_capacity: '100' }) } });
  await small.p.reconcileClaim('default/data');
  small.tick(1000);
  await small.p.reconcileClaim('default/data');
  assert.deepEqual(small.calls, []);
});

function pv(over: { phase?: string; policy?: string; finalizers?: string[]; node?: string; deleting?: boolean } = {}): PersistentVolume {
  return {
    metadata: {
      name: 'pvc-u-1',
      resourceVersion: '9',
      annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER },
      finalizers: over.finalizers ?? ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer'],
      ...(over.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: {
      persistentVolumeReclaimPolicy: over.policy ?? 'Delete',
      csi: { driver: DRIVER, volumeHandle: 'vol-1' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: [over.node ?? 'n1'] }] }] } },
    },
    status: { phase: over.phase ?? 'Released' },
  };
}

test('a Released volume with policy Delete is deleted in the driver, then the PV, then the finalizer', async () => {
  const t = setup({ volumes: [pv()] });
  t.deps.api.deletePV = async (name) => {
    t.calls.push({ op: 'deletePV', args: [name] });
    return { ...pv({ deleting: true }), metadata: { ...pv({ deleting: true }).metadata, resourceVersion: '10' } };
  };
  await t.p.reconcileVolume('pvc-u-1');
  assert.deepEqual(t.csiCalls, [{ method: 'DeleteVolume', req: { volume_id: 'vol-1' } }]);
  assert.deepEqual(
    t.calls.map((c) => [c.op, ...c.args]),
    [
      ['deletePV', 'pvc-u-1'],
      ['patchPV', 'pvc-u-1', { metadata: { finalizers: ['kubernetes.io/pv-protection'], resourceVersion: '10' } }],
    ],
  );
  assert.equal(t.capacity(), 1);
});

test('deletion waits while a VolumeAttachment names the volume; other nodes’ volumes are not touched', async () => {
  const va: VolumeAttachment = { metadata: { name: 'csi-1' }, spec: { attacher: DRIVER, nodeName: 'n1', source: { persistentVolumeName: 'pvc-u-1' } } };
  const t = setup({ volumes: [pv()], vas: [va] });
  await assert.rejects(t.p.reconcileVolume('pvc-u-1'), /persistentvolume pvc-u-1 is still attached to node n1/);
  assert.deepEqual(t.events, [
    { name: 'pvc-u-1', type: 'Warning', reason: 'VolumeFailedDelete', message: 'persistentvolume pvc-u-1 is still attached to node n1' },
  ]);
  assert.equal(t.csiCalls.length, 0);
  const other = setup({ volumes: [pv({ node: 'n2' })] });
  await other.p.reconcileVolume('pvc-u-1');
  assert.deepEqual([other.calls, other.csiCalls], [[], []]);
});

test('the finalizer follows the reclaim policy; Bound volumes are not deleted', async () => {
  const bound = setup({ volumes: [pv({ phase: 'Bound', finalizers: ['kubernetes.io/pv-protection'] })] });
  await bound.p.reconcileVolume('pvc-u-1');
  assert.deepEqual(bound.calls[0]!.args, [
    'pvc-u-1',
    { metadata: { finalizers: ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer'], resourceVersion: '9' } },
  ]);
  assert.deepEqual(bound.csiCalls, []);
  const retain = setup({ volumes: [pv({ policy: 'Retain' })] });
  await retain.p.reconcileVolume('pvc-u-1');
  assert.deepEqual(
    retain.calls.map((c) => c.args[1]),
    [{ metadata: { finalizers: ['kubernetes.io/pv-protection'], resourceVersion: '9' } }],
  );
  assert.deepEqual(retain.csiCalls, []);
});

test('a volume already gone in the driver still has its PV deleted', async () => {
  const t = setup({ volumes: [pv()], csi: { DeleteVolume: () => Promise.reject(grpcError(5, 'no such volume')) } });
  await t.p.reconcileVolume('pvc-u-1');
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['deletePV'],
  );
});
