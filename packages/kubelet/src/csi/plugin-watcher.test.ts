import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { serveCsi, serveRegistration, type PluginInfo } from '@kubeling/csi';
import { DriverRegistry } from './drivers.js';
import { PluginWatcher } from './plugin-watcher.js';
import { CSI_PLUGIN_TYPE, CsiPluginHandler, type PluginHandler } from './registration.js';

const log = pino({ level: 'silent' });

async function until(what: string, pred: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function recordingHandler(calls: string[], fail?: string): PluginHandler {
  return {
    validate: (name, endpoint, versions) => {
      calls.push(`validate ${name} ${endpoint} ${versions.join(',')}`);
      if (fail === 'validate') throw new Error('bad versions');
    },
    register: async (name) => {
      calls.push(`register ${name}`);
      if (fail === 'register') throw new Error('no node info');
    },
    deregister: async (name) => {
      calls.push(`deregister ${name}`);
    },
  };
}

test('a socket in the registration directory is registered and told so; removed, it is deregistered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-'));
  const reg = join(dir, 'plugins_registry');
  const calls: string[] = [];
  const statuses: { plugin_registered: boolean; error: string }[] = [];
  const w = new PluginWatcher({ dir: reg, handlers: { [CSI_PLUGIN_TYPE]: recordingHandler(calls) }, log, scanIntervalMs: 100 });
  w.start();
  try {
    // Files that are not sockets, and hidden names, are not plugins.
    writeFileSync(join(reg, 'notes.txt'), 'x');
    const info: PluginInfo = { type: CSI_PLUGIN_TYPE, name: 'd.example.com', endpoint: '', supported_versions: ['1.0.0'] };
    const srv = await serveRegistration(info, join(reg, 'd-reg.sock'), (s) => statuses.push(s));
    await until('the registration', () => statuses.length > 0);
    // No endpoint given: the registration socket is the endpoint, as upstream does.
    assert.deepEqual(calls, [`validate d.example.com ${join(reg, 'd-reg.sock')} 1.0.0`, 'register d.example.com']);
    assert.deepEqual(statuses, [{ plugin_registered: true, error: '' }]);
    assert.deepEqual([...w.registered().values()], ['d.example.com']);
    await srv.close();
    rmSync(join(reg, 'd-reg.sock'), { force: true });
    await until('the deregistration', () => calls.includes('deregister d.example.com'));
    assert.equal(w.registered().size, 0);
  } finally {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown plugin type, a failed validation and a failed registration are reported to the plugin with upstream messages', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-'));
  const reg = join(dir, 'plugins_registry');
  mkdirSync(reg);
  const calls: string[] = [];
  const got = new Map<string, { plugin_registered: boolean; error: string }>();
  const servers: { close(): Promise<void> }[] = [];
  const serve = async (sock: string, info: PluginInfo) =>
    servers.push(await serveRegistration(info, join(reg, sock), (s) => got.has(sock) || got.set(sock, s)));
  await serve('a.sock', { type: 'DRAPlugin', name: 'a', endpoint: '/x', supported_versions: ['1.0.0'] });
  const w = new PluginWatcher({
    dir: reg,
    handlers: { [CSI_PLUGIN_TYPE]: recordingHandler(calls, 'validate'), Other: recordingHandler(calls, 'register') },
    log,
    scanIntervalMs: 100,
  });
  w.start();
  try {
    await serve('b.sock', { type: CSI_PLUGIN_TYPE, name: 'b', endpoint: '/x', supported_versions: ['9'] });
    await serve('c.sock', { type: 'Other', name: 'c', endpoint: '/y', supported_versions: ['1.0.0'] });
    await until('three answers', () => got.size === 3);
    assert.deepEqual(got.get('a.sock'), {
      plugin_registered: false,
      error: `RegisterPlugin error -- no handler registered for plugin type: DRAPlugin at socket ${join(reg, 'a.sock')}`,
    });
    assert.deepEqual(got.get('b.sock'), { plugin_registered: false, error: 'RegisterPlugin error -- plugin validation failed with err: bad versions' });
    assert.deepEqual(got.get('c.sock'), { plugin_registered: false, error: 'RegisterPlugin error -- plugin registration failed with err: no node info' });
    assert.equal(w.registered().size, 0);
  } finally {
    await w.stop();
    for (const s of servers) await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the CSI handler registers a driver with its NodeGetInfo, installs it, and uninstalls it when its socket goes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-'));
  const reg = join(dir, 'plugins_registry');
  const endpoint = `unix://${join(dir, 'csi.sock')}`;
  const driver = await serveCsi(
    {
      Identity: {},
      Node: {
        NodeGetInfo: async () => ({ node_id: 'n1', max_volumes_per_node: '7', accessible_topology: { segments: { 'topology.d/node': 'n1' } } }),
      },
    },
    endpoint,
  );
  const installs: unknown[][] = [];
  const drivers = new DriverRegistry();
  const handler = new CsiPluginHandler(
    drivers,
    {
      installDriver: async (...a: unknown[]) => void installs.push(['install', ...a]),
      uninstallDriver: async (...a: unknown[]) => void installs.push(['uninstall', ...a]),
    },
    log,
  );
  const w = new PluginWatcher({ dir: reg, handlers: { [CSI_PLUGIN_TYPE]: handler }, log, scanIntervalMs: 100 });
  w.start();
  const statuses: { plugin_registered: boolean }[] = [];
  const srv = await serveRegistration({ type: CSI_PLUGIN_TYPE, name: 'd', endpoint, supported_versions: ['1.0.0'] }, join(reg, 'd.sock'), (s) =>
    statuses.push(s),
  );
  try {
    await until('the registration', () => statuses.length > 0);
    assert.deepEqual(statuses, [{ plugin_registered: true, error: '' }]);
    assert.equal(drivers.endpoint('d'), endpoint);
    assert.deepEqual(installs, [['install', 'd', 'n1', 7, { 'topology.d/node': 'n1' }]]);
    await srv.close();
    rmSync(join(reg, 'd.sock'), { force: true });
    await until('the deregistration', () => installs.length === 2);
    assert.deepEqual(installs[1], ['uninstall', 'd']);
    assert.equal(drivers.has('d'), false);
  } finally {
    await w.stop();
    drivers.close();
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the CSI handler unregisters a driver whose NodeGetInfo fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pw-'));
  const endpoint = `unix://${join(dir, 'csi.sock')}`;
  const driver = await serveCsi({ Identity: {}, Node: {} }, endpoint);
  const drivers = new DriverRegistry();
  const calls: string[] = [];
  const handler = new CsiPluginHandler(
    drivers,
    { installDriver: async () => void calls.push('install'), uninstallDriver: async (n: string) => void calls.push(`uninstall ${n}`) },
    log,
  );
  try {
    await assert.rejects(handler.register('d', endpoint, ['1.0.0']), /code = Unimplemented/);
    assert.equal(drivers.has('d'), false);
    assert.deepEqual(calls, ['uninstall d']);
    assert.throws(
      () => handler.validate('d', endpoint, []),
      /^Error: validation failed for CSI Driver d at endpoint unix:\/\/.*: kubernetes.io\/csi: ValidatePlugin/,
    );
  } finally {
    drivers.close();
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
