import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attachmentName, publishPath, stagingPath, uniqueVolumeName, type VolumeAttachment } from './types.js';
import { claim, csiPV, DRIVER, NODE, pod, withDir, world } from './testing.js';

test(
  'a claim that cannot be used yet: the pod waits with upstream\'s "Unable to attach or mount volumes" event',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk();
    const p = pod('u1', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }]);
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.deepEqual(w.events, [
      'Pod Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/c1: failed to fetch PVC from API server: persistentvolumeclaims "c1" not found',
    ]);
    w.claims.set('c1', claim('c1', 'pv1', { status: { phase: 'Pending' } }));
    await vm.waitForAttachAndMount(p);
    assert.match(w.events.at(-1)!, /failed to process volumes=\[data\]: error processing PVC default\/c1: PVC is not bound$/);
    w.claims.set('c1', claim('c1', 'pv1', { metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } }));
    await vm.waitForAttachAndMount(p);
    assert.match(w.events.at(-1)!, /error processing PVC default\/c1: PVC is being deleted$/);
    w.claims.set('c1', claim('c1', 'pv1'));
    await vm.waitForAttachAndMount(p);
    assert.match(w.events.at(-1)!, /error processing PVC default\/c1: failed to fetch PV pv1 from API server: persistentvolumes "pv1" not found$/);
    w.pvs.set('pv1', { ...csiPV('pv1', 'c1'), spec: { ...csiPV('pv1', 'c1').spec, claimRef: { name: 'c1', uid: 'other' } } });
    await vm.waitForAttachAndMount(p);
    assert.match(w.events.at(-1)!, /found PV object pv1 but its pv.Spec.ClaimRef.UID other does not point to claim.UID uid-c1$/);
    assert.ok(
      w.triggers.every((t) => t === 'u1+2000'),
      w.triggers.join(),
    );
    // A volume no container uses is not mounted.
    const unused = pod('u2', []);
    unused.spec.volumes = [{ name: 'x', persistentVolumeClaim: { claimName: 'nope' } }] as never;
    assert.deepEqual(await vm.waitForAttachAndMount(unused), { paths: new Map(), readOnly: new Set() });
  }),
);

test(
  'a generic ephemeral volume uses the claim <pod>-<volume>, which the pod must own',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk();
    w.csiDrivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false } });
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    const p = pod('u1', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }]);
    w.claims.set('p-u1-scratch', claim('p-u1-scratch', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'p-u1-scratch'));
    await vm.waitForAttachAndMount(p);
    assert.match(w.events.at(-1)!, /: PVC default\/p-u1-scratch was not created for pod default\/p-u1 \(pod is not owner\)$/);
    w.claims.get('p-u1-scratch')!.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p-u1', uid: 'u1', controller: true }];
    const r = await vm.waitForAttachAndMount(p);
    assert.equal(r?.paths.get('scratch'), publishPath(join(dir, 'root'), 'u1', 'pv1'));
  }),
);

test(
  "without attaching: NodeStage then NodePublish with upstream's arguments; the driver missing is a FailedMount with back-off",
  withDir(async (dir) => {
    const w = world(dir);
    const root = join(dir, 'root');
    const vm = w.mk();
    w.csiDrivers.set(DRIVER, { metadata: { name: DRIVER }, spec: { attachRequired: false, podInfoOnMount: true } });
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1', { mountOptions: ['noatime'], accessModes: ['ReadOnlyMany'] }));
    const p = pod('u1', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }], { serviceAccountName: 'sa' });
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.deepEqual(w.events, [
      `Pod Warning FailedMount MountVolume.MountDevice failed for volume "pv1" : kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: driver name ${DRIVER} not found in the list of registered CSI drivers`,
    ]);
    assert.deepEqual(w.triggers, ['u1+500']);
    // Within the back-off nothing is tried again.
    await vm.waitForAttachAndMount(p);
    assert.equal(w.events.length, 1);
    // A driver registering ends the back-offs and runs the waiting pods again.
    vm.start();
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.drivers.registered(DRIVER);
    assert.equal(w.triggers.at(-1), 'u1+0');
    const r = await vm.waitForAttachAndMount(p);
    vm.stop();
    const target = publishPath(root, 'u1', 'pv1');
    const staging = stagingPath(root, DRIVER, 'h-pv1');
    assert.deepEqual(r, { paths: new Map([['data', target]]), readOnly: new Set(['data']) });
    assert.deepEqual(w.methods(), ['NodeStageVolume', 'NodePublishVolume']);
    const cap = { mount: { fs_type: '', mount_flags: ['noatime'] }, access_mode: { mode: 'MULTI_NODE_READER_ONLY' } };
    assert.deepEqual(
      w.rpc.find((c) => c.method === 'NodeStageVolume'),
      {
        method: 'NodeStageVolume',
        volume_id: 'h-pv1',
        publish_context: {},
        staging_target_path: staging,
        volume_capability: cap,
        secrets: {},
        volume_context: { a: '1' },
      },
    );
    assert.deepEqual(
      w.rpc.find((c) => c.method === 'NodePublishVolume'),
      {
        method: 'NodePublishVolume',
        volume_id: 'h-pv1',
        publish_context: {},
        staging_target_path: staging,
        target_path: target,
        volume_capability: cap,
        readonly: true,
        secrets: {},
        volume_context: {
          a: '1',
          'csi.storage.k8s.io/pod.name': 'p-u1',
          'csi.storage.k8s.io/pod.namespace': 'default',
          'csi.storage.k8s.io/pod.uid': 'u1',
          'csi.storage.k8s.io/serviceAccount.name': 'sa',
          'csi.storage.k8s.io/ephemeral': 'false',
        },
      },
    );
    assert.deepEqual(JSON.parse(readFileSync(join(root, 'pods/u1/volumes/kubernetes.io~csi/pv1/vol_data.json'), 'utf8')), {
      specVolID: 'pv1',
      volumeHandle: 'h-pv1',
      driverName: DRIVER,
      nodeName: NODE,
      attachmentID: attachmentName('h-pv1', DRIVER, NODE),
      volumeLifecycleMode: 'Persistent',
    });
    // Not attachable: not in use for the attach/detach controller.
    assert.deepEqual(vm.volumesInUse(), []);
    // Set up once: the next sync does nothing more.
    await vm.waitForAttachAndMount(p);
    assert.equal(w.methods().length, 2);
  }),
);

test(
  'attaching: reported in use first, then the VolumeAttachment must be attached; its metadata is the publish context',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk();
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    const unique = uniqueVolumeName(DRIVER, 'h-pv1');
    const p = pod('u1', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }]);
    // No CSIDriver object: attach is required.
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.deepEqual(vm.volumesInUse(), [unique]);
    assert.ok(w.statusAsks() > 0, 'the node status is asked to report it');
    w.report(vm.volumesInUse());
    assert.equal(await vm.waitForAttachAndMount(p), undefined, 'no VolumeAttachment yet');
    const va: VolumeAttachment = {
      metadata: { name: attachmentName('h-pv1', DRIVER, NODE) },
      spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pv1' } },
      status: { attached: false, attachError: { message: 'rpc error: code = Internal desc = no room' } },
    };
    w.vas.set(va.metadata.name, va);
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.deepEqual(w.events, ['Pod Warning FailedMount MountVolume.WaitForAttach failed for volume "pv1" : rpc error: code = Internal desc = no room']);
    va.status = { attached: true, attachmentMetadata: { dev: '/x' } };
    w.triggers.length = 0;
    // The back-off after the failure holds it; then it goes on.
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.equal(w.methods().length, 0);
    await new Promise((r) => setTimeout(r, 550));
    assert.ok(await vm.waitForAttachAndMount(p));
    assert.deepEqual(
      w.rpc.filter((c) => c.method !== 'NodeGetCapabilities').map((c) => [c.method, c.publish_context]),
      [
        ['NodeStageVolume', { dev: '/x' }],
        ['NodePublishVolume', { dev: '/x' }],
      ],
    );
    assert.deepEqual(vm.volumesInUse(), [unique]);
  }),
);

test(
  'local and hostPath volumes: the path itself, checked as upstream does; a pod still waiting after the timeout is told so',
  withDir(async (dir) => {
    const w = world(dir);
    const vm = w.mk(join(dir, 'root'), { mountTimeoutMs: 1 });
    const local = join(dir, 'disk');
    w.claims.set('l', claim('l', 'lpv'));
    w.pvs.set('lpv', { metadata: { name: 'lpv' }, spec: { claimRef: { uid: 'uid-l' }, local: { path: local }, accessModes: ['ReadWriteOnce'] } });
    w.claims.set('h', claim('h', 'hpv'));
    w.pvs.set('hpv', { metadata: { name: 'hpv' }, spec: { claimRef: { uid: 'uid-h' }, hostPath: { path: join(dir, 'hp'), type: 'DirectoryOrCreate' } } });
    const p = pod('u1', [
      { name: 'l', persistentVolumeClaim: { claimName: 'l', readOnly: true } },
      { name: 'h', persistentVolumeClaim: { claimName: 'h' } },
    ]);
    assert.equal(await vm.waitForAttachAndMount(p), undefined);
    assert.deepEqual(w.events, [`Pod Warning FailedMount MountVolume.NewMounter initialization failed for volume "lpv" : path "${local}" does not exist`]);
    assert.ok(lstatSync(join(dir, 'hp')).isDirectory(), 'DirectoryOrCreate made the directory');
    mkdirSync(local);
    await new Promise((r) => setTimeout(r, 550));
    const r = await vm.waitForAttachAndMount(p);
    assert.deepEqual(r, {
      paths: new Map([
        ['l', local],
        ['h', join(dir, 'hp')],
      ]),
      readOnly: new Set(['l']),
    });
    w.pvs.set('hpv', { metadata: { name: 'hpv' }, spec: { claimRef: { uid: 'uid-h' }, hostPath: { path: join(dir, 'nofile'), type: 'File' } } });
    const q = pod('u2', [{ name: 'h', persistentVolumeClaim: { claimName: 'h' } }]);
    await vm.waitForAttachAndMount(q);
    assert.equal(
      w.events.at(-1),
      `Pod Warning FailedMount MountVolume.SetUp failed for volume "hpv" : hostPath type check failed: ${join(dir, 'nofile')} is not a file`,
    );
    // Waiting on an attachment that never comes: after the timeout, upstream's timed-out event.
    w.drivers.set(DRIVER, 'unix:///d.sock', [1, 0, 0]);
    w.claims.set('c1', claim('c1', 'pv1'));
    w.pvs.set('pv1', csiPV('pv1', 'c1'));
    const s = pod('u3', [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }]);
    await vm.waitForAttachAndMount(s);
    await new Promise((r) => setTimeout(r, 5));
    await vm.waitForAttachAndMount(s);
    assert.equal(
      w.events.at(-1),
      'Pod Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process volumes=[]: timed out waiting for the condition',
    );
  }),
);
