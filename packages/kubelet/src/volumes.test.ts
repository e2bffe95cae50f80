import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { containerMounts, prepareVolumes, volumeRefreshMs } from './volumes.js';
import type { Container } from './kinds.js';
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

test('file modes exactly as asked (item over default, whatever the umask); resourceFieldRef files, a zero divisor read as 1; fsGroup ownership', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelet-vol-'));
  const umask = process.umask(0o077);
  try {
    const src: EnvSources = { configMap: async () => ({ data: { a: '1', b: '2' } }), secret: async () => undefined };
    const p = pod([
      {
        name: 'cfg',
        configMap: {
          name: 'c',
          defaultMode: 0o666,
          items: [
            { key: 'a', path: 'a' },
            { key: 'b', path: 'b', mode: 0o400 },
          ],
        },
      },
      {
        name: 'info',
        downwardAPI: {
          items: [
            { path: 'cpu_limit', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '0' } },
            { path: 'memory_request', resourceFieldRef: { containerName: 'c', resource: 'requests.memory', divisor: '1Mi' } },
            { path: 'memory_limit', resourceFieldRef: { containerName: 'c', resource: 'limits.memory' } },
          ],
        },
      },
      { name: 'scratch', emptyDir: {} },
    ]);
    (p.spec as { containers: object[] }).containers = [{ name: 'c', resources: { limits: { cpu: '1250m' }, requests: { memory: '32Mi' } } }];
    await prepareVolumes(p, dir, src, '127.0.0.1', '127.2.0.2', new Map(), { memory: 4096 });
    const mode = (rel: string) => statSync(join(dir, 'volumes', rel)).mode & 0o7777;
    assert.deepEqual([mode('cfg/a'), mode('cfg/b'), mode('info/cpu_limit'), mode('scratch')], [0o666, 0o400, 0o644, 0o777]);
    const read = (rel: string) => readFileSync(join(dir, 'volumes', rel), 'utf8');
    assert.deepEqual([read('info/cpu_limit'), read('info/memory_request'), read('info/memory_limit')], ['2', '32', '4096']);
    if (process.getuid?.() === 0) {
      (p.spec as { securityContext?: object }).securityContext = { fsGroup: 4321 };
      await prepareVolumes(p, dir, src, '127.0.0.1', '127.2.0.2', new Map(), { memory: 4096 });
      assert.equal(statSync(join(dir, 'volumes', 'cfg', 'b')).gid, 4321);
      assert.deepEqual([mode('cfg/b'), mode('scratch')], [0o440, 0o2777], 'read-only volumes get g+r, others g+rw; directories setgid');
    }
  } finally {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('subPathExpr: expanded with the container variables, each of which must have a value; never absolute, never a step back', () => {
  const volumes = { paths: new Map([['logs', '/var/kubeling/pod/volumes/logs']]), readOnly: new Set<string>() };
  const mount = (subPathExpr: string) => ({ name: 'c', volumeMounts: [{ name: 'logs', mountPath: '/logs', subPathExpr }] }) as Container;
  const dir = mkdtempSync(join(tmpdir(), 'kubelet-subpath-'));
  try {
    const vols = { paths: new Map([['logs', dir]]), readOnly: new Set<string>() };
    assert.deepEqual(containerMounts(mount('$(POD_NAME)/x'), vols, { POD_NAME: 'web-0' }), [
      { container_path: '/logs', host_path: join(dir, 'web-0', 'x'), readonly: false },
    ]);
    assert.ok(statSync(join(dir, 'web-0', 'x')).isDirectory());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => containerMounts(mount('$(NOPE)'), volumes, {}), /^Error: missing value for NOPE$/);
  assert.throws(() => containerMounts(mount('$(P)'), volumes, { P: '/tmp' }), /error SubPath `\/tmp` must not be an absolute path/);
  assert.throws(() => containerMounts(mount('$(P)'), volumes, { P: '..' }), /unable to provision SubPath `..`: must not contain '..'/);
});
