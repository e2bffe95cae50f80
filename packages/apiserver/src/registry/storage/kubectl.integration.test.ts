/**
 * The real kubectl and the storage kinds: `kubectl apply` of a StorageClass,
 * a PersistentVolume and a claim, `kubectl get pv,pvc,sc` with upstream's
 * columns (the default class marked, access modes shortened, -o wide's
 * VOLUMEMODE), `kubectl describe pvc` and `kubectl explain`.
 * Skipped with a message where no kubectl is installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

const bins = kubectlBinaries();
const skip = bins.default ? false : 'kubectl is not installed on this machine';

const MANIFEST = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: hostpath.csi.kubeling.io
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: manual
  hostPath: {path: /tmp/pv1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
`;

describe('real kubectl and the storage kinds', { skip }, () => {
  let env: TestEnv;
  let k: Kubectl;
  before(async () => {
    env = await startTestEnv();
    k = new Kubectl(env.url, bins.default!);
  });
  after(async () => {
    k?.cleanup();
    await env?.stop();
  });

  test('apply, then get pv,pvc,sc with upstream columns', async () => {
    const applied = await k.run(['apply', '-f', k.file('storage.yaml', MANIFEST)]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /storageclass.storage.k8s.io\/standard created/);
    assert.match(applied.stdout, /persistentvolume\/pv1 created/);
    assert.match(applied.stdout, /persistentvolumeclaim\/data created/);

    const get = await k.run(['get', 'pv,pvc,sc']);
    assert.equal(get.code, 0, get.stderr);
    const out = get.stdout;
    assert.match(out, /^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+REASON\s+AGE$/m);
    assert.match(out, /^persistentvolume\/pv1\s+2Gi\s+RWO,ROX\s+Retain\s+Pending\s+manual\s+<unset>\s+\d+s$/m);
    assert.match(out, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE$/m);
    assert.match(out, /^persistentvolumeclaim\/data\s+Pending\s+standard\s+<unset>\s+\d+s$/m);
    assert.match(out, /^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE$/m);
    assert.match(out, /^storageclass.storage.k8s.io\/standard \(default\)\s+hostpath.csi.kubeling.io\s+Delete\s+WaitForFirstConsumer\s+true\s+\d+s$/m);

    const wide = await k.run(['get', 'pvc', '-o', 'wide']);
    assert.match(wide.stdout, /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE\s+VOLUMEMODE$/m);
    assert.match(wide.stdout, /^data\s+Pending\s+standard\s+<unset>\s+\d+s\s+Filesystem$/m);
    const short = await k.run(['get', 'sc', 'standard', '-o', 'jsonpath={.reclaimPolicy} {.metadata.annotations}']);
    assert.match(short.stdout, /^Delete /);
  });

  test('describe pvc and explain pv', async () => {
    const d = await k.run(['describe', 'pvc', 'data']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^Name:\s+data$/m);
    assert.match(d.stdout, /^StorageClass:\s+standard$/m);
    assert.match(d.stdout, /^Status:\s+Pending$/m);
    assert.match(d.stdout, /^Finalizers:\s+\[kubernetes.io\/pvc-protection\]$/m);
    assert.match(d.stdout, /^VolumeMode:\s+Filesystem$/m);
    assert.match(d.stdout, /^Used By:\s+<none>$/m);

    const e = await k.run(['explain', 'pv.spec.csi']);
    assert.equal(e.code, 0, e.stderr);
    assert.match(e.stdout, /^KIND:\s+PersistentVolume$/m);
    assert.match(e.stdout, /volumeHandle\s+<string> -required-/);
  });
});
