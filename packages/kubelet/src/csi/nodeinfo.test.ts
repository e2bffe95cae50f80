import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';
import { ANNOTATION_MIGRATED_PLUGINS, ANNOTATION_NODE_ID, MIGRATED_PLUGINS, NodeInfoManager, type CSINode } from './nodeinfo.js';

type Obj = Record<string, any>;

const notFound = () =>
  new StatusError({ apiVersion: 'v1', kind: 'Status', status: 'Failure', message: 'not found', reason: 'NotFound', code: 404 } as ConstructorParameters<
    typeof StatusError
  >[0]);

/** A Node and a CSINode held in memory, with the client calls NodeInfoManager makes. */
function fakeClient() {
  const node: Obj = { metadata: { name: 'n1', uid: 'node-uid', resourceVersion: '1', labels: { 'kubernetes.io/hostname': 'n1' }, annotations: {} } };
  let csiNode: CSINode | undefined;
  const calls: string[] = [];
  const merge = (into: Obj, patch: Obj) => {
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete into[k];
      else if (typeof v === 'object' && !Array.isArray(v)) merge((into[k] ??= {}), v);
      else into[k] = v;
    }
  };
  const client = {
    get: async (path: string) => {
      calls.push(`GET ${path}`);
      if (path === '/api/v1/nodes/n1') return structuredClone(node);
      if (path.endsWith('/csinodes/n1')) {
        if (!csiNode) throw notFound();
        return structuredClone(csiNode);
      }
      throw notFound();
    },
    post: async (path: string, body: CSINode) => {
      calls.push(`POST ${path}`);
      csiNode = structuredClone(body);
      return structuredClone(body);
    },
    put: async (path: string, body: CSINode) => {
      calls.push(`PUT ${path}`);
      csiNode = structuredClone(body);
      return body;
    },
    patch: async (path: string, body: Obj) => {
      calls.push(`PATCH ${path}`);
      assert.equal(body.metadata.resourceVersion, node.metadata.resourceVersion, 'the patch carries the resourceVersion it read');
      const { resourceVersion: _rv, ...meta } = body.metadata;
      merge(node.metadata, meta);
      node.metadata.resourceVersion = String(Number(node.metadata.resourceVersion) + 1);
      return node;
    },
  };
  return { client: client as unknown as RestClient, node, csiNode: () => csiNode, calls };
}

test('initialize makes the CSINode, owned by the Node, with no drivers and the migrated plugins', async () => {
  const f = fakeClient();
  await new NodeInfoManager(f.client, 'n1').initialize();
  assert.deepEqual(f.csiNode(), {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: {
      name: 'n1',
      annotations: { [ANNOTATION_MIGRATED_PLUGINS]: MIGRATED_PLUGINS },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }],
    },
    spec: { drivers: [] },
  });
  f.calls.length = 0;
  await new NodeInfoManager(f.client, 'n1').initialize();
  assert.deepEqual(f.calls, ['GET /apis/storage.k8s.io/v1/csinodes/n1'], 'an initialized CSINode is left alone');
});

test('installing a driver sets the node ID annotation, the topology labels and the CSINode entry; uninstalling takes them back', async () => {
  const f = fakeClient();
  const nim = new NodeInfoManager(f.client, 'n1');
  await nim.installDriver('b.example', 'id-b', 0, {});
  await nim.installDriver('a.example', 'n1', 12, { 'topology.a/zone': 'z', 'topology.a/node': 'n1' });
  assert.equal(f.node.metadata.annotations[ANNOTATION_NODE_ID], '{"a.example":"n1","b.example":"id-b"}');
  assert.equal(f.node.metadata.labels['topology.a/node'], 'n1');
  assert.equal(f.node.metadata.labels['topology.a/zone'], 'z');
  assert.deepEqual(f.csiNode()!.spec.drivers, [
    { name: 'b.example', nodeID: 'id-b', topologyKeys: null },
    { name: 'a.example', nodeID: 'n1', topologyKeys: ['topology.a/node', 'topology.a/zone'], allocatable: { count: 12 } },
  ]);
  // The same registration again changes nothing.
  f.calls.length = 0;
  await nim.installDriver('a.example', 'n1', 12, { 'topology.a/zone': 'z', 'topology.a/node': 'n1' });
  assert.ok(!f.calls.some((c) => c.startsWith('PUT') || c.startsWith('PATCH')), f.calls.join(', '));

  await nim.uninstallDriver('a.example');
  assert.deepEqual(
    f.csiNode()!.spec.drivers.map((d) => d.name),
    ['b.example'],
  );
  assert.equal(f.node.metadata.annotations[ANNOTATION_NODE_ID], '{"b.example":"id-b"}');
  assert.equal(f.node.metadata.labels['topology.a/zone'], 'z', 'topology labels stay, as upstream leaves them');
  await nim.uninstallDriver('b.example');
  assert.equal(ANNOTATION_NODE_ID in f.node.metadata.annotations, false);
});

test('a driver may not change a label the node has, nor register without a node ID', async () => {
  const f = fakeClient();
  const nim = new NodeInfoManager(f.client, 'n1');
  await assert.rejects(nim.installDriver('a', '', 0, {}), /driverNodeID must not be empty/);
  await assert.rejects(
    nim.installDriver('a', 'n1', 0, { 'kubernetes.io/hostname': 'other' }),
    /error updating Node object with CSI driver node info: detected topology value collision: driver reported "kubernetes.io\/hostname":"other" but existing label is "kubernetes.io\/hostname":"n1"/,
  );
  assert.equal(f.csiNode(), undefined);
});
