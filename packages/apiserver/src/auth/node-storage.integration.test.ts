/**
 * The Node authorizer's storage graph and NodeRestriction on a secure
 * apiserver: a kubelet gets the claims of its pods, the volumes whose
 * claimRef names them (never through a claim's own volumeName) and the
 * Secrets those volumes name for the node, the
 * VolumeAttachments of its node, its own CSINode; it may write only its
 * claims' status capacity and conditions. Everything else is 403 with
 * upstream's reasons.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, eventually, startTestEnv, type Reply, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
type Call = ReturnType<typeof clientFor>;
let admin: Call;
let nodeA: Call;
let nodeB: Call;

const DRIVER = 'hostpath.kubeling.io';
const merge = { contentType: 'application/merge-patch+json' };
const created = (r: Reply) => assert.ok(r.status === 201, r.text);
const forbiddenWith = (r: Reply, message: string) => {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body.message, message);
};
/** A CSI volume naming `<name>-secret` in `ns` for the node, bound (claimRef) to `claim` when given. */
const pv = (name: string, claim?: { namespace: string; name: string }, ns = 'st') => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    csi: { driver: DRIVER, volumeHandle: name, nodeStageSecretRef: { name: `${name}-secret`, namespace: ns } },
    ...(claim ? { claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim } } : {}),
  },
});
const claimOf = (name: string, volumeName: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeName },
});
const podOn = (name: string, node: string, volumes: object[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], volumes },
});
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: 'v' } });
const va = (name: string, node: string) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name },
  spec: { attacher: DRIVER, nodeName: node, source: { persistentVolumeName: 'pv-a' } },
});

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  nodeA = clientFor(env, await env.pki!.client('system:node:node-a', ['system:nodes']));
  nodeB = clientFor(env, await env.pki!.client('system:node:node-b', ['system:nodes']));
  for (const ns of ['st', 'vic']) {
    created(await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    created(await admin('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }));
  }
  for (const s of ['pv-a-secret', 'pv-b-secret']) created(await admin('POST', '/api/v1/namespaces/st/secrets', secret(s)));
  created(await admin('POST', '/api/v1/persistentvolumes', pv('pv-a', { namespace: 'st', name: 'data' })));
  created(await admin('POST', '/api/v1/persistentvolumes', pv('pv-b')));
  created(await admin('POST', '/api/v1/namespaces/st/persistentvolumeclaims', claimOf('data', 'pv-a')));
  created(await admin('POST', '/api/v1/namespaces/st/pods', podOn('app', 'node-a', [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }])));
  created(await admin('POST', '/apis/storage.k8s.io/v1/volumeattachments', va('csi-a', 'node-a')));
  created(await admin('POST', '/apis/storage.k8s.io/v1/volumeattachments', va('csi-b', 'node-b')));
});
after(async () => {
  await env?.stop();
});

test('a node gets the claims, volumes, secrets and attachments its pods lead to, and nothing else', async () => {
  await eventually(async () => (await nodeA('GET', '/api/v1/persistentvolumes/pv-a')).status === 200);
  assert.equal((await nodeA('GET', '/api/v1/namespaces/st/persistentvolumeclaims/data')).status, 200);
  assert.equal((await nodeA('GET', '/api/v1/namespaces/st/secrets/pv-a-secret')).status, 200, 'the CSI node stage secret of its volume');
  assert.equal((await nodeA('GET', '/apis/storage.k8s.io/v1/volumeattachments/csi-a')).status, 200);
  forbiddenWith(
    await nodeA('GET', '/api/v1/persistentvolumes/pv-b'),
    `persistentvolumes "pv-b" is forbidden: User "system:node:node-a" cannot get resource "persistentvolumes" in API group "" at the cluster scope: no relationship found between node 'node-a' and this object`,
  );
  forbiddenWith(
    await nodeA('GET', '/api/v1/namespaces/st/secrets/pv-b-secret'),
    `secrets "pv-b-secret" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "st": no relationship found between node 'node-a' and this object`,
  );
  forbiddenWith(
    await nodeA('GET', '/api/v1/persistentvolumes'),
    'persistentvolumes is forbidden: User "system:node:node-a" cannot list resource "persistentvolumes" in API group "" at the cluster scope: can only get individual resources of this type',
  );
  forbiddenWith(
    await nodeA('GET', '/apis/storage.k8s.io/v1/volumeattachments/csi-b'),
    `volumeattachments.storage.k8s.io "csi-b" is forbidden: User "system:node:node-a" cannot get resource "volumeattachments" in API group "storage.k8s.io" at the cluster scope: no relationship found between node 'node-a' and this object`,
  );
  assert.equal((await nodeA('GET', '/apis/storage.k8s.io/v1/csidrivers')).status, 200, 'the node rules list CSIDrivers');
});

test("a claim's volumeName does not lead a node to a volume bound (claimRef) to another claim, nor to its secrets", async () => {
  // The victim: a volume bound to vic/theirs, used by a pod on node-b.
  created(await admin('POST', '/api/v1/namespaces/vic/secrets', secret('pv-v-secret')));
  created(await admin('POST', '/api/v1/persistentvolumes', pv('pv-v', { namespace: 'vic', name: 'theirs' }, 'vic')));
  created(await admin('POST', '/api/v1/namespaces/vic/persistentvolumeclaims', claimOf('theirs', 'pv-v')));
  created(await admin('POST', '/api/v1/namespaces/vic/pods', podOn('victim', 'node-b', [{ name: 'd', persistentVolumeClaim: { claimName: 'theirs' } }])));
  // The thief: a claim of its own naming the victim's volume, and a pod on node-a using it.
  created(await admin('POST', '/api/v1/namespaces/st/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'thief-cm' } }));
  created(await admin('POST', '/api/v1/namespaces/st/persistentvolumeclaims', claimOf('steal', 'pv-v')));
  const thief = podOn('thief', 'node-a', [
    { name: 'd', persistentVolumeClaim: { claimName: 'steal' } },
    { name: 'c', configMap: { name: 'thief-cm' } },
  ]);
  created(await admin('POST', '/api/v1/namespaces/st/pods', thief));

  // The graph holds both pods and the volume: node-b reaches it through the claimRef, node-a sees its thief pod.
  await eventually(async () => (await nodeB('GET', '/api/v1/persistentvolumes/pv-v')).status === 200);
  assert.equal((await nodeB('GET', '/api/v1/namespaces/vic/secrets/pv-v-secret')).status, 200);
  await eventually(async () => (await nodeA('GET', '/api/v1/namespaces/st/configmaps/thief-cm')).status === 200);
  assert.equal((await nodeA('GET', '/api/v1/namespaces/st/persistentvolumeclaims/steal')).status, 200, "the claim itself is its pod's");
  forbiddenWith(
    await nodeA('GET', '/api/v1/persistentvolumes/pv-v'),
    `persistentvolumes "pv-v" is forbidden: User "system:node:node-a" cannot get resource "persistentvolumes" in API group "" at the cluster scope: no relationship found between node 'node-a' and this object`,
  );
  forbiddenWith(
    await nodeA('GET', '/api/v1/namespaces/vic/secrets/pv-v-secret'),
    `secrets "pv-v-secret" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "vic": no relationship found between node 'node-a' and this object`,
  );

  // A generic ephemeral volume's claim <pod>-<volume> leads to the volume bound to it.
  created(await admin('POST', '/api/v1/persistentvolumes', pv('pv-e', { namespace: 'st', name: 'eph-scratch' })));
  const template = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  created(await admin('POST', '/api/v1/namespaces/st/pods', podOn('eph', 'node-a', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: template } }])));
  await eventually(async () => (await nodeA('GET', '/api/v1/persistentvolumes/pv-e')).status === 200);
});

test("a node writes only its claims' status capacity and conditions, and only its own CSINode", async () => {
  await eventually(async () => (await nodeA('GET', '/api/v1/namespaces/st/persistentvolumeclaims/data')).status === 200);
  const st = await nodeA('PATCH', '/api/v1/namespaces/st/persistentvolumeclaims/data/status', { status: { capacity: { storage: '2Gi' } } }, merge);
  assert.equal(st.status, 200, st.text);
  forbiddenWith(
    await nodeA('PATCH', '/api/v1/namespaces/st/persistentvolumeclaims/data/status', { metadata: { labels: { x: 'y' } } }, merge),
    'persistentvolumeclaims "data" is forbidden: node "node-a" is not allowed to update fields other than status.quantity and status.conditions',
  );
  forbiddenWith(
    await nodeA('PATCH', '/api/v1/namespaces/st/persistentvolumeclaims/data', { metadata: { labels: { x: 'y' } } }, merge),
    'persistentvolumeclaims "data" is forbidden: User "system:node:node-a" cannot patch resource "persistentvolumeclaims" in API group "" in the namespace "st": can only get individual resources of this type',
  );

  const csiNode = (name: string) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name },
    spec: { drivers: [{ name: DRIVER, nodeID: name }] },
  });
  created(await nodeA('POST', '/apis/storage.k8s.io/v1/csinodes', csiNode('node-a')));
  forbiddenWith(
    await nodeA('POST', '/apis/storage.k8s.io/v1/csinodes', csiNode('node-b')),
    'csinodes.storage.k8s.io "node-b" is forbidden: can only access CSINode with the same name as the requesting node',
  );
  assert.equal((await nodeA('GET', '/apis/storage.k8s.io/v1/csinodes/node-a')).status, 200);
  forbiddenWith(
    await nodeA('DELETE', '/apis/storage.k8s.io/v1/csinodes/node-b'),
    'csinodes.storage.k8s.io "node-b" is forbidden: User "system:node:node-a" cannot delete resource "csinodes" in API group "storage.k8s.io" at the cluster scope: can only access CSINode with the same name as the requesting node',
  );
});
