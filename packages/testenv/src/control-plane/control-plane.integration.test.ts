/**
 * startControlPlane as a user of the package sees it: one shared etcd, control
 * planes isolated by their prefix, controllers that finish namespace deletion
 * and make pods of a Deployment on a hollow node, CRDs from a folder, RBAC
 * users, and a stop that leaves nothing in etcd.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { startControlPlane, StatusError, waitFor, type ControlPlane, type KubeObject } from './index.js';
import { etcdEndpoints, stopEtcdServer } from './etcd.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeling-cp-test-'));
let cp: ControlPlane;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer, minimum: 1 }
`;

before(async () => {
  writeFileSync(join(dir, 'widgets.yaml'), CRD);
  cp = await startControlPlane({ crds: [dir], nodes: 1 });
});

after(async () => {
  await cp?.stop();
  await stopEtcdServer();
  rmSync(dir, { recursive: true, force: true });
});

const deployment = (ns: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: ns },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  },
});

test('a Deployment gets running pods on the hollow node, and its namespace finishes deleting', async () => {
  await cp.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } });
  await cp.client.create(deployment('demo'));
  const pods = await waitFor(
    async () => {
      const l = await cp.client.list('v1', 'Pod', { namespace: 'demo' });
      return l.items.length === 2 && l.items.every((p) => (p.status as { phase?: string })?.phase === 'Running') && l.items;
    },
    { timeoutMs: 30_000, message: 'two running pods' },
  );
  assert.deepEqual(
    pods.map((p) => (p.spec as { nodeName?: string }).nodeName),
    ['node-0', 'node-0'],
  );
  await cp.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'demo' });
  await waitFor(async () => !(await cp.client.tryGet({ apiVersion: 'v1', kind: 'Namespace', name: 'demo' })), {
    timeoutMs: 30_000,
    message: 'namespace demo to be gone',
  });
});

test('the CRD of the folder is served, and its schema applies', async () => {
  const w = await cp.client.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { size: 3 } });
  assert.equal(w.metadata.namespace, 'default');
  await assert.rejects(
    cp.client.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { size: 0 } }),
    (e: unknown) => e instanceof StatusError && e.status.reason === 'Invalid' && /spec.size/.test(e.message),
  );
  // Server-side apply creates, then changes what its manager owns.
  await cp.client.apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w3' }, spec: { size: 1 } });
  const applied = await cp.client.apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w3' }, spec: { size: 4 } });
  assert.equal((applied.spec as { size: number }).size, 4);
  // A field another manager set is a conflict unless forced, as upstream.
  await assert.rejects(
    cp.client.apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 5 } }, { fieldManager: 'other' }),
    (e: unknown) => e instanceof StatusError && e.status.code === 409,
  );
  const forced = await cp.client.apply(
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 5 } },
    { fieldManager: 'other', force: true },
  );
  assert.equal((forced.spec as { size: number }).size, 5);
});

test('control planes of one etcd see nothing of each other; stop deletes the prefix', async () => {
  const other = await startControlPlane({ controllers: 'none', scheduler: false });
  try {
    assert.notEqual(other.etcdPrefix, cp.etcdPrefix);
    await other.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'only-here', namespace: 'default' }, data: { a: '1' } });
    assert.equal(await cp.client.tryGet({ apiVersion: 'v1', kind: 'ConfigMap', name: 'only-here' }), undefined);
    // API Priority and Fairness is off unless asked for: no FlowSchemas are made (upstream makes them only with APF).
    assert.equal((await other.client.list('flowcontrol.apiserver.k8s.io/v1', 'FlowSchema')).items.length, 0);
    // The CRD of the first is not served by the second.
    await assert.rejects(other.client.list('example.com/v1', 'Widget'), (e: unknown) => e instanceof StatusError && e.status.code === 404);
  } finally {
    await other.stop();
  }
  const etcd = new Etcd3({ hosts: await etcdEndpoints() });
  try {
    const left = await etcd.getAll().prefix(`${other.etcdPrefix}/`).keys();
    assert.deepEqual(left, []);
    const mine = await etcd.getAll().prefix(`${cp.etcdPrefix}/configmaps/`).keys();
    assert.ok(mine.length > 0, 'the first control plane keeps its keys under its prefix');
    assert.equal((await etcd.getAll().prefix('/registry/').keys()).length, 0, 'nothing is written under /registry');
  } finally {
    etcd.close();
  }
});

test('under RBAC a user may do what a binding gives and nothing else', async () => {
  const rbac = await startControlPlane({ authz: 'RBAC', controllers: 'none', scheduler: false, priorityAndFairness: true });
  try {
    const schemas = await rbac.client.list('flowcontrol.apiserver.k8s.io/v1', 'FlowSchema');
    assert.ok(
      schemas.items.some((f) => f.metadata.name === 'exempt'),
      'with APF the bootstrap FlowSchemas exist',
    );
    const alice = await rbac.users.asUser('alice', ['team-a']);
    await assert.rejects(alice.client.list('v1', 'Pod', { namespace: 'default' }), (e: unknown) => e instanceof StatusError && e.status.code === 403);
    await rbac.client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'team-a-view', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'team-a' }],
    });
    const pods = await waitFor(() => alice.client.list('v1', 'Pod', { namespace: 'default' }), { message: 'alice to list pods' });
    assert.deepEqual(pods.items, []);
    await assert.rejects(
      alice.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } }),
      (e: unknown) => e instanceof StatusError && e.status.code === 403,
    );
    assert.match(alice.kubeconfigPath, /kubeconfig/);
  } finally {
    await rbac.stop();
  }
});
