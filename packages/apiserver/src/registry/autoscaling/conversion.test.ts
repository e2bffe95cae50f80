/**
 * autoscaling/v1 ↔ v2 conversion: the cpu target and current utilization map
 * to v1's fields, everything else goes to and comes back from the round-trip
 * annotations in upstream's JSON, and a v1 object read and written back loses
 * nothing of the v2 one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION, METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, hpaV1ToV2, hpaV2ToV1 } from './conversion.js';

const v2: KubeObject = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', annotations: { keep: 'me' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      {
        type: 'Object',
        object: {
          describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' },
          metric: { name: 'hits' },
          target: { type: 'Value', value: '2k' },
        },
      },
      {
        type: 'External',
        external: { metric: { name: 'queue', selector: { matchLabels: { q: 'jobs' } } }, target: { type: 'AverageValue', averageValue: '30' } },
      },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 60 } } },
    ],
    behavior: {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] },
      scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] },
    },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 4,
    lastScaleTime: '2026-01-01T00:00:00Z',
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 120, averageValue: '120m' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '12' } } },
    ],
    conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale', message: 'ok' }],
  },
};

test('v2 → v1: the cpu target and utilization in v1 fields, the rest in the annotations as upstream encodes them', () => {
  const v1 = hpaV2ToV1(v2) as KubeObject & { spec: Record<string, unknown>; status: Record<string, unknown> };
  assert.deepEqual(v1.spec, {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 2,
    maxReplicas: 10,
    targetCPUUtilizationPercentage: 50,
  });
  assert.deepEqual(v1.status, { lastScaleTime: '2026-01-01T00:00:00Z', currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 120 });
  const ann = v1.metadata.annotations!;
  assert.equal(ann.keep, 'me');
  assert.equal(
    ann[METRIC_SPECS_ANNOTATION],
    '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}},' +
      '{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}},' +
      '{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"hits","targetValue":"2k"}},' +
      '{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"q":"jobs"}},"targetAverageValue":"30"}},' +
      '{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":60,"container":"app"}}]',
  );
  assert.equal(
    ann[METRIC_STATUSES_ANNOTATION],
    '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":120,"currentAverageValue":"120m"}},{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"12"}}]',
  );
  assert.equal(
    ann[BEHAVIOR_ANNOTATION],
    '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":null},' +
      '"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":null}}',
  );
  assert.equal(
    ann[CONDITIONS_ANNOTATION],
    '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"ok"}]',
  );
});

test('v1 read and written back is the v2 object again (round-trip annotations dropped)', () => {
  const back = hpaV1ToV2(hpaV2ToV1(v2));
  assert.equal(back.apiVersion, 'autoscaling/v2');
  assert.deepEqual(back.metadata.annotations, { keep: 'me' });
  const want = v2.spec as { metrics: unknown[] };
  // The cpu metric comes back last, after the annotation's metrics, as upstream's conversion appends it.
  assert.deepEqual((back.spec as { metrics: unknown[] }).metrics, [...want.metrics.slice(1), want.metrics[0]]);
  assert.deepEqual((back.spec as { behavior: unknown }).behavior, v2.spec && (v2.spec as { behavior: unknown }).behavior);
  assert.deepEqual((back.status as { conditions: unknown }).conditions, (v2.status as { conditions: unknown }).conditions);
  assert.deepEqual((back.status as { currentMetrics: unknown }).currentMetrics, (v2.status as { currentMetrics: unknown }).currentMetrics);
});

test('v1 → v2: targetCPUUtilizationPercentage is a cpu Utilization metric; none at all is the 80% default', () => {
  const base = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' } };
  const withCpu = hpaV1ToV2({ ...base, spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 3, targetCPUUtilizationPercentage: 40 } });
  assert.deepEqual((withCpu.spec as { metrics: unknown }).metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 40 } } },
  ]);
  const none = hpaV1ToV2({ ...base, spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 3 } });
  assert.deepEqual((none.spec as { metrics: unknown }).metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
  ]);
  const status = hpaV1ToV2({ ...base, spec: { maxReplicas: 3 }, status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 33 } });
  assert.deepEqual((status.status as { currentMetrics: unknown }).currentMetrics, [
    { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 33 } } },
  ]);
});

test('v1 → v2: annotations that do not decode are ignored; the behavior annotation is read case-insensitively', () => {
  const obj = hpaV1ToV2({
    apiVersion: 'autoscaling/v1',
    metadata: { name: 'h', annotations: { [METRIC_SPECS_ANNOTATION]: '{not json', [BEHAVIOR_ANNOTATION]: '{"scaleup":{"selectpolicy":"Disabled"}}' } },
    spec: { maxReplicas: 2, targetCPUUtilizationPercentage: 70 },
  });
  assert.equal(obj.metadata.annotations, undefined);
  assert.deepEqual((obj.spec as { metrics: unknown[] }).metrics.length, 1);
  assert.deepEqual((obj.spec as { behavior: unknown }).behavior, { scaleUp: { selectPolicy: 'Disabled' } });
});
