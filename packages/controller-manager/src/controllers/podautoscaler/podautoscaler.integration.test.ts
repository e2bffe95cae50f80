/**
 * The horizontalpodautoscaling controller against a real etcd and apiserver,
 * with the deployment and replicaset controllers beside it and a stand-in
 * kubelet that runs pods (Running, Ready) and finishes their deletion. The
 * resource metrics come from an injected MetricsSource (no metrics server
 * behind an aggregated API here): every running pod of the selector uses
 * `usage` millicores. A Deployment is scaled up when usage goes over the
 * target and back down once it falls and the stabilization window has passed;
 * the HPA's status, conditions and events say so, in v2 and in v1.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { repeat, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from '../../manager.js';
import type { MetricsSource } from './metrics.js';

let env: TestEnv;
let mgr: ControllerManager;
let kubelet: { stop(): void } | undefined;
/** Millicores every running pod uses. */
let usage = 0;

interface PodView {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  status?: { phase?: string };
}

async function fakeKubelet(): Promise<void> {
  const pods = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods')).body.items as PodView[];
  for (const p of pods) {
    const path = `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;
    if (p.metadata.deletionTimestamp) {
      await request(env.url, 'DELETE', path, { gracePeriodSeconds: 0 });
      continue;
    }
    if (p.status?.phase === 'Running') continue;
    const now = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z/, 'Z');
    const status = {
      ...p.status,
      phase: 'Running',
      startTime: now,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
      podIP: '127.10.0.1',
    };
    await request(env.url, 'PUT', `${path}/status`, { ...p, status });
  }
}

/** What a metrics server would answer: the running pods of the selector, each at `usage`. */
const metrics: MetricsSource = {
  async getResourceMetric(_resource, namespace, selector) {
    const pods = (await request(env.url, 'GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items as PodView[];
    const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
    if (!running.length) throw new Error('no metrics returned from resource metrics API');
    return { metrics: new Map(running.map((p) => [p.metadata.name, { value: usage, timestamp: Date.now(), windowMs: 1000 }])), timestamp: Date.now() };
  },
  getRawMetric: () => Promise.reject(new Error('no custom metrics API')),
  getObjectMetric: () => Promise.reject(new Error('no custom metrics API')),
  getExternalMetric: () => Promise.reject(new Error('no external metrics API')),
};

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['horizontalpodautoscaling', 'deployment', 'replicaset'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    qps: 200,
    burst: 400,
    hpa: { syncPeriodMs: 300, downscaleStabilizationMs: 3000, cpuInitializationPeriodMs: 1000, initialReadinessDelayMs: 0, metrics },
  });
  await mgr.start();
  kubelet = repeat(fakeKubelet, 100);
});
after(async () => {
  kubelet?.stop();
  await mgr?.stop();
  await env?.stop();
});

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments/web';
const HPA = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web';

const replicasOf = async () => (await request(env.url, 'GET', DEPLOY)).body.spec.replicas as number;
const events = async (reason: string) =>
  (
    (await request(env.url, 'GET', '/api/v1/namespaces/default/events')).body.items as { reason: string; message: string; source: { component: string } }[]
  ).filter((e) => e.reason === reason);

test('a Deployment is scaled up over the target and back down under it', async () => {
  usage = 200;
  const d = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] } },
    },
  });
  assert.equal(d.status, 201, d.text);
  const h = await request(env.url, 'POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 4,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    },
  });
  assert.equal(h.status, 201, h.text);

  // 200m of 100m requested is 200%, four times the target: 1 → 4 (the most a first step may add).
  await waitFor(async () => (await replicasOf()) === 4, 20_000, 'scale up to 4');
  // Events are recorded after the scale is written, on their own.
  await waitFor(async () => (await events('SuccessfulRescale')).length > 0, 10_000, 'SuccessfulRescale event');
  const up = await events('SuccessfulRescale');
  assert.deepEqual(
    up.map((e) => [e.message, e.source.component]),
    [['New size: 4; reason: cpu resource utilization (percentage of request) above target', 'horizontal-pod-autoscaler']],
  );
  await waitFor(async () => (await request(env.url, 'GET', HPA)).body.status?.currentReplicas === 4, 20_000, 'status sees 4 replicas');
  const st = (await request(env.url, 'GET', HPA)).body.status;
  assert.deepEqual(st.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 200 } } }]);
  assert.deepEqual(
    st.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`),
    ['AbleToScale=True', 'ScalingActive=True', 'ScalingLimited=True'],
  );
  assert.equal(st.conditions[2].reason, 'TooManyReplicas');
  const v1 = (await request(env.url, 'GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web')).body;
  assert.equal(v1.status.currentCPUUtilizationPercentage, 200);

  // Down to 10%: one pod is enough, once the 3 s downscale stabilization window has passed.
  usage = 10;
  const since = Date.now();
  await waitFor(async () => (await replicasOf()) === 1, 30_000, 'scale down to 1');
  assert.ok(Date.now() - since >= 2500, 'the scale down waited for the stabilization window');
  await waitFor(async () => (await events('SuccessfulRescale')).length > 1, 10_000, 'second SuccessfulRescale event');
  const down = await events('SuccessfulRescale');
  assert.equal(down.at(-1)!.message, 'New size: 1; reason: All metrics below target');
});

test('metrics that cannot be read leave the scale alone and say why', async () => {
  const saved = metrics.getResourceMetric;
  metrics.getResourceMetric = () =>
    Promise.reject(new Error('unable to fetch metrics from resource metrics API: the server is currently unable to handle the request'));
  try {
    await waitFor(
      async () => (await request(env.url, 'GET', HPA)).body.status?.conditions?.some((c: { reason: string }) => c.reason === 'FailedGetResourceMetric'),
      20_000,
      'ScalingActive=False FailedGetResourceMetric',
    );
    await waitFor(async () => (await events('FailedComputeMetricsReplicas')).length > 0, 10_000, 'FailedComputeMetricsReplicas event');
    const failed = await events('FailedComputeMetricsReplicas');
    assert.match(
      failed[0]!.message,
      /^invalid metrics \(1 invalid out of 1\), first error is: failed to get cpu resource metric value: failed to get cpu utilization/,
    );
    assert.equal(await replicasOf(), 1);
  } finally {
    metrics.getResourceMetric = saved;
  }
});
