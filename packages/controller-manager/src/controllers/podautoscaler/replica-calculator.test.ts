/**
 * The replica calculator with injected pods, metrics and clock, on the
 * scenarios of upstream's replica_calculator_test.go: scale up and down by
 * utilization, unready and still-initializing pods left out on a scale up,
 * missing metrics assumed at 100% of the request on a scale down and 0 on a
 * scale up, the tolerance, ignored pods, container metrics, plain (per-pod)
 * metrics and the Object/External helpers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../kinds.js';
import {
  calculateRequests,
  groupPods,
  perPodReplicas,
  plainMetricReplicas,
  resourceReplicas,
  usageRatioReplicaCount,
  type PodMetricsInfo,
  type PodTiming,
} from './replica-calculator.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const MIN = 60_000;
const timing: PodTiming = { now: NOW, cpuInitializationPeriodMs: 5 * MIN, delayOfInitialReadinessStatusMs: 30_000 };
const tol = { scaleUp: 0.1, scaleDown: 0.1 };
const iso = (t: number) => new Date(t).toISOString();

type Container = NonNullable<NonNullable<Pod['spec']>['containers']>[number];

interface PodOpts {
  ready?: 'True' | 'False';
  /** When the pod started (default: 10 minutes ago, past cpu initialization). */
  start?: number;
  /** When Ready last changed (default: 9 minutes ago). */
  transition?: number;
  phase?: string;
  deleting?: boolean;
  cpu?: string;
  /** Replaces the one container requesting `cpu`. */
  containers?: Container[];
  initContainers?: Container[];
}

function pod(name: string, o: PodOpts = {}): Pod {
  const start = o.start ?? NOW - 10 * MIN;
  return {
    metadata: { name, namespace: 'default', labels: { app: 'web' }, ...(o.deleting ? { deletionTimestamp: iso(NOW) } : {}) },
    spec: {
      containers: o.containers ?? [{ name: 'app', image: 'x', resources: { requests: { cpu: o.cpu ?? '1' } } }],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
    },
    status: {
      phase: o.phase ?? 'Running',
      startTime: iso(start),
      conditions: [{ type: 'Ready', status: o.ready ?? 'True', lastTransitionTime: iso(o.transition ?? start + MIN) }],
    },
  } as Pod;
}

/** Metrics measured a minute ago over a minute. */
const metrics = (values: Record<string, number>): PodMetricsInfo =>
  new Map(Object.entries(values).map(([k, v]) => [k, { value: v, timestamp: NOW - MIN, windowMs: MIN }]));

const cpu = (pods: Pod[], values: Record<string, number>, currentReplicas: number, targetUtilization: number, container = '') =>
  resourceReplicas({ currentReplicas, targetUtilization, resource: 'cpu', container, tolerances: tol, pods, metrics: metrics(values), timing });

test('scale up and down by utilization of the request', () => {
  const three = [pod('a'), pod('b'), pod('c')];
  assert.deepEqual(cpu(three, { a: 300, b: 500, c: 700 }, 3, 30), { replicas: 5, utilization: 50, rawUtilization: 500 });
  const five = ['a', 'b', 'c', 'd', 'e'].map((n) => pod(n));
  assert.deepEqual(cpu(five, { a: 100, b: 300, c: 500, d: 250, e: 250 }, 5, 50), { replicas: 3, utilization: 28, rawUtilization: 280 });
  // Within the 10% tolerance nothing changes.
  assert.equal(cpu(three, { a: 1050, b: 1050, c: 1050 }, 3, 100).replicas, 3);
});

test('unready pods and pods in their cpu initialization count as 0 on a scale up', () => {
  // Never ready since it started (it went unready within the initial readiness delay).
  const neverReady = pod('a', { ready: 'False', transition: NOW - 10 * MIN + 10_000 });
  assert.deepEqual(cpu([neverReady, pod('b'), pod('c')], { a: 300, b: 500, c: 700 }, 3, 30), { replicas: 4, utilization: 60, rawUtilization: 600 });
  // Started a minute ago and ready since just now: its sample predates a full window of readiness.
  const hot = pod('a', { start: NOW - MIN, transition: NOW - 30_000 });
  assert.deepEqual(cpu([hot, pod('b'), pod('c')], { a: 300, b: 500, c: 700 }, 3, 30), { replicas: 4, utilization: 60, rawUtilization: 600 });
  // Counting the unready ones as 0 would turn the scale up into a scale down: no change.
  const unready = (n: string) => pod(n, { ready: 'False', transition: NOW - 10 * MIN + 10_000 });
  assert.deepEqual(cpu([pod('a'), unready('b'), unready('c')], { a: 400, b: 500, c: 700 }, 3, 30), { replicas: 3, utilization: 40, rawUtilization: 400 });
  // A pod that was ready and became unready later (past the readiness delay) still counts.
  const wasReady = pod('a', { ready: 'False', transition: NOW - 2 * MIN });
  assert.equal(groupPods([wasReady], metrics({ a: 1 }), 'cpu', timing).readyPodCount, 1);
  // For other resources readiness does not matter.
  assert.equal(groupPods([neverReady], metrics({ a: 1 }), 'memory', timing).readyPodCount, 1);
});

test('missing metrics: 100% of the request on a scale down, 0 on a scale up', () => {
  const four = ['a', 'b', 'c', 'd'].map((n) => pod(n));
  assert.deepEqual(cpu(four, { a: 400, b: 95 }, 4, 100), { replicas: 3, utilization: 24, rawUtilization: 247 });
  const neverReady = pod('a', { ready: 'False', transition: NOW - 10 * MIN + 10_000 });
  assert.deepEqual(cpu([neverReady, pod('b'), pod('c')], { a: 100, b: 2000 }, 3, 50), { replicas: 4, utilization: 200, rawUtilization: 2000 });
  // Near the target, the missing pod at 100% would flip the direction: no change.
  assert.equal(cpu([pod('a'), pod('b'), pod('c')], { a: 100, b: 450 }, 3, 50).replicas, 3);
});

test('deleted, failed and pending pods; errors with upstream messages', () => {
  const pods = [pod('a'), pod('b'), pod('c', { phase: 'Failed' }), pod('d', { deleting: true }), pod('e', { phase: 'Pending' })];
  const g = groupPods(pods, metrics({ a: 1, b: 1, c: 1, d: 1 }), 'cpu', timing);
  assert.deepEqual([g.readyPodCount, [...g.ignored], [...g.unready]], [2, ['c', 'd'], ['e']]);
  assert.deepEqual(cpu(pods, { a: 1000, b: 1000, c: 9000, d: 9000 }, 2, 50), { replicas: 4, utilization: 100, rawUtilization: 1000 });
  assert.throws(() => cpu([], {}, 1, 50), /^Error: no pods returned by selector while calculating replica count$/);
  assert.throws(() => cpu([pod('a', { phase: 'Pending' })], { a: 1 }, 1, 50), /^Error: did not receive metrics for targeted pods \(pods might be unready\)$/);
  assert.throws(() => cpu([pod('a')], { b: 1 }, 1, 50), /^Error: no metrics returned matched known pods$/);
  const noRequest = pod('a', { containers: [{ name: 'app', image: 'x' }] });
  assert.throws(() => cpu([noRequest], { a: 1 }, 1, 50), /^Error: missing request for cpu in container app of Pod a$/);
  assert.throws(() => cpu([pod('a')], { a: 1 }, 1, 50, 'sidecar'), /^Error: container sidecar not found in Pod a$/);
});

test('container requests: one container, or every container and restartable init container', () => {
  const p = pod('a', {
    containers: [
      { name: 'app', image: 'x', resources: { requests: { cpu: '500m' } } },
      { name: 'side', image: 'x', resources: { requests: { cpu: '250m' } } },
    ],
    initContainers: [
      { name: 'init', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '250m' } } },
      { name: 'once', image: 'x' },
    ],
  });
  assert.deepEqual(calculateRequests([p], '', 'cpu'), new Map([['a', 1000]]));
  assert.deepEqual(calculateRequests([p], 'side', 'cpu'), new Map([['a', 250]]));
});

test('plain metrics: average value over ready pods; missing pods at the target on a scale down', () => {
  const three = [pod('a'), pod('b'), pod('c')];
  const plain = (values: Record<string, number>, current: number, target: number) =>
    plainMetricReplicas({ currentReplicas: current, targetUsage: target, resource: '', tolerances: tol, pods: three, metrics: metrics(values), timing });
  assert.deepEqual(plain({ a: 20_000, b: 10_000, c: 30_000 }, 3, 15_000), { replicas: 4, usage: 20_000 });
  assert.deepEqual(plain({ a: 5_000, b: 5_000 }, 3, 10_000), { replicas: 2, usage: 5_000 });
  assert.deepEqual(plain({ a: 10_000, b: 10_500, c: 9_800 }, 3, 10_000), { replicas: 3, usage: 10_100 });
});

test('Object and External helpers: value ratio over ready pods, per-pod targets over the status replicas', () => {
  const three = [pod('a'), pod('b'), pod('c', { phase: 'Pending' })];
  assert.equal(usageRatioReplicaCount(3, 2, tol, three), 4);
  assert.equal(usageRatioReplicaCount(3, 1.05, tol, three), 3);
  assert.equal(usageRatioReplicaCount(0, 2.5, tol, three), 3);
  assert.throws(() => usageRatioReplicaCount(3, 2, tol, []), /no pods returned by selector/);
  assert.deepEqual(perPodReplicas(3, 10_000, 50_000, tol), { replicas: 5, usage: 16_667 });
  assert.deepEqual(perPodReplicas(5, 10_000, 51_000, tol), { replicas: 5, usage: 10_200 });
});
