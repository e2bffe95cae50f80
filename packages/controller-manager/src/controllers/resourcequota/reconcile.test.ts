import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { planQuotaStatus, quotasCounting, quotaSpecChanged, updateReleasesUsage } from './reconcile.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

const quota = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'q', namespace: 'ns' },
  spec,
  ...(status ? { status } : {}),
});
const pod = (name: string, cpu?: string, phase = 'Running'): KubeObject => ({
  metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', ...(cpu ? { resources: { requests: { cpu }, limits: { cpu } } } : {}) }] },
  status: { phase },
});

test('a new quota gets hard = spec.hard and the usage of everything it tracks (zero included)', () => {
  const q = quota({ hard: { pods: '5', 'requests.cpu': '2', secrets: '10', 'count/deployments.apps': '2', resourcequotas: '1' } });
  const objects: Record<string, KubeObject[]> = {
    '/pods': [pod('a', '500m'), pod('b', '250m'), pod('done', '1', 'Succeeded')],
    '/secrets': [{ metadata: { name: 's' } }],
    '/resourcequotas': [q],
    'apps/deployments': [],
  };
  const { status, failed } = planQuotaStatus(
    q,
    (r) => objects[r],
    (r) => r === 'apps/deployments',
    NOW,
  );
  assert.deepEqual(failed, []);
  assert.deepEqual(status, {
    hard: { 'count/deployments.apps': '2', pods: '5', 'requests.cpu': '2', resourcequotas: '1', secrets: '10' },
    used: { 'count/deployments.apps': '0', pods: '2', 'requests.cpu': '750m', resourcequotas: '1', secrets: '1' },
  });
});

test('nothing to write when the recorded status already says it (by value: 1000m is 1)', () => {
  const q = quota({ hard: { 'requests.cpu': '1' } }, { hard: { 'requests.cpu': '1000m' }, used: { 'requests.cpu': '1' } });
  assert.equal(
    planQuotaStatus(
      q,
      () => [pod('a', '1')],
      () => true,
      NOW,
    ).status,
    undefined,
  );
  // A changed hard limit is written even when usage is unchanged.
  const raised = quota({ hard: { 'requests.cpu': '2' } }, { hard: { 'requests.cpu': '1' }, used: { 'requests.cpu': '1' } });
  assert.deepEqual(
    planQuotaStatus(
      raised,
      () => [pod('a', '1')],
      () => true,
      NOW,
    ).status,
    { hard: { 'requests.cpu': '2' }, used: { 'requests.cpu': '1' } },
  );
});

test('a resource that cannot be counted keeps its previous usage and is reported; names no longer hard are dropped', () => {
  const q = quota(
    { hard: { pods: '5', secrets: '3' } },
    { hard: { pods: '5', secrets: '3', configmaps: '1' }, used: { pods: '4', secrets: '2', configmaps: '1' } },
  );
  const { status, failed } = planQuotaStatus(
    q,
    (r) => (r === '/pods' ? [pod('a')] : undefined),
    () => true,
    NOW,
  );
  assert.deepEqual(failed, ['secrets']);
  assert.deepEqual(status, { hard: { pods: '5', secrets: '3' }, used: { pods: '1', secrets: '2' } });
});

test('scoped quotas count only the pods in scope', () => {
  const objects = [pod('be'), pod('burst', '100m')];
  const be = planQuotaStatus(
    quota({ hard: { pods: '5' }, scopes: ['BestEffort'] }),
    () => objects,
    () => true,
    NOW,
  ).status;
  const notBe = planQuotaStatus(
    quota({ hard: { pods: '5' }, scopeSelector: { matchExpressions: [{ scopeName: 'NotBestEffort', operator: 'Exists' }] } }),
    () => objects,
    () => true,
    NOW,
  ).status;
  assert.deepEqual([be?.used, notBe?.used], [{ pods: '1' }, { pods: '1' }]);
  const none = planQuotaStatus(
    quota({ hard: { pods: '5' }, scopes: ['Terminating'] }),
    () => objects,
    () => true,
    NOW,
  ).status;
  assert.deepEqual(none?.used, { pods: '0' });
});

test('replenishment: a pod turning terminal or a service changing type releases usage; other updates do not', () => {
  assert.equal(updateReleasesUsage('/pods', pod('a'), pod('a', undefined, 'Failed'), NOW), true);
  assert.equal(updateReleasesUsage('/pods', pod('a'), pod('a'), NOW), false);
  const svc = (type: string): KubeObject => ({ metadata: { name: 's' }, spec: { type } });
  assert.equal(updateReleasesUsage('/services', svc('NodePort'), svc('ClusterIP'), NOW), true);
  assert.equal(updateReleasesUsage('/services', svc('ClusterIP'), svc('ExternalName'), NOW), false);
  assert.equal(updateReleasesUsage('/configmaps', svc('a'), svc('b'), NOW), false);
});

test('which quotas a resource’s change concerns, and which quota updates call for a full recalculation', () => {
  const podsQuota = quota({ hard: { 'limits.memory': '1Gi' } });
  const cmQuota = quota({ hard: { 'count/configmaps': '1' } });
  assert.deepEqual(quotasCounting('/pods', [podsQuota, cmQuota]), [podsQuota]);
  assert.deepEqual(quotasCounting('/configmaps', [podsQuota, cmQuota]), [cmQuota]);
  assert.deepEqual(quotasCounting('/events', [podsQuota, cmQuota]), []);
  assert.equal(quotaSpecChanged(quota({ hard: { pods: '1' } }), quota({ hard: { pods: '1' } }, { used: { pods: '1' } })), false);
  assert.equal(quotaSpecChanged(quota({ hard: { cpu: '1' } }), quota({ hard: { cpu: '1000m' } })), false);
  assert.equal(quotaSpecChanged(quota({ hard: { cpu: '1' } }), quota({ hard: { cpu: '2' } })), true);
  assert.equal(quotaSpecChanged(quota({ hard: { pods: '1' } }), quota({ hard: { pods: '1' }, scopes: ['BestEffort'] })), true);
});
