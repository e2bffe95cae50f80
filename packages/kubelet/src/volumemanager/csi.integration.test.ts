/**
 * The kubelet's CSI side against a real etcd + apiserver, a kubelet on
 * kubeling's runtime, and a small CSI driver served in this process (Identity
 * and Node services publishing by links, as the hostpath driver does) with its
 * registration socket in the kubelet's plugins_registry: the CSINode is made
 * at start and lists the driver once it registers (with the node ID and
 * topology on the Node); a pod on a bound claim waits for its
 * VolumeAttachment, is staged and published, writes into the volume, reports
 * the volume in use, grows with its claim, and is unpublished and unstaged
 * when deleted; the driver's socket going deregisters it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { serveCri, type CriServer } from '@kubeling/cri';
import { serveCsi, serveRegistration } from '@kubeling/csi';
import { KubelingRuntime } from '@kubeling/runtime';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from '../kubelet.js';
import { attachmentName, publishPath, stagingPath, uniqueVolumeName } from './types.js';

type Obj = Record<string, any>;

const NODE = 'csi-node';
const DRIVER = 'test.csi.kubeling.io';
const TOPOLOGY = 'topology.test.csi.kubeling.io/node';

let env: TestEnv;
let dir: string;
let runtime: KubelingRuntime;
let cri: CriServer;
let kubelet: Kubelet;
let driver: { close(): Promise<void> };
let registration: { close(): Promise<void> } | undefined;
const calls: Obj[] = [];
const statuses: Obj[] = [];

const api = async (method: string, path: string, body?: unknown, contentType?: string): Promise<Obj> => {
  const r = await request(env.url, method, path, body, contentType ? { contentType } : {});
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
};
const get = async (path: string): Promise<Obj | undefined> => {
  const r = await request(env.url, 'GET', path);
  return r.status === 200 ? r.body : undefined;
};
const methods = () => calls.map((c) => c.method);

/** A driver's node side keeping volumes as folders and publishing them by links. */
function nodeService(volumes: string) {
  const volDir = (id: string) => join(volumes, id);
  /** Makes `path` a link to `to`, replacing the empty folder the kubelet may have made there. */
  const link = (path: string, to: string) => {
    try {
      rmdirSync(path);
    } catch {
      // nothing there
    }
    if (!existsSync(path)) symlinkSync(to, path);
  };
  const record = (method: string, req: Obj) => calls.push({ method, ...req });
  return {
    NodeGetInfo: async () => ({ node_id: NODE, max_volumes_per_node: '5', accessible_topology: { segments: { [TOPOLOGY]: NODE } } }),
    NodeGetCapabilities: async () => ({ capabilities: ['STAGE_UNSTAGE_VOLUME', 'EXPAND_VOLUME'].map((type) => ({ rpc: { type } })) }),
    NodeStageVolume: async (r: Obj) => {
      record('NodeStageVolume', r);
      mkdirSync(volDir(r.volume_id), { recursive: true });
      link(r.staging_target_path, volDir(r.volume_id));
      return {};
    },
    NodeUnstageVolume: async (r: Obj) => {
      record('NodeUnstageVolume', r);
      if (lstatSync(r.staging_target_path, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(r.staging_target_path);
      return {};
    },
    NodePublishVolume: async (r: Obj) => {
      record('NodePublishVolume', r);
      link(r.target_path, volDir(r.volume_id));
      return {};
    },
    NodeUnpublishVolume: async (r: Obj) => {
      record('NodeUnpublishVolume', r);
      try {
        unlinkSync(r.target_path);
      } catch {
        // not published
      }
      return {};
    },
    NodeExpandVolume: async (r: Obj) => {
      record('NodeExpandVolume', r);
      return { capacity_bytes: r.capacity_range.required_bytes };
    },
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kcsi-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'rt'), podCIDR: '127.5.12.0/24' });
  const endpoint = `unix://${join(dir, 'rt.sock')}`;
  cri = await serveCri(runtime, endpoint);
  env = await startTestEnv();
  driver = await serveCsi(
    {
      Identity: {
        GetPluginInfo: async () => ({ name: DRIVER, vendor_version: '0.1.0' }),
        GetPluginCapabilities: async () => ({ capabilities: [] }),
        Probe: async () => ({ ready: { value: true } }),
      },
      Node: nodeService(join(dir, 'volumes')),
    },
    `unix://${join(dir, 'csi.sock')}`,
  );
  kubelet = new Kubelet({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    nodeName: NODE,
    runtime: endpoint,
    rootDir: join(dir, NODE),
    port: 0,
    log: pino({ level: 'silent' }),
    statusUpdateMs: 1000,
    leaseRenewMs: 1000,
    plegPeriodMs: 300,
    resizeCheckMs: 300,
    pluginScanMs: 200,
  });
  await kubelet.start();
});

after(async () => {
  await kubelet?.stop();
  for (const sb of (await runtime?.listPodSandbox().catch(() => [])) ?? []) await runtime.removePodSandbox(sb.id).catch(() => undefined);
  await runtime?.shutdown();
  cri?.forceShutdown();
  await registration?.close();
  await driver?.close();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the CSINode is made at start; the driver registers through plugins_registry and is listed with its node ID and topology', async () => {
  await waitFor(async () => !!(await get(`/apis/storage.k8s.io/v1/csinodes/${NODE}`)), 10_000, 'the CSINode');
  const first = (await get(`/apis/storage.k8s.io/v1/csinodes/${NODE}`))!;
  const node = (await get(`/api/v1/nodes/${NODE}`))!;
  assert.deepEqual(first.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: node.metadata.uid }]);
  assert.deepEqual(first.spec.drivers ?? [], []);
  registration = await serveRegistration(
    { type: 'CSIPlugin', name: DRIVER, endpoint: `unix://${join(dir, 'csi.sock')}`, supported_versions: ['1.0.0'] },
    join(dir, NODE, 'plugins_registry', 'test-reg.sock'),
    (s) => statuses.push(s),
  );
  await waitFor(async () => statuses.length > 0, 10_000, 'the registration status');
  assert.deepEqual(statuses, [{ plugin_registered: true, error: '' }]);
  const csiNode = (await get(`/apis/storage.k8s.io/v1/csinodes/${NODE}`))!;
  assert.deepEqual(csiNode.spec.drivers, [{ name: DRIVER, nodeID: NODE, topologyKeys: [TOPOLOGY], allocatable: { count: 5 } }]);
  const n = (await get(`/api/v1/nodes/${NODE}`))!;
  assert.equal(n.metadata.annotations['csi.volume.kubernetes.io/nodeid'], JSON.stringify({ [DRIVER]: NODE }));
  assert.equal(n.metadata.labels[TOPOLOGY], NODE);
});

test('a pod on a bound claim waits for its attachment, is staged and published, writes into the volume, grows with its claim, and is torn down when deleted', async () => {
  await waitFor(async () => kubelet.drivers.has(DRIVER), 10_000, 'the driver registered');
  await api('POST', '/apis/storage.k8s.io/v1/csidrivers', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: DRIVER },
    spec: { attachRequired: true, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'] },
  });
  const claim = await api('POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: 'pv-data', storageClassName: '' },
  });
  await api('POST', '/api/v1/persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-data' },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: '',
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: claim.metadata.uid },
      csi: { driver: DRIVER, volumeHandle: 'vol-1', volumeAttributes: { kind: 'test' } },
    },
  });
  await api('PATCH', '/api/v1/persistentvolumes/pv-data/status', { status: { phase: 'Bound' } }, 'application/merge-patch+json');
  await api(
    'PATCH',
    '/api/v1/namespaces/default/persistentvolumeclaims/data/status',
    { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } },
    'application/merge-patch+json',
  );
  const pod = await api('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'writer' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: 'busybox',
          command: ['sh', '-c', 'echo written-by-pod > $KUBELING_ROOT/data/f; sleep 3600'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    },
  });
  const uid = pod.metadata.uid as string;
  const root = join(dir, NODE);
  const unique = uniqueVolumeName(DRIVER, 'vol-1');

  // Reported in use, then waiting on the attachment: the containers are being created.
  await waitFor(async () => ((await get(`/api/v1/nodes/${NODE}`))?.status?.volumesInUse ?? []).includes(unique), 10_000, 'the volume in use');
  const waiting = (await get('/api/v1/namespaces/default/pods/writer'))!;
  assert.equal(waiting.status.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  assert.equal(calls.length, 0, 'nothing is staged before the attachment');
  const vaName = attachmentName('vol-1', DRIVER, NODE);
  await api('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: vaName },
    spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pv-data' } },
  });
  await api(
    'PATCH',
    `/apis/storage.k8s.io/v1/volumeattachments/${vaName}/status`,
    { status: { attached: true, attachmentMetadata: { device: 'test' } } },
    'application/merge-patch+json',
  );
  await waitFor(async () => (await get('/api/v1/namespaces/default/pods/writer'))?.status?.phase === 'Running', 30_000, 'the pod running');
  await waitFor(async () => existsSync(join(dir, 'volumes', 'vol-1', 'f')), 10_000, 'the file in the volume');
  assert.equal(readFileSync(join(dir, 'volumes', 'vol-1', 'f'), 'utf8'), 'written-by-pod\n');
  const staging = stagingPath(root, DRIVER, 'vol-1');
  const target = publishPath(root, uid, 'pv-data');
  assert.deepEqual(methods(), ['NodeStageVolume', 'NodePublishVolume']);
  assert.ok(lstatSync(staging).isSymbolicLink() && lstatSync(target).isSymbolicLink());
  // As the driver decodes it: the oneof named, proto defaults filled in.
  const cap = { mount: { fs_type: '', mount_flags: [], volume_mount_group: '' }, access_type: 'mount', access_mode: { mode: 'SINGLE_NODE_WRITER' } };
  assert.deepEqual(calls[0], {
    method: 'NodeStageVolume',
    volume_id: 'vol-1',
    publish_context: { device: 'test' },
    staging_target_path: staging,
    volume_capability: cap,
    secrets: {},
    volume_context: { kind: 'test' },
  });
  assert.deepEqual(calls[1], {
    method: 'NodePublishVolume',
    volume_id: 'vol-1',
    publish_context: { device: 'test' },
    staging_target_path: staging,
    target_path: target,
    volume_capability: cap,
    readonly: false,
    secrets: {},
    volume_context: { kind: 'test' },
  });

  // Online expansion: the resizer grew the PV and left the rest to the node.
  await api('PATCH', '/api/v1/persistentvolumes/pv-data', { spec: { capacity: { storage: '2Gi' } } }, 'application/merge-patch+json');
  await api(
    'PATCH',
    '/api/v1/namespaces/default/persistentvolumeclaims/data/status',
    {
      status: {
        allocatedResourceStatuses: { storage: 'NodeResizePending' },
        conditions: [
          { type: 'FileSystemResizePending', status: 'True', message: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.' },
        ],
      },
    },
    'application/merge-patch+json',
  );
  await waitFor(
    async () => (await get('/api/v1/namespaces/default/persistentvolumeclaims/data'))?.status?.capacity?.storage === '2Gi',
    10_000,
    'the claim status to follow the PV',
  );
  const grown = (await get('/api/v1/namespaces/default/persistentvolumeclaims/data'))!;
  assert.equal(grown.status.conditions, undefined);
  assert.equal(grown.status.allocatedResourceStatuses, undefined);
  const expand = calls.find((c) => c.method === 'NodeExpandVolume')!;
  assert.deepEqual([expand.volume_path, expand.staging_target_path, expand.capacity_range.required_bytes], [target, staging, String(2 * 1024 ** 3)]);
  await waitFor(
    async () =>
      ((await get('/api/v1/namespaces/default/events'))?.items ?? []).some(
        (e: Obj) => e.reason === 'FileSystemResizeSuccessful' && e.involvedObject.kind === 'PersistentVolumeClaim',
      ),
    10_000,
    'the FileSystemResizeSuccessful event on the claim',
  );

  // Deleted: unpublished, unstaged (no other pod uses it), and no longer in use.
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/writer')).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/writer')).status === 404, 20_000, 'the pod to be gone');
  assert.deepEqual(methods().slice(-2), ['NodeUnpublishVolume', 'NodeUnstageVolume']);
  assert.deepEqual(calls.at(-2), { method: 'NodeUnpublishVolume', volume_id: 'vol-1', target_path: target });
  assert.equal(existsSync(join(root, 'pods', uid, 'volumes', 'kubernetes.io~csi', 'pv-data')), false);
  assert.equal(existsSync(staging), false);
  assert.equal(readFileSync(join(dir, 'volumes', 'vol-1', 'f'), 'utf8'), 'written-by-pod\n', 'the data stays with the driver');
  await waitFor(async () => !(await get(`/api/v1/nodes/${NODE}`))?.status?.volumesInUse, 10_000, 'the volume no longer in use');
});

test('a pod whose claim is not bound waits, with the FailedMount event', async () => {
  await api('POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'pending' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'none' },
  });
  await api('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'unbound' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'pending' } }],
    },
  });
  const want =
    'Unable to attach or mount volumes: unmounted volumes=[v], unattached volumes=[], failed to process volumes=[v]: error processing PVC default/pending: PVC is not bound';
  await waitFor(
    async () => ((await get('/api/v1/namespaces/default/events'))?.items ?? []).some((e: Obj) => e.involvedObject.name === 'unbound' && e.message === want),
    10_000,
    'the FailedMount event',
  );
  const p = (await get('/api/v1/namespaces/default/pods/unbound'))!;
  assert.equal(p.status.phase, 'Pending');
  assert.equal(p.status.containerStatuses[0].state.waiting.reason, 'ContainerCreating');
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/unbound')).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/unbound')).status === 404, 20_000, 'the pod to be gone');
});

test("the driver's registration socket going deregisters it: its CSINode entry and node ID go", async () => {
  await registration!.close();
  registration = undefined;
  rmSync(join(dir, NODE, 'plugins_registry', 'test-reg.sock'), { force: true });
  await waitFor(async () => ((await get(`/apis/storage.k8s.io/v1/csinodes/${NODE}`))?.spec?.drivers ?? []).length === 0, 10_000, 'the CSINode entry to go');
  // The Node's annotation is removed after the CSINode entry, as upstream's UninstallCSIDriver does.
  await waitFor(
    async () => (await get(`/api/v1/nodes/${NODE}`))?.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'] === undefined,
    10_000,
    "the Node's node ID annotation to go",
  );
  assert.equal(kubelet.drivers.has(DRIVER), false);
});
