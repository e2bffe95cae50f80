/**
 * One autoscaler's syncs with injected functions (scale, pods, metrics, status
 * writes, events recorded) and an injected clock: a scale up with upstream's
 * event and conditions, metrics that cannot be read (events, ScalingActive=False,
 * the wrapped error), a target that cannot be found, the min/max clamps without
 * metrics, a target at zero, scale down held by the stabilization window,
 * behavior policies across syncs, status written only when it changes, and
 * two autoscalers selecting the same pods.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../kinds.js';
import { Autoscaler, type AutoscalerDeps, type HPA, type Scale } from './autoscaler.js';
import type { MetricsSource } from './metrics.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const MIN = 60_000;

function pod(name: string, labels = { app: 'web' }): Pod {
  return {
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1' } } }] },
    status: {
      phase: 'Running',
      startTime: new Date(T0 - 30 * MIN).toISOString(),
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(T0 - 29 * MIN).toISOString() }],
    },
  } as Pod;
}

const hpa = (name: string, spec: Partial<HPA['spec']> = {}): HPA => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 1,
    maxReplicas: 10,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    ...spec,
  },
  status: { desiredReplicas: 0 },
});

/** A world the autoscaler acts on: a Deployment's scale, its pods, their cpu usage (milli), and what was written. */
function world() {
  const w = {
    now: T0,
    replicas: 3,
    pods: [pod('a'), pod('b'), pod('c')],
    usage: 800 as number | Error,
    scaleError: undefined as Error | undefined,
    scales: [] as number[],
    statuses: [] as HPA['status'][],
    events: [] as string[],
  };
  const metrics: MetricsSource = {
    async getResourceMetric(resource, namespace, selector) {
      assert.deepEqual([resource, namespace, selector], ['cpu', 'default', 'app=web']);
      if (w.usage instanceof Error) throw w.usage;
      return {
        metrics: new Map(w.pods.map((p) => [p.metadata.name!, { value: w.usage as number, timestamp: w.now - 15_000, windowMs: 15_000 }])),
        timestamp: w.now,
      };
    },
    getRawMetric: () => Promise.reject(new Error('no custom metrics')),
    getObjectMetric: () => Promise.reject(new Error('no custom metrics')),
    getExternalMetric: () => Promise.reject(new Error('no external metrics')),
  };
  const deps: AutoscalerDeps = {
    now: () => w.now,
    settings: { tolerance: 0.1, downscaleStabilizationMs: 5 * MIN, cpuInitializationPeriodMs: 5 * MIN, initialReadinessDelayMs: 30_000 },
    metrics,
    async getScale(ns, ref): Promise<Scale> {
      if (w.scaleError) throw w.scaleError;
      assert.deepEqual([ns, ref.kind, ref.name], ['default', 'Deployment', 'web']);
      return { metadata: { name: 'web', namespace: ns }, spec: { replicas: w.replicas }, status: { replicas: w.replicas, selector: 'app=web' } };
    },
    async setScale(_ns, _ref, _scale, replicas) {
      w.scales.push(replicas);
      w.replicas = replicas;
    },
    listPods: (_ns, selector) => w.pods.filter((p) => selector.matches(p.metadata.labels)),
    async updateStatus(h) {
      w.statuses.push(structuredClone(h.status));
    },
    event: (_h, type, reason, message) => void w.events.push(`${type} ${reason} ${message}`),
  };
  return { w, autoscaler: new Autoscaler(deps) };
}

const conditions = (s: HPA['status']) => (s?.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

test('a scale up: the scale written, a SuccessfulRescale event, status and conditions as upstream', async () => {
  const { w, autoscaler } = world();
  await autoscaler.reconcile(hpa('web'), 'default/web');
  assert.deepEqual(w.scales, [5]);
  assert.deepEqual(w.events, ['Normal SuccessfulRescale New size: 5; reason: cpu resource utilization (percentage of request) above target']);
  const s = w.statuses.at(-1)!;
  assert.deepEqual([s.currentReplicas, s.desiredReplicas, s.lastScaleTime], [3, 5, new Date(T0).toISOString().replace('.000', '')]);
  assert.deepEqual(s.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '800m', averageUtilization: 80 } } }]);
  assert.deepEqual(conditions(s), ['AbleToScale=True/SucceededRescale', 'ScalingActive=True/ValidMetricFound', 'ScalingLimited=False/DesiredWithinRange']);
  assert.equal(s.conditions![1]!.message, 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)');
});

test('metrics that cannot be read: FailedGetResourceMetric and FailedComputeMetricsReplicas, ScalingActive=False, no scale', async () => {
  const { w, autoscaler } = world();
  w.usage = new Error('unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)');
  const inner =
    'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)';
  await assert.rejects(
    autoscaler.reconcile(hpa('web'), 'default/web'),
    new Error(
      `failed to compute desired number of replicas based on listed metrics for Deployment/default/web: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${inner}`,
    ),
  );
  assert.deepEqual(w.scales, []);
  assert.deepEqual(w.events, [
    `Warning FailedGetResourceMetric ${inner}`,
    `Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: ${inner}`,
  ]);
  const s = w.statuses.at(-1)!;
  assert.deepEqual(conditions(s), ['AbleToScale=True/SucceededGetScale', 'ScalingActive=False/FailedGetResourceMetric']);
  assert.equal(s.conditions![1]!.message, `the HPA was unable to compute the replica count: ${inner}`);
  assert.deepEqual([s.currentReplicas, s.currentMetrics], [3, [{ type: '' }]]);
});

test('a target that cannot be read: FailedGetScale', async () => {
  const { w, autoscaler } = world();
  w.scaleError = new Error('deployments.apps "web" not found');
  await assert.rejects(
    autoscaler.reconcile(hpa('web'), 'default/web'),
    /failed to query scale subresource for Deployment\/default\/web: deployments.apps "web" not found/,
  );
  assert.deepEqual(w.events, ['Warning FailedGetScale deployments.apps "web" not found']);
  assert.deepEqual(conditions(w.statuses.at(-1)), ['AbleToScale=False/FailedGetScale']);
  assert.equal(
    w.statuses.at(-1)!.conditions![0]!.message,
    'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found',
  );
});

test('outside [min, max] the count is clamped without metrics; a target at zero is left alone', async () => {
  const { w, autoscaler } = world();
  w.usage = new Error('not asked');
  w.replicas = 1;
  await autoscaler.reconcile(hpa('web', { minReplicas: 2 }), 'default/web');
  assert.deepEqual(w.scales, [2]);
  assert.deepEqual(w.events, ['Normal SuccessfulRescale New size: 2; reason: Current number of replicas below Spec.MinReplicas']);
  w.replicas = 12;
  await autoscaler.reconcile(hpa('web'), 'default/web');
  assert.deepEqual(w.scales, [2, 10]);
  assert.match(w.events.at(-1)!, /reason: Current number of replicas above Spec.MaxReplicas$/);
  w.replicas = 0;
  await autoscaler.reconcile(hpa('web'), 'default/web');
  assert.deepEqual(w.scales, [2, 10]);
  assert.deepEqual(conditions(w.statuses.at(-1)), ['AbleToScale=True/SucceededGetScale', 'ScalingActive=False/ScalingDisabled']);
});

test('a scale down waits out the 5 min stabilization window; an unchanged status is not written again', async () => {
  const { w, autoscaler } = world();
  w.usage = 100;
  const h = hpa('web');
  await autoscaler.reconcile(h, 'default/web');
  assert.deepEqual(w.scales, []);
  const held = w.statuses.at(-1)!;
  assert.deepEqual(conditions(held), [
    'AbleToScale=True/ScaleDownStabilized',
    'ScalingActive=True/ValidMetricFound',
    'ScalingLimited=False/DesiredWithinRange',
  ]);
  const writes = w.statuses.length;
  w.now += 15_000;
  await autoscaler.reconcile({ ...h, status: held }, 'default/web');
  assert.equal(w.statuses.length, writes, 'the same status is not written twice');
  w.now = T0 + 5 * MIN + 1000;
  await autoscaler.reconcile({ ...h, status: held }, 'default/web');
  assert.deepEqual(w.scales, [1]);
  assert.deepEqual(w.events, ['Normal SuccessfulRescale New size: 1; reason: All metrics below target']);
});

test('behavior policies limit the rate across syncs (ScaleUpLimit), then let the rest through', async () => {
  const { w, autoscaler } = world();
  w.usage = 2000;
  const h = hpa('web', {
    behavior: {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] },
      scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    },
  });
  await autoscaler.reconcile(h, 'default/web');
  assert.deepEqual(w.scales, [5]);
  assert.deepEqual(conditions(w.statuses.at(-1)).at(-1), 'ScalingLimited=True/ScaleUpLimit');
  w.now += 15_000;
  w.pods.push(pod('d'), pod('e'));
  await autoscaler.reconcile(h, 'default/web');
  assert.deepEqual(w.scales, [5], 'the 60 s period has used its 2 pods');
  w.now += 60_000;
  await autoscaler.reconcile(h, 'default/web');
  assert.deepEqual(w.scales, [5, 7]);
});

test('two autoscalers selecting the same pods: AmbiguousSelector', async () => {
  const { w, autoscaler } = world();
  await autoscaler.reconcile(hpa('one'), 'default/one');
  await assert.rejects(autoscaler.reconcile(hpa('two'), 'default/two'), /controlled by more than one HPA/);
  assert.match(
    w.events.at(-2)!,
    /^Warning AmbiguousSelector pods by selector app=web are controlled by more than one HPA \(e.g. \[default\/one default\/two\]\)$/,
  );
  assert.deepEqual(conditions(w.statuses.at(-1)), ['AbleToScale=True/SucceededGetScale', 'ScalingActive=False/AmbiguousSelector']);
  autoscaler.forget('default/one');
  w.replicas = 5;
  await autoscaler.reconcile(hpa('two'), 'default/two');
  assert.equal(conditions(w.statuses.at(-1))[1], 'ScalingActive=True/ValidMetricFound');
});
