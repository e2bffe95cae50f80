import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { attachmentName, publishPath, stagingPath, uniqueVolumeName } from './types.js';
import { claim, csiPV, DRIVER, NODE, pod, withDir, world } from './testing.js';
import { CsiError, grpcStatus } from '@kubeling/csi';

test(
  'teardown: unpublish each pod, unstage after the last; volumes of pods gone while the kubelet was down are torn down after a restart',
  withDir(async (dir) => {
    const w = world(dir);
    const root = join(dir, 'root');
    const vm = w.mk();
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    w.report([uniqueVolumeName(DRIVER, 'h-pv1')]);
    w.vas.set(attachmentName('h-pv1', DRIVER, NODE), {
      metadata: { name: 'va' },
      spec: { attacher: DRIVER, nodeName: NODE, source: {} },
      status: { attached: true },
    });
    const vol = [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }];
    assert.ok(await vm.waitForAttachAndMount(pod('a', vol)));
    assert.ok(await vm.waitForAttachAndMount(pod('b', vol)));
    assert.deepEqual(w.methods(), ['NodeStageVolume', 'NodePublishVolume', 'NodeStageVolume', 'NodePublishVolume']);
    w.rpc.length = 0;
    await vm.tearDownPod('a');
    assert.deepEqual(w.methods(), ['NodeUnpublishVolume']);
    assert.equal(existsSync(join(root, 'pods/a/volumes/kubernetes.io~csi/pv1')), false);
    assert.deepEqual(vm.volumesInUse(), [uniqueVolumeName(DRIVER, 'h-pv1')], 'still staged for b');

    // The kubelet restarts; pod b was deleted meanwhile.
    const again = w.mk();
    again.start();
    again.stop();
    assert.deepEqual(again.volumesInUse(), [uniqueVolumeName(DRIVER, 'h-pv1')], 'reconstructed from disk');
    w.rpc.length = 0;
    await again.cleanupOrphans((uid) => uid === 'a');
    assert.deepEqual(w.methods(), ['NodeUnpublishVolume', 'NodeUnstageVolume']);
    assert.deepEqual(w.rpc.at(-1), { method: 'NodeUnstageVolume', volume_id: 'h-pv1', staging_target_path: stagingPath(root, DRIVER, 'h-pv1') });
    assert.equal(existsSync(join(root, 'pods/b')), false, 'the orphan pod directory is removed');
    assert.equal(existsSync(stagingPath(root, DRIVER, 'h-pv1')), false);
    assert.deepEqual(again.volumesInUse(), []);
  }),
);

test(
  'a teardown whose driver is gone fails, and leaves the volume for the next try',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk();
    w.csiDrivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    assert.ok(await vm.waitForAttachAndMount(pod('a', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }])));
    w.drivers.delete(DRIVER);
    await assert.rejects(vm.tearDownPod('a'), /UnmountVolume.TearDown failed for volume "pv1" .*driver name hostpath.test not found/);
    assert.ok(lstatSync(publishPath(join(dir, 'root'), 'a', 'pv1')).isSymbolicLink());
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    await vm.tearDownPod('a');
    assert.equal(existsSync(publishPath(join(dir, 'root'), 'a', 'pv1')), false);
  }),
);

test(
  'a running pod after a restart keeps what it published without asking the driver (its claim may be Terminating)',
  withDir(async (dir) => {
    const w = world(dir);
    w.csiDrivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    const p = pod('a', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }]);
    assert.ok(await w.mk().waitForAttachAndMount(p));
    w.drivers.delete(DRIVER);
    w.rpc.length = 0;
    w.claims.set('c1', claim('c1', 'pv1', { metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } }));
    const r = await w.mk().waitForAttachAndMount(p, true);
    assert.equal(r?.paths.get('data'), publishPath(join(dir, 'root'), 'a', 'pv1'));
    assert.deepEqual(w.rpc, []);
  }),
);

test(
  'online expansion: a claim waiting on the node grows its mounted volume, and its status follows the PV',
  withDir(async (dir) => {
    const w = world(dir);
    const root = join(dir, 'root');
    const vm = w.mk();
    w.csiDrivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    assert.ok(await vm.waitForAttachAndMount(pod('u1', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }])));
    await vm.checkExpansions();
    assert.equal(w.patches.length, 0, 'nothing to do while the claim does not ask');
    // The resizer grew the PV and handed over to the node (1.32: allocatedResourceStatuses, and the condition).
    w.pvs.get('pv1')!.spec.capacity = { storage: '2Gi' };
    w.claims.set(
      'c1',
      claim('c1', 'pv1', {
        status: {
          allocatedResourceStatuses: { storage: 'NodeResizePending' },
          conditions: [
            {
              type: 'FileSystemResizePending',
              status: 'True',
              message: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.',
            },
            { type: 'Other', status: 'True' },
          ],
        },
      }),
    );
    w.rpc.length = 0;
    await vm.checkExpansions();
    assert.deepEqual(w.methods(), ['NodeExpandVolume']);
    assert.deepEqual(w.rpc.at(-1), {
      method: 'NodeExpandVolume',
      volume_id: 'h-pv1',
      volume_path: publishPath(root, 'u1', 'pv1'),
      capacity_range: { required_bytes: String(2 * 1024 ** 3), limit_bytes: '0' },
      staging_target_path: stagingPath(root, DRIVER, 'h-pv1'),
      volume_capability: { mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
      secrets: {},
    });
    assert.deepEqual(
      w.patches.map((p) => p.patch),
      [
        { metadata: { resourceVersion: '5' }, status: { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } } },
        {
          metadata: { resourceVersion: '5' },
          status: { capacity: { storage: '2Gi' }, conditions: [{ type: 'Other', status: 'True' }], allocatedResourceStatuses: null },
        },
      ],
    );
    const msg = `MountVolume.NodeExpandVolume succeeded for volume "pv1" ${NODE}`;
    assert.deepEqual(w.events, [`Pod Normal FileSystemResizeSuccessful ${msg}`, `PersistentVolumeClaim Normal FileSystemResizeSuccessful ${msg}`]);
    // A failing driver: VolumeResizeFailed on the pod, the claim left as it was.
    w.node.NodeExpandVolume = async () => {
      throw new CsiError(grpcStatus.OUT_OF_RANGE, 'too big');
    };
    w.patches.length = 0;
    w.claims.get('c1')!.status!.allocatedResourceStatuses = undefined as never;
    await vm.checkExpansions();
    assert.equal(
      w.events.at(-1),
      'Pod Warning VolumeResizeFailed NodeExpandVolume.NodeExpandVolume failed for volume "pv1" : Expander.NodeExpand failed to expand the volume : rpc error: code = OutOfRange desc = too big',
    );
    assert.equal(w.patches.length, 0);
  }),
);

test(
  'a volume whose set-up failed before staging is no longer in use once its pod is gone',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk();
    const unique = uniqueVolumeName(DRIVER, 'h-pv1');
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    w.report([unique]);
    w.vas.set(attachmentName('h-pv1', DRIVER, NODE), {
      metadata: { name: 'va' },
      spec: { attacher: DRIVER, nodeName: NODE, source: {} },
      status: { attached: true },
    });
    assert.equal(await vm.waitForAttachAndMount(pod('a', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }])), undefined);
    assert.match(w.events[0]!, /MountVolume.MountDevice failed .* not found in the list of registered CSI drivers/);
    assert.deepEqual(vm.volumesInUse(), [unique]);
    const asked = w.statusAsks();
    await vm.tearDownPod('a');
    assert.deepEqual(vm.volumesInUse(), []);
    assert.ok(w.statusAsks() > asked);
  }),
);
