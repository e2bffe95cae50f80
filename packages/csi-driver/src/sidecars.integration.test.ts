/**
 * The node's driver and sidecars in-process against a real etcd and
 * apiserver (HTTPS, RBAC), acting as `system:csi-driver:n1` with the storage
 * add-on's ClusterRole. The driver reports the name `hostpath.csi.kubeling.io`
 * (a CSI driver name must be a DNS subdomain: it names the CSIDriver object
 * and is a label value on CSIStorageCapacity objects), with its own classes. The test plays the PV controller and the scheduler
 * (annotations, binding, Release) and the attach/detach controller
 * (VolumeAttachments), and checks what the sidecars do: the PV and the
 * claim's events, a published CSIStorageCapacity, attach and detach, the
 * expansion conditions, Immediate binding, and deletion of a Released volume.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { clientFor, eventually, type Reply, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { CSI_DRIVER_GROUP, csiDriverUser, storageObjects } from '@kubeling/testenv/storage';
import { type RunningCsiDriver, startCsiDriver } from './plugin.js';

const DRIVER_NAME = 'hostpath.csi.kubeling.io';

const TOPOLOGY_KEY = 'topology.hostpath.kubeling.io/node';
const GiB = 2 ** 30;

let env: TestEnv;
let admin: ReturnType<typeof clientFor>;
let driver: RunningCsiDriver;
let dir: string;

const ok = async (p: Promise<Reply>): Promise<any> => {
  const r = await p;
  assert.ok(r.status < 300, `${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const get = (path: string) => admin('GET', path);

function claim(name: string, o: { class?: string; size?: string; node?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      annotations: {
        'volume.kubernetes.io/storage-provisioner': DRIVER_NAME,
        ...(o.node ? { 'volume.kubernetes.io/selected-node': o.node } : {}),
      },
    },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: o.class ?? 'standard', resources: { requests: { storage: o.size ?? '1Gi' } } },
  };
}

async function eventsOf(name: string): Promise<{ reason: string; message: string; type: string; source?: { component?: string } }[]> {
  const items = (await get('/api/v1/namespaces/default/events')).body.items as any[];
  return items.filter((e) => e.involvedObject?.name === name);
}

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('admin', ['system:masters']));
  // The add-on's RBAC as the lead installs it; the CSIDriver and the classes for this driver name.
  for (const obj of storageObjects().filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')) {
    const path = obj.kind === 'ClusterRole' ? '/apis/rbac.authorization.k8s.io/v1/clusterroles' : '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    await ok(admin('POST', path, obj));
  }
  await ok(
    admin('POST', '/apis/storage.k8s.io/v1/csidrivers', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: DRIVER_NAME },
      spec: { attachRequired: true, podInfoOnMount: false, storageCapacity: true, volumeLifecycleModes: ['Persistent'], fsGroupPolicy: 'File' },
    }),
  );
  for (const [name, mode] of [
    ['standard', 'WaitForFirstConsumer'],
    ['instant', 'Immediate'],
  ]) {
    await ok(
      admin('POST', '/apis/storage.k8s.io/v1/storageclasses', {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner: DRIVER_NAME,
        reclaimPolicy: 'Delete',
        volumeBindingMode: mode,
        allowVolumeExpansion: true,
      }),
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'csid-'));
  const creds = await env.pki!.client(csiDriverUser('n1'), [CSI_DRIVER_GROUP]);
  driver = await startCsiDriver({
    client: {
      server: env.url,
      namespace: 'default',
      insecureSkipTLSVerify: false,
      ca: Buffer.from(env.pki!.caPem),
      cert: Buffer.from(creds.certPem),
      key: Buffer.from(creds.keyPem),
    },
    driverName: DRIVER_NAME,
    nodeId: 'n1',
    endpoint: `unix://${join(dir, 'csi.sock')}`,
    stateDir: join(dir, 'state'),
    capacityBytes: 10 * GiB,
    registrationDir: join(dir, 'registry'),
    capacityPollMs: 500,
    ownerBaseDelayMs: 100,
    ownerMaxDelayMs: 400,
    log: pino({ level: process.env.CSI_TEST_LOG ?? 'silent' }),
  });
});

after(async () => {
  await driver?.stop();
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function capacityOf(cls: string): Promise<any> {
  const items = (await get('/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities')).body.items as any[];
  return items.filter((c) => c.storageClassName === cls);
}

describe('the hostpath driver’s sidecars', () => {
  let uid = '';
  let pvName = '';

  test('a claim selected on this node gets a volume, a PV and the provisioner’s events', async () => {
    const created = await ok(admin('POST', '/api/v1/namespaces/default/persistentvolumeclaims', claim('data', { node: 'n1' })));
    uid = created.metadata.uid;
    pvName = `pvc-${uid}`;
    const pv = await eventually(
      async () => (await get(`/api/v1/persistentvolumes/${pvName}`)).status === 200 && (await get(`/api/v1/persistentvolumes/${pvName}`)).body,
    );
    assert.equal(pv.metadata.annotations['pv.kubernetes.io/provisioned-by'], DRIVER_NAME);
    assert.ok(pv.metadata.finalizers.includes('external-provisioner.volume.kubernetes.io/finalizer'));
    assert.deepEqual(pv.spec.capacity, { storage: '1Gi' });
    assert.deepEqual(pv.spec.accessModes, ['ReadWriteOnce']);
    assert.equal(pv.spec.csi.driver, DRIVER_NAME);
    assert.ok(pv.spec.csi.volumeHandle);
    assert.match(pv.spec.csi.volumeAttributes['storage.kubernetes.io/csiProvisionerIdentity'], /^\d+-\d+-hostpath\.csi\.kubeling\.io-n1$/);
    assert.deepEqual(
      { ...pv.spec.claimRef, resourceVersion: undefined },
      { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid, apiVersion: 'v1', resourceVersion: undefined },
    );
    assert.ok(pv.spec.claimRef.resourceVersion);
    assert.equal(pv.spec.storageClassName, 'standard');
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms, [{ matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: ['n1'] }] }]);
    assert.ok(existsSync(join(dir, 'state', 'volumes', pv.spec.csi.volumeHandle)), 'the volume is a directory in the driver’s state');
    const events = await eventually(async () => {
      const e = await eventsOf('data');
      return e.some((x) => x.reason === 'ProvisioningSucceeded') && e;
    });
    assert.deepEqual(
      events.map((e) => [e.type, e.reason, e.message]),
      [
        ['Normal', 'Provisioning', 'External provisioner is provisioning volume for claim "default/data"'],
        ['Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`],
      ],
    );
    assert.match(events[0]!.source!.component!, /^hostpath\.csi\.kubeling\.io_n1_/);
  });

  test('a CSIStorageCapacity is published for the WaitForFirstConsumer class and follows the volumes', async () => {
    const cap = await eventually(async () => {
      const c = await capacityOf('standard');
      return c.length === 1 && c[0].capacity === '9Gi' && c[0];
    });
    assert.match(cap.metadata.name, /^csisc-/);
    assert.deepEqual(cap.metadata.labels, { 'csi.storage.k8s.io/drivername': DRIVER_NAME, 'csi.storage.k8s.io/managed-by': 'external-provisioner-n1' });
    assert.deepEqual(cap.nodeTopology, { matchLabels: { [TOPOLOGY_KEY]: 'n1' } });
    assert.deepEqual(await capacityOf('instant'), [], 'none for Immediate classes');
  });

  test('bound and attached, expanded, then detached', async () => {
    // The PV controller's binding.
    const pv = (await get(`/api/v1/persistentvolumes/${pvName}`)).body;
    await ok(admin('PUT', `/api/v1/persistentvolumes/${pvName}/status`, { ...pv, status: { phase: 'Bound' } }));
    const c = (await get('/api/v1/namespaces/default/persistentvolumeclaims/data')).body;
    const bound = await ok(admin('PUT', '/api/v1/namespaces/default/persistentvolumeclaims/data', { ...c, spec: { ...c.spec, volumeName: pvName } }));
    await ok(
      admin('PUT', '/api/v1/namespaces/default/persistentvolumeclaims/data/status', {
        ...bound,
        status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
      }),
    );
    // The attach/detach controller's VolumeAttachment.
    const handle = pv.spec.csi.volumeHandle;
    const vaName = `csi-${createHash('sha256').update(`${handle}${DRIVER_NAME}n1`).digest('hex')}`;
    await ok(
      admin('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name: vaName },
        spec: { attacher: DRIVER_NAME, nodeName: 'n1', source: { persistentVolumeName: pvName } },
      }),
    );
    const va = await eventually(async () => {
      const v = (await get(`/apis/storage.k8s.io/v1/volumeattachments/${vaName}`)).body;
      return v.status?.attached === true && v;
    });
    assert.deepEqual(va.metadata.finalizers, ['external-attacher/hostpath-csi-kubeling-io']);
    assert.equal(va.metadata.annotations['csi.alpha.kubernetes.io/node-id'], 'n1');
    assert.equal(va.status.attachError, undefined);
    assert.ok((await get(`/api/v1/persistentvolumes/${pvName}`)).body.metadata.finalizers.includes('external-attacher/hostpath-csi-kubeling-io'));

    await ok(
      admin(
        'PATCH',
        '/api/v1/namespaces/default/persistentvolumeclaims/data',
        { spec: { resources: { requests: { storage: '2Gi' } } } },
        { contentType: 'application/merge-patch+json' },
      ),
    );
    const resized = await eventually(async () => {
      const x = (await get('/api/v1/namespaces/default/persistentvolumeclaims/data')).body;
      return x.status?.conditions?.some((k: any) => k.type === 'FileSystemResizePending') && x;
    });
    const cond = resized.status.conditions.find((k: any) => k.type === 'FileSystemResizePending');
    assert.equal(cond.status, 'True');
    assert.equal(cond.message, 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.');
    assert.deepEqual(resized.status.allocatedResources, { storage: '2Gi' });
    assert.deepEqual(resized.status.allocatedResourceStatuses, { storage: 'NodeResizePending' });
    assert.deepEqual(resized.status.capacity, { storage: '1Gi' }, 'the kubelet finishes the resize');
    assert.deepEqual((await get(`/api/v1/persistentvolumes/${pvName}`)).body.spec.capacity, { storage: '2Gi' });
    const reasons = (await eventsOf('data')).map((e) => e.reason);
    assert.ok(reasons.includes('Resizing') && reasons.includes('FileSystemResizeRequired'), reasons.join());

    await ok(admin('DELETE', `/apis/storage.k8s.io/v1/volumeattachments/${vaName}`));
    await eventually(async () => (await get(`/apis/storage.k8s.io/v1/volumeattachments/${vaName}`)).status === 404);
  });

  test('a Released volume with policy Delete is deleted: driver volume, PV, finalizers', async () => {
    const handle = (await get(`/api/v1/persistentvolumes/${pvName}`)).body.spec.csi.volumeHandle;
    await ok(admin('DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/data'));
    // The PV controller's Release once the claim is gone.
    await eventually(async () => {
      const pv = (await get(`/api/v1/persistentvolumes/${pvName}`)).body;
      return (await admin('PUT', `/api/v1/persistentvolumes/${pvName}/status`, { ...pv, status: { phase: 'Released' } })).status === 200;
    });
    await eventually(async () => {
      const r = await get(`/api/v1/persistentvolumes/${pvName}`);
      if (r.status === 404) return true;
      const f: string[] = r.body.metadata.finalizers ?? [];
      return (
        !!r.body.metadata.deletionTimestamp &&
        !f.includes('external-provisioner.volume.kubernetes.io/finalizer') &&
        !f.includes('external-attacher/hostpath-csi-kubeling-io')
      );
    });
    assert.equal(existsSync(join(dir, 'state', 'volumes', handle)), false, 'the directory is gone');
  });

  test('the published capacity follows the deletion', async () => {
    await eventually(async () => (await capacityOf('standard'))[0]?.capacity === '10Gi');
  });

  test('Immediate binding: this node becomes the owner, then provisions', async () => {
    const created = await ok(admin('POST', '/api/v1/namespaces/default/persistentvolumeclaims', claim('now', { class: 'instant' })));
    const owned = await eventually(async () => {
      const c = (await get('/api/v1/namespaces/default/persistentvolumeclaims/now')).body;
      return c.metadata.annotations?.['volume.kubernetes.io/selected-node'] === 'n1' && c;
    });
    assert.ok(owned);
    await eventually(async () => (await get(`/api/v1/persistentvolumes/pvc-${created.metadata.uid}`)).status === 200);
  });

  test('a claim larger than the node fails with the driver’s error as the event, and is retried', async () => {
    await ok(admin('POST', '/api/v1/namespaces/default/persistentvolumeclaims', claim('huge', { node: 'n1', size: '20Gi' })));
    const failed = await eventually(async () => {
      const e = (await eventsOf('huge')).filter((x) => x.reason === 'ProvisioningFailed');
      return e.length > 0 && e[0];
    });
    assert.equal(failed.type, 'Warning');
    assert.match(failed.message, /^rpc error: code = \w+ desc = /);
  });
});
