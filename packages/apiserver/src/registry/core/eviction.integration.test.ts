/**
 * The pods/eviction subresource against a real etcd and a secure apiserver
 * with RBAC, the budgets' status written by the test as the disruption
 * controller would: authorization (`create` on `pods/eviction`), the 429 of a
 * budget that allows nothing, a granted eviction (budget decremented, pod
 * awaited, DisruptionTarget condition, pod deleted), dry run, more than one
 * budget, pods no budget protects, unhealthy pods, and bad requests.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, startTestEnv, type Credentials, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let admin: ReturnType<typeof clientFor>;
let evictor: ReturnType<typeof clientFor>;
let deleter: ReturnType<typeof clientFor>;
const NS = 'evict';

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  const as = async (user: string): Promise<Credentials> => env.pki!.client(user, []);
  evictor = clientFor(env, await as('evictor'));
  deleter = clientFor(env, await as('deleter'));
  assert.equal((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  // No serviceaccount controller runs here: the pods' ServiceAccount admission needs the default account.
  assert.equal(
    (await admin('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })).status,
    201,
  );
  const role = (name: string, rules: object[]) =>
    admin('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules,
    });
  const bind = (name: string, user: string) =>
    admin('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    });
  assert.equal((await role('evictor', [{ apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] }])).status, 201);
  assert.equal((await bind('evictor', 'evictor')).status, 201);
  assert.equal((await role('deleter', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }])).status, 201);
  assert.equal((await bind('deleter', 'deleter')).status, 201);
});
after(async () => {
  await env?.stop();
});

const eviction = (name: string, deleteOptions?: object) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name, namespace: NS },
  ...(deleteOptions ? { deleteOptions } : {}),
});
const evict = (name: string, body: object = eviction(name), query = '') => evictor('POST', `/api/v1/namespaces/${NS}/pods/${name}/eviction${query}`, body);
const getPod = (name: string) => admin('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
const getPdb = (name: string) => admin('GET', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}`);

/** A pod in the given phase, Ready or not, with the `app` label. */
async function pod(name: string, app: string, phase: string, ready: boolean): Promise<void> {
  const created = await admin('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  assert.equal(created.status, 201, created.text);
  const p = created.body;
  p.status = { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z' }] };
  assert.equal((await admin('PUT', `/api/v1/namespaces/${NS}/pods/${name}/status`, p)).status, 200);
}

/** A budget selecting `app`, its status set as the controller would have. */
async function pdb(name: string, app: string, status: Record<string, unknown>, spec: object = {}): Promise<void> {
  const created = await admin('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name },
    spec: { minAvailable: 1, selector: { matchLabels: { app } }, ...spec },
  });
  assert.equal(created.status, 201, created.text);
  const b = created.body;
  b.status = { observedGeneration: b.metadata.generation, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0, ...status };
  const r = await admin('PUT', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}/status`, b);
  assert.equal(r.status, 200, r.text);
}

test('authorization: create on pods/eviction is needed, delete on pods is not enough', async () => {
  await pod('authz', 'authz', 'Running', true);
  const refused = await deleter('POST', `/api/v1/namespaces/${NS}/pods/authz/eviction`, eviction('authz'));
  assert.equal(refused.status, 403);
  assert.match(refused.body.message, /cannot create resource "pods\/eviction" in API group "" in the namespace "evict"/);
  assert.equal((await evict('authz')).status, 201);
});

test('a budget that allows no disruption answers 429 with the DisruptionBudget cause; the pod stays', async () => {
  await pod('guarded', 'guarded', 'Running', true);
  await pdb('guarded', 'guarded', { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, disruptionsAllowed: 0 });
  const r = await evict('guarded');
  assert.equal(r.status, 429, r.text);
  assert.equal(r.body.reason, 'TooManyRequests');
  assert.equal(r.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual(r.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget guarded needs 1 healthy pods and has 1 currently' }]);
  assert.equal((await getPod('guarded')).status, 200);
});

test('a granted eviction: the budget decremented and the pod awaited, the pod marked DisruptionTarget and deleted gracefully', async () => {
  await pod('granted', 'granted', 'Running', true);
  await pdb('granted', 'granted', { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 });
  const r = await evict('granted');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual([r.body.kind, r.body.status, r.body.code], ['Status', 'Success', 201]);
  const b = (await getPdb('granted')).body;
  assert.equal(b.status.disruptionsAllowed, 0);
  assert.deepEqual(Object.keys(b.status.disruptedPods), ['granted']);
  assert.deepEqual(
    b.status.conditions.map((c: { type: string; status: string; reason: string }) => [c.type, c.status, c.reason]),
    [['DisruptionAllowed', 'False', 'InsufficientPods']],
  );
  // Bound to a node, the pod is deleted gracefully: it is still there, terminating, with the condition.
  const p = (await getPod('granted')).body;
  assert.ok(p.metadata.deletionTimestamp, 'being deleted');
  const cond = p.status.conditions.find((c: { type: string }) => c.type === 'DisruptionTarget');
  assert.deepEqual([cond.status, cond.reason, cond.message], ['True', 'EvictionByEvictionAPI', 'Eviction API: evicting']);
  // Evicting a pod already being deleted needs no budget.
  assert.equal((await evict('granted', eviction('granted', { gracePeriodSeconds: 0 }))).status, 201);
  assert.equal((await getPod('granted')).status, 404);
});

test('dry run (query or deleteOptions): checked, nothing written', async () => {
  await pod('dry', 'dry', 'Running', true);
  await pdb('dry', 'dry', { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 });
  assert.equal((await evict('dry', eviction('dry'), '?dryRun=All')).status, 201);
  assert.equal((await evict('dry', eviction('dry', { dryRun: ['All'] }))).status, 201);
  const p = (await getPod('dry')).body;
  assert.equal(p.metadata.deletionTimestamp, undefined);
  assert.equal(
    p.status.conditions.some((c: { type: string }) => c.type === 'DisruptionTarget'),
    false,
  );
  assert.equal((await getPdb('dry')).body.status.disruptionsAllowed, 1);
});

test('more than one budget: a Failure Status with code 500 in a 201, nothing done', async () => {
  await pod('double', 'double', 'Running', true);
  await pdb('double-a', 'double', { disruptionsAllowed: 1, currentHealthy: 1, expectedPods: 1 });
  await pdb('double-b', 'double', { disruptionsAllowed: 1, currentHealthy: 1, expectedPods: 1 });
  const r = await evict('double');
  assert.equal(r.status, 201);
  assert.deepEqual(
    [r.body.status, r.body.code, r.body.message],
    ['Failure', 500, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'],
  );
  assert.equal((await getPod('double')).body.metadata.deletionTimestamp, undefined);
});

test('pods no budget protects: no budget, Pending, terminal; an unready pod under AlwaysAllow; a budget not yet observed', async () => {
  await pod('free', 'free', 'Running', true);
  assert.equal((await evict('free', eviction('free', { gracePeriodSeconds: 0 }))).status, 201);
  assert.equal((await getPod('free')).status, 404);

  for (const [name, phase] of [
    ['pending', 'Pending'],
    ['failed', 'Failed'],
  ]) {
    await pod(name!, 'strict', phase!, false);
  }
  await pdb('strict', 'strict', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 2 });
  assert.equal((await evict('pending', eviction('pending', { gracePeriodSeconds: 0 }))).status, 201);
  assert.equal((await evict('failed', eviction('failed', { gracePeriodSeconds: 0 }))).status, 201);
  assert.equal((await getPod('pending')).status, 404);
  assert.equal((await getPod('failed')).status, 404);

  await pod('sick', 'sick', 'Running', false);
  await pdb('sick', 'sick', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1 });
  assert.equal((await evict('sick')).status, 429, 'IfHealthyBudget: an unmet budget guards unready pods too');
  const b = (await getPdb('sick')).body;
  b.spec.unhealthyPodEvictionPolicy = 'AlwaysAllow';
  assert.equal((await admin('PUT', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/sick`, b)).status, 200);
  // The spec changed: until the controller has seen the new generation, evictions wait.
  await pod('ready-sibling', 'sick', 'Running', true);
  const waiting = await evict('ready-sibling');
  assert.equal(waiting.status, 429);
  assert.equal(waiting.body.details.causes[0].message, 'The disruption budget sick is still being processed by the server.');
  assert.equal((await evict('sick', eviction('sick', { gracePeriodSeconds: 0 }))).status, 201, 'AlwaysAllow: an unready pod goes whatever the budget');
  assert.equal((await getPod('sick')).status, 404);
});

test('bad requests: a name that is not the URL’s, a wrong kind, a missing pod', async () => {
  await pod('named', 'named', 'Running', true);
  const other = await evict('named', eviction('someone-else'));
  assert.equal(other.status, 400);
  assert.equal(other.body.message, 'name in URL does not match name in Eviction object');
  const kind = await evict('named', { ...eviction('named'), kind: 'Pod' });
  assert.equal(kind.status, 400);
  const policy = await evict('named', eviction('named', { propagationPolicy: 'Sometimes' }));
  assert.equal(policy.status, 422);
  const missing = await evict('ghost');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.message, 'pods "ghost" not found');
});
