import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { findUntoleratedTaint, doNotScheduleTaint, tolerates } from './taints.js';
import { preferredNodeAffinityScore, requiredNodeAffinityMatches } from './nodeaffinity.js';
import { podRequests } from './resources.js';
import { controllerRef, isPodAvailable, isPodReady, qosClass } from './pods.js';

const node = (name: string, labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });

test('tolerations match taints by key, value, operator and effect', () => {
  const taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  assert.equal(tolerates({ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, taint), true);
  assert.equal(tolerates({ key: 'dedicated', value: 'cpu' }, taint), false);
  assert.equal(tolerates({ key: 'dedicated', operator: 'Exists' }, taint), true);
  assert.equal(tolerates({ operator: 'Exists' }, taint), true);
  assert.equal(tolerates({ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint), false);
  const taints = [{ key: 'soft', effect: 'PreferNoSchedule' }, taint];
  assert.deepEqual(findUntoleratedTaint(taints, [], doNotScheduleTaint), taint);
  assert.equal(findUntoleratedTaint(taints, [{ key: 'dedicated', operator: 'Exists' }], doNotScheduleTaint), undefined);
});

test('nodeSelector and required node affinity must both match; preferred terms add their weights', () => {
  const n = node('n1', { zone: 'a', disk: 'ssd', cores: '8' });
  assert.equal(requiredNodeAffinityMatches({ nodeSelector: { zone: 'a' } }, n), true);
  assert.equal(requiredNodeAffinityMatches({ nodeSelector: { zone: 'b' } }, n), false);
  const req = (exprs: object[]) =>
    ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: exprs }] } } } }) as never;
  assert.equal(requiredNodeAffinityMatches(req([{ key: 'disk', operator: 'In', values: ['ssd', 'nvme'] }]), n), true);
  assert.equal(requiredNodeAffinityMatches(req([{ key: 'disk', operator: 'NotIn', values: ['ssd'] }]), n), false);
  assert.equal(requiredNodeAffinityMatches(req([{ key: 'cores', operator: 'Gt', values: ['4'] }]), n), true);
  assert.equal(requiredNodeAffinityMatches(req([{ key: 'gpu', operator: 'Exists' }]), n), false);
  assert.equal(requiredNodeAffinityMatches(req([{ key: 'gpu', operator: 'DoesNotExist' }]), n), true);
  const byName = {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
            { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
          ],
        },
      },
    },
  };
  assert.equal(requiredNodeAffinityMatches(byName as never, n), true, 'terms are ORed');
  const pref = {
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 10, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
          { weight: 5, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['hdd'] }] } },
          { weight: 1, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } },
        ],
      },
    },
  };
  assert.equal(preferredNodeAffinityScore(pref as never, n), 11);
});

test('pod requests: containers summed, init containers maxed, sidecars added, overhead on top', () => {
  const spec: Parameters<typeof podRequests>[0] = {
    initContainers: [
      { resources: { requests: { cpu: '2', memory: '1Gi' } } },
      { restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
      { resources: { requests: { cpu: '500m' } } },
    ],
    containers: [{ resources: { requests: { cpu: '250m', memory: '64Mi' } } }, { resources: { limits: { cpu: '250m', 'example.com/gpu': '1' } } }],
    overhead: { cpu: '10m' },
  };
  const r = podRequests(spec);
  assert.equal(r.cpu, 2010); // init 2 cpu beats 600m of app+sidecar
  assert.equal(r.memory, 1024 ** 3);
  assert.equal(r['example.com/gpu'], 1);
  assert.deepEqual(podRequests({ containers: [{}] }), {});
  assert.deepEqual(podRequests({ containers: [{}] }, { nonZero: true }), { cpu: 100, memory: 200 * 1024 * 1024 });
});

test('qosClass as ComputePodQOS: cpu and memory only, positive quantities, requests equal to limits', () => {
  const c = (resources: Record<string, Record<string, string>>) => ({ name: 'c', resources });
  assert.equal(qosClass({ containers: [c({})] }), 'BestEffort');
  assert.equal(qosClass({ containers: [c({ requests: { 'ephemeral-storage': '1Gi' } })] }), 'BestEffort');
  assert.equal(qosClass({ containers: [c({ limits: { cpu: '0', memory: '0' } })] }), 'BestEffort');
  assert.equal(qosClass({ containers: [c({ requests: { cpu: '100m' } })] }), 'Burstable');
  assert.equal(qosClass({ containers: [c({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1024Mi' } })] }), 'Guaranteed');
  assert.equal(qosClass({ containers: [c({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } })] }), 'Burstable');
  // Every container must limit both; init containers count.
  assert.equal(
    qosClass({
      containers: [c({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })],
      initContainers: [c({ limits: { cpu: '1' }, requests: { cpu: '1' } })],
    }),
    'Burstable',
  );
});

test('pod readiness, availability after minReadySeconds, and the controlling owner', () => {
  const pod = (ready: string, since: string) => ({
    metadata: {
      name: 'p',
      ownerReferences: [
        { apiVersion: 'v1', kind: 'X', name: 'a', uid: '1' },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '2', controller: true },
      ],
    },
    status: { conditions: [{ type: 'Ready', status: ready, lastTransitionTime: since }] },
  });
  const p = pod('True', '2026-01-01T00:00:00Z');
  assert.equal(isPodReady(p), true);
  assert.equal(isPodReady(pod('False', '2026-01-01T00:00:00Z')), false);
  assert.equal(isPodAvailable(p, 10, Date.parse('2026-01-01T00:00:05Z')), false);
  assert.equal(isPodAvailable(p, 10, Date.parse('2026-01-01T00:00:10Z')), true);
  assert.equal(controllerRef(p)?.name, 'rs');
});
