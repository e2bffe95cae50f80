import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { PDBLike } from '@kubeling/component-helpers';
import { decrementedStatus, MAX_DISRUPTED_POD_SIZE, planEviction } from './eviction.js';

const pod = (ready: boolean, labels: Record<string, string> = { app: 'web' }): KubeObject => ({
  metadata: { name: 'p', namespace: 'ns', labels },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const pdb = (name: string, o: { selector?: object; policy?: string; status?: PDBLike['status']; generation?: number } = {}): PDBLike => ({
  metadata: { name, namespace: 'ns', generation: o.generation ?? 1 },
  spec: {
    minAvailable: 1,
    selector: (o.selector ?? { matchLabels: { app: 'web' } }) as { matchLabels?: Record<string, string> },
    ...(o.policy ? { unhealthyPodEvictionPolicy: o.policy } : {}),
  },
  status: o.status ?? { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 },
});
const statusOf = (f: () => unknown): StatusError['status'] => {
  try {
    f();
  } catch (e) {
    if (e instanceof StatusError) return e.status;
    throw e;
  }
  throw new Error('expected a StatusError');
};

test('no budget selects the pod: delete; an empty selector selects nothing for eviction; another namespace is ignored', () => {
  assert.deepEqual(planEviction(pod(true), []), { action: 'delete', pinToPod: false });
  assert.deepEqual(planEviction(pod(true), [pdb('empty', { selector: {} })]), { action: 'delete', pinToPod: false });
  const elsewhere = { ...pdb('x'), metadata: { name: 'x', namespace: 'other' } };
  assert.deepEqual(planEviction(pod(true), [elsewhere]), { action: 'delete', pinToPod: false });
});

test('more than one budget: the upstream Failure Status with code 500', () => {
  const plan = planEviction(pod(true), [pdb('a'), pdb('b')]);
  assert.equal(plan.action, 'refuse');
  assert.deepEqual(plan.action === 'refuse' && [plan.status.code, plan.status.status, plan.status.message], [
    500,
    'Failure',
    'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
  ]);
});

test('a ready pod uses the budget; an unready one is deleted (pinned) when AlwaysAllow or when the budget is met without it', () => {
  assert.equal(planEviction(pod(true), [pdb('a')]).action, 'decrement');
  assert.deepEqual(
    planEviction(pod(false), [pdb('a', { policy: 'AlwaysAllow', status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 3, expectedPods: 3 } })]),
    {
      action: 'delete',
      pinToPod: true,
      pdb: pdb('a', { policy: 'AlwaysAllow', status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 3, expectedPods: 3 } }),
    },
  );
  const met = pdb('a', { status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3 } });
  assert.equal(planEviction(pod(false), [met]).action, 'delete');
  const short = pdb('a', { status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2, expectedPods: 3 } });
  assert.equal(planEviction(pod(false), [short]).action, 'decrement', 'IfHealthyBudget: an unmet budget still guards unready pods');
});

test('decrement: one disruption taken, the pod awaited; the condition turns False when none is left', () => {
  const now = new Date('2025-01-01T00:00:00Z');
  const s = decrementedStatus(pdb('a'), 'p', now);
  assert.equal(s.disruptionsAllowed, 0);
  assert.deepEqual(s.disruptedPods, { p: '2025-01-01T00:00:00Z' });
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [['DisruptionAllowed', 'False', 'InsufficientPods']],
  );
  const two = decrementedStatus(
    pdb('a', { status: { observedGeneration: 1, disruptionsAllowed: 2, currentHealthy: 3, desiredHealthy: 1, expectedPods: 3 } }),
    'p',
    now,
  );
  assert.equal(two.disruptionsAllowed, 1);
  assert.equal(two.conditions, undefined);
});

test('refusals: 429 with the DisruptionBudget cause, 429 for an unobserved generation, 403 for a negative count or a full map', () => {
  const none = statusOf(() =>
    decrementedStatus(pdb('a', { status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 3 } }), 'p'),
  );
  assert.equal(none.code, 429);
  assert.equal(none.reason, 'TooManyRequests');
  assert.equal(none.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual(none.details?.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget a needs 2 healthy pods and has 2 currently' }]);
  const stale = statusOf(() => decrementedStatus(pdb('a', { generation: 2 }), 'p'));
  assert.deepEqual(
    [stale.code, stale.details?.retryAfterSeconds, stale.details?.causes?.[0]?.message],
    [429, 10, 'The disruption budget a is still being processed by the server.'],
  );
  const negative = statusOf(() =>
    decrementedStatus(pdb('a', { status: { observedGeneration: 1, disruptionsAllowed: -1, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } }), 'p'),
  );
  assert.deepEqual([negative.code, negative.message], [403, 'poddisruptionbudget.policy "a" is forbidden: pdb disruptions allowed is negative']);
  const many = Object.fromEntries(Array.from({ length: MAX_DISRUPTED_POD_SIZE + 1 }, (_, i) => [`p${i}`, '2025-01-01T00:00:00Z']));
  const full = statusOf(() =>
    decrementedStatus(
      pdb('a', { status: { observedGeneration: 1, disruptionsAllowed: 5, currentHealthy: 5, desiredHealthy: 0, expectedPods: 5, disruptedPods: many } }),
      'p',
    ),
  );
  assert.equal(full.code, 403);
});
