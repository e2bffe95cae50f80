/**
 * --authorization-mode=ABAC,Webhook,Node,RBAC end to end, as certificate
 * users over HTTPS: ABAC policy lines, a SubjectAccessReview webhook of the
 * test's own (allow, a final deny before RBAC, no opinion falling through,
 * caching, failure as no opinion), and the access reviews telling it all.
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
const users = new Map<string, Creds>();

const call = (creds: Creds, method: string, path: string, body?: unknown) => clientFor(env, creds)(method, path, body);
const as = async (name: string, groups: string[] = []) => {
  const key = `${name}/${groups.join(',')}`;
  if (!users.has(key)) users.set(key, await env.pki!.client(name, groups));
  return users.get(key)!;
};
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
const v1beta1 = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authz-modes-'));
  webhook = await startSarWebhook((spec) => {
    if (spec.user === 'wendy') return { allowed: true, reason: 'wendy may' };
    if (spec.user === 'mallory') return { allowed: false, denied: true, reason: 'mallory is banned' };
    if (spec.user === 'flaky') return 503;
    return { allowed: false, reason: 'not mine' };
  });
  const policyFile = join(dir, 'abac.jsonl');
  writeFileSync(
    policyFile,
    [
      '# ABAC policy: one object a line',
      v1beta1({ user: 'alice', namespace: 'team-a', resource: 'pods', readonly: true }),
      v1beta1({ group: 'ops', namespace: '*', resource: 'configmaps', apiGroup: '' }),
      v1beta1({ user: '*', namespace: 'shared', resource: 'configmaps', readonly: true }),
      v1beta1({ user: 'carol', nonResourcePath: '/logs/*' }),
      '{"user":"legacy","readonly":true}',
    ].join('\n'),
  );
  env = await startTestEnv({
    secure: true,
    server: {
      authorizationMode: ['ABAC', 'Webhook', 'Node', 'RBAC'],
      authorization: { policyFile, webhookConfigFile: webhook.kubeconfig(dir, 'authz'), webhookVersion: 'v1' },
    },
  });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  for (const ns of ['team-a', 'team-b', 'shared'])
    assert.equal((await call(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
});
after(async () => {
  await env?.stop();
  await webhook?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('ABAC: a readonly user may get and list, not create; only in its namespace', async () => {
  const alice = await as('alice');
  assert.equal((await call(alice, 'GET', '/api/v1/namespaces/team-a/pods')).status, 200);
  assert.equal((await call(alice, 'GET', '/api/v1/namespaces/team-a/pods/nope')).status, 404, 'get is allowed: the pod is just not there');
  const create = await call(alice, 'POST', '/api/v1/namespaces/team-a/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
  assert.equal(create.status, 403);
  assert.equal(
    create.body.message,
    'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "team-a": No policy matched.\nnot mine',
    "ABAC's and the webhook's reasons, one a line",
  );
  assert.equal((await call(alice, 'GET', '/api/v1/namespaces/team-b/pods')).status, 403);
});

test('ABAC: group policies, "*" users and the legacy format', async () => {
  const ops = await as('olga', ['ops']);
  assert.equal((await call(ops, 'POST', '/api/v1/namespaces/team-b/configmaps', cm('by-ops'))).status, 201);
  assert.equal((await call(await as('olga', ['dev']), 'POST', '/api/v1/namespaces/team-b/configmaps', cm('x'))).status, 403);
  const zoe = await as('zoe');
  assert.equal((await call(zoe, 'GET', '/api/v1/namespaces/shared/configmaps')).status, 200, '"*": every authenticated user');
  assert.equal((await call(zoe, 'POST', '/api/v1/namespaces/shared/configmaps', cm('y'))).status, 403);
  const legacy = await as('legacy');
  assert.equal((await call(legacy, 'GET', '/apis/apps/v1/namespaces/team-b/deployments')).status, 200, 'unversioned: every group and namespace');
  assert.equal((await call(legacy, 'DELETE', '/api/v1/namespaces/team-b/configmaps/by-ops')).status, 403, 'readonly');
});

test('ABAC: a nonResourcePath prefix', async () => {
  const carol = await as('carol');
  assert.equal((await call(carol, 'GET', '/logs/kube-apiserver.log')).status, 404, 'authorized: nothing is served there');
  const refused = await call(carol, 'GET', '/logz');
  assert.equal(refused.status, 403);
  assert.match(refused.body.message, /^forbidden: User "carol" cannot get path "\/logz"/);
});

test('Webhook: allows; its denial is final even where RBAC allows', async () => {
  assert.equal((await call(await as('wendy'), 'DELETE', '/api/v1/namespaces/team-b/configmaps/nope')).status, 404, 'wendy is allowed');
  await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'mallory-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
  });
  const sar = (user: string) =>
    call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, resourceAttributes: { namespace: 'team-b', verb: 'list', resource: 'secrets' } },
    });
  // The binding reaches RBAC through the watch cache: it allows a user the webhook has no opinion of.
  await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'rita-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'rita' }],
  });
  await eventually(async () => (await sar('rita')).body.status.allowed === true);
  const mallory = await call(await as('mallory'), 'GET', '/api/v1/namespaces/team-b/secrets');
  assert.equal(mallory.status, 403);
  assert.equal(
    mallory.body.message,
    'secrets is forbidden: User "mallory" cannot list resource "secrets" in API group "" in the namespace "team-b": mallory is banned',
  );
  assert.deepEqual((await sar('mallory')).body.status, { allowed: false, denied: true, reason: 'mallory is banned' });
  assert.equal((await call(await as('rita'), 'GET', '/api/v1/namespaces/team-b/secrets')).status, 200, 'no opinion: RBAC decides');
});

test('Webhook: one call per distinct request within the TTL; the review is v1 with the bearer token of the kubeconfig', async () => {
  const wendy = await as('wendy', ['qa']);
  const asked = (ns: string) =>
    webhook.reviews.filter((r) => r.body.spec.user === 'wendy' && r.body.spec.groups?.includes('qa') && r.body.spec.resourceAttributes?.namespace === ns);
  for (let i = 0; i < 3; i++) assert.equal((await call(wendy, 'GET', '/api/v1/namespaces/team-a/services')).status, 200);
  assert.equal(asked('team-a').length, 1);
  assert.equal((await call(wendy, 'GET', '/api/v1/namespaces/team-b/services')).status, 200);
  assert.equal(asked('team-b').length, 1, 'other attributes, another call');
  const r = asked('team-a')[0]!;
  assert.equal(r.token, 'webhook-secret');
  assert.equal(r.body.apiVersion, 'authorization.k8s.io/v1');
  assert.deepEqual(r.body.spec.resourceAttributes, { namespace: 'team-a', verb: 'list', resource: 'services' });
  assert.deepEqual(r.body.spec.groups, ['qa', 'system:authenticated']);
});

test('Webhook failure: no opinion (the legacy flags), reported as the evaluation error', async () => {
  const flaky = await as('flaky');
  assert.equal((await call(flaky, 'GET', '/api/v1/namespaces/team-a/pods')).status, 403, 'nobody else allows flaky');
  const review = await call(admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user: 'flaky', resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods' } },
  });
  assert.equal(review.body.status.allowed, false);
  assert.equal(review.body.status.denied, undefined);
  assert.match(review.body.status.evaluationError, /status code 503/);
});

test('SelfSubjectRulesReview lists the ABAC rules and is incomplete with a webhook', async () => {
  const r = await call(await as('alice'), 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace: 'team-a' },
  });
  assert.equal(r.status, 201);
  assert.equal(r.body.status.incomplete, true);
  assert.equal(r.body.status.evaluationError, 'webhook authorizer does not support user rule resolution');
  assert.ok(r.body.status.resourceRules.some((x: any) => x.resources.includes('pods') && x.verbs.join() === 'get,list,watch'));
});
