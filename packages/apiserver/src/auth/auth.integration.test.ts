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
import { Kubectl, clientFor, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let dir: string;
let admin: { certPem: string; keyPem: string };
let jane: { certPem: string; keyPem: string };

type Creds = { certPem?: string; keyPem?: string; token?: string; headers?: Record<string, string> };

const call = (method: string, path: string, creds: Creds = {}, body?: unknown) => clientFor(env, creds)(method, path, body);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authn-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'secret-token-for-bob,bob,uid-bob,"ops,readers"\n');
  env = await startTestEnv({ secure: true, server: { tokenFile: tokens } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  jane = await env.pki!.client('jane', ['developers']);
  for (const ns of ['dev', 'prod']) {
    await call('POST', '/api/v1/namespaces', admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    // No controller-manager here: the default ServiceAccount the ServiceAccount admission plugin wants is made by hand.
    await call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, admin, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  }
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles', admin, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'pod-reader' },
    rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }],
  });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings', admin, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'jane-reads-pods' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }],
  });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', admin, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'readers-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
  });
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
  for (const n of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:basic-user',
    'system:discovery',
    'system:kube-scheduler',
    'system:kube-controller-manager',
    'system:node',
  ])
    assert.ok(roles.includes(n), n);
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

test("aggregation is transitive: edit has view's rules, admin has edit's", async () => {
  const can = async (user: string, verb: string, resource: string, group = '') =>
    (
      await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', admin, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, resourceAttributes: { namespace: 'dev', verb, resource, group } },
      })
    ).body.status.allowed;
  for (const [name, role] of [
    ['eddie', 'edit'],
    ['ada', 'admin'],
  ] as const) {
    const rb = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${name}-${role}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }],
    };
    assert.equal((await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings', admin, rb)).status, 201);
  }
  // view's rules (get pods, list deployments) through edit; edit's (create deployments) through admin.
  assert.equal(await can('eddie', 'get', 'pods'), true);
  assert.equal(await can('eddie', 'list', 'deployments', 'apps'), true);
  assert.equal(await can('eddie', 'create', 'deployments', 'apps'), true);
  assert.equal(await can('eddie', 'create', 'rolebindings', 'rbac.authorization.k8s.io'), false);
  assert.equal(await can('ada', 'get', 'pods'), true);
  assert.equal(await can('ada', 'create', 'deployments', 'apps'), true);
  assert.equal(await can('ada', 'create', 'rolebindings', 'rbac.authorization.k8s.io'), true);
});

test('access reviews answer truthfully; impersonation needs the impersonate verb', async () => {
  const ssar = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', jane, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'dev', verb: 'list', resource: 'pods' } },
  });
  assert.equal(ssar.status, 201);
  assert.equal(ssar.body.status.allowed, true);
  const no = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', jane, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'prod', verb: 'list', resource: 'pods' } },
  });
  assert.equal(no.body.status.allowed, false);
  const sar = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', admin, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user: 'jane', resourceAttributes: { namespace: 'dev', verb: 'get', resource: 'pods', subresource: 'log' } },
  });
  assert.equal(sar.body.status.allowed, true);
  const ssrr = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', jane, {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace: 'dev' },
  });
  assert.ok(ssrr.body.status.resourceRules.some((r: any) => r.resources.includes('pods') && r.verbs.includes('list')));
  // jane may not impersonate; the admin may.
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { ...jane, headers: { 'impersonate-user': 'bob' } })).status, 403);
  const as = await call('GET', '/api/v1/namespaces/prod/pods', { ...admin, headers: { 'impersonate-user': 'jane' } });
  assert.equal(as.status, 403);
  assert.match(as.body.message, /User "jane" cannot list/);
});

const kubectlBin = kubectlBinaries().default;
test('the real kubectl over HTTPS with the CA and a client certificate; auth can-i [--list] [--as]', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const k = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, ...jane });
  const ka = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, ...admin });
  try {
    const get = await k.run(['get', 'pods']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stderr + get.stdout, /No resources found in dev namespace/);
    const forbidden = await k.run(['get', 'pods', '-n', 'prod']);
    assert.notEqual(forbidden.code, 0);
    assert.match(
      forbidden.stderr,
      /Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "prod"/,
    );
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

test('ServiceAccount tokens: TokenRequest, use with RBAC, TokenReview; tampered, expired and pod-bound-after-deletion tokens are 401', async () => {
  await call('POST', '/api/v1/namespaces/dev/serviceaccounts', admin, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings', admin, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'robot-reads' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'dev' }],
  });
  await new Promise((r) => setTimeout(r, 200));
  const tr = await call('POST', '/api/v1/namespaces/dev/serviceaccounts/robot/token', admin, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  assert.equal(tr.status, 201, JSON.stringify(tr.body));
  const token = tr.body.status.token as string;
  assert.equal(token.split('.').length, 3);
  assert.ok(Date.parse(tr.body.status.expirationTimestamp) > Date.now() + 3500_000);
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { token })).status, 200);
  const other = await call('GET', '/api/v1/namespaces/prod/pods', { token });
  assert.equal(
    other.body.message,
    'pods is forbidden: User "system:serviceaccount:dev:robot" cannot list resource "pods" in API group "" in the namespace "prod"',
  );
  const review = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', admin, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  });
  assert.equal(review.body.status.authenticated, true);
  assert.equal(review.body.status.user.username, 'system:serviceaccount:dev:robot');
  assert.ok(review.body.status.user.groups.includes('system:serviceaccounts:dev'));
  // Tampered: one character of the payload changed.
  const [h, p, s] = token.split('.');
  const tampered = `${h}.${p!.slice(0, 10)}${p![10] === 'A' ? 'B' : 'A'}${p!.slice(11)}.${s}`;
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { token: tampered })).status, 401);
  // Expired: signed with the cluster key, an hour in the past.
  const { ServiceAccountTokens } = await import('./serviceaccount.js');
  const sa = (await call('GET', '/api/v1/namespaces/dev/serviceaccounts/robot', admin)).body;
  const signer = new ServiceAccountTokens({
    signingKeyPem: env.pki!.saPrivatePem,
    publicKeyPems: [env.pki!.saPublicPem],
    issuer: 'https://kubernetes.default.svc.cluster.local',
    audiences: ['https://kubernetes.default.svc.cluster.local'],
    lookup: { serviceAccount: async () => undefined, pod: async () => undefined, secret: async () => undefined },
  });
  const expired = (await signer.issue(sa, { expirationSeconds: -3600 })).token;
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { token: expired })).status, 401);
  // Bound to a pod: valid while the pod lives.
  await call('POST', '/api/v1/namespaces/dev/pods', admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'holder' },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });
  const bound = await call('POST', '/api/v1/namespaces/dev/serviceaccounts/robot/token', admin, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'holder' } },
  });
  const podToken = bound.body.status.token as string;
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { token: podToken })).status, 200);
  await call('DELETE', '/api/v1/namespaces/dev/pods/holder', admin, { gracePeriodSeconds: 0 });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await call('GET', '/api/v1/namespaces/dev/pods', { token: podToken })).status, 401, 'the pod is gone');
  const short = await call('POST', '/api/v1/namespaces/dev/serviceaccounts/robot/token', admin, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 60 },
  });
  assert.equal(short.status, 422);
});

test('kubectl create token, then kubectl with that token', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
  const ka = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, ...admin });
  try {
    const t = await ka.run(['create', 'token', 'robot', '-n', 'dev']);
    assert.equal(t.code, 0, t.stderr);
    const k = new Kubectl(env.url, kubectlBin!, { namespace: 'dev', caPem: env.pki!.caPem, token: t.stdout.trim() });
    try {
      const get = await k.run(['get', 'pods']);
      assert.equal(get.code, 0, get.stderr);
      const who = await k.run(['auth', 'can-i', 'list', 'pods', '-n', 'prod']);
      assert.equal(who.stdout.trim(), 'no');
    } finally {
      k.cleanup();
    }
  } finally {
    ka.cleanup();
  }
});

test('the Node authorizer: a kubelet reads only what its pods use and changes only its own Node', async () => {
  const n1 = await env.pki!.client('system:node:n1', ['system:nodes']);
  const n2 = await env.pki!.client('system:node:n2', ['system:nodes']);
  for (const n of ['n1', 'n2'])
    assert.equal((await call('POST', '/api/v1/nodes', n === 'n1' ? n1 : n2, { apiVersion: 'v1', kind: 'Node', metadata: { name: n } })).status, 201);
  for (const s of ['s1', 's2'])
    await call('POST', '/api/v1/namespaces/dev/secrets', admin, { apiVersion: 'v1', kind: 'Secret', metadata: { name: s }, stringData: { k: 'v' } });
  await call('POST', '/api/v1/namespaces/dev/pods', admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'on-n2' },
    spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'busybox', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's2', key: 'k' } } }] }] },
  });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await call('GET', '/api/v1/namespaces/dev/secrets/s2', n2)).status, 200, 'n2 runs a pod that uses s2');
  const theirs = await call('GET', '/api/v1/namespaces/dev/secrets/s2', n1);
  assert.equal(theirs.status, 403, 'n1 has no pod using s2');
  assert.equal(
    theirs.body.message,
    `secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "dev": no relationship found between node 'n1' and this object`,
  );
  assert.equal((await call('GET', '/api/v1/namespaces/dev/secrets', n2)).status, 403, 'no listing secrets');
  assert.equal(
    (await call('PATCH', '/api/v1/nodes/n1/status', n1, { status: { capacity: { pods: '10' } } })).status,
    415,
    'own node: allowed (the content type decides)',
  );
  const other = await callPatch('/api/v1/nodes/n2', n1, { metadata: { labels: { hacked: 'yes' } } });
  assert.equal(other.status, 403);
  assert.equal((await callPatch('/api/v1/nodes/n1', n1, { metadata: { labels: { mine: 'yes' } } })).status, 200);
  assert.equal((await callPatch('/api/v1/namespaces/dev/pods/on-n2/status', n1, { status: { phase: 'Failed' } })).status, 403, 'not its pod');
  assert.equal((await callPatch('/api/v1/namespaces/dev/pods/on-n2/status', n2, { status: { phase: 'Running' } })).status, 200);
  assert.equal((await call('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1', n1)).status, 200, 'watching its pods');
});

function callPatch(path: string, creds: Creds, body: unknown) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const u = new URL(env.url + path);
    const payload = JSON.stringify(body);
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'PATCH',
        ca: env.pki!.caPem,
        cert: creds.certPem,
        key: creds.keyPem,
        headers: { 'content-type': 'application/merge-patch+json', accept: 'application/json' },
      },
      (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(b || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

test('the ServiceAccount admission plugin: default account, a token volume in every container, refusal without the account', async () => {
  const r = await call('POST', '/api/v1/namespaces/dev/pods', admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sa-pod' },
    spec: { initContainers: [{ name: 'i', image: 'busybox' }], containers: [{ name: 'c', image: 'busybox' }] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.spec.serviceAccountName, 'default');
  const vol = r.body.spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
  assert.deepEqual(
    vol.projected.sources.map((s: any) => Object.keys(s)[0]),
    ['serviceAccountToken', 'configMap', 'downwardAPI'],
  );
  for (const c of [...r.body.spec.initContainers, ...r.body.spec.containers]) {
    assert.deepEqual(c.volumeMounts, [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  }
  const off = await call('POST', '/api/v1/namespaces/dev/pods', admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'no-token' },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }] },
  });
  assert.equal(off.body.spec.volumes, undefined);
  const missing = await call('POST', '/api/v1/namespaces/dev/pods', admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'ghost' },
    spec: { serviceAccountName: 'ghost', containers: [{ name: 'c', image: 'busybox' }] },
  });
  assert.equal(missing.status, 403);
  assert.equal(missing.body.message, 'pods "ghost" is forbidden: error looking up service account dev/ghost: serviceaccount "ghost" not found');
});
