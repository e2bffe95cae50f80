import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import {
  addLists,
  calculateUsage,
  evaluatorFor,
  exceededNames,
  formatQuantity,
  fromQuantityList,
  podEvaluator,
  prettyPrintList,
  quotaMatches,
  serviceEvaluator,
  toQuantity,
  toQuantityList,
  trackedResources,
  type QuotaSpecLike,
} from './quota.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

const pod = (name: string, spec: Record<string, unknown> = {}, extra: Partial<KubeObject> & { status?: Record<string, unknown> } = {}): KubeObject => ({
  metadata: { name, namespace: 'ns', ...(extra.metadata ?? {}) },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  ...(extra.status ? { status: extra.status } : {}),
});
const res = (requests: Record<string, string>, limits: Record<string, string> = {}) => ({
  containers: [{ name: 'c', image: 'busybox', resources: { requests, limits } }],
});
const shown = (l: Record<string, { nanos: bigint; format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent' }>) => fromQuantityList(l);

test('quantities add exactly and keep the first non-zero format', () => {
  const sum = addLists(toQuantityList({ memory: '252Mi', cpu: '500m' }), toQuantityList({ memory: '100Mi', cpu: '600m' }));
  assert.deepEqual(fromQuantityList(sum), { cpu: '1100m', memory: '352Mi' });
  assert.equal(formatQuantity(addLists({ m: toQuantity('0') }, { m: toQuantity('1Gi') }).m!), '1Gi');
  assert.deepEqual(exceededNames(toQuantityList({ pods: '4', cpu: '1' }), toQuantityList({ pods: '3', cpu: '2', memory: '1' })), ['pods']);
  assert.equal(prettyPrintList(toQuantityList({ pods: '1', cpu: '100m' })), 'cpu=100m,pods=1');
});

test('pod usage: requests and limits (init containers as a floor, sidecars added, overhead), extended resources, count/pods', () => {
  const p = pod(
    'p',
    {
      containers: [
        { name: 'a', resources: { requests: { cpu: '250m', memory: '64Mi', 'example.com/dongle': '2' }, limits: { cpu: '1', memory: '128Mi' } } },
        { name: 'b', resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1' } } },
      ],
      initContainers: [
        { name: 'big-init', resources: { requests: { cpu: '2' } } },
        { name: 'sidecar', restartPolicy: 'Always', resources: { requests: { memory: '32Mi' } } },
      ],
      overhead: { cpu: '100m' },
    },
    { status: { phase: 'Running' } },
  );
  assert.deepEqual(shown(podEvaluator.usage(p, NOW)), {
    'count/pods': '1',
    cpu: '2100m',
    'limits.cpu': '2100m',
    'limits.memory': '128Mi',
    memory: '160Mi',
    pods: '1',
    'requests.cpu': '2100m',
    'requests.example.com/dongle': '2',
    'requests.memory': '160Mi',
  });
});

test('terminal pods and pods past their grace period only count in count/pods', () => {
  const done = pod('done', res({ cpu: '1' }), { status: { phase: 'Succeeded' } });
  assert.deepEqual(shown(podEvaluator.usage(done, NOW)), { 'count/pods': '1' });
  const stuck = pod('stuck', res({ cpu: '1' }), { metadata: { deletionTimestamp: '2024-12-31T23:59:00Z', deletionGracePeriodSeconds: 30 } });
  assert.deepEqual(shown(podEvaluator.usage(stuck, NOW)), { 'count/pods': '1' });
  const leaving = pod('leaving', res({ cpu: '1' }), { metadata: { deletionTimestamp: '2024-12-31T23:59:50Z', deletionGracePeriodSeconds: 30 } });
  assert.equal(shown(podEvaluator.usage(leaving, NOW)).pods, '1');
});

test('pod scopes: Terminating, BestEffort, PriorityClass (In, NotIn, Exists), CrossNamespacePodAffinity', () => {
  const be = pod('be');
  const burst = pod('burst', { ...res({ cpu: '1' }), activeDeadlineSeconds: 60, priorityClassName: 'gold' });
  const s = (scopeName: string, operator = 'Exists', values?: string[]) => ({ scopeName, operator, ...(values ? { values } : {}) });
  assert.equal(podEvaluator.matchesScope(s('Terminating'), be), false);
  assert.equal(podEvaluator.matchesScope(s('NotTerminating'), be), true);
  assert.equal(podEvaluator.matchesScope(s('Terminating'), burst), true);
  assert.equal(podEvaluator.matchesScope(s('BestEffort'), be), true);
  assert.equal(podEvaluator.matchesScope(s('NotBestEffort'), burst), true);
  assert.equal(podEvaluator.matchesScope(s('PriorityClass', 'In', ['gold']), burst), true);
  assert.equal(podEvaluator.matchesScope(s('PriorityClass', 'In', ['gold']), be), false);
  assert.equal(podEvaluator.matchesScope(s('PriorityClass', 'NotIn', ['gold']), be), true);
  assert.equal(podEvaluator.matchesScope(s('PriorityClass', 'Exists'), be), false);
  const cross = pod('x', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: ['other'], topologyKey: 'k' }] } } });
  assert.equal(podEvaluator.matchesScope(s('CrossNamespacePodAffinity'), cross), true);
  assert.equal(podEvaluator.matchesScope(s('CrossNamespacePodAffinity'), be), false);
  // Services have no scopes: a scoped quota never matches them.
  assert.equal(quotaMatches(serviceEvaluator, { hard: { services: '1' }, scopes: ['BestEffort'] }, { metadata: { name: 's' } }), false);
  assert.equal(quotaMatches(serviceEvaluator, { hard: { services: '1' } }, { metadata: { name: 's' } }), true);
});

test('a quota on cpu needs every container to state it (upstream message)', () => {
  const p = pod('p', { containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }, { name: 'b' }] });
  assert.equal(podEvaluator.constraints(['requests.cpu', 'limits.memory', 'pods'], p), 'must specify limits.memory for: a,b; requests.cpu for: b');
  assert.equal(podEvaluator.constraints(['pods', 'count/pods'], p), undefined);
});

test('services count node ports and load balancers by type', () => {
  const svc = (type: string, ports: number, alloc?: boolean) => ({
    metadata: { name: 's' },
    spec: {
      type,
      ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i, ...(i === 0 ? { nodePort: 30000 } : {}) })),
      ...(alloc === undefined ? {} : { allocateLoadBalancerNodePorts: alloc }),
    },
  });
  assert.deepEqual(shown(serviceEvaluator.usage(svc('ClusterIP', 2), NOW)), {
    'count/services': '1',
    services: '1',
    'services.loadbalancers': '0',
    'services.nodeports': '0',
  });
  assert.equal(shown(serviceEvaluator.usage(svc('NodePort', 2), NOW))['services.nodeports'], '2');
  assert.deepEqual(
    [
      shown(serviceEvaluator.usage(svc('LoadBalancer', 3, false), NOW))['services.nodeports'],
      shown(serviceEvaluator.usage(svc('LoadBalancer', 3), NOW))['services.loadbalancers'],
    ],
    ['1', '1'],
  );
});

test('PVCs count storage by class, rounded up', () => {
  const e = evaluatorFor('/persistentvolumeclaims')!;
  const pvc = { metadata: { name: 'c' }, spec: { storageClassName: 'gold', resources: { requests: { storage: '1.5' } } } };
  assert.deepEqual(shown(e.usage(pvc, NOW)), {
    'count/persistentvolumeclaims': '1',
    'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
    'gold.storageclass.storage.k8s.io/requests.storage': '2',
    persistentvolumeclaims: '1',
    'requests.storage': '2',
  });
  assert.deepEqual(e.matchingResources(['gold.storageclass.storage.k8s.io/requests.storage', 'requests.cpu']), [
    'gold.storageclass.storage.k8s.io/requests.storage',
  ]);
});

test('object counts: legacy aliases, count/<resource>.<group>, ignored events; admission handles creates only', () => {
  const cm = evaluatorFor('/configmaps')!;
  assert.deepEqual(cm.matchingResources(['configmaps', 'count/configmaps', 'secrets']), ['configmaps', 'count/configmaps']);
  const deploy = evaluatorFor('apps/deployments')!;
  assert.deepEqual(deploy.matchingResources(['count/deployments.apps']), ['count/deployments.apps']);
  assert.equal(deploy.handles('CREATE', undefined), true);
  assert.equal(deploy.handles('UPDATE', undefined), false);
  assert.equal(podEvaluator.handles('CREATE', 'eviction'), false);
  assert.equal(evaluatorFor('/events'), undefined);
  const served = (r: string) => r === 'apps/deployments';
  assert.deepEqual(trackedResources(['cpu', 'services.nodeports', 'count/deployments.apps', 'count/widgets.example.com', 'count/events'], served).sort(), [
    '/pods',
    '/services',
    'apps/deployments',
  ]);
});

test('calculateUsage: scopes filter pods; untracked names stay out; failed resources are reported', () => {
  const spec: QuotaSpecLike = { hard: { pods: '5', 'requests.cpu': '2', secrets: '10', 'count/replicasets.apps': '3' }, scopes: ['NotBestEffort'] };
  const objects: Record<string, KubeObject[]> = {
    '/pods': [pod('be'), pod('burst', res({ cpu: '300m' })), pod('done', res({ cpu: '1' }), { status: { phase: 'Failed' } })],
    '/secrets': [{ metadata: { name: 's1' } }, { metadata: { name: 's2' } }],
  };
  const { used, failed } = calculateUsage(
    spec,
    (r) => objects[r],
    () => true,
    NOW,
  );
  // Scopes only apply to resources that have them: secrets under a NotBestEffort quota match nothing.
  assert.deepEqual(fromQuantityList(used), { pods: '1', 'requests.cpu': '300m', secrets: '0' });
  assert.deepEqual(failed, ['count/replicasets.apps']);
  const unscoped = calculateUsage(
    { hard: { secrets: '10', configmaps: '1' } },
    (r) => objects[r] ?? [],
    () => true,
    NOW,
  );
  assert.deepEqual(fromQuantityList(unscoped.used), { configmaps: '0', secrets: '2' });
});
