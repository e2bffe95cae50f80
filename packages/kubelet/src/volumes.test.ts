import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { prepareVolumes, volumeRefreshMs } from './volumes.js';
import type { EnvSources } from './podutil.js';

const pod = (volumes: object[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [], volumes },
});

test('configMap volumes are rewritten atomically: ..data swaps to a new directory, keys follow the data, old sets go', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelet-vol-'));
  try {
    let data: Record<string, string> = { a: '1', b: '2' };
    let tokens = 0;
    const src: EnvSources = {
      configMap: async () => ({ data }),
      secret: async () => undefined,
      token: async () => `token-${++tokens}`,
    };
    const p = pod([
      { name: 'cfg', configMap: { name: 'c' } },
      { name: 'sa', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 600 } }] } },
    ]);
    await prepareVolumes(p, dir, src, '127.0.0.1', '127.2.0.2');
    const cfg = join(dir, 'volumes', 'cfg');
    assert.equal(readFileSync(join(cfg, 'a'), 'utf8'), '1');
    assert.ok(lstatSync(join(cfg, 'a')).isSymbolicLink());
    assert.equal(readlinkSync(join(cfg, 'a')), join('..data', 'a'));
    const first = readlinkSync(join(cfg, '..data'));
    data = { a: '10', c: '3' };
    await prepareVolumes(p, dir, src, '127.0.0.1', '127.2.0.2');
    assert.equal(readFileSync(join(cfg, 'a'), 'utf8'), '10');
    assert.equal(readFileSync(join(cfg, 'c'), 'utf8'), '3');
    assert.ok(!readdirSync(cfg).includes('b'), 'a key no longer in the ConfigMap is gone');
    assert.notEqual(readlinkSync(join(cfg, '..data')), first);
    assert.deepEqual(
      readdirSync(cfg)
        .filter((e) => e.startsWith('..'))
        .sort(),
      ['..data', readlinkSync(join(cfg, '..data'))].sort(),
      'only the current set is kept',
    );
    assert.equal(readFileSync(join(dir, 'volumes', 'sa', 'token'), 'utf8'), 'token-2', 'the token was requested again');
    await assert.rejects(
      () => prepareVolumes(pod([{ name: 'x', configMap: { name: 'c', items: [{ key: 'a', path: '../escape' }] } }]), dir, src, '', ''),
      /invalid path/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('refresh timing: tokens at 80 % of their lifetime, configMaps and secrets each minute, nothing otherwise', () => {
  assert.equal(volumeRefreshMs(pod([{ name: 'e', emptyDir: {} }])), undefined);
  assert.equal(volumeRefreshMs(pod([{ name: 'sa', projected: { sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 600 } }] } }])), 480_000);
  assert.equal(volumeRefreshMs(pod([{ name: 'sa', projected: { sources: [{ serviceAccountToken: { path: 't' } }, { configMap: { name: 'x' } }] } }])), 60_000);
  assert.equal(volumeRefreshMs(pod([{ name: 's', secret: { secretName: 'x' } }])), 60_000);
});
