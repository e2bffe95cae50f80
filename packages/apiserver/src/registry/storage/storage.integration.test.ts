/**
 * PersistentVolumes, claims and storage.k8s.io/v1 against a real etcd and
 * apiserver: defaults, upstream's validation messages, immutable fields,
 * the status subresources (lastPhaseTransitionTime), the storage admission
 * plugins (DefaultStorageClass, StorageObjectInUseProtection,
 * PersistentVolumeClaimResize), Tables and protobuf.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const SC = '/apis/storage.k8s.io/v1/storageclasses';
const PV = '/api/v1/persistentvolumes';
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
/** A CSI driver name is a DNS subdomain (upstream's ValidateCSIDriverName). */
const DRIVER = 'hostpath.kubeling.io';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const MERGE = { contentType: 'application/merge-patch+json' };
const causes = (r: { body: { details?: { causes?: { field: string; message: string }[] } } }) =>
  (r.body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const post = (path: string, body: object) => request(env.url, 'POST', path, body);
const get = (path: string) => request(env.url, 'GET', path);
const patch = (path: string, body: object) => request(env.url, 'PATCH', path, body, MERGE);

const sc = (name: string, extra: object = {}) => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: 'hostpath.csi.kubeling.io',
  ...extra,
});
const csiPV = (name: string, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: name }, ...extra },
});
const claim = (name: string, spec: object = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

test('StorageClass: defaults, validation, immutable fields, the default marked in the Table', async () => {
  const c = await post(SC, sc('fast', { allowVolumeExpansion: true }));
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.reclaimPolicy, 'Delete');
  assert.equal(c.body.volumeBindingMode, 'Immediate');
  const d = await post(SC, {
    ...sc('standard', { volumeBindingMode: 'WaitForFirstConsumer' }),
    metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  });
  assert.equal(d.status, 201, d.text);

  const bad = await post(SC, sc('bad', { provisioner: '', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' }));
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), [
    'provisioner: Required value',
    'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
    'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
  ]);

  const up = await patch(`${SC}/fast`, {
    provisioner: 'other.io/x',
    parameters: { a: 'b' },
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  assert.equal(up.status, 422);
  assert.deepEqual(causes(up), [
    'parameters: Forbidden: updates to parameters are forbidden.',
    'provisioner: Forbidden: updates to provisioner are forbidden.',
    'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
    'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
  ]);
  assert.equal((await patch(`${SC}/fast`, { allowVolumeExpansion: false, metadata: { labels: { tier: 'fast' } } })).status, 200);

  const t = await request(env.url, 'GET', SC, undefined, { accept: TABLE });
  assert.deepEqual(
    t.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'Provisioner', 'ReclaimPolicy', 'VolumeBindingMode', 'AllowVolumeExpansion', 'Age'],
  );
  const rows = t.body.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 5));
  assert.deepEqual(rows, [
    ['fast', 'hostpath.csi.kubeling.io', 'Delete', 'Immediate', false],
    ['standard (default)', 'hostpath.csi.kubeling.io', 'Delete', 'WaitForFirstConsumer', false],
  ]);
});

test('PersistentVolume: Pending with a transition time, Retain and Filesystem, pv-protection, one source, immutable source', async () => {
  const c = await post(PV, csiPV('pv1', { status: { phase: 'Bound' } }));
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.status.phase, 'Pending');
  assert.ok(c.body.status.lastPhaseTransitionTime);
  assert.equal(c.body.spec.persistentVolumeReclaimPolicy, 'Retain');
  assert.equal(c.body.spec.volumeMode, 'Filesystem');
  assert.deepEqual(c.body.metadata.finalizers, ['kubernetes.io/pv-protection']);

  const two = await post(PV, csiPV('two', { hostPath: { path: '/tmp/x' }, nfs: { server: 'n', path: '/e' } }));
  assert.equal(two.status, 422);
  assert.deepEqual(causes(two), [
    'spec.nfs: Forbidden: may not specify more than 1 volume type',
    'spec.csi: Forbidden: may not specify more than 1 volume type',
  ]);
  const none = await post(PV, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'none' }, spec: { capacity: { storage: '0' } } });
  assert.deepEqual(causes(none), [
    'spec.accessModes: Required value',
    'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
    'spec: Required value: must specify a volume type',
  ]);
  const slash = await post(PV, csiPV('slash', { csi: { driver: 'kubeling.io/hostpath', volumeHandle: 'h' } }));
  assert.match(causes(slash)[0]!, /^spec\.csi\.driver: Invalid value: "kubeling\.io\/hostpath": a lowercase RFC 1123 subdomain must consist of/);
  const local = await post(PV, csiPV('local', { csi: undefined, local: { path: '/data' } }));
  assert.deepEqual(causes(local), ['spec.nodeAffinity: Required value: Local volume requires node affinity']);
  const affinity = { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } };
  const okLocal = await post(PV, csiPV('local', { csi: undefined, local: { path: '/data' }, nodeAffinity: affinity, storageClassName: 'local' }));
  assert.equal(okLocal.status, 201, okLocal.text);

  const src = await patch(`${PV}/pv1`, { spec: { csi: { volumeHandle: 'other' }, volumeMode: 'Block' } });
  assert.equal(src.status, 422);
  assert.match(src.body.message, /spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation\n/);
  assert.ok(causes(src).includes('volumeMode: Invalid value: "Block": field is immutable'));
  const aff = await patch(`${PV}/local`, {
    spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] }] } } },
  });
  assert.equal(aff.status, 422);
  assert.match(aff.body.message, /nodeAffinity: Invalid value: .*"n2".*: field is immutable, except for updating from beta label to GA/);
  assert.equal((await patch(`${PV}/pv1`, { spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: 'default', name: 'c' } } })).status, 200);

  // /status: the phase changes, the transition time follows; the spec is not taken.
  const cur = (await get(`${PV}/pv1`)).body;
  const st = await request(env.url, 'PUT', `${PV}/pv1/status`, { ...cur, spec: { ...cur.spec, storageClassName: 'x' }, status: { phase: 'Available' } });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.body.status.phase, 'Available');
  assert.equal(st.body.spec.storageClassName, undefined);
  assert.ok(st.body.status.lastPhaseTransitionTime >= cur.status.lastPhaseTransitionTime);
  const same = await request(env.url, 'PUT', `${PV}/pv1/status`, { ...st.body, status: { phase: 'Available', message: 'm' } });
  assert.equal(same.body.status.lastPhaseTransitionTime, st.body.status.lastPhaseTransitionTime, 'same phase: the time is kept');
  // The main resource ignores the status.
  const main = await patch(`${PV}/pv1`, { status: { phase: 'Failed' } });
  assert.equal(main.body.status.phase, 'Available');

  const t = await request(env.url, 'GET', `${PV}/pv1`, undefined, { accept: TABLE });
  assert.deepEqual(
    t.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'Capacity', 'Access Modes', 'Reclaim Policy', 'Status', 'Claim', 'StorageClass', 'VolumeAttributesClass', 'Reason', 'Age', 'VolumeMode'],
  );
  const cells = t.body.rows[0].cells;
  assert.deepEqual([...cells.slice(0, 9), cells[10]], ['pv1', '1Gi', 'RWO', 'Delete', 'Available', 'default/c', '', '<unset>', '', 'Filesystem']);
});

test('PersistentVolumeClaim: the default class, pvc-protection, validation, spec immutable, resize rules', async () => {
  const c = await post(PVC, claim('data'));
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.spec.storageClassName, 'standard', 'DefaultStorageClass');
  assert.equal(c.body.spec.volumeMode, 'Filesystem');
  assert.equal(c.body.status.phase, 'Pending');
  assert.deepEqual(c.body.metadata.finalizers, ['kubernetes.io/pvc-protection']);
  const none = await post(PVC, claim('none', { storageClassName: '' }));
  assert.equal(none.body.spec.storageClassName, '', 'an empty class is a class');
  const fast = await post(PVC, claim('grow', { storageClassName: 'fast' }));
  assert.equal(fast.status, 201, fast.text);

  const secretSource = await post(PVC, claim('ds1', { dataSource: { kind: 'Secret', name: 's' } }));
  assert.equal(secretSource.status, 201, secretSource.text);
  assert.equal(secretSource.body.spec.dataSource, undefined, 'a data source that is neither a claim nor a snapshot is dropped');
  const claimSource = await post(PVC, claim('ds2', { dataSource: { kind: 'PersistentVolumeClaim', name: 'data' } }));
  // apiGroup is a pointer without omitempty: Go writes null.
  assert.deepEqual(claimSource.body.spec.dataSourceRef, { apiGroup: null, kind: 'PersistentVolumeClaim', name: 'data' }, 'dataSourceRef mirrors dataSource');
  const bad2 = await post(PVC, claim('bad2', { accessModes: [], resources: {}, volumeMode: 'Raw' }));
  assert.equal(bad2.status, 422);
  assert.deepEqual(causes(bad2), [
    'spec.accessModes: Required value: at least 1 access mode is required',
    'spec.resources[storage]: Required value',
    'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
  ]);

  const imm = await patch(`${PVC}/data`, { spec: { accessModes: ['ReadWriteMany'] } });
  assert.equal(imm.status, 422);
  assert.match(
    imm.body.message,
    /spec: Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims\n/,
  );
  const pending = await patch(`${PVC}/grow`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  // Validation runs before validating admission: an unbound claim's request is part of its immutable spec.
  assert.equal(pending.status, 422);
  assert.match(pending.body.message, /spec: Forbidden: spec is immutable after creation except resources\.requests/);
  assert.equal((await patch(`${PVC}/data`, { spec: { volumeName: 'pv1' } })).status, 200, 'the binder sets volumeName once');

  // Bound claims: growing needs a class that allows expansion; shrinking stops at the status capacity.
  for (const name of ['data', 'grow']) {
    const cur = (await get(`${PVC}/${name}`)).body;
    const st = await request(env.url, 'PUT', `${PVC}/${name}/status`, {
      ...cur,
      status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
    });
    assert.equal(st.status, 200, st.text);
  }
  const refused = await patch(`${PVC}/data`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  assert.equal(refused.status, 403);
  assert.equal(
    refused.body.message,
    'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
  );
  assert.equal((await patch(`${SC}/fast`, { allowVolumeExpansion: true })).status, 200);
  const grown = await patch(`${PVC}/grow`, { spec: { resources: { requests: { storage: '2Gi' } } } });
  assert.equal(grown.status, 200, grown.text);
  const shrunk = await patch(`${PVC}/grow`, { spec: { resources: { requests: { storage: '1Gi' } } } });
  assert.equal(shrunk.status, 422);
  assert.deepEqual(causes(shrunk), ['spec.resources.requests.storage: Forbidden: field can not be less than status.capacity']);
  const badStatus = await patch(`${PVC}/grow/status`, { status: { allocatedResourceStatuses: { storage: 'Resizing' }, capacity: { storage: '-1' } } });
  assert.equal(badStatus.status, 422);
  assert.deepEqual(causes(badStatus), [
    'status.capacity[storage]: Invalid value: -1: must be a valid resource quantity',
    'status.allocatedResourceStatus: Unsupported value: "storage": supported values: "ControllerResizeFailed", "ControllerResizeInProgress", "NodeResizeFailed", "NodeResizeInProgress", "NodeResizePending"',
  ]);

  const t = await request(env.url, 'GET', PVC, undefined, { accept: TABLE });
  assert.deepEqual(
    t.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age', 'VolumeMode'],
  );
  const byName = Object.fromEntries(t.body.rows.map((r: { cells: unknown[] }) => [r.cells[0], r.cells]));
  assert.deepEqual(byName.data.slice(0, 7), ['data', 'Bound', 'pv1', '1Gi', 'RWO', 'standard', '<unset>']);
  assert.deepEqual(byName.none.slice(0, 7), ['none', 'Pending', '', '', '', '', '<unset>']);
  // Deleting a claim leaves it Terminating while its finalizer is there.
  assert.equal((await request(env.url, 'DELETE', `${PVC}/none`)).status, 200);
  const term = await request(env.url, 'GET', `${PVC}/none`, undefined, { accept: TABLE });
  assert.equal(term.body.rows[0].cells[1], 'Terminating');
});

test('CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity: defaults, immutability, status, Tables, protobuf', async () => {
  const d = await post('/apis/storage.k8s.io/v1/csidrivers', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: DRIVER }, spec: {} });
  assert.equal(d.status, 201, d.text);
  assert.deepEqual(d.body.spec, {
    attachRequired: true,
    podInfoOnMount: false,
    volumeLifecycleModes: ['Persistent'],
    storageCapacity: false,
    fsGroupPolicy: 'ReadWriteOnceWithFSType',
    requiresRepublish: false,
    seLinuxMount: false,
  });
  const imm = await patch(`/apis/storage.k8s.io/v1/csidrivers/${DRIVER}`, { spec: { attachRequired: false, volumeLifecycleModes: ['Ephemeral'] } });
  assert.deepEqual(causes(imm), [
    'spec.attachedRequired: Invalid value: false: field is immutable',
    'spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable',
  ]);
  const mutable = await patch(`/apis/storage.k8s.io/v1/csidrivers/${DRIVER}`, { spec: { storageCapacity: true, fsGroupPolicy: 'File' } });
  assert.equal(mutable.status, 200, mutable.text);
  assert.equal(mutable.body.metadata.generation, 2);
  const slash = await post('/apis/storage.k8s.io/v1/csidrivers', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: 'kubeling.io/hostpath' },
    spec: {},
  });
  assert.equal(slash.status, 422, 'a driver name is a DNS subdomain');

  const node = await post('/apis/storage.k8s.io/v1/csinodes', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name: 'n1' },
    spec: { drivers: [{ name: DRIVER, nodeID: 'n1', topologyKeys: ['topology.hostpath.kubeling.io/node'] }] },
  });
  assert.equal(node.status, 201, node.text);
  const nodeUp = await patch('/apis/storage.k8s.io/v1/csinodes/n1', { spec: { drivers: [{ name: DRIVER, nodeID: 'other' }] } });
  assert.equal(nodeUp.status, 422);
  assert.match(nodeUp.body.message, /spec\.drivers: Invalid value: \{"Name":"hostpath\.kubeling\.io","NodeID":"other".*\}: field is immutable/);

  const VA = '/apis/storage.k8s.io/v1/volumeattachments';
  const va = await post(VA, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'csi-abc' },
    spec: { attacher: DRIVER, nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    status: { attached: true },
  });
  assert.equal(va.status, 201, va.text);
  assert.deepEqual(va.body.status, { attached: false }, 'the status is reset on create');
  const vaSpec = await patch(`${VA}/csi-abc`, { spec: { nodeName: 'n2' } });
  assert.equal(vaSpec.status, 422);
  assert.match(vaSpec.body.message, /spec: Invalid value: \{"Attacher":"hostpath\.kubeling\.io",.*"NodeName":"n2"\}: field is immutable/);
  const vaStatus = await patch(`${VA}/csi-abc/status`, { status: { attached: true, attachmentMetadata: { k: 'v' } } });
  assert.equal(vaStatus.status, 200, vaStatus.text);
  assert.equal(vaStatus.body.status.attached, true);
  const noSource = await post(VA, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'x' },
    spec: { attacher: 'a.b', nodeName: 'n1', source: {} },
  });
  assert.deepEqual(causes(noSource), ['spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName']);
  const vt = await request(env.url, 'GET', VA, undefined, { accept: TABLE });
  assert.deepEqual(vt.body.rows[0].cells.slice(0, 5), ['csi-abc', DRIVER, 'pv1', 'n1', true]);

  const CAP = '/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities';
  const cap = await post(CAP, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { name: 'csisc-n1' },
    storageClassName: 'standard',
    nodeTopology: { matchLabels: { 'topology.hostpath.kubeling.io/node': 'n1' } },
    capacity: '10Gi',
  });
  assert.equal(cap.status, 201, cap.text);
  const capUp = await patch(`${CAP}/csisc-n1`, { storageClassName: 'fast', capacity: '5Gi' });
  assert.deepEqual(causes(capUp), ['storageClassName: Invalid value: "fast": field is immutable']);
  assert.equal((await patch(`${CAP}/csisc-n1`, { capacity: '5Gi' })).body.capacity, '5Gi');

  // Field selectors: metadata.name, as for every kind.
  const byName = await get(`${PV}?fieldSelector=metadata.name%3Dpv1`);
  assert.deepEqual(
    byName.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['pv1'],
  );
  assert.equal((await get(`${PVC}?fieldSelector=spec.volumeName%3Dpv1`)).status, 400, 'no other field is selectable');

  // Protobuf, as kubectl and client-go ask for it.
  for (const path of [`${PV}/pv1`, PVC, SC, VA, CAP, '/apis/storage.k8s.io/v1/csinodes/n1']) {
    const res = await fetch(env.url + path, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-type'), 'application/vnd.kubernetes.protobuf', path);
    assert.ok((await res.arrayBuffer()).byteLength > 20, path);
  }
});
