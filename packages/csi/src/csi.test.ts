import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CsiClient, CsiError, codeName, csiMethods, grpcStatus, grpcTarget, RegistrationClient, serveCsi, serveRegistration } from './index.js';

describe('CSI over a unix socket', () => {
  let dir: string;
  let server: { close(): Promise<void> };
  let client: CsiClient;
  const seen: any[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csi-'));
    server = await serveCsi(
      {
        Identity: {
          GetPluginInfo: async () => ({ name: 'test.csi.io', vendor_version: '1.0.0' }),
          Probe: async () => ({ ready: { value: true } }),
        },
        Controller: {
          CreateVolume: async (req) => {
            seen.push(req);
            if (!req.name) throw new CsiError(grpcStatus.INVALID_ARGUMENT, 'Name missing in request');
            return { volume: { volume_id: `id-${req.name}`, capacity_bytes: req.capacity_range?.required_bytes ?? 0 } };
          },
          DeleteVolume: async () => {
            throw new Error('disk on fire');
          },
        },
        Node: {
          NodeGetCapabilities: async () => ({ capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] }),
        },
      },
      `unix://${join(dir, 'sub', 'csi.sock')}`,
    );
    client = new CsiClient(`unix://${join(dir, 'sub', 'csi.sock')}`);
  });

  after(async () => {
    client.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a round trip keeps snake_case names, int64 as strings, enums as names, oneofs', async () => {
    const info = await client.call('Identity', 'GetPluginInfo', {});
    assert.equal(info.name, 'test.csi.io');
    assert.equal(info.vendor_version, '1.0.0');
    assert.deepEqual(info.manifest, {});
    assert.deepEqual((await client.call('Identity', 'Probe', {})).ready, { value: true });

    const res = await client.call('Controller', 'CreateVolume', {
      name: 'pvc-1',
      capacity_range: { required_bytes: 1073741824 },
      volume_capabilities: [{ mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
      parameters: { a: 'b' },
    });
    assert.equal(res.volume.volume_id, 'id-pvc-1');
    assert.equal(res.volume.capacity_bytes, '1073741824');
    const req = seen.at(-1);
    assert.equal(req.capacity_range.required_bytes, '1073741824');
    assert.equal(req.volume_capabilities[0].access_type, 'mount');
    assert.equal(req.volume_capabilities[0].mount.fs_type, 'ext4');
    assert.equal(req.volume_capabilities[0].access_mode.mode, 'SINGLE_NODE_WRITER');
    assert.deepEqual(req.parameters, { a: 'b' });
    assert.equal(req.accessibility_requirements, null);

    const caps = await client.call('Node', 'NodeGetCapabilities', {});
    assert.equal(caps.capabilities[0].rpc.type, 'STAGE_UNSTAGE_VOLUME');
    assert.equal(caps.capabilities[0].type, 'rpc');
  });

  test('errors keep their gRPC codes and messages', async () => {
    await assert.rejects(client.call('Controller', 'CreateVolume', { name: '' }), (e: unknown) => {
      assert.ok(e instanceof CsiError);
      assert.equal(e.code, grpcStatus.INVALID_ARGUMENT);
      assert.equal(e.details, 'Name missing in request');
      assert.equal(e.message, 'rpc error: code = InvalidArgument desc = Name missing in request');
      return true;
    });
    // A thrown non-CsiError is INTERNAL.
    await assert.rejects(client.call('Controller', 'DeleteVolume', { volume_id: 'x' }), { code: grpcStatus.INTERNAL, details: 'disk on fire' });
    // A method of a served service without a handler, and a service not served at all: UNIMPLEMENTED.
    await assert.rejects(client.call('Controller', 'ListVolumes', {}), { code: grpcStatus.UNIMPLEMENTED });
    await assert.rejects(client.call('Identity', 'GetPluginCapabilities', {}), { code: grpcStatus.UNIMPLEMENTED });
    await assert.rejects(client.call('Controller', 'NoSuchMethod', {}), { code: grpcStatus.UNIMPLEMENTED });
  });

  test('a call to a missing socket fails UNAVAILABLE', async () => {
    const c = new CsiClient(join(dir, 'absent.sock'));
    try {
      await assert.rejects(c.call('Identity', 'Probe', {}, { timeoutMs: 2000 }), { code: grpcStatus.UNAVAILABLE });
    } finally {
      c.close();
    }
  });

  test('the proto has the CSI v1 methods', () => {
    assert.ok(csiMethods('Controller').includes('ControllerExpandVolume'));
    assert.ok(csiMethods('Controller').includes('ControllerGetVolume'));
    assert.ok(csiMethods('Node').includes('NodeExpandVolume'));
    assert.deepEqual(csiMethods('Identity'), ['GetPluginInfo', 'GetPluginCapabilities', 'Probe']);
  });
});

describe('serveCsi socket handling', () => {
  test('a stale socket is replaced, close removes the socket, a regular file is never removed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csi-'));
    try {
      const sock = join(dir, 'csi.sock');
      const first = await serveCsi({ Identity: {} }, sock);
      // The first server is not closed: its socket file is left behind as a crashed driver's would be.
      const second = await serveCsi({ Identity: { Probe: async () => ({}) } }, sock);
      const c = new CsiClient(sock);
      assert.deepEqual(await c.call('Identity', 'Probe', {}), { ready: null });
      c.close();
      await second.close();
      await first.close();
      assert.equal(existsSync(sock), false);

      const file = join(dir, 'file.sock');
      writeFileSync(file, 'data');
      await assert.rejects(serveCsi({ Identity: {} }, file));
      assert.equal(existsSync(file), true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('endpoint forms and code names', () => {
    assert.equal(grpcTarget('unix:///a/b.sock'), 'unix:/a/b.sock');
    assert.equal(grpcTarget('/a/b.sock'), 'unix:/a/b.sock');
    assert.equal(codeName(grpcStatus.NOT_FOUND), 'NotFound');
    assert.equal(codeName(grpcStatus.OK), 'OK');
    assert.equal(codeName(99), 'Code(99)');
  });
});

describe('plugin registration', () => {
  test('GetInfo and NotifyRegistrationStatus over the registration socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reg-'));
    const statuses: { plugin_registered: boolean; error: string }[] = [];
    const sock = join(dir, 'hostpath.csi.kubeling.io-reg.sock');
    const server = await serveRegistration(
      { type: 'CSIPlugin', name: 'hostpath.csi.kubeling.io', endpoint: '/x/csi.sock', supported_versions: ['1.0.0'] },
      sock,
      (s) => statuses.push(s),
    );
    const client = new RegistrationClient(sock);
    try {
      assert.deepEqual(await client.getInfo(), {
        type: 'CSIPlugin',
        name: 'hostpath.csi.kubeling.io',
        endpoint: '/x/csi.sock',
        supported_versions: ['1.0.0'],
      });
      await client.notifyRegistrationStatus({ plugin_registered: false, error: 'no supported version' });
      await client.notifyRegistrationStatus({ plugin_registered: true, error: '' });
      assert.deepEqual(statuses, [
        { plugin_registered: false, error: 'no supported version' },
        { plugin_registered: true, error: '' },
      ]);
    } finally {
      client.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
