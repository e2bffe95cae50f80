/**
 * The capacity publisher with fake listers, API and CSI: one object per
 * WaitForFirstConsumer class of the driver for this node's segment, updated
 * when GetCapacity changes, obsolete and duplicate objects deleted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CapacityPublisher, managedBy } from './capacity.js';
import { driverInfo, FakeLister, fakeCsi, recordingApi, silentLog, TOPOLOGY_KEY } from './testing.js';
import type { CSIStorageCapacity, StorageClass } from './types.js';

const DRIVER = 'hostpath.csi.kubeling.io';

const sc = (name: string, mode = 'WaitForFirstConsumer', provisioner = DRIVER): StorageClass => ({
  metadata: { name },
  provisioner,
  volumeBindingMode: mode,
  parameters: { tier: name },
});

const capObj = (name: string, cls: string, capacity: string, node = 'n1'): CSIStorageCapacity => ({
  metadata: { name, namespace: 'kube-system', resourceVersion: '4' },
  storageClassName: cls,
  nodeTopology: { matchLabels: { [TOPOLOGY_KEY]: node } },
  capacity,
});

function setup(classes: StorageClass[], caps: CSIStorageCapacity[] = [], available = String(5 * 2 ** 30)) {
  const { api, calls } = recordingApi();
  let free = available;
  const csi = fakeCsi({ GetCapacity: () => ({ available_capacity: free, maximum_volume_size: { value: free } }) });
  const capacities = new FakeLister(caps);
  const p = new CapacityPublisher({
    driver: driverInfo(),
    namespace: 'kube-system',
    csi: csi.csi,
    api,
    classes: new FakeLister(classes),
    capacities,
    log: silentLog,
  });
  return { p, calls, csiCalls: csi.calls, capacities, setFree: (v: string) => (free = v) };
}

test('one object per WaitForFirstConsumer class of the driver, for this node, labelled as upstream', async () => {
  const t = setup([sc('standard'), sc('fast'), sc('now', 'Immediate'), sc('theirs', 'WaitForFirstConsumer', 'other.io/x')]);
  await t.p.sync();
  const created = t.calls.map((c) => c.args[1] as CSIStorageCapacity);
  assert.deepEqual(
    created.map((c) => c.storageClassName),
    ['fast', 'standard'],
  );
  assert.deepEqual(created[1], {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { generateName: 'csisc-', labels: { 'csi.storage.k8s.io/drivername': DRIVER, 'csi.storage.k8s.io/managed-by': 'external-provisioner-n1' } },
    storageClassName: 'standard',
    nodeTopology: { matchLabels: { [TOPOLOGY_KEY]: 'n1' } },
    capacity: '5Gi',
    maximumVolumeSize: '5Gi',
  });
  assert.deepEqual(t.calls[0]!.args[0], 'kube-system');
  assert.deepEqual(t.csiCalls[1]!.req, {
    volume_capabilities: [{ mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'UNKNOWN' } }],
    parameters: { tier: 'standard' },
    accessible_topology: { segments: { [TOPOLOGY_KEY]: 'n1' } },
  });
});

test('a second sync before the informer catches up does not create twice', async () => {
  const t = setup([sc('standard')]);
  await t.p.sync();
  await t.p.sync();
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['createCapacity'],
  );
});

test('existing objects are updated when the capacity changes, and only then', async () => {
  const t = setup([sc('standard')], [{ ...capObj('csisc-a', 'standard', '5Gi'), maximumVolumeSize: '5Gi' }]);
  await t.p.sync();
  assert.equal(t.calls.length, 0);
  t.setFree(String(4 * 2 ** 30));
  await t.p.sync();
  assert.deepEqual(
    t.calls.map((c) => c.op),
    ['updateCapacity'],
  );
  const upd = t.calls[0]!.args[0] as CSIStorageCapacity;
  assert.deepEqual([upd.metadata.name, upd.capacity, upd.maximumVolumeSize, upd.metadata.resourceVersion], ['csisc-a', '4Gi', '4Gi', '4']);
});

test('objects of removed classes, other segments and duplicates are deleted', async () => {
  const t = setup(
    [sc('standard')],
    [capObj('csisc-a', 'standard', '5Gi'), capObj('csisc-b', 'standard', '5Gi'), capObj('csisc-c', 'gone', '5Gi'), capObj('csisc-d', 'standard', '5Gi', 'n9')],
  );
  await t.p.sync();
  assert.deepEqual(
    t.calls.filter((c) => c.op === 'deleteCapacity').map((c) => c.args[1]),
    ['csisc-b', 'csisc-c', 'csisc-d'],
  );
});

test('the managed-by value is cut to a label’s length with a hash, as upstream', () => {
  assert.equal(managedBy('n1'), 'external-provisioner-n1');
  const long = managedBy('x'.repeat(80));
  assert.equal(long.length, 63);
  assert.match(long, /^external-provisioner-[0-9a-f]{42}$/);
});
