/**
 * From proposed to applied replica counts, with an injected history and clock:
 * the legacy path (downscale stabilization, scale-up limit of max(2×, 4),
 * min/max) and the behavior path (both stabilization windows, Pods and Percent
 * policies over their periods with Max / Min / Disabled, scale events), with
 * the conditions and reasons upstream's horizontal.go sets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { autoscalingv2 } from '@kubeling/api';
import {
  effectiveBehavior,
  newHistory,
  normalizeDesiredReplicas,
  normalizeWithBehaviors,
  scaleDownLimitWithRules,
  scaleUpLimitWithRules,
  storeScaleEvent,
  type AutoscalerHistory,
} from './normalize.js';

const NOW = 1_000_000_000;
const S = 1000;
const FIVE_MIN = 300 * S;

const reasons = (r: { conditions: { type: string; status: string; reason: string }[] }) => r.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);

test('no behavior: scale up at most max(2x, 4), clamped to max, raised to min', () => {
  const up = normalizeDesiredReplicas(newHistory(), NOW, FIVE_MIN, 1, 10, 1, 20);
  assert.equal(up.replicas, 4);
  assert.deepEqual(reasons(up), ['AbleToScale=True/ReadyForNewScale', 'ScalingLimited=True/ScaleUpLimit']);
  const many = normalizeDesiredReplicas(newHistory(), NOW, FIVE_MIN, 10, 30, 1, 15);
  assert.deepEqual([many.replicas, ...reasons(many)], [15, 'AbleToScale=True/ReadyForNewScale', 'ScalingLimited=True/TooManyReplicas']);
  const few = normalizeDesiredReplicas(newHistory(), NOW, FIVE_MIN, 4, 1, 2, 10);
  assert.deepEqual([few.replicas, few.conditions[1]!.message], [2, 'the desired replica count is less than the minimum replica count']);
  const ok = normalizeDesiredReplicas(newHistory(), NOW, FIVE_MIN, 4, 6, 2, 10);
  assert.deepEqual([ok.replicas, ...reasons(ok)], [6, 'AbleToScale=True/ReadyForNewScale', 'ScalingLimited=False/DesiredWithinRange']);
});

test('no behavior: a scale down waits for the highest recommendation of the stabilization window', () => {
  const h: AutoscalerHistory = newHistory();
  h.recommendations.push({ recommendation: 8, timestamp: NOW - 100 * S }, { recommendation: 9, timestamp: NOW - 400 * S });
  const r = normalizeDesiredReplicas(h, NOW, FIVE_MIN, 8, 3, 1, 10);
  assert.deepEqual([r.replicas, ...reasons(r)], [8, 'AbleToScale=True/ScaleDownStabilized', 'ScalingLimited=False/DesiredWithinRange']);
  // The sample older than the window was replaced by this recommendation.
  assert.deepEqual(h.recommendations, [
    { recommendation: 8, timestamp: NOW - 100 * S },
    { recommendation: 3, timestamp: NOW },
  ]);
  // Once the window has passed, the scale down goes through.
  const later = normalizeDesiredReplicas(h, NOW + 301 * S, FIVE_MIN, 8, 3, 1, 10);
  assert.equal(later.replicas, 3);
});

const defaults = effectiveBehavior(
  {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    },
    scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  },
  FIVE_MIN,
);

test('behavior: the default rules double or add 4 pods per 15 s, scale down only after the 300 s window (from the controller flag)', () => {
  assert.equal(defaults.scaleDown.stabilizationWindowSeconds, 300);
  const up = normalizeWithBehaviors(newHistory(), NOW, defaults, 5, 20, 1, 50);
  assert.deepEqual([up.replicas, ...reasons(up)], [10, 'AbleToScale=True/ReadyForNewScale', 'ScalingLimited=True/ScaleUpLimit']);
  assert.equal(up.conditions[1]!.message, 'the desired replica count is increasing faster than the maximum scale rate');
  const small = normalizeWithBehaviors(newHistory(), NOW, defaults, 1, 20, 1, 50);
  assert.equal(small.replicas, 5);
  const h = newHistory();
  h.recommendations.push({ recommendation: 10, timestamp: NOW - 60 * S });
  const down = normalizeWithBehaviors(h, NOW, defaults, 10, 2, 1, 50);
  assert.deepEqual([down.replicas, ...reasons(down)], [10, 'AbleToScale=True/ScaleDownStabilized', 'ScalingLimited=False/DesiredWithinRange']);
});

test('behavior: policies over their periods, Min and Disabled, and the scale events that use them up', () => {
  const rules: autoscalingv2.HPAScalingRules = { selectPolicy: 'Max', policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] };
  const h = newHistory();
  assert.equal(scaleUpLimitWithRules(5, h.scaleUpEvents, h.scaleDownEvents, rules, NOW), 7);
  // Three pods added 30 s ago count against the 60 s period: the period started at 2.
  storeScaleEvent(h, { scaleUp: rules }, 2, 5, NOW - 30 * S);
  assert.equal(scaleUpLimitWithRules(5, h.scaleUpEvents, h.scaleDownEvents, rules, NOW), 4);
  assert.equal(scaleUpLimitWithRules(5, h.scaleUpEvents, h.scaleDownEvents, rules, NOW + 31 * S), 7);
  const both: autoscalingv2.HPAScalingRules = {
    policies: [
      { type: 'Pods', value: 1, periodSeconds: 60 },
      { type: 'Percent', value: 50, periodSeconds: 60 },
    ],
  };
  assert.equal(scaleUpLimitWithRules(10, [], [], { ...both, selectPolicy: 'Max' }, NOW), 15);
  assert.equal(scaleUpLimitWithRules(10, [], [], { ...both, selectPolicy: 'Min' }, NOW), 11);
  assert.equal(scaleUpLimitWithRules(10, [], [], { ...both, selectPolicy: 'Disabled' }, NOW), 10);
  assert.equal(scaleDownLimitWithRules(10, [], [], { ...both, selectPolicy: 'Max' }, NOW), 5);
  assert.equal(scaleDownLimitWithRules(10, [], [], { ...both, selectPolicy: 'Min' }, NOW), 9);
  const b = effectiveBehavior(
    { scaleUp: { ...both, selectPolicy: 'Disabled' }, scaleDown: { ...both, selectPolicy: 'Min', stabilizationWindowSeconds: 0 } },
    FIVE_MIN,
  );
  const noUp = normalizeWithBehaviors(newHistory(), NOW, b, 4, 8, 1, 20);
  assert.deepEqual([noUp.replicas, noUp.conditions[1]!.reason], [4, 'ScaleUpLimit']);
  const slowDown = normalizeWithBehaviors(newHistory(), NOW, b, 10, 2, 1, 20);
  assert.deepEqual([slowDown.replicas, ...reasons(slowDown)], [9, 'AbleToScale=True/ReadyForNewScale', 'ScalingLimited=True/ScaleDownLimit']);
  const floor = normalizeWithBehaviors(newHistory(), NOW, b, 3, 1, 3, 20);
  assert.deepEqual([floor.replicas, ...reasons(floor)], [3, 'AbleToScale=True/ReadyForNewScale', 'ScalingLimited=True/TooFewReplicas']);
});

test('behavior: a scale-up stabilization window applies the lowest recent recommendation', () => {
  const b = effectiveBehavior({ ...defaults, scaleUp: { ...defaults.scaleUp, stabilizationWindowSeconds: 120 } }, FIVE_MIN);
  const h = newHistory();
  h.recommendations.push({ recommendation: 4, timestamp: NOW - 60 * S }, { recommendation: 6, timestamp: NOW - 30 * S });
  const r = normalizeWithBehaviors(h, NOW, b, 4, 8, 1, 20);
  assert.deepEqual([r.replicas, r.conditions[0]!.reason], [4, 'ScaleUpStabilized']);
});

test('scale events past the longest period are reused', () => {
  const b = { scaleDown: { policies: [{ type: 'Pods' as const, value: 1, periodSeconds: 60 }] } };
  const h = newHistory();
  storeScaleEvent(h, b, 5, 4, NOW - 120 * S);
  storeScaleEvent(h, b, 4, 3, NOW);
  assert.deepEqual(h.scaleDownEvents, [{ replicaChange: 1, timestamp: NOW, outdated: false }]);
  // Without a behavior nothing is remembered (nothing would read it).
  storeScaleEvent(h, undefined, 3, 2, NOW);
  assert.equal(h.scaleDownEvents.length, 1);
});
