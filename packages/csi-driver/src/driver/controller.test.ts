import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CsiClient, CsiError, grpcStatus, serveCsi } from '@kubeling/csi';
import { DEFAULT_VOLUME_BYTES, hostpathServices, TOPOLOGY_KEY } from './index.js';

const GiB = 1024 * 1024 * 1024;
const mountCap = (mode = 'SINGLE_NODE_WRITER') => ({ mount: { fs_type: '', mount_flags: [] }, access_mode: { mode } });
const blockCap = { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } };

/** Rejects with a CsiError of `code` (and a message matching `msg` when given). */
async function rejectsWith(p: Promise<unknown>, code: number, msg?: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof CsiError, String(e));
    assert.equal(e.code, code, `code ${e.code} (${e.details}), want ${code}`);
    if (msg) assert.match(e.details, msg);
    return true;
  });
}

describe('hostpath driver: Identity and Controller over a unix socket', () => {
  let dir: string;
  let server: { close(): Promise<void> };
  let csi: CsiClient;
  const create = (name: string, bytes?: number, extra: object = {}) =>
    csi.call('Controller', 'CreateVolume', {
      name,
      ...(bytes !== undefined ? { capacity_range: { required_bytes: bytes } } : {}),
      volume_capabilities: [mountCap()],
      ...extra,
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hpc-'));
    server = await serveCsi(
      hostpathServices({ nodeId: 'n1', stateDir: join(dir, 'state'), capacityBytes: 10 * GiB, maxVolumesPerNode: 2 }),
      join(dir, 'c.sock'),
    );
    csi = new CsiClient(`unix://${join(dir, 'c.sock')}`);
  });
  after(async () => {
    csi.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('Identity: plugin info, capabilities, probe', async () => {
    assert.deepEqual(await csi.call('Identity', 'GetPluginInfo', {}), { name: 'hostpath.csi.kubeling.io', vendor_version: '0.1.0', manifest: {} });
    const caps = (await csi.call('Identity', 'GetPluginCapabilities', {})).capabilities;
    assert.deepEqual(
      caps.map((c: any) => c.service?.type ?? `expansion:${c.volume_expansion?.type}`),
      ['CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS', 'expansion:ONLINE'],
    );
    assert.deepEqual((await csi.call('Identity', 'Probe', {})).ready, { value: true });
  });

  test('ControllerGetCapabilities', async () => {
    const types = (await csi.call('Controller', 'ControllerGetCapabilities', {})).capabilities.map((c: any) => c.rpc.type);
    for (const t of ['CREATE_DELETE_VOLUME', 'PUBLISH_UNPUBLISH_VOLUME', 'LIST_VOLUMES', 'GET_CAPACITY', 'EXPAND_VOLUME', 'GET_VOLUME']) {
      assert.ok(types.includes(t), t);
    }
  });

  test('CreateVolume makes a folder, is idempotent by name and refuses an incompatible size', async () => {
    const a = (await create('pvc-a', GiB, { parameters: { p: '1' } })).volume;
    assert.equal(a.capacity_bytes, String(GiB));
    assert.deepEqual(a.volume_context, { p: '1' });
    assert.deepEqual(a.accessible_topology, [{ segments: { [TOPOLOGY_KEY]: 'n1' } }]);
    assert.ok(existsSync(join(dir, 'state', 'volumes', a.volume_id)));
    // Same name, same arguments: the same volume.
    const again = (await create('pvc-a', GiB, { parameters: { p: '1' } })).volume;
    assert.equal(again.volume_id, a.volume_id);
    // Same name, a smaller request the volume satisfies: the same volume.
    assert.equal((await create('pvc-a', GiB / 2, { parameters: { p: '1' } })).volume.volume_id, a.volume_id);
    await rejectsWith(create('pvc-a', 2 * GiB, { parameters: { p: '1' } }), grpcStatus.ALREADY_EXISTS, /different size/);
    await rejectsWith(create('pvc-a', GiB, { parameters: { p: '2' } }), grpcStatus.ALREADY_EXISTS, /different parameters/);
    // Without a capacity range the volume gets the default size.
    assert.equal((await create('pvc-default')).volume.capacity_bytes, String(DEFAULT_VOLUME_BYTES));
    await csi.call('Controller', 'DeleteVolume', { volume_id: (await create('pvc-default')).volume.volume_id });
    await csi.call('Controller', 'DeleteVolume', { volume_id: a.volume_id });
  });

  test('CreateVolume argument checks', async () => {
    await rejectsWith(create(''), grpcStatus.INVALID_ARGUMENT, /^Name missing in request$/);
    await rejectsWith(csi.call('Controller', 'CreateVolume', { name: 'x' }), grpcStatus.INVALID_ARGUMENT, /Volume Capabilities missing/);
    await rejectsWith(csi.call('Controller', 'CreateVolume', { name: 'x', volume_capabilities: [blockCap] }), grpcStatus.INVALID_ARGUMENT, /block/);
    await rejectsWith(create('x', 1, { volume_capabilities: [mountCap('MULTI_NODE_MULTI_WRITER')] }), grpcStatus.INVALID_ARGUMENT, /MULTI_NODE/);
    await rejectsWith(create('x', 1, { volume_capabilities: [{ mount: {} }] }), grpcStatus.INVALID_ARGUMENT, /access mode/);
    await rejectsWith(create('x', 1, { volume_content_source: { volume: { volume_id: 'v' } } }), grpcStatus.INVALID_ARGUMENT, /content source/);
    await rejectsWith(create('x', undefined, { capacity_range: { required_bytes: 10, limit_bytes: 5 } }), grpcStatus.OUT_OF_RANGE);
    for (const mode of ['SINGLE_NODE_READER_ONLY', 'SINGLE_NODE_SINGLE_WRITER', 'SINGLE_NODE_MULTI_WRITER']) {
      const v = (await create(`pvc-${mode}`, 1, { volume_capabilities: [mountCap(mode)] })).volume;
      await csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id });
    }
  });

  test('accessibility requirements: the requisite topology must include this node', async () => {
    const other = { segments: { [TOPOLOGY_KEY]: 'n2' } };
    const mine = { segments: { [TOPOLOGY_KEY]: 'n1' } };
    await rejectsWith(create('pvc-topo', GiB, { accessibility_requirements: { requisite: [other], preferred: [other] } }), grpcStatus.RESOURCE_EXHAUSTED);
    const v = (await create('pvc-topo', GiB, { accessibility_requirements: { requisite: [other, mine], preferred: [other] } })).volume;
    assert.deepEqual(v.accessible_topology, [mine]);
    // Preferred alone is a wish: the volume is made here.
    const w = (await create('pvc-topo2', GiB, { accessibility_requirements: { preferred: [other] } })).volume;
    await csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id });
    await csi.call('Controller', 'DeleteVolume', { volume_id: w.volume_id });
  });

  test('capacity accounting: GetCapacity, OUT_OF_RANGE beyond the node, RESOURCE_EXHAUSTED when full', async () => {
    const cap = async () => (await csi.call('Controller', 'GetCapacity', {})).available_capacity;
    assert.equal(await cap(), String(10 * GiB));
    await rejectsWith(create('pvc-huge', 11 * GiB), grpcStatus.OUT_OF_RANGE, /exceeds maximum allowed/);
    const a = (await create('pvc-6', 6 * GiB)).volume;
    assert.equal(await cap(), String(4 * GiB));
    const res = await csi.call('Controller', 'GetCapacity', { accessible_topology: { segments: { [TOPOLOGY_KEY]: 'n1' } } });
    assert.equal(res.maximum_volume_size.value, String(4 * GiB));
    assert.equal((await csi.call('Controller', 'GetCapacity', { accessible_topology: { segments: { [TOPOLOGY_KEY]: 'n2' } } })).available_capacity, '0');
    await rejectsWith(create('pvc-5', 5 * GiB), grpcStatus.RESOURCE_EXHAUSTED, /6Gi out of 10Gi already used/);
    await csi.call('Controller', 'DeleteVolume', { volume_id: a.volume_id });
    assert.equal(await cap(), String(10 * GiB));
    const b = (await create('pvc-5', 5 * GiB)).volume;
    await csi.call('Controller', 'DeleteVolume', { volume_id: b.volume_id });
  });

  test('DeleteVolume: removes the folder; a missing volume is OK; a volume in use is FAILED_PRECONDITION', async () => {
    await rejectsWith(csi.call('Controller', 'DeleteVolume', {}), grpcStatus.INVALID_ARGUMENT, /Volume ID missing in request/);
    assert.deepEqual(await csi.call('Controller', 'DeleteVolume', { volume_id: '00000000-0000-0000-0000-000000000000' }), {});
    assert.deepEqual(await csi.call('Controller', 'DeleteVolume', { volume_id: '../../etc' }), {});
    const v = (await create('pvc-del', GiB)).volume;
    await csi.call('Controller', 'ControllerPublishVolume', { volume_id: v.volume_id, node_id: 'n1', volume_capability: mountCap() });
    await rejectsWith(csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id }), grpcStatus.FAILED_PRECONDITION, /still used/);
    await csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: v.volume_id, node_id: 'n1' });
    await csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id });
    assert.equal(existsSync(join(dir, 'state', 'volumes', v.volume_id)), false);
    await csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id });
  });

  test('ControllerPublishVolume / ControllerUnpublishVolume', async () => {
    const v = (await create('pvc-pub', GiB)).volume;
    const pub = (o: object = {}) =>
      csi.call('Controller', 'ControllerPublishVolume', { volume_id: v.volume_id, node_id: 'n1', volume_capability: mountCap(), ...o });
    await rejectsWith(pub({ volume_id: '' }), grpcStatus.INVALID_ARGUMENT, /Volume ID cannot be empty/);
    await rejectsWith(pub({ node_id: '' }), grpcStatus.INVALID_ARGUMENT, /Node ID cannot be empty/);
    await rejectsWith(pub({ volume_capability: null }), grpcStatus.INVALID_ARGUMENT, /Volume Capabilities cannot be empty/);
    await rejectsWith(pub({ node_id: 'n2' }), grpcStatus.NOT_FOUND, /Not matching Node ID n2/);
    await rejectsWith(pub({ volume_id: '11111111-1111-1111-1111-111111111111' }), grpcStatus.NOT_FOUND);
    assert.deepEqual(await pub(), { publish_context: {} });
    assert.deepEqual(await pub(), { publish_context: {} });
    await rejectsWith(pub({ readonly: true }), grpcStatus.ALREADY_EXISTS, /readonly/);
    const got = await csi.call('Controller', 'ControllerGetVolume', { volume_id: v.volume_id });
    assert.deepEqual(got.status.published_node_ids, ['n1']);
    // The attach limit (2): a second volume attaches, a third is RESOURCE_EXHAUSTED.
    const w = (await create('pvc-pub2', GiB)).volume;
    const x = (await create('pvc-pub3', GiB)).volume;
    await pub({ volume_id: w.volume_id });
    await rejectsWith(pub({ volume_id: x.volume_id }), grpcStatus.RESOURCE_EXHAUSTED, /Cannot attach any more volumes/);
    const unpub = (o: object = {}) => csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: v.volume_id, node_id: 'n1', ...o });
    await rejectsWith(unpub({ node_id: 'n2' }), grpcStatus.NOT_FOUND);
    await unpub();
    await unpub();
    await unpub({ node_id: '' });
    await unpub({ volume_id: '11111111-1111-1111-1111-111111111111' });
    assert.deepEqual((await csi.call('Controller', 'ControllerGetVolume', { volume_id: v.volume_id })).status.published_node_ids, []);
    await csi.call('Controller', 'ControllerUnpublishVolume', { volume_id: w.volume_id, node_id: 'n1' });
    for (const id of [v.volume_id, w.volume_id, x.volume_id]) await csi.call('Controller', 'DeleteVolume', { volume_id: id });
  });

  test('ValidateVolumeCapabilities', async () => {
    const v = (await create('pvc-val', GiB, { parameters: { a: 'b' } })).volume;
    const val = (caps: object[], id = v.volume_id) =>
      csi.call('Controller', 'ValidateVolumeCapabilities', { volume_id: id, volume_capabilities: caps, parameters: { a: 'b' } });
    const ok = await val([mountCap()]);
    assert.equal(ok.confirmed.volume_capabilities[0].access_mode.mode, 'SINGLE_NODE_WRITER');
    assert.deepEqual(ok.confirmed.parameters, { a: 'b' });
    const no = await val([mountCap(), blockCap]);
    assert.equal(no.confirmed, null);
    assert.match(no.message, /block/);
    assert.equal((await val([mountCap('MULTI_NODE_READER_ONLY')])).confirmed, null);
    await rejectsWith(val([]), grpcStatus.INVALID_ARGUMENT);
    await rejectsWith(val([mountCap()], ''), grpcStatus.INVALID_ARGUMENT);
    await rejectsWith(val([mountCap()], '11111111-1111-1111-1111-111111111111'), grpcStatus.NOT_FOUND);
    await csi.call('Controller', 'DeleteVolume', { volume_id: v.volume_id });
  });

  test('ListVolumes pages with tokens; a bad token is ABORTED', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(`pvc-list-${i}`, 1024)).volume.volume_id);
    const all = await csi.call('Controller', 'ListVolumes', {});
    assert.equal(all.entries.length, 5);
    assert.equal(all.next_token, '');
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 10; page++) {
      const res = await csi.call('Controller', 'ListVolumes', { max_entries: 2, starting_token: token });
      assert.ok(res.entries.length <= 2);
      seen.push(...res.entries.map((e: any) => e.volume.volume_id));
      token = res.next_token;
      if (!token) break;
    }
    assert.deepEqual(seen, [...ids].sort());
    assert.equal(all.entries[0].status.volume_condition.abnormal, false);
    await rejectsWith(csi.call('Controller', 'ListVolumes', { starting_token: 'nope' }), grpcStatus.ABORTED);
    await rejectsWith(csi.call('Controller', 'ListVolumes', { starting_token: '99' }), grpcStatus.ABORTED);
    for (const id of ids) await csi.call('Controller', 'DeleteVolume', { volume_id: id });
  });

  test('ControllerExpandVolume grows the volume within the node capacity; ControllerGetVolume', async () => {
    const v = (await create('pvc-grow', GiB)).volume;
    const grow = (bytes: number, id = v.volume_id) =>
      csi.call('Controller', 'ControllerExpandVolume', { volume_id: id, capacity_range: { required_bytes: bytes } });
    assert.deepEqual(await grow(2 * GiB), { capacity_bytes: String(2 * GiB), node_expansion_required: true });
    assert.deepEqual(await grow(2 * GiB), { capacity_bytes: String(2 * GiB), node_expansion_required: true });
    // Smaller than the volume: OK, the size stays.
    assert.equal((await grow(GiB)).capacity_bytes, String(2 * GiB));
    assert.equal((await csi.call('Controller', 'ControllerGetVolume', { volume_id: v.volume_id })).volume.capacity_bytes, String(2 * GiB));
    assert.equal((await csi.call('Controller', 'GetCapacity', {})).available_capacity, String(8 * GiB));
    await rejectsWith(grow(11 * GiB), grpcStatus.OUT_OF_RANGE);
    const other = (await create('pvc-other', 7 * GiB)).volume;
    await rejectsWith(grow(4 * GiB), grpcStatus.RESOURCE_EXHAUSTED);
    await rejectsWith(grow(GiB, '11111111-1111-1111-1111-111111111111'), grpcStatus.NOT_FOUND);
    await rejectsWith(csi.call('Controller', 'ControllerExpandVolume', { volume_id: v.volume_id }), grpcStatus.INVALID_ARGUMENT, /Capacity range not provided/);
    await rejectsWith(csi.call('Controller', 'ControllerExpandVolume', { capacity_range: { required_bytes: 1 } }), grpcStatus.INVALID_ARGUMENT);
    await rejectsWith(csi.call('Controller', 'ControllerGetVolume', { volume_id: '11111111-1111-1111-1111-111111111111' }), grpcStatus.NOT_FOUND);
    for (const id of [v.volume_id, other.volume_id]) await csi.call('Controller', 'DeleteVolume', { volume_id: id });
  });
});
