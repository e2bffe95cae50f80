/**
 * --authorization-config end to end: an AuthorizationConfiguration of several
 * webhooks before Node and RBAC, each consulted only where its CEL
 * matchConditions hold, failing per its failurePolicy (Deny or NoOpinion),
 * with CEL errors following that policy too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientFor, eventually, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { type SarWebhook, startSarWebhook } from './authz.fixtures.js';

let env: TestEnv;
let dir: string;
let webhook: SarWebhook;
type Creds = { certPem: string; keyPem: string };
let admin: Creds;
let dev: Creds;
let celtest: Creds;

const call = (creds: Creds, method: string, path: string, body?: unknown) => clientFor(env, creds)(method, path, body);
const guarded = () => webhook.reviews.filter((r) => r.path === '/guard');

/** A webhook entry of the configuration (YAML flow style is JSON). */
const entry = (name: string, kubeConfigFile: string, failurePolicy: 'Deny' | 'NoOpinion', matchConditions: string[]) => ({
  type: 'Webhook',
  name,
  webhook: {
    timeout: '3s',
    subjectAccessReviewVersion: 'v1',
    matchConditionSubjectAccessReviewVersion: 'v1',
    failurePolicy,
    connectionInfo: { type: 'KubeConfigFile', kubeConfigFile },
    matchConditions: matchConditions.map((expression) => ({ expression })),
  },
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authz-config-'));
  // /guard denies everything it is asked; /down is out of order.
  webhook = await startSarWebhook((_spec, path) => (path === '/guard' ? { allowed: false, denied: true, reason: 'kube-system is guarded' } : 503));
  const guard = webhook.kubeconfig(dir, 'guard', '/guard');
  const down = webhook.kubeconfig(dir, 'down', '/down');
  const config = join(dir, 'authorization.yaml');
  const authorizers = [
    entry('guard', guard, 'Deny', [
      "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'",
      "!('system:masters' in request.groups)",
    ]),
    entry('down-closed', down, 'Deny', ["has(request.resourceAttributes) && request.resourceAttributes.namespace == 'broken'"]),
    entry('down-open', down, 'NoOpinion', ["has(request.resourceAttributes) && request.resourceAttributes.namespace == 'flaky'"]),
    entry('strict-cel', guard, 'Deny', ["request.user == 'celtest'", "request.resourceAttributes.namespace == 'x'"]),
    { type: 'Node', name: 'node' },
    { type: 'RBAC', name: 'rbac' },
  ];
  writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: ${JSON.stringify(authorizers)}\n`);
  env = await startTestEnv({ secure: true, server: { authorization: { configFile: config } } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  dev = await env.pki!.client('dev1', ['developers']);
  celtest = await env.pki!.client('celtest', ['developers']);
  await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'developers-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'developers' }],
  });
  // The binding reaches RBAC through the watch cache.
  await eventually(async () => (await call(dev, 'GET', '/api/v1/namespaces/default/pods')).status === 200);
});
after(async () => {
  await env?.stop();
  await webhook?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a webhook whose matchConditions are false is skipped: RBAC decides', async () => {
  const before = guarded().length;
  assert.equal((await call(dev, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  assert.equal((await call(dev, 'GET', '/apis')).status, 200, 'a non-resource request: has() keeps the condition false');
  assert.equal(guarded().length, before, 'never asked');
});

test('where they hold, its denial is final; system:masters comes first anyway', async () => {
  const r = await call(dev, 'GET', '/api/v1/namespaces/kube-system/configmaps');
  assert.equal(r.status, 403);
  assert.equal(
    r.body.message,
    'configmaps is forbidden: User "dev1" cannot list resource "configmaps" in API group "" in the namespace "kube-system": kube-system is guarded',
  );
  assert.equal(guarded().at(-1)!.body.spec.resourceAttributes.namespace, 'kube-system');
  assert.equal((await call(admin, 'GET', '/api/v1/namespaces/kube-system/configmaps')).status, 200);
});

test('a failing webhook: Deny refuses, NoOpinion lets RBAC decide; reviews show the evaluation error', async () => {
  assert.equal((await call(dev, 'GET', '/api/v1/namespaces/broken/pods')).status, 403);
  assert.equal((await call(dev, 'GET', '/api/v1/namespaces/flaky/pods')).status, 200);
  const sar = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user: 'dev1', groups: ['developers'], resourceAttributes: { namespace: 'broken', verb: 'list', resource: 'pods' } },
  });
  assert.equal(sar.body.status.allowed, false);
  assert.equal(sar.body.status.denied, true);
  assert.match(sar.body.status.evaluationError, /^the server responded with the status code 503/);
});

test('a matchCondition that fails to evaluate follows the failure policy', async () => {
  // For celtest the second condition is evaluated: on a non-resource request it has no resourceAttributes.
  const r = await call(celtest, 'GET', '/apis');
  assert.equal(r.status, 403);
  assert.equal((await call(celtest, 'GET', '/api/v1/namespaces/default/pods')).status, 200, 'both evaluate; one is false');
  const sar = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user: 'celtest', groups: ['developers'], nonResourceAttributes: { path: '/apis', verb: 'get' } },
  });
  assert.deepEqual(sar.body.status, {
    allowed: false,
    denied: true,
    evaluationError: "cel evaluation error: expression 'request.resourceAttributes.namespace == 'x'' resulted in error: no such key: resourceAttributes",
  });
});
