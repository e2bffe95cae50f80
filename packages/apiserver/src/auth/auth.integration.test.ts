/**
 * The apiserver over HTTPS with x509 client certificates, a static token file
 * and RBAC with the bootstrap policy: 401 without credentials, namespaced Roles,
 * truthful access reviews, impersonation, and the real kubectl through a
 * kubeconfig carrying the CA and a client certificate.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let dir: string;
let admin: { certPem: string; keyPem: string };
let jane: { certPem: string; keyPem: string };

type Creds = { certPem?: string; keyPem?: string; token?: string; headers?: Record<string, string> };

function call(method: string, path: string, creds: Creds = {}, body?: unknown): Promise<{ status: number; body: any }> {
  const u = new URL(env.url + path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        ca: env.pki!.caPem,
        ...(creds.certPem ? { cert: creds.certPem, key: creds.keyPem } : {}),
        headers: { accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}), ...(creds.token ? { authorization: `Bearer ${creds.token}` } : {}), ...(creds.headers ?? {}) },
      },
      (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => {
          let parsed: unknown = b;
          try {
            parsed = JSON.parse(b);
          } catch {
            // text
          }
          resolve({ status: res.statusCode!, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authn-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'secret-token-for-bob,bob,uid-bob,"ops,readers"\n');
  env = await startTestEnv({ secure: true, server: { tokenFile: tokens } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  jane = await env.pki!.client('jane', ['developers']);
  for (const ns of ['dev', 'prod']) await call('POST', '/api/v1/namespaces', admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles', admin, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }] });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings', admin, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'jane-reads-pods' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }] });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', admin, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'readers-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }] });
  // The policy reaches the authorizer through the watch cache.
  await new Promise((r) => setTimeout(r, 300));
});
after(async () => {
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('no credentials: 401 everywhere but health and version', async () => {
  const r = await call('GET', '/api/v1/namespaces');
  assert.equal(r.status, 401);
  assert.deepEqual([r.body.kind, r.body.reason, r.body.message, r.body.code], ['Status', 'Unauthorized', 'Unauthorized', 401]);
  assert.equal((await call('GET', '/api')).status, 401);
  assert.equal((await call('GET', '/healthz')).status, 200);
  assert.equal((await call('GET', '/version')).status, 200);
  assert.equal((await call('GET', '/api/v1/namespaces', { token: 'wrong' })).status, 401, 'an unknown token');
});

test('bootstrap policy exists; system:masters can do anything', async () => {
  const roles = (await call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles', admin)).body.items.map((r: any) => r.metadata.name);
  for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:kube-scheduler', 'system:kube-controller-manager', 'system:node']) assert.ok(roles.includes(n), n);
  assert.equal((await call('GET', '/api/v1/namespaces/kube-system/secrets', admin)).status, 200);
});

test('a namespaced Role lets jane list pods in dev, not in prod, with the upstream 403 message', async () => {
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', jane)).status, 200);
  const denied = await call('GET', '/api/v1/namespaces/prod/pods', jane);
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "prod"');
  assert.equal(denied.body.reason, 'Forbidden');
  const named = await call('DELETE', '/api/v1/namespaces/dev/pods/x', jane);
  assert.equal(named.body.message, 'pods "x" is forbidden: User "jane" cannot delete resource "pods" in API group "" in the namespace "dev"');
  const cluster = await call('GET', '/api/v1/nodes', jane);
  assert.equal(cluster.body.message, 'nodes is forbidden: User "jane" cannot list resource "nodes" in API group "" at the cluster scope');
  assert.equal((await call('GET', '/api', jane)).status, 200, 'discovery for every authenticated user');
});

test('a static token user gets its groups: view through a ClusterRoleBinding to a group (aggregated role)', async () => {
  const bob = { token: 'secret-token-for-bob' };
  assert.equal((await call('GET', '/api/v1/namespaces/prod/configmaps', bob)).status, 200);
  assert.equal((await call('GET', '/apis/apps/v1/namespaces/prod/deployments', bob)).status, 200);
  assert.equal((await call('GET', '/api/v1/namespaces/prod/secrets', bob)).status, 403, 'view does not read secrets');
  assert.equal((await call('POST', '/api/v1/namespaces/prod/configmaps', bob, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })).status, 403);
});

test('access reviews answer truthfully; impersonation needs the impersonate verb', async () => {
  const ssar = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', jane, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'dev', verb: 'list', resource: 'pods' } } });
  assert.equal(ssar.status, 201);
  assert.equal(ssar.body.status.allowed, true);
  const no = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', jane, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'prod', verb: 'list', resource: 'pods' } } });
  assert.equal(no.body.status.allowed, false);
  const sar = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', admin, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'jane', resourceAttributes: { namespace: 'dev', verb: 'get', resource: 'pods', subresource: 'log' } } });
  assert.equal(sar.body.status.allowed, true);
  const ssrr = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', jane, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'dev' } });
  assert.ok(ssrr.body.status.resourceRules.some((r: any) => r.resources.includes('pods') && r.verbs.includes('list')));
  // jane may not impersonate; the admin may.
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { ...jane, headers: { 'impersonate-user': 'bob' } })).status, 403);
  const as = await call('GET', '/api/v1/namespaces/prod/pods', { ...admin, headers: { 'impersonate-user': 'jane' } });
  assert.equal(as.status, 403);
  assert.match(as.body.message, /User "jane" cannot list/);
});

const kubectlBin = kubectlBinaries().default;
test('the real kubectl over HTTPS with the CA and a client certificate; auth can-i [--list] [--as]', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
  const k = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, ...jane });
  const ka = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, ...admin });
  try {
    const get = await k.run(['get', 'pods']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stderr + get.stdout, /No resources found in dev namespace/);
    const forbidden = await k.run(['get', 'pods', '-n', 'prod']);
    assert.notEqual(forbidden.code, 0);
    assert.match(forbidden.stderr, /Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "prod"/);
    assert.equal((await k.run(['auth', 'can-i', 'list', 'pods'])).stdout.trim(), 'yes');
    assert.equal((await k.run(['auth', 'can-i', 'list', 'pods', '-n', 'prod'])).stdout.trim(), 'no');
    const list = await k.run(['auth', 'can-i', '--list']);
    assert.match(list.stdout, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    assert.match(list.stdout, /selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    assert.equal((await ka.run(['auth', 'can-i', 'delete', 'pods', '--as=jane'])).stdout.trim(), 'no');
    assert.equal((await ka.run(['get', 'nodes'])).code, 0);
  } finally {
    k.cleanup();
    ka.cleanup();
  }
});
