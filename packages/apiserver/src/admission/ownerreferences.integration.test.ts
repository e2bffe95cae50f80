/**
 * OwnerReferencesPermissionEnforcement on a secure apiserver: blockOwnerDeletion
 * needs update on the owner's finalizers, changing ownerReferences needs delete
 * on the object; the controller-manager's identity can do what its controllers do.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
type Call = ReturnType<typeof clientFor>;
let admin: Call;
let jane: Call;

const NS = '/api/v1/namespaces/own';
const cm = (name: string, ownerReferences: unknown[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences } });
const role = (rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'jane' }, rules });

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  jane = clientFor(env, await env.pki!.client('jane'));
  assert.equal((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'own' } })).status, 201);
  assert.equal(
    (
      await admin(
        'POST',
        '/apis/rbac.authorization.k8s.io/v1/namespaces/own/roles',
        role([{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'update', 'patch'] }]),
      )
    ).status,
    201,
  );
  assert.equal(
    (
      await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/own/rolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'jane' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'jane' },
        subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }],
      })
    ).status,
    201,
  );
});
after(async () => {
  await env?.stop();
});

const owner = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  uid: '00000000-0000-0000-0000-000000000001',
  ...extra,
});

test("blockOwnerDeletion needs update on the owner kind's finalizers; changing ownerReferences needs delete", async () => {
  assert.equal((await jane('POST', `${NS}/configmaps`, cm('plain', [owner()]))).status, 201, 'a create with non-blocking references needs nothing more');
  const blocked = await jane('POST', `${NS}/configmaps`, cm('blocking', [owner({ blockOwnerDeletion: true })]));
  assert.equal(blocked.status, 403, blocked.text);
  assert.equal(
    blocked.body.message,
    'configmaps "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>',
  );
  assert.equal((await admin('GET', `${NS}/configmaps/blocking`)).status, 404);
  const unknown = await jane(
    'POST',
    `${NS}/configmaps`,
    cm('unknown', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u', blockOwnerDeletion: true }]),
  );
  assert.equal(unknown.status, 403);
  assert.equal(
    unknown.body.message,
    'configmaps "unknown" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"',
  );
  const changed = await jane(
    'PATCH',
    `${NS}/configmaps/plain`,
    { metadata: { ownerReferences: [owner({ name: 'other' })] } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(changed.status, 403, changed.text);
  assert.equal(changed.body.message, 'configmaps "plain" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>');
  // Other changes to an object with references are fine.
  assert.equal((await jane('PATCH', `${NS}/configmaps/plain`, { data: { a: '1' } }, { contentType: 'application/merge-patch+json' })).status, 200);

  await admin(
    'PUT',
    '/apis/rbac.authorization.k8s.io/v1/namespaces/own/roles/jane',
    role([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'update', 'patch', 'delete'] },
      { apiGroups: ['apps'], resources: ['deployments/finalizers'], verbs: ['update'], resourceNames: ['web'] },
    ]),
  );
  for (let i = 0; i < 50 && (await jane('POST', `${NS}/configmaps?dryRun=All`, cm('blocking', [owner({ blockOwnerDeletion: true })]))).status !== 201; i++)
    await new Promise((r) => setTimeout(r, 20));
  assert.equal((await jane('POST', `${NS}/configmaps`, cm('blocking', [owner({ blockOwnerDeletion: true })]))).status, 201);
  assert.equal(
    (await jane('POST', `${NS}/configmaps`, cm('blocking-other', [owner({ name: 'db', blockOwnerDeletion: true })]))).status,
    403,
    'finalizers of the named owner only',
  );
  assert.equal(
    (
      await jane(
        'PATCH',
        `${NS}/configmaps/plain`,
        { metadata: { ownerReferences: [owner({ name: 'other' })] } },
        { contentType: 'application/merge-patch+json' },
      )
    ).status,
    200,
  );
});

test("the controller-manager's identity sets blockOwnerDeletion on what its controllers own", async () => {
  const kcm = clientFor(env, await env.pki!.client('system:kube-controller-manager'));
  const ref = (apiVersion: string, kind: string) => [
    { apiVersion, kind, name: 'o', uid: '00000000-0000-0000-0000-000000000002', controller: true, blockOwnerDeletion: true },
  ];
  const pod = (name: string, ownerReferences: unknown[]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ownerReferences },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  });
  await admin('POST', `${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  for (const [apiVersion, kind] of [
    ['apps/v1', 'ReplicaSet'],
    ['apps/v1', 'StatefulSet'],
    ['apps/v1', 'DaemonSet'],
    ['batch/v1', 'Job'],
  ] as const) {
    const res = await kcm('POST', `${NS}/pods`, pod(`p-${kind.toLowerCase()}`, ref(apiVersion, kind)));
    assert.equal(res.status, 201, `${kind}: ${res.text}`);
  }
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 's', ownerReferences: ref('v1', 'Service') },
    addressType: 'IPv4',
    endpoints: [],
    ports: [],
  };
  assert.equal((await kcm('POST', '/apis/discovery.k8s.io/v1/namespaces/own/endpointslices', slice)).status, 201);
  const rs = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs', ownerReferences: ref('apps/v1', 'Deployment') },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
  };
  assert.equal((await kcm('POST', '/apis/apps/v1/namespaces/own/replicasets', rs)).status, 201);
});
