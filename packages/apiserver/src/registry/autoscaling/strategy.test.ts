/**
 * HorizontalPodAutoscaler defaulting, validation and Table cells: upstream's
 * defaults (minReplicas, the 80% cpu metric, behavior rules filled only when a
 * behavior is given), the errors of pkg/apis/autoscaling/validation, and
 * formatHPAMetrics' TARGETS column.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import { formatHPAMetrics, hpaCells } from './printers.js';
import { defaultHPA, hpaStrategy } from './strategy.js';

const hpa = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, ...spec },
  ...(status ? { status } : {}),
});
const errors = (o: KubeObject) => hpaStrategy.validate!(o).map(fieldErrorMessage);

test('defaults: minReplicas 1, 80% cpu, and a given behavior filled with the default rules (scale down window left unset)', () => {
  const o = hpa({});
  defaultHPA(o);
  const spec = o.spec as Record<string, unknown>;
  assert.equal(spec.minReplicas, 1);
  assert.deepEqual(spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  assert.equal(spec.behavior, undefined);
  const b = hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } });
  defaultHPA(b);
  assert.deepEqual((b.spec as Record<string, unknown>).behavior, {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    },
    scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
});

test('create resets the status and drops tolerances (HPAConfigurableTolerance is off); an update keeps an old one', () => {
  const o = hpa({ behavior: { scaleUp: { tolerance: '0.05', policies: [{ type: 'Pods', value: 1, periodSeconds: 15 }] } } }, { desiredReplicas: 9 });
  hpaStrategy.prepareForCreate!(o);
  assert.deepEqual(o.status, {});
  assert.equal((o.spec as { behavior: { scaleUp: { tolerance?: string } } }).behavior.scaleUp.tolerance, undefined);
  const old = hpa({ behavior: { scaleUp: { tolerance: '0.05' } } });
  const next = hpa({ behavior: { scaleUp: { tolerance: '0.02' } } });
  hpaStrategy.prepareForUpdate!(next, old);
  assert.equal((next.spec as { behavior: { scaleUp: { tolerance?: string } } }).behavior.scaleUp.tolerance, '0.02');
});

test('validation: replica bounds, the target reference, metric sources and behavior policies, with upstream messages', () => {
  assert.deepEqual(errors(hpa({ minReplicas: 0 })), [
    'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
    'spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
  ]);
  assert.deepEqual(errors(hpa({ minReplicas: 6 })), ['spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`']);
  assert.deepEqual(errors(hpa({ maxReplicas: 0 })), ['spec.maxReplicas: Invalid value: 0: must be greater than 0']);
  assert.deepEqual(errors(hpa({ scaleTargetRef: { kind: '', name: 'a/b' } })), [
    'spec.scaleTargetRef.kind: Required value',
    `spec.scaleTargetRef.name: Invalid value: "a/b": may not contain '/'`,
  ]);
  const pods = { metric: { name: 'x' }, target: { type: 'AverageValue', averageValue: '1' } };
  assert.deepEqual(errors(hpa({ metrics: [{ type: 'Resource', pods }] })), [
    'spec.metrics[0].resource: Required value: must populate information for the given metric source',
  ]);
  const cpu = { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } };
  assert.deepEqual(errors(hpa({ metrics: [{ type: 'Resource', resource: cpu, pods }] })), [
    'spec.metrics[0].pods: Forbidden: must populate the given metric source only',
  ]);
  assert.deepEqual(errors(hpa({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }] })), [
    'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
  ]);
  assert.deepEqual(errors(hpa({ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } }] })), [
    'spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
  ]);
  assert.deepEqual(errors(hpa({ metrics: [{ type: 'Bogus' }] })), [
    'spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    'spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
  ]);
  assert.deepEqual(
    errors(
      hpa({
        behavior: {
          scaleUp: { stabilizationWindowSeconds: 3601, selectPolicy: 'Most', policies: [{ type: 'Pods', value: 0, periodSeconds: 1801 }] },
          scaleDown: { policies: [] },
        },
      }),
    ),
    [
      'spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600',
      'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"',
      'spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero',
      'spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800',
      'spec.behavior.scaleDown.policies: Required value: must specify at least one Policy',
    ],
  );
  // minReplicas 0 stays allowed on an object that had it (HPAScaleToZero was on when it was made).
  const old = hpa({ minReplicas: 0, metrics: [{ type: 'External', external: { metric: { name: 'q' }, target: { type: 'Value', value: '1' } } }] });
  const next = structuredClone(old);
  hpaStrategy.prepareForUpdate!(next, old);
  assert.deepEqual(errors(next), []);
});

test('TARGETS: resource metrics named, <unknown> before a measurement, avg for per-pod targets, + N more', () => {
  const cpu = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } } as const;
  assert.equal(formatHPAMetrics([cpu], undefined), 'cpu: <unknown>/50%');
  assert.equal(
    formatHPAMetrics([cpu], [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 120, averageValue: '120m' } } }]),
    'cpu: 120%/50%',
  );
  const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '0.5Gi' } } } as const;
  const ext = { type: 'External', external: { metric: { name: 'q' }, target: { type: 'AverageValue', averageValue: '30' } } } as const;
  assert.equal(formatHPAMetrics([mem, ext, cpu], [{ type: '' as never }]), 'memory: <unknown>/512Mi, <unknown>/30 (avg) + 1 more...');
  assert.equal(formatHPAMetrics([], undefined), '<none>');
  const cells = hpaCells(hpa({ minReplicas: 2, metrics: [cpu] }, { currentReplicas: 3, desiredReplicas: 3 }), Date.parse('2026-01-01T00:01:00Z'));
  assert.deepEqual(cells, ['web', 'Deployment/web', 'cpu: <unknown>/50%', '2', 5, 3, '60s']);
  // An autoscaling/v1 object prints from its v2 form.
  const v1: KubeObject = {
    apiVersion: 'autoscaling/v1',
    metadata: { name: 'old' },
    spec: { scaleTargetRef: { kind: 'ReplicaSet', name: 'rs' }, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
    status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 20 },
  };
  assert.deepEqual(hpaCells(v1, 0).slice(0, 6), ['old', 'ReplicaSet/rs', 'cpu: 20%/70%', '<unset>', 4, 1]);
});
