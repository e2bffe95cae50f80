/**
 * CSIDriverRestriction's decisions that the apiserver's validation hides
 * (a volume's source and node affinity are immutable once set): the plugin
 * still checks what it is given, and who it applies to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { capacityPinnedToNode, CSIDriverRestriction, csiDriverNode, pinnedToNode, volumeSourceProblem } from './csidriverrestriction.js';
import type { AdmissionAttributes } from './index.js';

const affinity = (...values: string[][]) => ({
  required: { nodeSelectorTerms: values.map((v) => ({ matchExpressions: [{ key: 'topology.hostpath.kubeling.io/node', operator: 'In', values: v }] })) },
});
const pv = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'v' }, spec }) as KubeObject;
const csi = { csi: { driver: 'd', volumeHandle: 'h' } };
const user = (name: string) => ({ name, groups: ['kubeling:csi-drivers'] });
const plugin = new CSIDriverRestriction({ claim: async () => undefined, volume: async () => undefined });
const update = (old: KubeObject, name = 'system:csi-driver:n1'): AdmissionAttributes => ({
  operation: 'UPDATE',
  resource: '/persistentvolumes',
  namespace: undefined,
  name: 'v',
  old,
  user: user(name),
});

test('only users named system:csi-driver:<node> are restricted', () => {
  assert.equal(csiDriverNode(user('system:csi-driver:n1')), 'n1');
  assert.equal(csiDriverNode(user('system:node:n1')), undefined);
  assert.equal(csiDriverNode(undefined), undefined);
  const old = pv({ ...csi, nodeAffinity: affinity(['n1']) });
  assert.equal(plugin.handles(update(old)), true);
  assert.equal(plugin.handles(update(old, 'system:node:n1')), false);
  assert.equal(plugin.handles({ ...update(old), resource: '/pods' }), false);
});

test('pinned means every term names exactly the node', () => {
  assert.equal(pinnedToNode(pv({ nodeAffinity: affinity(['n1']) }), 'n1'), true);
  assert.equal(pinnedToNode(pv({ nodeAffinity: affinity(['n1'], ['n1']) }), 'n1'), true);
  assert.equal(pinnedToNode(pv({ nodeAffinity: affinity(['n1', 'n2']) }), 'n1'), false);
  assert.equal(pinnedToNode(pv({ nodeAffinity: affinity(['n1'], ['n2']) }), 'n1'), false);
  assert.equal(pinnedToNode(pv({}), 'n1'), false);
  const cap = (nodeTopology: unknown) => ({ metadata: {}, nodeTopology }) as unknown as KubeObject;
  assert.equal(capacityPinnedToNode(cap({ matchLabels: { a: 'n1', b: 'n1' } }), 'n1'), true);
  assert.equal(capacityPinnedToNode(cap({ matchLabels: { a: 'n1', b: 'n2' } }), 'n1'), false);
  assert.equal(capacityPinnedToNode(cap({ matchLabels: {} }), 'n1'), false);
});

test('sources: csi only, with no secret reference', () => {
  assert.equal(volumeSourceProblem(pv(csi)), undefined);
  assert.equal(volumeSourceProblem(pv({})), 'with a csi volume source');
  assert.equal(volumeSourceProblem(pv({ ...csi, local: { path: '/' } })), 'with a csi volume source only, not local');
  assert.equal(
    volumeSourceProblem(pv({ csi: { ...csi.csi, nodeStageSecretRef: { name: 's' }, controllerExpandSecretRef: { name: 's' } } })),
    'that reference no secrets (spec.csi.nodeStageSecretRef, spec.csi.controllerExpandSecretRef)',
  );
});

test('an update of a pinned volume must leave it pinned, csi only, with its claim', async () => {
  const old = pv({ ...csi, nodeAffinity: affinity(['n1']), claimRef: { namespace: 'd', name: 'c', uid: 'u' } });
  const message = async (obj: KubeObject) => {
    try {
      await plugin.validate(obj, update(old));
      return '';
    } catch (e) {
      return (e as Error).message;
    }
  };
  const prefix = 'persistentvolumes "v" is forbidden: csidriverrestriction: system:csi-driver:n1 may';
  assert.equal(await message(structuredClone(old)), '');
  const moved = pv({ ...(old.spec as object), nodeAffinity: affinity(['n2']) });
  assert.equal(await message(moved), `${prefix} only update PersistentVolumes pinned to node "n1"`);
  const hostPath = pv({ ...(old.spec as object), csi: undefined, hostPath: { path: '/' } });
  assert.equal(await message(hostPath), `${prefix} only update PersistentVolumes with a csi volume source only, not hostPath`);
  const unbound = pv({ ...(old.spec as object), claimRef: undefined });
  assert.equal(await message(unbound), `${prefix} not change the claimRef of PersistentVolumes`);
});
