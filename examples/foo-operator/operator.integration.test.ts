/**
 * The operator against a real control plane, in the style of a kubebuilder
 * suite (envtest's BeforeSuite/AfterSuite): the Foo CRD installed from the
 * artifacts folder, the controller run in-process against the control plane,
 * then the behaviour observed through the API — a Deployment appears for a
 * Foo, status follows, and deleting the namespace finishes (the garbage
 * collector and the namespace controller run, as they do not under envtest).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { EventRecorder, type RestClient } from '@kubeling/client';
import { startControlPlane, stopEtcdServer, waitFor, type ControlPlane, type KubeObject } from '@kubeling/testenv/control-plane';
import { FooController } from './controller.js';

let cp: ControlPlane;
let controller: FooController;
let running: Promise<void>;

before(async () => {
  cp = await startControlPlane({ crds: [new URL('./artifacts/crd-status-subresource.yaml', import.meta.url).pathname], nodes: 1 });
  const client = cp.client.rest as RestClient;
  controller = new FooController({ client, recorder: new EventRecorder(client, { component: 'foo-operator' }), log: pino({ level: 'silent' }) });
  running = controller.run(2);
});

after(async () => {
  controller?.stop();
  await running;
  await cp?.stop();
  await stopEtcdServer();
});

interface Deployment extends KubeObject {
  spec: { replicas: number };
  status?: { availableReplicas?: number };
}

test('a Foo gets its Deployment, owned by it, and the available replicas in its status', async () => {
  await cp.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'foos' } });
  const foo = await cp.client.create<KubeObject>({
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name: 'example-foo', namespace: 'foos' },
    spec: { deploymentName: 'example-foo', replicas: 2 },
  });
  const dep = await waitFor(() => cp.client.tryGet<Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'example-foo', namespace: 'foos' }), {
    message: 'the Deployment of the Foo',
  });
  assert.equal(dep.spec.replicas, 2);
  assert.deepEqual(
    dep.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
    [['Foo', 'example-foo', foo.metadata.uid, true]],
  );
  // The Deployment's pods run on the hollow node, and the operator copies what is available into the Foo.
  await waitFor(
    async () => {
      const f = await cp.client.get<KubeObject & { status?: { availableReplicas?: number } }>({
        apiVersion: 'samplecontroller.k8s.io/v1alpha1',
        kind: 'Foo',
        name: 'example-foo',
        namespace: 'foos',
      });
      return f.status?.availableReplicas === 2;
    },
    { timeoutMs: 30_000, message: 'status.availableReplicas 2' },
  );
});

test('a change of replicas reaches the Deployment', async () => {
  await cp.client.patch({ apiVersion: 'samplecontroller.k8s.io/v1alpha1', kind: 'Foo', name: 'example-foo', namespace: 'foos' }, { spec: { replicas: 1 } });
  await waitFor(
    async () => (await cp.client.get<Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'example-foo', namespace: 'foos' })).spec.replicas === 1,
    {
      message: 'the Deployment scaled to 1',
    },
  );
});

test('deleting the namespace finishes: the Foo, its Deployment and their pods go', async () => {
  await cp.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'foos' });
  await waitFor(async () => !(await cp.client.tryGet({ apiVersion: 'v1', kind: 'Namespace', name: 'foos' })), {
    timeoutMs: 30_000,
    message: 'namespace foos to be gone',
  });
  assert.deepEqual((await cp.client.list('v1', 'Pod', { namespace: 'foos' })).items, []);
});
