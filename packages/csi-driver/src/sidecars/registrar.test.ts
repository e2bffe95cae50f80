/**
 * The node-driver-registrar's side with an injected server: the socket it
 * offers in the registration folder, what GetInfo says, and the statuses the
 * kubelet reports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PluginInfo, RegistrationStatus } from '@kubeling/csi';
import { startRegistrar } from './registrar.js';
import { silentLog } from './testing.js';

test('the registrar offers <driver>-reg.sock with the CSIPlugin info and records the kubelet’s answers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reg-'));
  try {
    let served: { info: PluginInfo; path: string; onStatus: (s: RegistrationStatus) => void } | undefined;
    let closed = false;
    const reg = await startRegistrar({
      driverName: 'hostpath.csi.kubeling.io',
      driverSocket: 'unix:///var/lib/kubelet/plugins/hostpath.csi.kubeling.io/csi.sock',
      registrationDir: join(dir, 'plugins_registry'),
      log: silentLog,
      serve: async (info, path, onStatus) => {
        served = { info, path, onStatus };
        return {
          close: async () => {
            closed = true;
          },
        };
      },
    });
    assert.ok(existsSync(join(dir, 'plugins_registry')), 'the folder is made');
    assert.equal(reg.socketPath, join(dir, 'plugins_registry', 'hostpath.csi.kubeling.io-reg.sock'));
    assert.deepEqual(served!.info, {
      type: 'CSIPlugin',
      name: 'hostpath.csi.kubeling.io',
      endpoint: '/var/lib/kubelet/plugins/hostpath.csi.kubeling.io/csi.sock',
      supported_versions: ['1.0.0'],
    });
    served!.onStatus({ plugin_registered: false, error: 'version mismatch' });
    served!.onStatus({ plugin_registered: true, error: '' });
    assert.deepEqual(reg.statuses, [
      { plugin_registered: false, error: 'version mismatch' },
      { plugin_registered: true, error: '' },
    ]);
    await reg.close();
    assert.equal(closed, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
