/**
 * RestMetricsSource over a recording `get`: the paths and query of the
 * metrics APIs, resource usage summed over a pod's containers (a pod missing
 * the resource in one container has no metric), one container's usage, and
 * the error texts upstream's metrics client wraps failures in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodMetrics } from '@kubeling/api';
import type { RestClient } from '@kubeling/client';
import { RestMetricsSource } from './metrics.js';

const podMetrics = (name: string, containers: Record<string, Record<string, string>>): PodMetrics => ({
  kind: 'PodMetrics',
  apiVersion: 'metrics.k8s.io/v1beta1',
  metadata: { name, namespace: 'default' },
  timestamp: '2026-03-01T12:00:00Z',
  window: '15s',
  containers: Object.entries(containers).map(([n, usage]) => ({ name: n, usage: usage as PodMetrics['containers'][number]['usage'] })),
});

function source(answer: (path: string, query: unknown) => unknown) {
  const calls: [string, unknown][] = [];
  const client = {
    get: async (path: string, query?: unknown) => {
      calls.push([path, query]);
      return answer(path, query);
    },
  } as unknown as RestClient;
  return { calls, src: new RestMetricsSource(client, async (ref) => `${ref.kind.toLowerCase()}s`) };
}

test('resource metrics: summed per pod, one container when asked, pods missing the resource left out', async () => {
  const items = [
    podMetrics('a', { app: { cpu: '250m', memory: '10Mi' }, side: { cpu: '50m', memory: '1Mi' } }),
    podMetrics('b', { app: { cpu: '1', memory: '10Mi' }, side: { memory: '1Mi' } as Record<string, string> }),
  ];
  const { calls, src } = source(() => ({ items }));
  const all = await src.getResourceMetric('cpu', 'default', 'app=web', '');
  assert.deepEqual(calls, [['/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { labelSelector: 'app=web' }]]);
  assert.deepEqual([...all.metrics], [['a', { value: 300, timestamp: Date.parse('2026-03-01T12:00:00Z'), windowMs: 15_000 }]]);
  const app = await src.getResourceMetric('cpu', 'default', 'app=web', 'app');
  assert.deepEqual(
    [...app.metrics].map(([k, v]) => [k, v.value]),
    [
      ['a', 250],
      ['b', 1000],
    ],
  );
  await assert.rejects(
    src.getResourceMetric('cpu', 'default', 'app=web', 'nope'),
    /^Error: failed to get container metrics: container nope not present in metrics for pod default\/a$/,
  );
});

test('failures and empty answers carry upstream texts', async () => {
  const empty = source(() => ({ items: [] }));
  await assert.rejects(empty.src.getResourceMetric('cpu', 'default', 'app=web', ''), /^Error: no metrics returned from resource metrics API$/);
  const down = source(() => {
    throw new Error('the server could not find the requested resource');
  });
  await assert.rejects(
    down.src.getResourceMetric('cpu', 'default', 'app=web', ''),
    /^Error: unable to fetch metrics from resource metrics API: the server could not find the requested resource$/,
  );
  await assert.rejects(down.src.getRawMetric('qps', 'default', 'app=web', ''), /^Error: unable to fetch metrics from custom metrics API: /);
  await assert.rejects(down.src.getExternalMetric('queue', 'default', ''), /^Error: unable to fetch metrics from external metrics API: /);
});

test('custom and external metrics: their paths, values in milli-units', async () => {
  const { calls, src } = source((path) =>
    path.includes('external')
      ? {
          items: [
            { value: '2', timestamp: '2026-03-01T12:00:00Z' },
            { value: '500m', timestamp: '2026-03-01T12:00:00Z' },
          ],
        }
      : { items: [{ describedObject: { name: 'a' }, value: '1500m', timestamp: '2026-03-01T12:00:00Z' }] },
  );
  const pods = await src.getRawMetric('qps', 'default', 'app=web', 'env=prod');
  assert.deepEqual(
    [...pods.metrics].map(([k, v]) => [k, v.value, v.windowMs]),
    [['a', 1500, 60_000]],
  );
  const obj = await src.getObjectMetric('hits', 'default', { kind: 'Ingress', name: 'main' }, '');
  assert.equal(obj.value, 1500);
  const ext = await src.getExternalMetric('queue', 'default', 'q=jobs');
  assert.deepEqual(ext.values, [2000, 500]);
  assert.deepEqual(
    calls.map((c) => c[0]),
    [
      '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/qps',
      '/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/ingresss/main/hits',
      '/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue',
    ],
  );
  assert.deepEqual(calls[0]![1], { labelSelector: 'app=web', metricLabelSelector: 'env=prod' });
});
