import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../kinds.js';
import type { PersistentVolumeClaim } from '../storage.js';
import { podUsesClaim, processClaim, type ProtectionDeps } from './controller.js';

const FINALIZER = 'kubernetes.io/pvc-protection';
const claim = (o: { deleting?: boolean; finalizers?: string[]; owner?: string } = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name: 'web-data',
    namespace: 'ns',
    uid: 'claim-uid',
    finalizers: o.finalizers ?? [FINALIZER],
    ...(o.deleting ? { deletionTimestamp: '2026-03-01T10:00:00Z' } : {}),
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: o.owner, controller: true }] } : {}),
  },
});

interface PodOpts {
  node?: string;
  phase?: string;
  ephemeral?: boolean;
  shutDown?: boolean;
  namespace?: string;
}
const pod = (o: PodOpts = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: o.namespace ?? 'ns',
      uid: 'pod-uid',
      ...(o.shutDown ? { deletionTimestamp: '2026-03-01T10:00:00Z', deletionGracePeriodSeconds: 0 } : {}),
    },
    spec: {
      containers: [],
      ...(o.node === undefined ? { nodeName: 'n1' } : o.node ? { nodeName: o.node } : {}),
      volumes: [
        o.ephemeral ? { name: 'data', ephemeral: { volumeClaimTemplate: { spec: {} } } } : { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
      ],
    },
    status: { phase: o.phase ?? 'Running' },
  }) as unknown as Pod;

function deps(cached: Pod[], live: Pod[] = cached): ProtectionDeps & { updates: PersistentVolumeClaim[]; lists: string[] } {
  const d = {
    updates: [] as PersistentVolumeClaim[],
    lists: [] as string[],
    cachedPods: () => cached,
    listPods: async (ns: string) => {
      d.lists.push(ns);
      return live;
    },
    updateClaim: async (c: PersistentVolumeClaim) => {
      d.updates.push(c);
    },
  };
  return d;
}

test('a scheduled pod naming the claim uses it, terminated or not (as upstream); an unscheduled one does not', () => {
  assert.equal(podUsesClaim(pod(), claim()), true);
  assert.equal(podUsesClaim(pod({ phase: 'Succeeded' }), claim()), true, 'upstream keeps the claim until the pod is deleted');
  assert.equal(podUsesClaim(pod({ node: '' }), claim()), false);
  assert.equal(podUsesClaim(pod({ namespace: 'other' }), claim()), false);
});

test('a generic ephemeral claim is used only by its owner pod, until that pod is shut down', () => {
  assert.equal(podUsesClaim(pod({ ephemeral: true }), claim({ owner: 'pod-uid' })), true);
  assert.equal(podUsesClaim(pod({ ephemeral: true }), claim({ owner: 'someone-else' })), false);
  assert.equal(podUsesClaim(pod({ ephemeral: true, shutDown: true }), claim({ owner: 'pod-uid' })), false);
});

test('a deleting claim in use keeps the finalizer; the cache answers without a live list', async () => {
  const d = deps([pod()]);
  assert.equal(await processClaim(claim({ deleting: true }), d), 'kept');
  assert.deepEqual([d.updates, d.lists], [[], []]);
});

test('a pod only the live list knows still protects the claim', async () => {
  const d = deps([], [pod()]);
  assert.equal(await processClaim(claim({ deleting: true }), d), 'kept');
  assert.deepEqual(d.lists, ['ns']);
});

test('a deleting claim nothing uses loses the finalizer, keeping the others', async () => {
  const d = deps([pod({ node: '' })], []);
  assert.equal(await processClaim(claim({ deleting: true, finalizers: ['example.com/keep', FINALIZER] }), d), 'removed');
  assert.deepEqual(d.updates[0]!.metadata.finalizers, ['example.com/keep']);
});

test('a live claim without the finalizer gets it; one with it is left alone', async () => {
  const d = deps([]);
  assert.equal(await processClaim(claim({ finalizers: [] }), d), 'added');
  assert.deepEqual(d.updates[0]!.metadata.finalizers, [FINALIZER]);
  assert.equal(await processClaim(claim(), deps([])), 'none');
  assert.equal(await processClaim(claim({ deleting: true, finalizers: [] }), deps([])), 'none', 'deleting without the finalizer: nothing to do');
});
