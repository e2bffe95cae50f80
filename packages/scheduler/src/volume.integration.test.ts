/**
 * Volume scheduling against a real etcd + apiserver, the test playing the PV
 * controller and the provisioner: a WaitForFirstConsumer claim gets the
 * selected node and the pod is bound only once the claim is; a claim bound to
 * a PV with node affinity takes its pod to that node; a provisioner that gives
 * up sends the pod back with the upstream PreBind message; an unbound
 * Immediate claim keeps its pod Pending.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { InformerFactory, RestClient } from '@kubeling/client';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { buildConfig } from './framework/profile.js';
import { Scheduler } from './scheduler.js';

let env: TestEnv;
let client: RestClient;
let informers: InformerFactory;
let scheduler: Scheduler;

type Obj = Record<string, any>;

const NS = 'vols';
const NODES = ['vol-a', 'vol-b'];
const PROVISIONER = 'example.com/test-provisioner';

async function ok(method: string, path: string, body?: unknown, contentType?: string): Promise<Obj> {
  const r = await request(env.url, method, path, body, contentType ? { contentType } : {});
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

before(async () => {
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false }, { qps: 1000, burst: 1000 });
  informers = new InformerFactory(client);
  scheduler = new Scheduler({
    client,
    informers,
    config: buildConfig({
      podInitialBackoffSeconds: 1,
      podMaxBackoffSeconds: 2,
      profiles: [{ pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 30 } }] }],
    }),
    log: pino({ level: 'silent' }),
  });
  scheduler.init();
  informers.start();
  await scheduler.run();
  await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const name of NODES) {
    await ok('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
    const alloc = { cpu: '4', memory: '8Gi', pods: '110' };
    await ok(
      'PATCH',
      `/api/v1/nodes/${name}/status`,
      { status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] } },
      'application/merge-patch+json',
    );
  }
  for (const [name, mode] of [
    ['wffc', 'WaitForFirstConsumer'],
    ['instant', 'Immediate'],
  ] as const) {
    await ok('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name },
      provisioner: PROVISIONER,
      volumeBindingMode: mode,
    });
  }
});
after(async () => {
  await scheduler?.stop();
  informers?.stop();
  client?.close();
  await env?.stop();
});

const claimPath = (name: string) => `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}`;

async function claim(name: string, className: string, extra: { volumeName?: string; annotations?: Record<string, string> } = {}): Promise<Obj> {
  return ok('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: className,
      ...(extra.volumeName ? { volumeName: extra.volumeName } : {}),
    },
  });
}

async function volume(name: string, className: string, node: string, claimObj: Obj): Promise<Obj> {
  return ok('POST', '/api/v1/persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: className,
      hostPath: { path: `/tmp/${name}` },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: NS, name: claimObj.metadata.name, uid: claimObj.metadata.uid },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
    },
  });
}

/** What the PV controller does once the PV exists: the claim names it, with bind-completed, and turns Bound. */
async function completeBinding(name: string, pvName: string): Promise<void> {
  const c = await ok('GET', claimPath(name));
  c.spec.volumeName = pvName;
  c.metadata.annotations = { ...(c.metadata.annotations ?? {}), 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
  await ok('PUT', claimPath(name), c);
  await ok(
    'PATCH',
    `${claimPath(name)}/status`,
    { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } },
    'application/merge-patch+json',
  );
}

async function pod(name: string, claimName: string): Promise<void> {
  await ok('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  });
}

const nodeOf = async (name: string): Promise<string> => (await ok('GET', `/api/v1/namespaces/${NS}/pods/${name}`)).spec?.nodeName ?? '';

async function boundTo(name: string): Promise<string> {
  let n = '';
  await waitFor(async () => !!(n = await nodeOf(name)), 15_000, `${name} to be bound`);
  return n;
}

async function failedEvent(name: string, match: RegExp): Promise<string> {
  let msg = '';
  await waitFor(
    async () => {
      const evs = (await ok('GET', `/api/v1/namespaces/${NS}/events`)).items as Obj[];
      msg = evs.find((e) => e.involvedObject.name === name && e.reason === 'FailedScheduling' && match.test(e.message))?.message ?? '';
      return !!msg;
    },
    15_000,
    `FailedScheduling for ${name} matching ${match}`,
  );
  return msg;
}

test('a WaitForFirstConsumer claim gets the selected node; the pod is bound only once the claim is', async () => {
  await claim('data', 'wffc');
  await pod('app', 'data');
  let selected = '';
  await waitFor(
    async () => !!(selected = (await ok('GET', claimPath('data'))).metadata.annotations?.['volume.kubernetes.io/selected-node'] ?? ''),
    15_000,
    'the selected-node annotation',
  );
  assert.ok(NODES.includes(selected), selected);
  const annotated = await ok('GET', claimPath('data'));
  assert.equal(annotated.metadata.annotations['volume.kubernetes.io/storage-provisioner'], PROVISIONER);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await nodeOf('app'), '', 'not bound while the claim is not');
  // The provisioner makes a PV on the selected node; the PV controller binds the claim.
  const c = await ok('GET', claimPath('data'));
  await volume('pv-data', 'wffc', selected, c);
  await completeBinding('data', 'pv-data');
  assert.equal(await boundTo('app'), selected);
});

test('a claim bound to a PV with node affinity takes its pod to that node', async () => {
  const c = await claim('pinned', 'manual', { volumeName: 'pv-pinned', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } });
  await volume('pv-pinned', 'manual', 'vol-b', c);
  for (let i = 0; i < 3; i++) await pod(`pinned-${i}`, 'pinned');
  for (let i = 0; i < 3; i++) assert.equal(await boundTo(`pinned-${i}`), 'vol-b');
});

test('a provisioner that gives up (selected-node removed) sends the pod back to be scheduled again', async () => {
  await claim('flaky', 'wffc');
  await pod('flaky-app', 'flaky');
  await waitFor(async () => !!(await ok('GET', claimPath('flaky'))).metadata.annotations?.['volume.kubernetes.io/selected-node'], 15_000, 'selected node');
  const c = await ok('GET', claimPath('flaky'));
  delete c.metadata.annotations['volume.kubernetes.io/selected-node'];
  await ok('PUT', claimPath('flaky'), c);
  const msg = await failedEvent('flaky-app', /PreBind/);
  assert.equal(msg, 'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "flaky"');
  await waitFor(
    async () =>
      ((await ok('GET', `/api/v1/namespaces/${NS}/pods/flaky-app`)).status.conditions ?? []).some(
        (x: Obj) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'SchedulerError' && x.message === msg,
      ),
    15_000,
    'PodScheduled=False/SchedulerError',
  );
  // The retry picks a node again.
  await waitFor(async () => !!(await ok('GET', claimPath('flaky'))).metadata.annotations?.['volume.kubernetes.io/selected-node'], 15_000, 'selected again');
});

test('an unbound Immediate claim keeps the pod Pending with the upstream message', async () => {
  await claim('now', 'instant');
  await pod('waiting', 'now');
  const msg = await failedEvent('waiting', /unbound immediate/);
  assert.equal(
    msg,
    `0/${NODES.length} nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/${NODES.length} nodes are available: ${NODES.length} Preemption is not helpful for scheduling.`,
  );
  assert.equal(await nodeOf('waiting'), '');
  // A missing claim reads as the lister's NotFound.
  await pod('orphan', 'nope');
  assert.match(await failedEvent('orphan', /not found/), /^0\/2 nodes are available: persistentvolumeclaim "nope" not found\./);
});
