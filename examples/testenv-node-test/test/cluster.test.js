// A control plane for this file: a namespace, a Deployment whose pods run on
// a hollow node, the namespace deleted to the end, and a custom resource of a
// CRD installed from a folder.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startControlPlane, StatusError, waitFor } from '@kubeling/testenv';

let cp;
before(async () => {
  cp = await startControlPlane({ crds: [new URL('../crd', import.meta.url).pathname], nodes: 1 });
});
after(() => cp?.stop());

test('a Deployment gets pods, and its namespace finishes deleting', async () => {
  await cp.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } });
  await cp.client.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'demo' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    },
  });
  const pods = await waitFor(
    async () => {
      const { items } = await cp.client.list('v1', 'Pod', { namespace: 'demo' });
      return items.length === 2 && items.every((p) => p.status?.phase === 'Running') && items;
    },
    { timeoutMs: 30_000, message: 'two running pods' },
  );
  assert.deepEqual(
    pods.map((p) => p.spec.nodeName),
    ['node-0', 'node-0'],
  );
  await cp.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'demo' });
  await waitFor(async () => !(await cp.client.tryGet({ apiVersion: 'v1', kind: 'Namespace', name: 'demo' })), { timeoutMs: 30_000 });
});

test('the CRD from the folder serves its custom resources', async () => {
  const foo = await cp.client.create({
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'example-foo', namespace: 'default' },
    spec: { deploymentName: 'example-foo', replicas: 1 },
  });
  assert.equal(foo.metadata.namespace, 'default');
  // The CRD's schema holds: replicas is at most 10.
  await assert.rejects(
    cp.client.create({ apiVersion: 'samplecontroller.k8s.io/v1alpha1', kind: 'Foo', metadata: { name: 'too-many' }, spec: { replicas: 11 } }),
    (e) => e instanceof StatusError && e.status.reason === 'Invalid',
  );
});
