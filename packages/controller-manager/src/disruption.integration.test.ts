/**
 * The disruption controller with the eviction subresource, against a real
 * etcd and apiserver, and the deployment, replicaset, garbage collector and
 * ttl-after-finished controllers beside it; a stand-in kubelet in the test
 * marks pods Running and Ready (when told to) and finishes deletions.
 *
 * A budget's status follows its pods (integer minAvailable, a percentage of
 * the Deployment's scale, maxUnavailable); an eviction takes the one allowed
 * disruption, the next is refused with 429 until the replacement pod is
 * ready, then granted. A finished Job with ttlSecondsAfterFinished is deleted
 * once its TTL has passed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { repeat, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
let kubelet: { stop(): void } | undefined;
/** Whether the stand-in kubelet makes new pods ready. */
let readying = true;

interface PodView {
  metadata: { name: string; namespace: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function fakeKubelet(): Promise<void> {
  const pods = (await request(env.url, 'GET', '/api/v1/pods')).body.items as PodView[];
  for (const p of pods) {
    const path = `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;
    if (p.metadata.deletionTimestamp) {
      await request(env.url, 'DELETE', path, { gracePeriodSeconds: 0 });
      continue;
    }
    if (p.status?.phase === 'Running' || !readying) continue;
    const now = new Date().toISOString().replace(/\.\d+Z/, 'Z');
    const next = {
      ...p,
      status: { ...p.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }], podIP: '127.10.0.1' },
    };
    await request(env.url, 'PUT', `${path}/status`, next);
  }
}

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['disruption', 'deployment', 'replicaset', 'garbagecollector', 'ttl-after-finished', 'serviceaccount'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    qps: 200,
    burst: 400,
  });
  await mgr.start();
  await waitFor(
    async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    10_000,
    'default ServiceAccount',
  );
  kubelet = repeat(fakeKubelet, 100);
});
after(async () => {
  kubelet?.stop();
  await mgr?.stop();
  await env?.stop();
});

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});
const pdb = (name: string, app: string, spec: object) => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name },
  spec: { selector: { matchLabels: { app } }, ...spec },
});
interface PdbStatus {
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  disruptionsAllowed: number;
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  conditions?: { type: string; status: string; reason: string }[];
}
const pdbStatus = async (name: string): Promise<PdbStatus | undefined> =>
  (await request(env.url, 'GET', `/apis/policy/v1/namespaces/default/poddisruptionbudgets/${name}`)).body.status;
const livePods = async (app: string): Promise<PodView[]> =>
  ((await request(env.url, 'GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).body.items as PodView[]).filter(
    (p) => !p.metadata.deletionTimestamp,
  );
const ready = (p: PodView) => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function statusBecomes(name: string, want: Partial<PdbStatus>, timeoutMs = 10_000): Promise<PdbStatus> {
  let last: PdbStatus | undefined;
  await waitFor(
    async () => {
      last = await pdbStatus(name);
      return !!last && Object.entries(want).every(([k, v]) => JSON.stringify(last![k as keyof PdbStatus]) === JSON.stringify(v));
    },
    timeoutMs,
    `pdb ${name} status ${JSON.stringify(want)}`,
  ).catch((e) => {
    throw new Error(`${(e as Error).message}; last ${JSON.stringify(last)}`);
  });
  return last!;
}

const evict = (name: string) =>
  request(env.url, 'POST', `/api/v1/namespaces/default/pods/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
  });

test('a budget’s status follows its pods: integer minAvailable, a percentage of the scale, maxUnavailable', async () => {
  assert.equal((await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 3))).status, 201);
  await waitFor(async () => (await livePods('web')).filter(ready).length === 3, 15_000, '3 ready pods');
  assert.equal(
    (await request(env.url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb('web-min', 'web', { minAvailable: 2 }))).status,
    201,
  );
  const s = await statusBecomes('web-min', { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, observedGeneration: 1 });
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [['DisruptionAllowed', 'True', 'SufficientPods']],
  );
  await request(env.url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb('web-pct', 'web', { minAvailable: '50%' }));
  await statusBecomes('web-pct', { expectedPods: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
  await request(env.url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb('web-max', 'web', { maxUnavailable: '34%' }));
  await statusBecomes('web-max', { expectedPods: 3, desiredHealthy: 1, disruptionsAllowed: 2 });
  // Scaling the Deployment moves the percentages with it.
  const d = (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/web')).body;
  d.spec.replicas = 4;
  assert.equal((await request(env.url, 'PUT', '/apis/apps/v1/namespaces/default/deployments/web', d)).status, 200);
  await statusBecomes('web-pct', { expectedPods: 4, desiredHealthy: 2, currentHealthy: 4, disruptionsAllowed: 2 });
  // A spec change is observed at its new generation.
  const b = (await request(env.url, 'GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-min')).body;
  b.spec.minAvailable = 4;
  assert.equal((await request(env.url, 'PUT', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-min', b)).status, 200);
  const s2 = await statusBecomes('web-min', { observedGeneration: 2, desiredHealthy: 4, disruptionsAllowed: 0 });
  assert.deepEqual(
    s2.conditions?.map((c) => [c.status, c.reason]),
    [['False', 'InsufficientPods']],
  );
  for (const n of ['web-min', 'web-pct', 'web-max']) await request(env.url, 'DELETE', `/apis/policy/v1/namespaces/default/poddisruptionbudgets/${n}`);
  await request(env.url, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/web', { propagationPolicy: 'Background' });
});

test('evictions under minAvailable = N-1: the first is granted, the second refused (429) until the replacement is ready', async () => {
  assert.equal((await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('api', 3))).status, 201);
  await waitFor(async () => (await livePods('api')).filter(ready).length === 3, 15_000, '3 ready pods');
  await request(env.url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb('api', 'api', { minAvailable: 2 }));
  await statusBecomes('api', { disruptionsAllowed: 1, currentHealthy: 3 });

  readying = false;
  const [first, second] = await livePods('api');
  const granted = await evict(first!.metadata.name);
  assert.equal(granted.status, 201);
  assert.equal(granted.body.status, 'Success');
  const refused = await evict(second!.metadata.name);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.equal(refused.body.details.causes[0].reason, 'DisruptionBudget');
  // The replacement exists but is not ready: the budget stays at 2 healthy, nothing allowed.
  await waitFor(async () => (await livePods('api')).length === 3, 10_000, 'a replacement pod');
  const held = await statusBecomes('api', { currentHealthy: 2, disruptionsAllowed: 0 });
  assert.deepEqual(held.disruptedPods ?? {}, {}, 'the evicted pod is gone: no eviction awaited any more');
  assert.equal((await evict(second!.metadata.name)).status, 429);

  readying = true;
  await statusBecomes('api', { currentHealthy: 3, disruptionsAllowed: 1 });
  assert.equal((await evict(second!.metadata.name)).status, 201);
  await request(env.url, 'DELETE', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/api');
  await request(env.url, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/api', { propagationPolicy: 'Background' });
});

test('a finished Job with ttlSecondsAfterFinished is deleted after its TTL, not before', async () => {
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'short-lived' },
    spec: { ttlSecondsAfterFinished: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  };
  const created = await request(env.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', job);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const finished = new Date();
  const j = created.body;
  j.status = {
    startTime: finished.toISOString().replace(/\.\d+Z/, 'Z'),
    completionTime: finished.toISOString().replace(/\.\d+Z/, 'Z'),
    succeeded: 1,
    conditions: [
      { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: finished.toISOString().replace(/\.\d+Z/, 'Z') },
      { type: 'Complete', status: 'True', lastTransitionTime: finished.toISOString().replace(/\.\d+Z/, 'Z') },
    ],
  };
  const put = await request(env.url, 'PUT', '/apis/batch/v1/namespaces/default/jobs/short-lived/status', j);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/jobs/short-lived')).status, 200, 'kept within its TTL');
  await waitFor(async () => (await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/jobs/short-lived')).status === 404, 10_000, 'the job to go');
  const gone = Date.now() - finished.getTime();
  assert.ok(gone >= 1000, `deleted ${gone} ms after finishing`);
});
