import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeHandle, makeClass, makeNode, makePV, makePVC, nodeInfo, podWithClaims, type FakeCluster } from '../../framework/testing.js';
import { PodInfo, type CycleState, type NodeInfo, type Status } from '../../framework/types.js';
import { ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT, ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST } from './binder.js';
import { ERR_UNBOUND_IMMEDIATE, VolumeBinding } from './index.js';

const nodeA = makeNode('node-a', { labels: { zone: 'z1' } });
const nodeB = makeNode('node-b', { labels: { zone: 'z2' } });
const nodes = [nodeInfo(nodeA), nodeInfo(nodeB)];

function setup(c: FakeCluster, args = {}) {
  c.nodes ??= [nodeA, nodeB];
  const h = fakeHandle(c);
  const p = new VolumeBinding(args);
  p.setHandle(h);
  return { p, h, c };
}

/** PreFilter, then Filter on each node: the status per node (or the PreFilter status). */
function run(p: VolumeBinding, pod: PodInfo, state: CycleState = new Map()): { pre: Status | null; byNode: Record<string, Status | null> } {
  const pre = p.preFilter(state, pod);
  const byNode: Record<string, Status | null> = {};
  if (!pre) for (const n of nodes as NodeInfo[]) byNode[n.name] = p.filter(state, pod, n);
  return { pre, byNode };
}

test('PreFilter: missing, terminating, ephemeral and immediate unbound claims reject the pod everywhere', () => {
  const { p } = setup({
    pvcs: [
      { ...makePVC('gone'), metadata: { ...makePVC('gone').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
      makePVC('imm', { className: 'fast' }),
      makePVC('noclass'),
    ],
    classes: [makeClass('fast', { mode: 'Immediate' })],
  });
  const pre = (claims: string[]) => p.preFilter(new Map(), new PodInfo(podWithClaims('p', claims)));
  assert.deepEqual(pre(['data']), { code: 'UnschedulableAndUnresolvable', reasons: ['persistentvolumeclaim "data" not found'], plugin: 'VolumeBinding' });
  assert.deepEqual(pre(['gone'])?.reasons, ['persistentvolumeclaim "gone" is being deleted']);
  assert.deepEqual(pre(['eph:scratch'])?.reasons, ['waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"']);
  const imm = pre(['imm']);
  assert.equal(imm?.code, 'UnschedulableAndUnresolvable');
  assert.deepEqual(imm?.reasons, [ERR_UNBOUND_IMMEDIATE]);
  assert.deepEqual(pre(['noclass'])?.reasons, [ERR_UNBOUND_IMMEDIATE], 'no class: immediate');
  const state: CycleState = new Map();
  assert.equal(p.preFilter(state, new PodInfo(podWithClaims('p', []))), null);
  assert.equal(state.size, 0, 'a pod without claims leaves no state: Filter passes every node');
});

test('PreFilter: an ephemeral claim must be owned by the pod; a class without a binding mode is an error', () => {
  const pod = podWithClaims('p', ['eph:scratch']);
  const owned = makePVC('p-scratch', { className: 'standard' });
  owned.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: pod.metadata.uid!, controller: true }];
  const foreign = makePVC('p-scratch', { className: 'standard' });
  const { p } = setup({ pvcs: [foreign], classes: [makeClass('standard')] });
  assert.deepEqual(p.preFilter(new Map(), new PodInfo(pod))?.reasons, ['PVC default/p-scratch was not created for pod default/p (pod is not owner)']);
  const ok = setup({ pvcs: [owned], classes: [makeClass('standard')] });
  assert.equal(ok.p.preFilter(new Map(), new PodInfo(pod)), null);
  const broken = setup({ pvcs: [makePVC('d', { className: 'odd' })], classes: [{ ...makeClass('odd'), volumeBindingMode: undefined as unknown as string }] });
  const st = broken.p.preFilter(new Map(), new PodInfo(podWithClaims('p', ['d'])));
  assert.equal(st?.code, 'Error');
  assert.deepEqual(st?.reasons, ['VolumeBindingMode not set for StorageClass "odd"']);
});

test('Filter: a bound claim goes where its PV node affinity allows; a missing PV fails everywhere', () => {
  const claim = makePVC('data', { className: 'local', volumeName: 'pv-b', bound: true });
  const { p } = setup({
    pvcs: [claim, makePVC('lost', { className: 'local', volumeName: 'nope', bound: true })],
    pvs: [makePV('pv-b', { node: 'node-b', claim })],
  });
  const r = run(p, new PodInfo(podWithClaims('p', ['data'])));
  assert.deepEqual(r.byNode['node-a'], { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_NODE_CONFLICT], plugin: 'VolumeBinding' });
  assert.equal(r.byNode['node-b'], null);
  const lost = run(p, new PodInfo(podWithClaims('q', ['lost'])));
  assert.deepEqual(lost.byNode['node-a']?.reasons, [ERR_REASON_PV_NOT_EXIST]);
});

test('Filter: a WaitForFirstConsumer claim takes the smallest Available PV that fits the node', () => {
  const c: FakeCluster = {
    pvcs: [makePVC('data', { className: 'local', size: '2Gi' })],
    pvs: [
      makePV('small', { className: 'local', size: '1Gi', node: 'node-a' }),
      makePV('big', { className: 'local', size: '10Gi', node: 'node-a' }),
      makePV('right', { className: 'local', size: '3Gi', node: 'node-a' }),
      makePV('other-class', { className: 'slow', size: '2Gi', node: 'node-b' }),
      makePV('released', { className: 'local', size: '2Gi', node: 'node-b', phase: 'Released' }),
    ],
    classes: [makeClass('local', { provisioner: 'kubernetes.io/no-provisioner' })],
  };
  const { p } = setup(c);
  const state: CycleState = new Map();
  const pod = new PodInfo(podWithClaims('p', ['data']));
  const r = run(p, pod, state);
  assert.equal(r.byNode['node-a'], null);
  assert.deepEqual(r.byNode['node-b']?.reasons, [ERR_REASON_BIND_CONFLICT], 'no PV for node-b and the class cannot provision');
  assert.equal(p.reserve(state, pod, 'node-a'), null);
  assert.equal(p.assumed, 1, 'the chosen PV is assumed');
});

test('Reserve assumes the PV so the next pod does not pick it; Unreserve gives it back', () => {
  const c: FakeCluster = {
    pvcs: [makePVC('one', { className: 'local' }), makePVC('two', { className: 'local' })],
    pvs: [makePV('only', { className: 'local', node: 'node-a' })],
    classes: [makeClass('local', { provisioner: 'kubernetes.io/no-provisioner' })],
  };
  const { p } = setup(c);
  const first = new PodInfo(podWithClaims('first', ['one']));
  const s1: CycleState = new Map();
  assert.equal(run(p, first, s1).byNode['node-a'], null);
  assert.equal(p.reserve(s1, first, 'node-a'), null);
  const second = new PodInfo(podWithClaims('second', ['two']));
  assert.deepEqual(run(p, second).byNode['node-a']?.reasons, [ERR_REASON_BIND_CONFLICT], 'the PV is taken');
  p.unreserve(s1);
  assert.equal(p.assumed, 0);
  assert.equal(run(p, second).byNode['node-a'], null, 'free again');
});

test('Filter: dynamic provisioning follows allowedTopologies and the driver published capacity', () => {
  const zoned = makeClass('zoned', { provisioner: 'zoned.example.com', allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['z1'] }] }] });
  const c: FakeCluster = {
    pvcs: [makePVC('z', { className: 'zoned' }), makePVC('big', { className: 'standard', size: '5Gi' })],
    classes: [zoned, makeClass('standard')],
    drivers: [{ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'hostpath.csi.kubeling.io' }, spec: { storageCapacity: true } }],
    capacities: [
      { metadata: { name: 'a', namespace: 'kube-system' }, storageClassName: 'standard', nodeTopology: { matchLabels: { zone: 'z1' } }, capacity: '10Gi' },
      {
        metadata: { name: 'b', namespace: 'kube-system' },
        storageClassName: 'standard',
        nodeTopology: { matchLabels: { zone: 'z2' } },
        capacity: '100Gi',
        maximumVolumeSize: '1Gi',
      },
    ],
  };
  const { p } = setup(c);
  const z = run(p, new PodInfo(podWithClaims('p', ['z'])));
  assert.equal(z.byNode['node-a'], null);
  assert.deepEqual(z.byNode['node-b']?.reasons, [ERR_REASON_BIND_CONFLICT]);
  const big = run(p, new PodInfo(podWithClaims('q', ['big'])));
  assert.equal(big.byNode['node-a'], null);
  assert.deepEqual(big.byNode['node-b']?.reasons, [ERR_REASON_NOT_ENOUGH_SPACE], 'maximumVolumeSize wins over capacity');
  c.drivers![0]!.spec = { storageCapacity: false };
  assert.equal(run(p, new PodInfo(podWithClaims('q', ['big']))).byNode['node-b'], null, 'no capacity tracking: no check');
});

test('Filter: a claim that already has a selected node only fits that node', () => {
  const { p } = setup({
    pvcs: [makePVC('d', { className: 'standard', annotations: { 'volume.kubernetes.io/selected-node': 'node-b' } })],
    classes: [makeClass('standard')],
  });
  const r = run(p, new PodInfo(podWithClaims('p', ['d'])));
  assert.deepEqual(r.byNode['node-a']?.reasons, [ERR_REASON_BIND_CONFLICT]);
  assert.equal(r.byNode['node-b'], null);
});

const signal = () => new AbortController().signal;

test('PreBind: a static binding writes the PV claimRef and waits for the PV controller', async () => {
  const claim = makePVC('data', { className: 'local' });
  const c: FakeCluster = {
    pvcs: [claim],
    pvs: [makePV('pv1', { className: 'local', node: 'node-a' })],
    classes: [makeClass('local', { provisioner: 'kubernetes.io/no-provisioner' })],
  };
  const { p, h } = setup(c);
  const pod = podWithClaims('p', ['data']);
  c.pods = [pod];
  const info = new PodInfo(pod);
  const state: CycleState = new Map();
  run(p, info, state);
  assert.equal(p.reserve(state, info, 'node-a'), null);
  let settled: Status | null | undefined;
  const done = p.preBind(state, info, 'node-a', signal()).then((s) => (settled = s));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(c.puts?.length, 1);
  assert.equal(c.puts![0]!.path, '/api/v1/persistentvolumes/pv1');
  const pv = c.puts![0]!.body;
  assert.deepEqual(
    { ...pv.spec.claimRef },
    { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: 'uid-data', apiVersion: 'v1', resourceVersion: '10' },
  );
  assert.equal(pv.metadata.annotations['pv.kubernetes.io/bound-by-controller'], 'yes');
  assert.equal(settled, undefined, 'still waiting for the claim to be bound');
  // The PV controller completes the binding.
  c.pvcs![0] = makePVC('data', { className: 'local', volumeName: 'pv1', bound: true });
  c.pvcs![0].metadata.resourceVersion = '2000';
  h.events();
  await done;
  assert.equal(settled, null);
});

test('PreBind: provisioning annotates the claim; a removed selected-node annotation fails the binding', async () => {
  const c: FakeCluster = { pvcs: [makePVC('data', { className: 'standard' })], classes: [makeClass('standard')] };
  const { p, h } = setup(c);
  const pod = podWithClaims('p', ['data']);
  c.pods = [pod];
  const info = new PodInfo(pod);
  const state: CycleState = new Map();
  run(p, info, state);
  assert.equal(p.reserve(state, info, 'node-b'), null);
  const done = p.preBind(state, info, 'node-b', signal());
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(c.puts![0]!.path, '/api/v1/namespaces/default/persistentvolumeclaims/data');
  assert.deepEqual(c.puts![0]!.body.metadata.annotations, {
    'volume.kubernetes.io/selected-node': 'node-b',
    'volume.kubernetes.io/storage-provisioner': 'hostpath.csi.kubeling.io',
    'volume.beta.kubernetes.io/storage-provisioner': 'hostpath.csi.kubeling.io',
  });
  // The provisioner gives up: it takes the annotation away.
  const failed = structuredClone(c.pvcs![0]!);
  delete failed.metadata.annotations!['volume.kubernetes.io/selected-node'];
  failed.metadata.resourceVersion = '3000';
  c.pvcs![0] = failed;
  h.events();
  assert.deepEqual(await done, { code: 'Error', reasons: ['binding volumes: provisioning failed for PVC "data"'], plugin: 'VolumeBinding' });
  p.unreserve(state);
  assert.equal(p.assumed, 0);
});

test('PreBind: gives up after bindTimeoutSeconds, and when the pod is deleted', async () => {
  const c: FakeCluster = { pvcs: [makePVC('data', { className: 'standard' })], classes: [makeClass('standard')] };
  const { p } = setup(c, { bindTimeoutSeconds: 0.05 });
  const pod = podWithClaims('p', ['data']);
  c.pods = [pod];
  const info = new PodInfo(pod);
  const state: CycleState = new Map();
  run(p, info, state);
  p.reserve(state, info, 'node-a');
  assert.deepEqual((await p.preBind(state, info, 'node-a', signal()))?.reasons, ['binding volumes: timed out waiting for the condition']);
  c.pods = [];
  const s2: CycleState = new Map();
  run(p, info, s2);
  p.reserve(s2, info, 'node-a');
  assert.deepEqual((await p.preBind(s2, info, 'node-a', signal()))?.reasons, ['binding volumes: pod does not exist any more: pods "p" not found']);
  assert.throws(() => new VolumeBinding({ bindTimeoutSeconds: -1 }), /bindTimeoutSeconds/);
});

test('PreBind does nothing when every claim is already bound', async () => {
  const claim = makePVC('data', { className: 'local', volumeName: 'pv1', bound: true });
  const c: FakeCluster = { pvcs: [claim], pvs: [makePV('pv1', { className: 'local', claim })] };
  const { p } = setup(c);
  const info = new PodInfo(podWithClaims('p', ['data']));
  const state: CycleState = new Map();
  run(p, info, state);
  assert.equal(p.reserve(state, info, 'node-a'), null);
  assert.equal(await p.preBind(state, info, 'node-a', signal()), null);
  assert.equal(c.puts, undefined);
});
