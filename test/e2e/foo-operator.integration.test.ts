/**
 * examples/foo-operator, kubeling's sample-controller, end to end: a real etcd
 * and apiserver, the controller-manager (deployment, replicaset, garbage
 * collector) and the scheduler, one node (kubeling's runtime and a kubelet, as
 * processes), and the operator as its own process started the way its README
 * says (`node --import tsx examples/foo-operator/main.ts --kubeconfig FILE`).
 *
 * The CRD is sample-controller's own manifest (status subresource). A Foo of 2
 * replicas gets a Deployment of 2 Running pods, controlled by the Foo; scaling
 * the Foo to 3 by a patch scales the Deployment and status.availableReplicas
 * reaches 3; deleting the Foo garbage-collects the Deployment. A Deployment
 * the operator does not own is never adopted (ErrResourceExists). Two
 * replicas run: one holds the Lease and works, the other waits; SIGTERM makes
 * the leader give the Lease back and the standby takes over.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { freePort, nodeArgs, request, startTestEnv, stopChild, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes, startControlPlane, type ControlPlane } from './cluster.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPERATOR = join(ROOT, 'examples/foo-operator/main.ts');
const ARTIFACTS = join(ROOT, 'examples/foo-operator/artifacts');
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const FOOS = '/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

interface Meta {
  name: string;
  uid: string;
  deletionTimestamp?: string;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
}
interface FooView {
  metadata: Meta;
  spec: { deploymentName: string; replicas: number };
  status?: { availableReplicas?: number };
}
interface DeploymentView {
  metadata: Meta;
  spec: { replicas: number };
  status?: { availableReplicas?: number };
}
interface PodView {
  metadata: Meta;
  status?: { phase?: string };
}
interface EventView {
  involvedObject: { kind: string; name: string; uid: string };
  type: string;
  reason: string;
  message: string;
  source?: { component?: string };
}

let env: TestEnv;
let dir: string;
let plane: ControlPlane;
const procs = new Processes();
interface Operator {
  child: ChildProcess;
  log: string;
}
const operators: Operator[] = [];
/** The identity of the replica that won the Lease first. */
let firstLeader = '';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/default/leases/foo-operator';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-foo-operator-'));
  env = await startTestEnv();
  // The CRD first: the garbage collector's first sync with discovery then monitors Foos from the start.
  const crd = YAML.parse(readFileSync(join(ARTIFACTS, 'crd-status-subresource.yaml'), 'utf8'));
  const created = await request(env.url, 'POST', CRDS, crd);
  assert.equal(created.status, 201, created.text);
  await waitFor(
    async () =>
      ((await request(env.url, 'GET', `${CRDS}/foos.samplecontroller.k8s.io`)).body.status?.conditions ?? []).some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      ) && (await request(env.url, 'GET', FOOS)).status === 200,
    20_000,
    'the Foo CRD to be established and served',
  );
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: '${env.url}'}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: x\n`,
  );
  // Two replicas start (tsx compiles them) while the control plane and the node come up: they wait for them.
  for (let i = 0; i < 2; i++) {
    const child = spawn(process.execPath, nodeArgs(OPERATOR, ['--kubeconfig', kubeconfig, '--leader-elect-retry-period=500ms']), {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const op: Operator = { child, log: '' };
    const keep = (b: Buffer) => (op.log = (op.log + b.toString()).slice(-20_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    operators.push(op);
  }
  plane = await startControlPlane(env, ['deployment', 'replicaset', 'garbagecollector']);
  const sock = await procs.runtime(dir, 'foo-1', '127.7.21.0/24');
  await procs.kubelet(env, dir, 'foo-1', sock, await freePort(), ['--capacity=cpu=4,memory=8Gi']);
});
after(async () => {
  for (const op of operators) await stopChild(op.child);
  await procs.stop();
  await plane?.stop();
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const logs = () => operators.map((op, i) => `--- foo-operator ${i} (tail) ---\n${op.log.slice(-3000)}`).join('\n');

/** waitFor, with the operators' recent logs in the message when it times out. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  try {
    await waitFor(check, ms, what);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${logs()}`);
  }
}

const get = async <T>(path: string): Promise<T | undefined> => {
  const r = await request<T>(env.url, 'GET', path);
  return r.status === 200 ? r.body : undefined;
};
const pods = async (selector: string): Promise<PodView[]> =>
  ((await request(env.url, 'GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items as PodView[]).filter(
    (p) => !p.metadata.deletionTimestamp,
  );
/** The identity an operator logs at start ("<host>_<uuid>"). */
const identityOf = (op: Operator) => /"identity":"([^"]+)"/.exec(op.log)?.[1];
const holder = async () => (await get<{ spec?: { holderIdentity?: string } }>(LEASE))?.spec?.holderIdentity ?? '';
const eventsFor = async (foo: FooView): Promise<EventView[]> =>
  ((await request(env.url, 'GET', '/api/v1/namespaces/default/events')).body.items as EventView[]).filter((e) => e.involvedObject.uid === foo.metadata.uid);

test('one replica holds the Lease and runs the controller; the other waits', async () => {
  await until(async () => !!(firstLeader = await holder()) && operators.every(identityOf), 60_000, 'the foo-operator Lease to be held');
  assert.match(firstLeader, new RegExp(`^${hostname()}_[0-9a-f-]{36}$`));
  const leader = operators.find((op) => identityOf(op) === firstLeader);
  assert.ok(leader, `the holder is one of the two replicas\n${logs()}`);
  await until(async () => leader.log.includes('"msg":"starting workers"'), 30_000, "the leader's workers");
  const standby = operators.find((op) => op !== leader)!;
  assert.ok(!standby.log.includes('became leader') && !standby.log.includes('starting Foo controller'), 'the standby does not run the controller');
});

test('a Foo of 2 gets a Deployment of 2 Running pods; scaled to 3 the Deployment and status follow; deleted, its Deployment is collected', async () => {
  const manifest = YAML.parse(readFileSync(join(ARTIFACTS, 'example-foo.yaml'), 'utf8'));
  manifest.spec.replicas = 2;
  const created = await request<FooView>(env.url, 'POST', FOOS, manifest);
  assert.equal(created.status, 201, created.text);
  const foo = created.body;
  const name = foo.spec.deploymentName;
  assert.equal(name, 'example-foo');

  // The Deployment: made by the operator, controlled by the Foo.
  let d: DeploymentView | undefined;
  await until(async () => !!(d = await get<DeploymentView>(`${DEPLOYMENTS}/${name}`)), 30_000, 'the Deployment');
  assert.equal(d!.spec.replicas, 2);
  assert.deepEqual(d!.metadata.ownerReferences, [
    { apiVersion: 'samplecontroller.k8s.io/v1alpha1', kind: 'Foo', name: 'example-foo', uid: foo.metadata.uid, controller: true, blockOwnerDeletion: true },
  ]);
  const selector = 'app=nginx,controller=example-foo';
  const running = async (n: number) => {
    const ps = await pods(selector);
    return ps.length === n && ps.every((p) => p.status?.phase === 'Running');
  };
  await until(() => running(2), 60_000, '2 Running pods');
  const available = async (n: number) => (await get<FooView>(`${FOOS}/example-foo`))?.status?.availableReplicas === n;
  await until(() => available(2), 30_000, 'Foo status.availableReplicas 2');

  // Scale through the Foo.
  const patched = await request<FooView>(env.url, 'PATCH', `${FOOS}/example-foo`, { spec: { replicas: 3 } }, { contentType: 'application/merge-patch+json' });
  assert.equal(patched.status, 200, patched.text);
  await until(async () => (await get<DeploymentView>(`${DEPLOYMENTS}/${name}`))?.spec.replicas === 3, 30_000, 'the Deployment scaled to 3');
  await until(() => available(3), 60_000, 'Foo status.availableReplicas 3');
  assert.ok(await running(3), '3 Running pods');
  const synced = (await eventsFor(foo)).filter((e) => e.reason === 'Synced');
  assert.ok(synced.length >= 1, 'a Synced event on the Foo');
  assert.deepEqual(
    { type: synced[0]!.type, message: synced[0]!.message, kind: synced[0]!.involvedObject.kind, source: synced[0]!.source?.component },
    { type: 'Normal', message: 'Foo synced successfully', kind: 'Foo', source: 'foo-operator' },
  );

  // Deleting the Foo: the garbage collector deletes the Deployment it controls, and the ReplicaSet under it.
  const del = await request(env.url, 'DELETE', `${FOOS}/example-foo`, { propagationPolicy: 'Background' });
  assert.equal(del.status, 200, del.text);
  await until(async () => (await request(env.url, 'GET', `${DEPLOYMENTS}/${name}`)).status === 404, 60_000, 'the Deployment to be garbage-collected');
  await until(
    async () =>
      (await request(env.url, 'GET', `/apis/apps/v1/namespaces/default/replicasets?labelSelector=${encodeURIComponent(selector)}`)).body.items.length === 0,
    30_000,
    'its ReplicaSet to be garbage-collected',
  );
});

test('a Deployment the operator does not own is not adopted (ErrResourceExists) until it is gone', async () => {
  const hand = await request(env.url, 'POST', DEPLOYMENTS, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'not-ours' },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'not-ours' } },
      template: { metadata: { labels: { app: 'not-ours' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] } },
    },
  });
  assert.equal(hand.status, 201, hand.text);
  const created = await request<FooView>(env.url, 'POST', FOOS, {
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'intruder' },
    spec: { deploymentName: 'not-ours', replicas: 1 },
  });
  assert.equal(created.status, 201, created.text);
  const foo = created.body;
  let refused: EventView | undefined;
  await until(async () => !!(refused = (await eventsFor(foo)).find((e) => e.reason === 'ErrResourceExists')), 30_000, 'an ErrResourceExists event');
  assert.equal(refused!.type, 'Warning');
  assert.equal(refused!.message, 'Resource "not-ours" already exists and is not managed by Foo');
  const untouched = (await get<DeploymentView>(`${DEPLOYMENTS}/not-ours`))!;
  assert.equal(untouched.metadata.ownerReferences, undefined, 'not adopted');
  assert.equal(untouched.spec.replicas, 0, 'not scaled');
  assert.equal((await get<FooView>(`${FOOS}/intruder`))!.status, undefined, 'no status written for a Foo that is not synced');

  // The key is retried with backoff: once the Deployment is gone, the operator makes its own.
  assert.equal((await request(env.url, 'DELETE', `${DEPLOYMENTS}/not-ours`)).status, 200);
  let d: DeploymentView | undefined;
  await until(async () => !!(d = await get<DeploymentView>(`${DEPLOYMENTS}/not-ours`))?.metadata.ownerReferences, 30_000, "the operator's own Deployment");
  assert.equal(d!.metadata.ownerReferences![0]!.uid, foo.metadata.uid);
  assert.equal((await request(env.url, 'DELETE', `${FOOS}/intruder`, { propagationPolicy: 'Background' })).status, 200);
  await until(async () => (await request(env.url, 'GET', `${DEPLOYMENTS}/not-ours`)).status === 404, 60_000, 'the Deployment to be garbage-collected');
});

test('SIGTERM: the leader gives its Lease back and exits 0; the standby takes over at once and syncs Foos', async () => {
  const leader = operators.find((op) => identityOf(op) === firstLeader)!;
  const standby = operators.find((op) => op !== leader)!;
  assert.equal(leader.child.exitCode, null, `the leader is still running\n${logs()}`);
  const exited = new Promise<number | null>((r) => leader.child.once('exit', (code) => r(code)));
  const t0 = Date.now();
  await stopChild(leader.child);
  assert.equal(await exited, 0, logs());
  // Without the release the standby would wait out the 15 s lease duration.
  await until(async () => (await holder()) === identityOf(standby), 10_000, 'the standby to take the Lease');
  assert.ok(Date.now() - t0 < 15_000);
  const created = await request<FooView>(env.url, 'POST', FOOS, {
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'after-failover' },
    spec: { deploymentName: 'after-failover', replicas: 1 },
  });
  assert.equal(created.status, 201, created.text);
  await until(
    async () => (await get<DeploymentView>(`${DEPLOYMENTS}/after-failover`))?.metadata.ownerReferences?.[0]?.uid === created.body.metadata.uid,
    30_000,
    "the new leader's Deployment",
  );
});
