/**
 * CSIDriverRestriction on a secure apiserver with the storage add-on's RBAC:
 * the CSI driver identities of nodes n1 and n2 (`system:csi-driver:<node>`)
 * make the writes their sidecars make on their own node's storage, and are
 * refused everything that would reach beyond it — hostPath or secret-bearing
 * volumes, volumes for other nodes' claims, other nodes' attachments and
 * capacities, and claims taken from or given to another node.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, startTestEnv, type Reply, type TestEnv } from '@kubeling/testenv';
import { CSI_DRIVER, CSI_DRIVER_GROUP, csiDriverUser, storageObjects } from '@kubeling/testenv/storage';

let env: TestEnv;
type Call = ReturnType<typeof clientFor>;
let admin: Call;
let n1: Call;
let n2: Call;

const TOPOLOGY_KEY = 'topology.hostpath.kubeling.io/node';
const PVS = '/api/v1/persistentvolumes';
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const VAS = '/apis/storage.k8s.io/v1/volumeattachments';
const CAPS = '/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities';
const merge = { contentType: 'application/merge-patch+json' };
const uids: Record<string, string> = {};

const ok = async (p: Promise<Reply>): Promise<any> => {
  const r = await p;
  assert.ok(r.status < 300, `${r.status} ${r.text}`);
  return r.body;
};
const forbiddenWith = (r: Reply, message: string | RegExp) => {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body.reason, 'Forbidden');
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else assert.match(r.body.message, message);
};
const refusal = (resource: string, name: string, user: string, why: string) => `${resource} "${name}" is forbidden: csidriverrestriction: ${user} ${why}`;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pinned = (node: string) => ({ required: { nodeSelectorTerms: [{ matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'In', values: [node] }] }] } });

function volume(name: string, o: { node?: string; claim?: string; source?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'standard',
      ...(o.source ?? { csi: { driver: CSI_DRIVER, volumeHandle: name } }),
      ...(o.claim ? { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: o.claim, uid: uids[o.claim] } } : {}),
      ...(o.node ? { nodeAffinity: pinned(o.node) } : {}),
    },
  };
}

function claim(name: string, node?: string) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      annotations: { 'volume.kubernetes.io/storage-provisioner': CSI_DRIVER, ...(node ? { 'volume.kubernetes.io/selected-node': node } : {}) },
    },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } },
  };
}

const attachment = (name: string, node: string, pv: string) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name },
  spec: { attacher: CSI_DRIVER, nodeName: node, source: { persistentVolumeName: pv } },
});

const capacity = (nodeTopology: Record<string, unknown> | undefined) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSIStorageCapacity',
  metadata: { generateName: 'csisc-', labels: { 'csi.storage.k8s.io/drivername': CSI_DRIVER } },
  storageClassName: 'standard',
  ...(nodeTopology ? { nodeTopology } : {}),
  capacity: '10Gi',
});

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  n1 = clientFor(env, await env.pki!.client(csiDriverUser('n1'), [CSI_DRIVER_GROUP]));
  n2 = clientFor(env, await env.pki!.client(csiDriverUser('n2'), [CSI_DRIVER_GROUP]));
  for (const obj of storageObjects().filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')) {
    const path = obj.kind === 'ClusterRole' ? '/apis/rbac.authorization.k8s.io/v1/clusterroles' : '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    await ok(admin('POST', path, obj));
  }
  await ok(admin('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { p: 'x' } }));
  for (const [name, node] of [
    ['c1', 'n1'],
    ['c2', 'n2'],
    ['free', undefined],
  ] as const) {
    uids[name] = (await ok(admin('POST', PVCS, claim(name, node)))).metadata.uid;
  }
});
after(async () => {
  await env?.stop();
});

describe('PersistentVolumes', () => {
  const u1 = csiDriverUser('n1');
  const deny = (name: string, why: string) => refusal('persistentvolumes', name, u1, why);

  test('a volume that is not csi only, or names a secret, is refused', async () => {
    const hostPath = volume('hp', { node: 'n1', claim: 'c1', source: { hostPath: { path: '/etc' } } });
    forbiddenWith(await n1('POST', PVS, hostPath), deny('hp', 'may only create PersistentVolumes with a csi volume source only, not hostPath'));
    const nfs = volume('nfs', { node: 'n1', claim: 'c1', source: { nfs: { server: 'files.example.com', path: '/' } } });
    forbiddenWith(await n1('POST', PVS, nfs), deny('nfs', 'may only create PersistentVolumes with a csi volume source only, not nfs'));
    const secret = volume('sec', {
      node: 'n1',
      claim: 'c1',
      source: { csi: { driver: CSI_DRIVER, volumeHandle: 'v', nodePublishSecretRef: { name: 'db', namespace: 'default' } } },
    });
    forbiddenWith(await n1('POST', PVS, secret), deny('sec', 'may only create PersistentVolumes that reference no secrets (spec.csi.nodePublishSecretRef)'));
    // The Secret stays out of the driver's reach.
    assert.equal((await n1('GET', '/api/v1/namespaces/default/secrets/db')).status, 403);
    assert.equal((await admin('GET', `${PVS}/hp`)).status, 404);
  });

  test('a volume must be pinned to the driver’s node, for a claim selected for it', async () => {
    const elsewhere = volume('other', { node: 'n2', claim: 'c1' });
    forbiddenWith(await n1('POST', PVS, elsewhere), deny('other', 'may only create PersistentVolumes pinned to node "n1"'));
    forbiddenWith(await n1('POST', PVS, volume('anywhere', { claim: 'c1' })), deny('anywhere', 'may only create PersistentVolumes pinned to node "n1"'));
    const wide = volume('wide', { claim: 'c1' });
    (wide.spec as Record<string, unknown>).nodeAffinity = {
      required: { nodeSelectorTerms: [pinned('n1').required.nodeSelectorTerms[0], { matchExpressions: [{ key: TOPOLOGY_KEY, operator: 'Exists' }] }] },
    };
    forbiddenWith(await n1('POST', PVS, wide), deny('wide', 'may only create PersistentVolumes pinned to node "n1"'));
    forbiddenWith(
      await n1('POST', PVS, volume('steal', { node: 'n1', claim: 'c2' })),
      deny('steal', 'may only create PersistentVolumes for a claim selected for node "n1": claim "default/c2" is selected for node "n2"'),
    );
    forbiddenWith(
      await n1('POST', PVS, volume('unsel', { node: 'n1', claim: 'free' })),
      deny('unsel', 'may only create PersistentVolumes for a claim selected for node "n1": claim "default/free" is not selected for a node'),
    );
    forbiddenWith(
      await n1('POST', PVS, volume('bait', { node: 'n1' })),
      deny('bait', 'may only create PersistentVolumes for a claim selected for node "n1": spec.claimRef must name the claim and its uid'),
    );
    const other = volume('drv', { node: 'n1', claim: 'c1', source: { csi: { driver: 'nfs.csi.example.com', volumeHandle: 'x' } } });
    forbiddenWith(
      await n1('POST', PVS, other),
      deny('drv', `may only create PersistentVolumes of the provisioner of claim "default/c1" ("${CSI_DRIVER}"), not of driver "nfs.csi.example.com"`),
    );
    // Another user is not restricted.
    await ok(admin('POST', PVS, volume('admin-hp', { source: { hostPath: { path: '/tmp/kubeling-never-used' } } })));
  });

  test('the provisioner’s own volume: created, finalizers patched, deleted; another node may not touch it', async () => {
    const pv = volume('pvc-c1', { node: 'n1', claim: 'c1' });
    const created = await ok(n1('POST', PVS, pv));
    assert.deepEqual(created.spec.nodeAffinity, pinned('n1'));
    const fin = { metadata: { finalizers: [...created.metadata.finalizers, 'external-provisioner.volume.kubernetes.io/finalizer'] } };
    forbiddenWith(
      await n2('PATCH', `${PVS}/pvc-c1`, fin, merge),
      refusal('persistentvolumes', 'pvc-c1', csiDriverUser('n2'), 'may only update PersistentVolumes pinned to node "n2"'),
    );
    forbiddenWith(
      await n2('DELETE', `${PVS}/pvc-c1`),
      refusal('persistentvolumes', 'pvc-c1', csiDriverUser('n2'), 'may only delete PersistentVolumes pinned to node "n2"'),
    );
    await ok(n1('PATCH', `${PVS}/pvc-c1`, fin, merge));
    await ok(n1('PATCH', `${PVS}/pvc-c1`, { spec: { capacity: { storage: '2Gi' } } }, merge));
    forbiddenWith(
      await n1('PATCH', `${PVS}/pvc-c1`, { spec: { claimRef: { name: 'c2', uid: uids.c2 } } }, merge),
      deny('pvc-c1', 'may not change the claimRef of PersistentVolumes'),
    );
    // An administrator's volume on another node, and one not pinned at all, are out of reach.
    await ok(admin('POST', PVS, volume('pvc-c2', { node: 'n2', claim: 'c2' })));
    forbiddenWith(await n1('DELETE', `${PVS}/pvc-c2`), deny('pvc-c2', 'may only delete PersistentVolumes pinned to node "n1"'));
    forbiddenWith(await n1('DELETE', `${PVS}/admin-hp`), deny('admin-hp', 'may only delete PersistentVolumes pinned to node "n1"'));
    forbiddenWith(
      await n1('PATCH', `${PVS}/admin-hp`, { spec: { persistentVolumeReclaimPolicy: 'Delete' } }, merge),
      deny('admin-hp', 'may only update PersistentVolumes pinned to node "n1"'),
    );
    // The provisioner's deletion: the DELETE marks it, then its finalizer goes.
    const marked = await ok(n1('DELETE', `${PVS}/pvc-c1`));
    assert.ok(marked.metadata.deletionTimestamp);
    await ok(n1('PATCH', `${PVS}/pvc-c1`, { metadata: { finalizers: ['kubernetes.io/pv-protection'] } }, merge));
  });
});

describe('VolumeAttachments', () => {
  test('only the driver’s node’s attachments, main resource and status', async () => {
    await ok(admin('POST', VAS, attachment('va-n1', 'n1', 'pvc-c1')));
    await ok(admin('POST', VAS, attachment('va-n2', 'n2', 'pvc-c2')));
    const deny = (why: string) => refusal('volumeattachments.storage.k8s.io', 'va-n2', csiDriverUser('n1'), why);
    forbiddenWith(await n1('PATCH', `${VAS}/va-n2/status`, { status: { attached: true } }, merge), deny('may only update VolumeAttachments of node "n1"'));
    forbiddenWith(
      await n1('PATCH', `${VAS}/va-n2`, { metadata: { finalizers: ['external-attacher/hostpath-csi-kubeling-io'] } }, merge),
      deny('may only update VolumeAttachments of node "n1"'),
    );
    assert.notEqual((await admin('GET', `${VAS}/va-n2`)).body.status?.attached, true);
    // The attacher's writes on its own attachment.
    await ok(
      n1(
        'PATCH',
        `${VAS}/va-n1`,
        { metadata: { finalizers: ['external-attacher/hostpath-csi-kubeling-io'], annotations: { 'csi.alpha.kubernetes.io/node-id': 'n1' } } },
        merge,
      ),
    );
    const attached = await ok(n1('PATCH', `${VAS}/va-n1/status`, { status: { attached: true, attachmentMetadata: { a: 'b' } } }, merge));
    assert.equal(attached.status.attached, true);
    await ok(n1('PATCH', `${VAS}/va-n1`, { metadata: { finalizers: null } }, merge));
  });
});

describe('CSIStorageCapacities', () => {
  const u1 = csiDriverUser('n1');
  test('only capacities whose topology is the driver’s node', async () => {
    // The name is generated before validating admission sees the object.
    const deny = (why: string) =>
      new RegExp(`^${escapeRegExp(refusal('csistoragecapacities.storage.k8s.io', 'csisc-', u1, why)).replace('csisc-', 'csisc-[a-z0-9]{5}')}$`);
    const why = 'may only create CSIStorageCapacities for node "n1"';
    forbiddenWith(await n1('POST', CAPS, capacity({ matchLabels: { [TOPOLOGY_KEY]: 'n2' } })), deny(why));
    forbiddenWith(await n1('POST', CAPS, capacity(undefined)), deny(why));
    forbiddenWith(await n1('POST', CAPS, capacity({ matchLabels: {} })), deny(why));
    forbiddenWith(
      await n1('POST', CAPS, capacity({ matchLabels: { [TOPOLOGY_KEY]: 'n1' }, matchExpressions: [{ key: 'zone', operator: 'Exists' }] })),
      deny(why),
    );
    // The capacity publisher's object, updated and deleted by its own driver only.
    const mine = await ok(n1('POST', CAPS, capacity({ matchLabels: { [TOPOLOGY_KEY]: 'n1' } })));
    const name = mine.metadata.name;
    const other = (why2: string) => refusal('csistoragecapacities.storage.k8s.io', name, csiDriverUser('n2'), why2);
    forbiddenWith(await n2('PUT', `${CAPS}/${name}`, { ...mine, capacity: '1Gi' }), other('may only update CSIStorageCapacities for node "n2"'));
    forbiddenWith(await n2('DELETE', `${CAPS}/${name}`), other('may only delete CSIStorageCapacities for node "n2"'));
    const updated = await ok(n1('PUT', `${CAPS}/${name}`, { ...mine, capacity: '9Gi' }));
    assert.equal(updated.capacity, '9Gi');
    await ok(n1('DELETE', `${CAPS}/${name}`));
  });
});

describe('PersistentVolumeClaims', () => {
  const SELECTED = 'volume.kubernetes.io/selected-node';
  const withSelected = async (name: string, node: string | undefined) => {
    const c = (await admin('GET', `${PVCS}/${name}`)).body;
    const annotations = { ...c.metadata.annotations };
    if (node === undefined) delete annotations[SELECTED];
    else annotations[SELECTED] = node;
    return { ...c, metadata: { ...c.metadata, annotations } };
  };

  test('selected-node: only from unset to the driver’s node, and back', async () => {
    await ok(admin('POST', PVCS, claim('imm')));
    const u1 = csiDriverUser('n1');
    forbiddenWith(
      await n1('PUT', `${PVCS}/imm`, await withSelected('imm', 'n2')),
      refusal('persistentvolumeclaims', 'imm', u1, `may only set ${SELECTED} to "n1"`),
    );
    // Becoming the owner of an Immediate claim, as the provisioner does.
    await ok(n1('PUT', `${PVCS}/imm`, await withSelected('imm', 'n1')));
    const u2 = csiDriverUser('n2');
    forbiddenWith(
      await n2('PUT', `${PVCS}/imm`, await withSelected('imm', 'n2')),
      refusal('persistentvolumeclaims', 'imm', u2, `may not change ${SELECTED} of a claim selected for node "n1"`),
    );
    forbiddenWith(
      await n2('PUT', `${PVCS}/imm`, await withSelected('imm', undefined)),
      refusal('persistentvolumeclaims', 'imm', u2, `may not change ${SELECTED} of a claim selected for node "n1"`),
    );
    // Rescheduling (out of space): the driver takes its own node off.
    const off = await ok(n1('PUT', `${PVCS}/imm`, await withSelected('imm', undefined)));
    assert.equal(off.metadata.annotations[SELECTED], undefined);
    // Nothing else of a claim: not its volume, not its provisioner.
    forbiddenWith(
      await n1('PATCH', `${PVCS}/free`, { spec: { volumeName: 'pvc-c1' } }, merge),
      refusal('persistentvolumeclaims', 'free', u1, `may only change the ${SELECTED} annotation of PersistentVolumeClaims`),
    );
    forbiddenWith(
      await n1('PATCH', `${PVCS}/free`, { metadata: { annotations: { 'volume.kubernetes.io/storage-provisioner': 'x' } } }, merge),
      refusal('persistentvolumeclaims', 'free', u1, `may only change the ${SELECTED} annotation of PersistentVolumeClaims`),
    );
  });

  test('status: only of claims bound to the driver’s node’s volumes', async () => {
    await ok(admin('POST', PVS, volume('pv-b1', { node: 'n1', claim: 'c1' })));
    for (const [name, pv] of [
      ['c1', 'pv-b1'],
      ['c2', 'pvc-c2'],
    ]) {
      await ok(admin('PATCH', `${PVCS}/${name}`, { spec: { volumeName: pv } }, merge));
      await ok(admin('PATCH', `${PVCS}/${name}/status`, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } }, merge));
    }
    const resize = { status: { allocatedResources: { storage: '2Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } };
    const done = await ok(n1('PATCH', `${PVCS}/c1/status`, resize, merge));
    assert.deepEqual(done.status.allocatedResources, { storage: '2Gi' });
    const u1 = csiDriverUser('n1');
    forbiddenWith(
      await n1('PATCH', `${PVCS}/c2/status`, resize, merge),
      refusal('persistentvolumeclaims', 'c2', u1, 'may only update the status of PersistentVolumeClaims bound to PersistentVolumes pinned to node "n1"'),
    );
    forbiddenWith(
      await n1('PATCH', `${PVCS}/free/status`, resize, merge),
      refusal('persistentvolumeclaims', 'free', u1, 'may only update the status of PersistentVolumeClaims bound to PersistentVolumes pinned to node "n1"'),
    );
  });
});
