import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CsiClient, CsiError, grpcStatus, serveCsi } from '@kubeling/csi';
import { hostpathServices, TOPOLOGY_KEY } from './index.js';

const GiB = 1024 * 1024 * 1024;
const mountCap = (mode = 'SINGLE_NODE_WRITER') => ({ mount: { fs_type: '', mount_flags: [] }, access_mode: { mode } });

async function rejectsWith(p: Promise<unknown>, code: number, msg?: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof CsiError, String(e));
    assert.equal(e.code, code, `code ${e.code} (${e.details}), want ${code}`);
    if (msg) assert.match(e.details, msg);
    return true;
  });
}

/** A driver on a socket in `dir`, as the kubeling-csi-driver process serves it. */
async function startDriver(dir: string, capacityBytes = 10 * GiB) {
  const sock = join(dir, 'n.sock');
  const server = await serveCsi(hostpathServices({ nodeId: 'n1', stateDir: join(dir, 'state'), capacityBytes, maxVolumesPerNode: 8 }), sock);
  const csi = new CsiClient(sock);
  return {
    csi,
    async stop() {
      csi.close();
      await server.close();
    },
  };
}

/** The kubelet's paths for a volume: R/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount and R/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount. */
function kubeletPaths(root: string, handle: string, podUID: string) {
  const staging = join(root, 'plugins/kubernetes.io/csi/hostpath.csi.kubeling.io', createHash('sha256').update(handle).digest('hex'), 'globalmount');
  const target = join(root, 'pods', podUID, 'volumes/kubernetes.io~csi/pv-1/mount');
  return { staging, target };
}

describe('hostpath driver: Node service over a unix socket', () => {
  let dir: string;
  let driver: Awaited<ReturnType<typeof startDriver>>;
  let volumeId: string;
  let paths: ReturnType<typeof kubeletPaths>;
  const call = (method: string, req: object) => driver.csi.call('Node', method, req);
  const stage = (o: object = {}) => call('NodeStageVolume', { volume_id: volumeId, staging_target_path: paths.staging, volume_capability: mountCap(), ...o });
  const publish = (o: object = {}) =>
    call('NodePublishVolume', {
      volume_id: volumeId,
      staging_target_path: paths.staging,
      target_path: paths.target,
      volume_capability: mountCap(),
      readonly: false,
      ...o,
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpn-'));
    driver = await startDriver(dir);
    const v = await driver.csi.call('Controller', 'CreateVolume', { name: 'pv-1', capacity_range: { required_bytes: GiB }, volume_capabilities: [mountCap()] });
    volumeId = v.volume.volume_id;
    paths = kubeletPaths(join(dir, 'kubelet'), volumeId, 'pod-a');
  });
  after(async () => {
    await driver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('NodeGetInfo and NodeGetCapabilities', async () => {
    assert.deepEqual(await call('NodeGetInfo', {}), { node_id: 'n1', max_volumes_per_node: '8', accessible_topology: { segments: { [TOPOLOGY_KEY]: 'n1' } } });
    const types = (await call('NodeGetCapabilities', {})).capabilities.map((c: any) => c.rpc.type);
    for (const t of ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME']) assert.ok(types.includes(t), t);
  });

  test('argument checks', async () => {
    await rejectsWith(stage({ volume_id: '' }), grpcStatus.INVALID_ARGUMENT, /^Volume ID missing in request$/);
    await rejectsWith(stage({ staging_target_path: '' }), grpcStatus.INVALID_ARGUMENT, /Staging target path missing/);
    await rejectsWith(stage({ volume_capability: null }), grpcStatus.INVALID_ARGUMENT, /Volume Capability missing/);
    await rejectsWith(stage({ staging_target_path: 'relative/path' }), grpcStatus.INVALID_ARGUMENT, /not absolute/);
    await rejectsWith(stage({ staging_target_path: join(dir, 'state', 'volumes', volumeId) }), grpcStatus.INVALID_ARGUMENT, /state folder/);
    await rejectsWith(stage({ volume_capability: { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } } }), grpcStatus.INVALID_ARGUMENT);
    await rejectsWith(publish({ volume_capability: null }), grpcStatus.INVALID_ARGUMENT, /^Volume capability missing in request$/);
    await rejectsWith(publish({ target_path: '' }), grpcStatus.INVALID_ARGUMENT, /^Target path missing in request$/);
    await rejectsWith(publish({ volume_id: '' }), grpcStatus.INVALID_ARGUMENT, /^Volume ID missing in request$/);
    await rejectsWith(publish({ staging_target_path: '' }), grpcStatus.FAILED_PRECONDITION);
    await rejectsWith(call('NodeUnpublishVolume', { volume_id: volumeId }), grpcStatus.INVALID_ARGUMENT, /Target path missing/);
    await rejectsWith(call('NodeUnstageVolume', { volume_id: volumeId }), grpcStatus.INVALID_ARGUMENT, /Staging target path missing/);
    await rejectsWith(call('NodeGetVolumeStats', { volume_path: paths.target }), grpcStatus.INVALID_ARGUMENT, /Volume ID not provided/);
    await rejectsWith(call('NodeGetVolumeStats', { volume_id: volumeId }), grpcStatus.INVALID_ARGUMENT, /Volume Path not provided/);
  });

  test('missing volumes are NOT_FOUND', async () => {
    const missing = '22222222-2222-2222-2222-222222222222';
    await rejectsWith(stage({ volume_id: missing }), grpcStatus.NOT_FOUND);
    await rejectsWith(publish({ volume_id: missing }), grpcStatus.NOT_FOUND);
    await rejectsWith(call('NodeUnpublishVolume', { volume_id: missing, target_path: paths.target }), grpcStatus.NOT_FOUND);
    await rejectsWith(call('NodeUnstageVolume', { volume_id: missing, staging_target_path: paths.staging }), grpcStatus.NOT_FOUND);
    await rejectsWith(call('NodeGetVolumeStats', { volume_id: missing, volume_path: paths.target }), grpcStatus.NOT_FOUND);
    await rejectsWith(call('NodeExpandVolume', { volume_id: missing, volume_path: paths.target }), grpcStatus.NOT_FOUND);
  });

  test('NodeStageVolume needs the volume attached, then links the staging path (twice is OK)', async () => {
    await rejectsWith(stage(), grpcStatus.FAILED_PRECONDITION, /not attached/);
    await driver.csi.call('Controller', 'ControllerPublishVolume', { volume_id: volumeId, node_id: 'n1', volume_capability: mountCap() });
    // The kubelet makes the globalmount folder; the driver replaces the empty folder with its link.
    mkdirSync(paths.staging, { recursive: true });
    assert.deepEqual(await stage(), {});
    assert.deepEqual(await stage(), {});
    assert.ok(lstatSync(paths.staging).isSymbolicLink());
    assert.equal(readlinkSync(paths.staging), join(dir, 'state', 'volumes', volumeId));
    await rejectsWith(stage({ volume_capability: mountCap('SINGLE_NODE_READER_ONLY') }), grpcStatus.ALREADY_EXISTS);
  });

  test('NodePublishVolume links the target path; the same publish twice is OK; incompatible or foreign ones are refused', async () => {
    await rejectsWith(publish({ staging_target_path: join(dir, 'elsewhere') }), grpcStatus.FAILED_PRECONDITION, /not staged/);
    assert.deepEqual(await publish(), {});
    assert.deepEqual(await publish(), {});
    assert.equal(readlinkSync(paths.target), join(dir, 'state', 'volumes', volumeId));
    // Written through the target path, the file lands in the volume.
    writeFileSync(join(paths.target, 'data.txt'), 'hello');
    assert.equal(readFileSync(join(dir, 'state', 'volumes', volumeId, 'data.txt'), 'utf8'), 'hello');
    await rejectsWith(publish({ readonly: true }), grpcStatus.ALREADY_EXISTS);
    // Another volume at the same target path.
    const other = (
      await driver.csi.call('Controller', 'CreateVolume', { name: 'pv-2', capacity_range: { required_bytes: GiB }, volume_capabilities: [mountCap()] })
    ).volume;
    await driver.csi.call('Controller', 'ControllerPublishVolume', { volume_id: other.volume_id, node_id: 'n1', volume_capability: mountCap() });
    const otherPaths = kubeletPaths(join(dir, 'kubelet'), other.volume_id, 'pod-b');
    await stage({ volume_id: other.volume_id, staging_target_path: otherPaths.staging });
    await rejectsWith(publish({ volume_id: other.volume_id, staging_target_path: otherPaths.staging }), grpcStatus.ALREADY_EXISTS);
    // A target path holding files the driver did not make is never replaced.
    const busy = join(dir, 'kubelet', 'busy');
    mkdirSync(busy, { recursive: true });
    writeFileSync(join(busy, 'keep'), 'x');
    await rejectsWith(publish({ volume_id: other.volume_id, staging_target_path: otherPaths.staging, target_path: busy }), grpcStatus.ALREADY_EXISTS);
    assert.ok(existsSync(join(busy, 'keep')));
    await call('NodeUnstageVolume', { volume_id: other.volume_id, staging_target_path: otherPaths.staging });
    await driver.csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: other.volume_id, node_id: 'n1' });
    await driver.csi.call('Controller', 'DeleteVolume', { volume_id: other.volume_id });
  });

  test('a second pod on the node: another target path is OK, except for SINGLE_NODE_SINGLE_WRITER', async () => {
    const second = kubeletPaths(join(dir, 'kubelet'), volumeId, 'pod-c').target;
    assert.deepEqual(await publish({ target_path: second, readonly: true }), {});
    await call('NodeUnpublishVolume', { volume_id: volumeId, target_path: second });
    await rejectsWith(publish({ target_path: second, volume_capability: mountCap('SINGLE_NODE_SINGLE_WRITER') }), grpcStatus.FAILED_PRECONDITION);
  });

  test('NodeGetVolumeStats: usage of the folder and the capacity', async () => {
    writeFileSync(join(paths.target, 'big.bin'), Buffer.alloc(100_000));
    const stats = await call('NodeGetVolumeStats', { volume_id: volumeId, volume_path: paths.target, staging_target_path: paths.staging });
    const bytes = stats.usage.find((u: any) => u.unit === 'BYTES');
    assert.equal(bytes.total, String(GiB));
    assert.ok(Number(bytes.used) >= 100_000, bytes.used);
    assert.equal(Number(bytes.available), GiB - Number(bytes.used));
    assert.deepEqual(stats.volume_condition, { abnormal: false, message: 'volume is healthy' });
    await rejectsWith(call('NodeGetVolumeStats', { volume_id: volumeId, volume_path: join(dir, 'kubelet', 'nowhere') }), grpcStatus.NOT_FOUND);
  });

  test('expansion: ControllerExpandVolume then NodeExpandVolume records the new capacity', async () => {
    const expand = (bytes: number, path = paths.target) =>
      call('NodeExpandVolume', { volume_id: volumeId, volume_path: path, capacity_range: { required_bytes: bytes }, staging_target_path: paths.staging });
    await rejectsWith(expand(2 * GiB), grpcStatus.OUT_OF_RANGE);
    await driver.csi.call('Controller', 'ControllerExpandVolume', { volume_id: volumeId, capacity_range: { required_bytes: 2 * GiB } });
    // The node has not taken it in yet: stats still show the old size.
    const before = await call('NodeGetVolumeStats', { volume_id: volumeId, volume_path: paths.target });
    assert.equal(before.usage[0].total, String(GiB));
    assert.deepEqual(await expand(2 * GiB), { capacity_bytes: String(2 * GiB) });
    assert.deepEqual(await expand(2 * GiB, paths.staging), { capacity_bytes: String(2 * GiB) });
    const after = await call('NodeGetVolumeStats', { volume_id: volumeId, volume_path: paths.target });
    assert.equal(after.usage[0].total, String(2 * GiB));
    await rejectsWith(call('NodeExpandVolume', { volume_id: volumeId }), grpcStatus.INVALID_ARGUMENT, /Volume path not provided/);
    await rejectsWith(call('NodeExpandVolume', { volume_path: paths.target }), grpcStatus.INVALID_ARGUMENT, /Volume ID not provided/);
  });

  test('a staged record whose link is gone does not keep the volume from being deleted', async () => {
    const v = (await driver.csi.call('Controller', 'CreateVolume', { name: 'pv-lost', volume_capabilities: [mountCap()] })).volume;
    const lost = kubeletPaths(join(dir, 'kubelet'), v.volume_id, 'pod-d');
    await driver.csi.call('Controller', 'ControllerPublishVolume', { volume_id: v.volume_id, node_id: 'n1', volume_capability: mountCap() });
    await stage({ volume_id: v.volume_id, staging_target_path: lost.staging });
    await driver.csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: v.volume_id, node_id: 'n1' });
    await rejectsWith(driver.csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id }), grpcStatus.FAILED_PRECONDITION, /staged: \[\//);
    rmSync(lost.staging);
    assert.deepEqual(await driver.csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id }), {});
  });

  test('state survives a restart; unpublish and unstage remove only the links (twice is OK)', async () => {
    await driver.stop();
    driver = await startDriver(dir);
    const got = await driver.csi.call('Controller', 'ControllerGetVolume', { volume_id: volumeId });
    assert.equal(got.volume.capacity_bytes, String(2 * GiB));
    assert.deepEqual(got.status.published_node_ids, ['n1']);
    // Still published: the same publish is idempotent after the restart, and the stats still work.
    assert.deepEqual(await publish(), {});
    assert.equal((await call('NodeGetVolumeStats', { volume_id: volumeId, volume_path: paths.target })).usage[0].total, String(2 * GiB));
    await rejectsWith(driver.csi.call('Controller', 'DeleteVolume', { volume_id: volumeId }), grpcStatus.FAILED_PRECONDITION);

    assert.deepEqual(await call('NodeUnpublishVolume', { volume_id: volumeId, target_path: paths.target }), {});
    assert.deepEqual(await call('NodeUnpublishVolume', { volume_id: volumeId, target_path: paths.target }), {});
    assert.equal(existsSync(paths.target), false);
    assert.deepEqual(await call('NodeUnstageVolume', { volume_id: volumeId, staging_target_path: paths.staging }), {});
    assert.deepEqual(await call('NodeUnstageVolume', { volume_id: volumeId, staging_target_path: paths.staging }), {});
    assert.equal(existsSync(paths.staging), false);
    // The data stays in the volume.
    assert.equal(readFileSync(join(dir, 'state', 'volumes', volumeId, 'data.txt'), 'utf8'), 'hello');
    await driver.csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: volumeId, node_id: 'n1' });
    await driver.csi.call('Controller', 'DeleteVolume', { volume_id: volumeId });
    assert.equal(existsSync(join(dir, 'state', 'volumes', volumeId)), false);

    // A restart after the delete: the volume is gone, and the record file is valid JSON.
    await driver.stop();
    driver = await startDriver(dir);
    assert.deepEqual((await driver.csi.call('Controller', 'ListVolumes', {})).entries, []);
    assert.equal(JSON.parse(readFileSync(join(dir, 'state', 'volumes.json'), 'utf8')).version, 1);
  });
});
