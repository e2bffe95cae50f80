/**
 * The storage controllers against a real etcd and apiserver: the
 * persistentvolume binder (static binding, WaitForFirstConsumer, external
 * provisioning, reclaim), the pvc-protection and pv-protection finalizers, the
 * attach/detach controller's VolumeAttachments and node status, generic
 * ephemeral volumes, and StatefulSet claim retention with the garbage
 * collector. No kubelet or CSI driver runs: the tests play their parts
 * (a pod's nodeName, an attachment's status) through the API.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { eventually, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { attachmentName } from './controllers/attachdetach/desired.js';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
const NS = '/api/v1/namespaces/default';
/** A CSI driver name as the API accepts it (a DNS subdomain); none runs, the test plays the attacher. */
const DRIVER = 'attach.test.kubeling.io';

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: [
      'persistentvolume-binder',
      'pvc-protection',
      'pv-protection',
      'attachdetach',
      'ephemeral-volume',
      'statefulset',
      'garbagecollector',
      'serviceaccount',
    ],
    leaderElect: false,
    log: pino({ level: 'silent' }),
  });
  await mgr.start();
  await waitFor(async () => (await request(env.url, 'GET', `${NS}/serviceaccounts/default`)).status === 200, 10_000, 'default ServiceAccount');
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

const create = async (path: string, body: object) => {
  const r = await request(env.url, 'POST', path, body);
  assert.equal(r.status, 201, `${path}: ${r.text}`);
  return r.body;
};
const get = async (path: string) => {
  const r = await request(env.url, 'GET', path);
  return r.status === 200 ? r.body : undefined;
};
const volume = (name: string, spec: object) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], ...spec },
});
const claim = (name: string, spec: object, annotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const pod = (name: string, claimName: string, nodeName?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    containers: [{ name: 'c', image: 'busybox' }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
  },
});
/** The events about an object, as [reason, message]. */
const eventsAbout = async (name: string): Promise<string[][]> => {
  const list = (await get(`${NS}/events`)) as { items: { involvedObject: { name: string }; reason: string; message: string }[] };
  return list.items.filter((e) => e.involvedObject.name === name).map((e) => [e.reason, e.message]);
};
const deletePod = (name: string) => request(env.url, 'DELETE', `${NS}/pods/${name}`, { gracePeriodSeconds: 0 });

test('static binding: a claim binds the smallest fitting volume of its class, both Bound', async () => {
  await create(
    '/api/v1/persistentvolumes',
    volume('static-big', { capacity: { storage: '10Gi' }, storageClassName: 'manual', hostPath: { path: '/tmp/kubeling-static-big' } }),
  );
  await create('/api/v1/persistentvolumes', volume('static-fits', { storageClassName: 'manual', hostPath: { path: '/tmp/kubeling-static-fits' } }));
  // Created Pending, Available once the binder has seen them: the claim comes after, as an administrator's volumes do.
  for (const v of ['static-big', 'static-fits'])
    await waitFor(async () => (await get(`/api/v1/persistentvolumes/${v}`))?.status?.phase === 'Available', 15_000, `${v} Available`);
  const c = await create(`${NS}/persistentvolumeclaims`, claim('static', { storageClassName: 'manual' }));
  const bound = await eventually(async () => {
    const cur = await get(`${NS}/persistentvolumeclaims/static`);
    return cur?.status?.phase === 'Bound' && cur;
  });
  assert.equal(bound.spec.volumeName, 'static-fits');
  assert.equal(bound.metadata.annotations['pv.kubernetes.io/bind-completed'], 'yes');
  assert.equal(bound.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.deepEqual(bound.status.capacity, { storage: '2Gi' });
  assert.deepEqual(bound.status.accessModes, ['ReadWriteOnce']);
  const v = await eventually(async () => {
    const cur = await get('/api/v1/persistentvolumes/static-fits');
    return cur?.status?.phase === 'Bound' && cur;
  });
  assert.equal(v.spec.claimRef.uid, c.metadata.uid);
  assert.ok(v.status.lastPhaseTransitionTime, 'lastPhaseTransitionTime is set');
  assert.equal((await get('/api/v1/persistentvolumes/static-big')).status.phase, 'Available');
});

test('WaitForFirstConsumer waits for the selected node, then the claim goes to the external provisioner', async () => {
  await create('/apis/storage.k8s.io/v1/storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'late' },
    provisioner: 'hostpath.csi.kubeling.io',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  await create(`${NS}/persistentvolumeclaims`, claim('late', { storageClassName: 'late' }));
  await waitFor(
    async () => (await eventsAbout('late')).some(([r, m]) => r === 'WaitForFirstConsumer' && m === 'waiting for first consumer to be created before binding'),
    15_000,
    'WaitForFirstConsumer event',
  );
  assert.equal((await get(`${NS}/persistentvolumeclaims/late`)).metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], undefined);
  const r = await request(
    env.url,
    'PATCH',
    `${NS}/persistentvolumeclaims/late`,
    { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'node-1' } } },
    {
      contentType: 'application/merge-patch+json',
    },
  );
  assert.equal(r.status, 200, r.text);
  const annotated = await eventually(async () => {
    const cur = await get(`${NS}/persistentvolumeclaims/late`);
    return cur?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] && cur;
  });
  assert.equal(annotated.metadata.annotations['volume.kubernetes.io/storage-provisioner'], 'hostpath.csi.kubeling.io');
  assert.equal(annotated.metadata.annotations['volume.beta.kubernetes.io/storage-provisioner'], 'hostpath.csi.kubeling.io');
  await waitFor(
    async () =>
      (await eventsAbout('late')).some(
        ([r, m]) =>
          r === 'ExternalProvisioning' &&
          m ===
            "Waiting for a volume to be created either by the external provisioner 'hostpath.csi.kubeling.io' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
      ),
    15_000,
    'ExternalProvisioning event',
  );
  assert.equal((await get(`${NS}/persistentvolumeclaims/late`)).status.phase, 'Pending');
});

test('a claim in use by a scheduled pod stays Terminating until the pod goes; its Retain volume is then Released', async () => {
  await create('/api/v1/persistentvolumes', volume('kept', { storageClassName: 'keep', hostPath: { path: '/tmp/kubeling-kept' } }));
  await create(`${NS}/persistentvolumeclaims`, claim('used', { storageClassName: 'keep' }));
  await waitFor(async () => (await get(`${NS}/persistentvolumeclaims/used`))?.status?.phase === 'Bound', 15_000, 'claim bound');
  await create(`${NS}/pods`, pod('user', 'used', 'node-1'));
  assert.equal((await request(env.url, 'DELETE', `${NS}/persistentvolumeclaims/used`)).status, 200);
  await new Promise((r) => setTimeout(r, 1500));
  const terminating = await get(`${NS}/persistentvolumeclaims/used`);
  assert.ok(terminating?.metadata.deletionTimestamp, 'still there, being deleted');
  assert.deepEqual(terminating.metadata.finalizers, ['kubernetes.io/pvc-protection']);
  assert.equal((await deletePod('user')).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', `${NS}/persistentvolumeclaims/used`)).status === 404, 15_000, 'claim gone');
  await waitFor(async () => (await get('/api/v1/persistentvolumes/kept'))?.status?.phase === 'Released', 15_000, 'volume Released');
  // Not Bound any more: pv-protection lets the volume go.
  assert.equal((await request(env.url, 'DELETE', '/api/v1/persistentvolumes/kept')).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', '/api/v1/persistentvolumes/kept')).status === 404, 15_000, 'volume gone');
});

test('Delete reclaim: a /tmp host path is removed with its volume; another path fails the volume', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeling-pv-'));
  const removable = /\/tmp\/.+/.test(dir);
  await create(
    '/api/v1/persistentvolumes',
    volume('scratch', { storageClassName: 'scratch', persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: dir } }),
  );
  await create(
    '/api/v1/persistentvolumes',
    volume('precious', { storageClassName: 'precious', persistentVolumeReclaimPolicy: 'Delete', hostPath: { path: '/var/lib/kubeling-precious' } }),
  );
  await create(`${NS}/persistentvolumeclaims`, claim('scratch', { storageClassName: 'scratch' }));
  await create(`${NS}/persistentvolumeclaims`, claim('precious', { storageClassName: 'precious' }));
  for (const c of ['scratch', 'precious'])
    await waitFor(async () => (await get(`${NS}/persistentvolumeclaims/${c}`))?.status?.phase === 'Bound', 15_000, `${c} bound`);
  for (const c of ['scratch', 'precious']) assert.equal((await request(env.url, 'DELETE', `${NS}/persistentvolumeclaims/${c}`)).status, 200);
  if (removable) {
    await waitFor(async () => (await request(env.url, 'GET', '/api/v1/persistentvolumes/scratch')).status === 404, 15_000, 'scratch volume deleted');
    assert.equal(existsSync(dir), false, 'its directory removed');
  }
  const failed = await eventually(async () => {
    const cur = await get('/api/v1/persistentvolumes/precious');
    return cur?.status?.phase === 'Failed' && cur;
  });
  assert.equal(failed.status.message, 'host_path deleter only supports /tmp/.+ but received provided /var/lib/kubeling-precious');
  assert.deepEqual(await eventsAbout('precious').then((e) => e.filter(([r]) => r === 'VolumeFailedDelete').map(([, m]) => m)), [failed.status.message]);
});

test('attach/detach: a scheduled pod on a CSI volume gets a VolumeAttachment; attached, the node lists it; the pod gone, it is detached', async () => {
  await create('/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'attach-node', annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
  });
  await create('/api/v1/persistentvolumes', volume('csi-vol', { storageClassName: 'csi', csi: { driver: DRIVER, volumeHandle: 'vol-1' } }));
  await create(`${NS}/persistentvolumeclaims`, claim('csi-claim', { storageClassName: 'csi' }));
  await waitFor(async () => (await get(`${NS}/persistentvolumeclaims/csi-claim`))?.status?.phase === 'Bound', 15_000, 'claim bound');
  await create(`${NS}/pods`, pod('attached', 'csi-claim', 'attach-node'));
  const name = attachmentName('vol-1', DRIVER, 'attach-node');
  const va = await eventually(() => get(`/apis/storage.k8s.io/v1/volumeattachments/${name}`));
  assert.deepEqual(va.spec, { attacher: DRIVER, nodeName: 'attach-node', source: { persistentVolumeName: 'csi-vol' } });
  // The external attacher's part: attached.
  const put = await request(env.url, 'PUT', `/apis/storage.k8s.io/v1/volumeattachments/${name}/status`, { ...va, status: { attached: true } });
  assert.equal(put.status, 200, put.text);
  await waitFor(
    async () =>
      JSON.stringify((await get('/api/v1/nodes/attach-node'))?.status?.volumesAttached) ===
      JSON.stringify([{ name: `kubernetes.io/csi/${DRIVER}^vol-1`, devicePath: '' }]),
    15_000,
    'node volumesAttached',
  );
  await waitFor(
    async () => (await eventsAbout('attached')).some(([r, m]) => r === 'SuccessfulAttachVolume' && m === 'AttachVolume.Attach succeeded for volume "csi-vol" '),
    15_000,
    'SuccessfulAttachVolume event',
  );
  assert.equal((await deletePod('attached')).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', `/apis/storage.k8s.io/v1/volumeattachments/${name}`)).status === 404, 15_000, 'attachment deleted');
  assert.equal((await get('/api/v1/nodes/attach-node')).status?.volumesAttached, undefined);
});

test('a generic ephemeral volume gets its <pod>-<volume> claim, owned by the pod, with the template labels', async () => {
  const p = await create(`${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'eph' },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [
        {
          name: 'scratch',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { kind: 'scratch' }, annotations: { note: 'temp' } },
              spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'late', resources: { requests: { storage: '1Gi' } } },
            },
          },
        },
      ],
    },
  });
  const c = await eventually(() => get(`${NS}/persistentvolumeclaims/eph-scratch`));
  assert.deepEqual(c.metadata.labels, { kind: 'scratch' });
  assert.equal(c.metadata.annotations.note, 'temp');
  assert.deepEqual(c.metadata.ownerReferences, [
    { apiVersion: 'v1', kind: 'Pod', name: 'eph', uid: p.metadata.uid, controller: true, blockOwnerDeletion: true },
  ]);
});

test('a claim of the ephemeral name the pod does not own is left alone, with a FailedBinding event on the pod', async () => {
  await create(`${NS}/persistentvolumeclaims`, claim('squat-scratch', { storageClassName: 'late' }));
  await create(`${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'squat' },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [
        { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
      ],
    },
  });
  await waitFor(
    async () =>
      (await eventsAbout('squat')).some(
        ([r, m]) =>
          r === 'FailedBinding' && m === 'ephemeral volume scratch: PVC default/squat-scratch was not created for pod default/squat (pod is not owner)',
      ),
    15_000,
    'FailedBinding event',
  );
  assert.equal((await get(`${NS}/persistentvolumeclaims/squat-scratch`)).metadata.ownerReferences, undefined);
});

test('StatefulSet whenScaled: Delete: the condemned pod claim is owned by the pod and collected with it; the others stay', async () => {
  await create('/apis/apps/v1/namespaces/default/statefulsets', {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      replicas: 2,
      serviceName: 'db',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'db' } },
      persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'late', resources: { requests: { storage: '1Gi' } } } },
      ],
    },
  });
  for (const n of ['data-db-0', 'data-db-1']) await eventually(() => get(`${NS}/persistentvolumeclaims/${n}`));
  await waitFor(async () => !!(await get(`${NS}/pods/db-1`)), 15_000, 'db-1');
  const r = await request(
    env.url,
    'PATCH',
    '/apis/apps/v1/namespaces/default/statefulsets/db',
    { spec: { replicas: 1 } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(r.status, 200, r.text);
  await waitFor(async () => (await request(env.url, 'GET', `${NS}/persistentvolumeclaims/data-db-1`)).status === 404, 30_000, 'data-db-1 collected');
  const kept = await get(`${NS}/persistentvolumeclaims/data-db-0`);
  assert.equal(kept.metadata.ownerReferences, undefined, 'in range and whenDeleted Retain: not owned');
  assert.deepEqual(kept.metadata.labels, { app: 'db' });
});
