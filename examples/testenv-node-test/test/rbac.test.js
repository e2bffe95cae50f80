// A second file, with a control plane of its own in the same etcd as the
// first file's: under RBAC, a user may do what a binding gives, no more.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startControlPlane, StatusError, waitFor } from '@kubeling/testenv';

let cp;
before(async () => {
  cp = await startControlPlane({ authz: 'RBAC', controllers: 'none', scheduler: false });
});
after(() => cp?.stop());

test('the files of one run share one etcd', () => {
  assert.match(process.env.KUBELING_ETCD_ENDPOINTS ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
});

test('a user in a group bound to view may list pods but not create them', async () => {
  const alice = await cp.users.asUser('alice', ['team-a']);
  const forbidden = (e) => e instanceof StatusError && e.status.code === 403;
  await assert.rejects(alice.client.list('v1', 'Pod', { namespace: 'default' }), forbidden);
  await cp.client.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'team-a-view', namespace: 'default' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'team-a' }],
  });
  await waitFor(() => alice.client.list('v1', 'Pod', { namespace: 'default' }));
  await assert.rejects(
    alice.client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }),
    forbidden,
  );
});
