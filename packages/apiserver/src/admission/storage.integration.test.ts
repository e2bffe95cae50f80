/**
 * The storage admission plugins against a real etcd and apiserver:
 * DefaultStorageClass (the newest of several defaults, then the first by
 * name; nothing for an empty class, the beta annotation or no default),
 * StorageObjectInUseProtection (the protection finalizers, once) and
 * PersistentVolumeClaimResize (growth only for a bound claim of a class that
 * allows expansion); and a server with them disabled.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const SC = '/apis/storage.k8s.io/v1/storageclasses';
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
const MERGE = { contentType: 'application/merge-patch+json' };
const DEFAULT = { 'storageclass.kubernetes.io/is-default-class': 'true' };

const sc = (name: string, annotations: Record<string, string> = {}, extra: object = {}) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, annotations },
  provisioner: 'hostpath.csi.kubeling.io',
  ...extra,
});
const claim = (name: string, spec: object = {}, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, annotations },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

describe('storage admission plugins on', () => {
  let env: TestEnv;
  const post = (path: string, body: object) => request(env.url, 'POST', path, body);
  before(async () => {
    env = await startTestEnv();
  });
  after(async () => {
    await env?.stop();
  });

  test('DefaultStorageClass: none, then the only default, then the newest of two', async () => {
    assert.equal((await post(PVC, claim('c0'))).body.spec.storageClassName, undefined, 'no default class: no class');
    assert.equal((await post(SC, sc('b-old', DEFAULT))).status, 201);
    assert.equal((await post(PVC, claim('c1'))).body.spec.storageClassName, 'b-old');
    // Creation times have a one-second resolution: wait for a newer one.
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await post(SC, sc('a-new', DEFAULT))).status, 201);
    assert.equal((await post(SC, sc('z-plain'))).status, 201);
    assert.equal((await post(PVC, claim('c2'))).body.spec.storageClassName, 'a-new', 'the newest default');
    assert.equal((await post(PVC, claim('c3', { storageClassName: '' }))).body.spec.storageClassName, '', 'an empty class stays');
    assert.equal((await post(PVC, claim('c4', { storageClassName: 'z-plain' }))).body.spec.storageClassName, 'z-plain');
    const beta = await post(PVC, claim('c5', {}, { 'volume.beta.kubernetes.io/storage-class': 'z-plain' }));
    assert.equal(beta.body.spec.storageClassName, undefined, 'the beta annotation names a class');
  });

  test('StorageObjectInUseProtection: the finalizers, once', async () => {
    const c = await post(PVC, claim('p1', { storageClassName: '' }, {}));
    assert.deepEqual(c.body.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    const twice = await post(PVC, {
      ...claim('p2', { storageClassName: '' }),
      metadata: { name: 'p2', finalizers: ['kubernetes.io/pvc-protection', 'example.com/x'] },
    });
    assert.deepEqual(twice.body.metadata.finalizers, ['kubernetes.io/pvc-protection', 'example.com/x']);
    const pv = await post('/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'v1' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/v1' } },
    });
    assert.deepEqual(pv.body.metadata.finalizers, ['kubernetes.io/pv-protection']);
  });

  test('PersistentVolumeClaimResize: only bound claims of a class that allows expansion grow', async () => {
    assert.equal((await post(SC, sc('expandable', {}, { allowVolumeExpansion: true }))).status, 201);
    for (const [name, cls] of [
      ['r1', 'z-plain'],
      ['r2', 'expandable'],
      ['r3', ''],
    ] as const) {
      const c = await post(PVC, claim(name, { storageClassName: cls, volumeName: `pv-${name}` }));
      assert.equal(c.status, 201, c.text);
      const st = await request(env.url, 'PATCH', `${PVC}/${name}/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, MERGE);
      assert.equal(st.status, 200, st.text);
    }
    const grow = (name: string) => request(env.url, 'PATCH', `${PVC}/${name}`, { spec: { resources: { requests: { storage: '3Gi' } } } }, MERGE);
    const msg = (name: string) =>
      `persistentvolumeclaims "${name}" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`;
    const r1 = await grow('r1');
    assert.equal(r1.status, 403);
    assert.equal(r1.body.message, msg('r1'));
    assert.equal((await grow('r3')).body.message, msg('r3'), 'no class: no resize');
    const r2 = await grow('r2');
    assert.equal(r2.status, 200, r2.text);
    assert.equal(r2.body.spec.resources.requests.storage, '3Gi');
    // What does not grow the request passes.
    assert.equal((await request(env.url, 'PATCH', `${PVC}/r1`, { metadata: { labels: { a: 'b' } } }, MERGE)).status, 200);
  });
});

describe('storage admission plugins off', () => {
  let env: TestEnv;
  before(async () => {
    env = await startTestEnv({ server: { admission: { disable: ['DefaultStorageClass', 'StorageObjectInUseProtection'] } } });
  });
  after(async () => {
    await env?.stop();
  });

  test('no default class is set, no finalizer is added', async () => {
    assert.equal((await request(env.url, 'POST', SC, sc('std', DEFAULT))).status, 201);
    const c = await request(env.url, 'POST', PVC, claim('c'));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.spec.storageClassName, undefined);
    assert.equal(c.body.metadata.finalizers, undefined);
  });
});
