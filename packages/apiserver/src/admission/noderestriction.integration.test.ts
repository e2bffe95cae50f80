/**
 * NodeRestriction and the Node authorizer on a secure apiserver: a kubelet's
 * credentials reach its own Node, Lease and pods and nothing else — in
 * particular no Secret through a pod it makes up.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, startTestEnv, type Reply, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
type Call = ReturnType<typeof clientFor>;
let admin: Call;
let nodeA: Call;
let nodeB: Call;
let nodeAUid: string;

const merge = { contentType: 'application/merge-patch+json' };
const pod = (name: string, spec: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...meta },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});
const forbiddenWith = (r: Reply, message: string) => {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body.reason, 'Forbidden');
  assert.equal(r.body.message, message);
};

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  nodeA = clientFor(env, await env.pki!.client('system:node:node-a', ['system:nodes']));
  nodeB = clientFor(env, await env.pki!.client('system:node:node-b', ['system:nodes']));
  assert.equal((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'repro' } })).status, 201);
  assert.equal(
    (await admin('POST', '/api/v1/namespaces/repro/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })).status,
    201,
  );
  assert.equal(
    (
      await admin('POST', '/api/v1/namespaces/repro/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-password' },
        stringData: { password: 'hunter2' },
      })
    ).status,
    201,
  );
  const a = await nodeA('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', 'kubernetes.io/os': 'linux' } },
  });
  assert.equal(a.status, 201, a.text);
  nodeAUid = a.body.metadata.uid;
  assert.equal((await nodeB('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-b' } })).status, 201);
});
after(async () => {
  await env?.stop();
});

describe('pods', () => {
  test('the kubelet-reads-any-Secret sequence is refused at the pod create, and the Secret stays out of reach', async () => {
    forbiddenWith(
      await nodeA('GET', '/api/v1/namespaces/repro/secrets/db-password'),
      `secrets "db-password" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "repro": no relationship found between node 'node-a' and this object`,
    );
    const steal = pod('steal', { nodeName: 'node-a', volumes: [{ name: 's', secret: { secretName: 'db-password' } }] });
    forbiddenWith(
      await nodeA('POST', '/api/v1/namespaces/repro/pods', steal),
      'pods "steal" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods',
    );
    assert.equal((await admin('GET', '/api/v1/namespaces/repro/pods/steal')).status, 404);
    assert.equal((await nodeA('GET', '/api/v1/namespaces/repro/secrets/db-password')).status, 403);
    // As a mirror pod it is refused too (by anyone: mirror pods reference no Secret).
    const mirror = { 'kubernetes.io/config.mirror': 'x' };
    const owner = [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeAUid, controller: true }];
    forbiddenWith(
      await nodeA(
        'POST',
        '/api/v1/namespaces/repro/pods',
        pod('steal2', { nodeName: 'node-a', volumes: [{ name: 's', secret: { secretName: 'db-password' } }] }, { annotations: mirror, ownerReferences: owner }),
      ),
      'pods "steal2" is forbidden: a mirror pod may not reference secrets',
    );
    // A real pod using it gives its own node, and only that node, the path to it.
    assert.equal(
      (
        await admin(
          'POST',
          '/api/v1/namespaces/repro/pods',
          pod('uses-secret', { nodeName: 'node-b', volumes: [{ name: 's', secret: { secretName: 'db-password' } }] }),
        )
      ).status,
      201,
    );
    for (let i = 0; i < 50 && (await nodeB('GET', '/api/v1/namespaces/repro/secrets/db-password')).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal((await nodeB('GET', '/api/v1/namespaces/repro/secrets/db-password')).status, 200);
    assert.equal((await nodeA('GET', '/api/v1/namespaces/repro/secrets/db-password')).status, 403);
  });

  test('mirror pods: only bound to itself, owned by its own Node (controller, UID), referencing nothing', async () => {
    const mirror = { 'kubernetes.io/config.mirror': 'hash' };
    const owner = (extra: Record<string, unknown> = {}) => [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeAUid, controller: true, ...extra }];
    const create = (name: string, spec: Record<string, unknown>, meta: Record<string, unknown>) =>
      nodeA('POST', '/api/v1/namespaces/repro/pods', pod(name, spec, meta));
    forbiddenWith(
      await create('m1', { nodeName: 'node-b' }, { annotations: mirror, ownerReferences: owner() }),
      'pods "m1" is forbidden: node "node-a" can only create pods with spec.nodeName set to itself',
    );
    forbiddenWith(
      await create('m2', { nodeName: 'node-a' }, { annotations: mirror }),
      'pods "m2" is forbidden: node "node-a" can only create pods with an owner reference set to itself',
    );
    forbiddenWith(
      await create('m3', { nodeName: 'node-a' }, { annotations: mirror, ownerReferences: owner({ controller: false }) }),
      'pods "m3" is forbidden: node "node-a" can only create pods with a controller owner reference set to itself',
    );
    forbiddenWith(
      await create('m4', { nodeName: 'node-a' }, { annotations: mirror, ownerReferences: owner({ uid: 'not-the-uid' }) }),
      `pods "m4" is forbidden: node node-a UID mismatch: expected not-the-uid got ${nodeAUid}`,
    );
    forbiddenWith(
      await create('m5', { nodeName: 'node-a' }, { annotations: mirror, ownerReferences: owner({ blockOwnerDeletion: true }) }),
      'pods "m5" is forbidden: node "node-a" must not set blockOwnerDeletion on an owner reference',
    );
    forbiddenWith(
      await create(
        'm6',
        { nodeName: 'node-a', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] },
        { annotations: mirror, ownerReferences: owner() },
      ),
      'pods "m6" is forbidden: node "node-a" can not create pods that reference persistentvolumeclaims',
    );
    const ok = await create('m-ok', { nodeName: 'node-a' }, { annotations: mirror, ownerReferences: owner() });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.spec.serviceAccountName, undefined, 'mirror pods get no ServiceAccount');
  });

  test('status only of pods bound to itself; deletes only of pods bound to itself; no updates', async () => {
    for (const [name, nodeName] of [
      ['on-a', 'node-a'],
      ['on-b', 'node-b'],
      ['unscheduled', undefined],
    ] as const) {
      assert.equal((await admin('POST', '/api/v1/namespaces/repro/pods', pod(name, nodeName ? { nodeName } : {}))).status, 201);
    }
    const status = { status: { phase: 'Running' } };
    forbiddenWith(
      await nodeA('PATCH', '/api/v1/namespaces/repro/pods/unscheduled/status', status, merge),
      'pods "unscheduled" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    );
    assert.equal((await nodeA('PATCH', '/api/v1/namespaces/repro/pods/on-b/status', status, merge)).status, 403);
    assert.equal((await admin('GET', '/api/v1/namespaces/repro/pods/on-b')).body.status.phase, 'Pending');
    assert.equal((await nodeA('PATCH', '/api/v1/namespaces/repro/pods/on-a/status', status, merge)).status, 200);
    // Pods themselves are not the node's to change (the node rules have no update, and admission refuses it besides).
    assert.equal((await nodeA('PATCH', '/api/v1/namespaces/repro/pods/on-a', { metadata: { labels: { x: 'y' } } }, merge)).status, 403);
    assert.equal((await nodeA('DELETE', '/api/v1/namespaces/repro/pods/on-b')).status, 403);
    assert.equal((await nodeA('DELETE', '/api/v1/namespaces/repro/pods/unscheduled')).status, 403);
    assert.equal((await admin('GET', '/api/v1/namespaces/repro/pods/unscheduled')).status, 200);
    assert.equal((await nodeA('DELETE', '/api/v1/namespaces/repro/pods/on-a')).status, 200);
    // Binding is the scheduler's.
    assert.equal(
      (
        await nodeA('POST', '/api/v1/namespaces/repro/pods/unscheduled/binding', {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: 'unscheduled' },
          target: { kind: 'Node', name: 'node-a' },
        })
      ).status,
      403,
    );
  });

  test('tokens only bound to a pod of its own, by UID, for an audience the pod uses', async () => {
    const mine = await admin('POST', '/api/v1/namespaces/repro/pods', pod('tok-a', { nodeName: 'node-a', serviceAccountName: 'default' }));
    const theirs = await admin('POST', '/api/v1/namespaces/repro/pods', pod('tok-b', { nodeName: 'node-b', serviceAccountName: 'default' }));
    const tr = (spec: Record<string, unknown>) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });
    const path = '/api/v1/namespaces/repro/serviceaccounts/default/token';
    forbiddenWith(await nodeA('POST', path, tr({})), 'serviceaccounts "default" is forbidden: node requested token not bound to a pod');
    forbiddenWith(
      await nodeA('POST', path, tr({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'tok-a' } })),
      'serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid',
    );
    forbiddenWith(
      await nodeA('POST', path, tr({ boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'tok-b', uid: theirs.body.metadata.uid } })),
      'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    );
    const ref = { apiVersion: 'v1', kind: 'Pod', name: 'tok-a', uid: mine.body.metadata.uid };
    forbiddenWith(
      await nodeA('POST', path, tr({ audiences: ['vault'], boundObjectRef: ref })),
      'serviceaccounts "default" is forbidden: audience "vault" not found in pod spec volume, system:node:node-a is not authorized to request tokens for this audience',
    );
    const ok = await nodeA('POST', path, tr({ boundObjectRef: ref }));
    assert.equal(ok.status, 201, ok.text);
    assert.ok(ok.body.status.token);
  });
});

describe('nodes', () => {
  test('only its own Node; no taint changes; no labels outside the kubelet ones in the kubernetes.io and k8s.io namespaces', async () => {
    forbiddenWith(
      await nodeA('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-x' } }),
      'nodes "node-x" is forbidden: node "node-a" is not allowed to modify node "node-x"',
    );
    forbiddenWith(
      await nodeA('PATCH', '/api/v1/nodes/node-b', { metadata: { labels: { a: 'b' } } }, merge),
      'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    );
    forbiddenWith(
      await nodeA('PATCH', '/api/v1/nodes/node-b/status', { status: { phase: 'Running' } }, merge),
      'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    );
    forbiddenWith(
      await nodeA('PATCH', '/api/v1/nodes/node-a', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }, merge),
      'nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints',
    );
    forbiddenWith(
      await nodeA(
        'PATCH',
        '/api/v1/nodes/node-a',
        { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '', 'node-restriction.kubernetes.io/pool': 'x' } } },
        merge,
      ),
      'nodes "node-a" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool, node-role.kubernetes.io/control-plane',
    );
    const ok = await nodeA(
      'PATCH',
      '/api/v1/nodes/node-a',
      { metadata: { labels: { 'example.com/disk': 'ssd', 'node.kubernetes.io/instance-type': 'small', 'topology.kubernetes.io/zone': 'z1' } } },
      merge,
    );
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await nodeA('PATCH', '/api/v1/nodes/node-a/status', { status: { capacity: { cpu: '2' } } }, merge)).status, 200);
    forbiddenWith(
      await nodeB('DELETE', '/api/v1/nodes/node-a'),
      'nodes "node-a" is forbidden: User "system:node:node-b" cannot delete resource "nodes" in API group "" at the cluster scope',
    );
    // A re-registering kubelet may not give itself restricted labels either.
    assert.equal((await admin('DELETE', '/api/v1/nodes/node-b')).status, 200);
    forbiddenWith(
      await nodeB('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-b', labels: { 'node-role.kubernetes.io/master': '' } } }),
      'nodes "node-b" is forbidden: node "node-b" is not allowed to set the following labels: node-role.kubernetes.io/master',
    );
    assert.equal((await nodeB('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-b' } })).status, 201);
  });
});

describe('leases', () => {
  test("only its own Lease in kube-node-lease; never the controller-manager's leader election", async () => {
    const lease = (name: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 15 },
    });
    assert.equal((await admin('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', lease('kube-controller-manager'))).status, 201);
    const take = await nodeA(
      'PATCH',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager',
      { spec: { holderIdentity: 'node-a' } },
      merge,
    );
    assert.equal(take.status, 403, take.text);
    assert.match(take.body.message, /can only access leases in the "kube-node-lease" system namespace/);
    assert.equal(
      (await admin('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager')).body.spec.holderIdentity,
      'kube-controller-manager',
    );
    forbiddenWith(
      await nodeA('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-b')),
      'leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    );
    assert.equal((await nodeA('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-a'))).status, 201);
    assert.equal(
      (await nodeA('PATCH', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a', { spec: { leaseDurationSeconds: 40 } }, merge)).status,
      200,
    );
    assert.equal(
      (await nodeB('PATCH', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a', { spec: { leaseDurationSeconds: 1 } }, merge)).status,
      403,
    );
  });
});
