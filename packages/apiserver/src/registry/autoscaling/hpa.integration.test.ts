/**
 * HorizontalPodAutoscalers against a real etcd and apiserver: one stored
 * object under /registry/horizontalpodautoscalers/<ns>/<name> in
 * autoscaling/v2, read and written through autoscaling/v1 and v2 (the v1
 * client's read-modify-write keeps what only v2 can say), one watch cache
 * serving watches of both versions, v2 preferred in discovery, 422s with
 * upstream messages, the status subresource, the Table rows of
 * `kubectl get hpa`, and protobuf in both versions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { wire } from '@kubeling/api';
import { readWatch, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let etcd: Etcd3;
before(async () => {
  env = await startTestEnv();
  etcd = new Etcd3({ hosts: env.etcd.endpoint });
});
after(async () => {
  etcd?.close();
  await env?.stop();
});

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

test('v2 is the preferred version of autoscaling; both versions are served', async () => {
  const g = await request(env.url, 'GET', '/apis/autoscaling');
  assert.deepEqual(g.body.preferredVersion, { groupVersion: 'autoscaling/v2', version: 'v2' });
  assert.deepEqual(
    g.body.versions.map((v: { version: string }) => v.version),
    ['v2', 'v1'],
  );
  const list = await request(env.url, 'GET', '/apis/autoscaling/v2');
  assert.deepEqual(
    list.body.resources.map((r: { name: string }) => r.name),
    ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'],
  );
});

test('an HPA created through v1 is stored once, as v2, and read through both versions', async () => {
  const c = await request(env.url, 'POST', V1, {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'one' },
    spec: { scaleTargetRef: ref, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.apiVersion, 'autoscaling/v1');
  assert.equal(c.body.spec.minReplicas, 1);
  assert.equal(c.body.spec.targetCPUUtilizationPercentage, 50);
  assert.deepEqual(c.body.status, { currentReplicas: 0, desiredReplicas: 0 });

  const stored = JSON.parse((await etcd.get('/registry/horizontalpodautoscalers/default/one').string())!);
  assert.equal(stored.apiVersion, 'autoscaling/v2');
  assert.deepEqual(stored.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);

  const v2 = await request(env.url, 'GET', `${V2}/one`);
  assert.equal(v2.status, 200, v2.text);
  assert.equal(v2.body.apiVersion, 'autoscaling/v2');
  assert.equal(v2.body.metadata.resourceVersion, c.body.metadata.resourceVersion);
  assert.deepEqual(v2.body.spec.metrics, stored.spec.metrics);
  // Go's encoding: currentMetrics has no omitempty, currentReplicas has.
  assert.deepEqual(v2.body.status, { desiredReplicas: 0, currentMetrics: null });
  const both = await Promise.all([request(env.url, 'GET', V1), request(env.url, 'GET', V2)]);
  assert.deepEqual(
    both.map((r) => r.body.items.map((i: { apiVersion?: string; metadata: { name: string } }) => i.metadata.name)),
    [['one'], ['one']],
  );
});

test('what v1 cannot say survives a v1 read-modify-write, in the round-trip annotations', async () => {
  const c = await request(env.url, 'POST', V2, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'two' },
    spec: {
      scaleTargetRef: ref,
      minReplicas: 2,
      maxReplicas: 8,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
    },
  });
  assert.equal(c.status, 201, c.text);
  // Defaults fill the behavior given, leaving scaleDown's policies at 100% per 15 s.
  assert.deepEqual(c.body.spec.behavior.scaleDown, {
    stabilizationWindowSeconds: 30,
    selectPolicy: 'Max',
    policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
  });
  const v1 = await request(env.url, 'GET', `${V1}/two`);
  assert.equal(v1.body.spec.targetCPUUtilizationPercentage, 60);
  assert.match(v1.body.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'], /"name":"memory","targetAverageValue":"100Mi"/);
  assert.match(v1.body.metadata.annotations['autoscaling.alpha.kubernetes.io/behavior'], /"StabilizationWindowSeconds":30/);
  const edited = { ...v1.body, spec: { ...v1.body.spec, maxReplicas: 9 } };
  const u = await request(env.url, 'PUT', `${V1}/two`, edited);
  assert.equal(u.status, 200, u.text);
  const after = await request(env.url, 'GET', `${V2}/two`);
  assert.equal(after.body.spec.maxReplicas, 9);
  assert.deepEqual(
    after.body.spec.metrics.map((m: { resource: { name: string } }) => m.resource.name),
    ['memory', 'cpu'],
  );
  assert.equal(after.body.spec.behavior.scaleDown.stabilizationWindowSeconds, 30);
  assert.equal(after.body.metadata.annotations, undefined);
});

test('one watch cache: watchers of v1 and v2 see the same change, each in its version', async () => {
  const rv = (await request(env.url, 'GET', V2)).body.metadata.resourceVersion;
  const seen = (base: string) => readWatch(`${env.url}${base}?watch=1&resourceVersion=${rv}`, (ev) => ev.object.metadata?.name === 'three', 10_000);
  const [w1, w2] = [seen(V1), seen(V2)];
  await new Promise((r) => setTimeout(r, 200));
  const c = await request(env.url, 'POST', V2, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'three' },
    spec: { scaleTargetRef: ref, maxReplicas: 3 },
  });
  assert.equal(c.status, 201, c.text);
  const [e1, e2] = await Promise.all([w1, w2]);
  const last = (evs: { type: string; object: { apiVersion: string; spec: Record<string, unknown> } }[]) => evs[evs.length - 1]!;
  assert.equal(last(e1).type, 'ADDED');
  assert.equal(last(e1).object.apiVersion, 'autoscaling/v1');
  assert.equal(last(e1).object.spec.targetCPUUtilizationPercentage, 80);
  assert.equal(last(e2).object.apiVersion, 'autoscaling/v2');
});

test('validation answers 422 with upstream messages; the status subresource takes only the status', async () => {
  const bad = await request(env.url, 'POST', V2, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'bad' },
    spec: { scaleTargetRef: { kind: 'Deployment' }, minReplicas: 0, maxReplicas: 3, behavior: { scaleUp: { stabilizationWindowSeconds: 4000 } } },
  });
  assert.equal(bad.status, 422, bad.text);
  assert.equal(bad.body.reason, 'Invalid');
  const messages = bad.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
  assert.ok(messages.includes('spec.minReplicas: Invalid value: 0: must be greater than or equal to 1'), messages.join('\n'));
  assert.ok(messages.includes('spec.scaleTargetRef.name: Required value'), messages.join('\n'));
  assert.ok(
    messages.includes('spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600'),
    messages.join('\n'),
  );

  const cur = (await request(env.url, 'GET', `${V2}/three`)).body;
  const status = {
    currentReplicas: 2,
    desiredReplicas: 3,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 120, averageValue: '120m' } } }],
  };
  const s = await request(env.url, 'PUT', `${V2}/three/status`, { ...cur, spec: { ...cur.spec, maxReplicas: 99 }, status });
  assert.equal(s.status, 200, s.text);
  assert.equal(s.body.spec.maxReplicas, 3);
  assert.equal(s.body.status.desiredReplicas, 3);
  const viaV1 = (await request(env.url, 'GET', `${V1}/three`)).body;
  assert.equal(viaV1.status.currentCPUUtilizationPercentage, 120);

  const table = await request(env.url, 'GET', V2, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(
    table.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age'],
  );
  const row = table.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'three');
  assert.deepEqual(row.cells.slice(0, 6), ['three', 'Deployment/web', 'cpu: 120%/80%', '1', 3, 2]);
  const v1Table = await request(env.url, 'GET', V1, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(v1Table.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'three').cells.slice(0, 6), row.cells.slice(0, 6));
});

test('protobuf: both versions are served and read in protobuf, as client-go asks', async () => {
  const PB = 'application/vnd.kubernetes.protobuf';
  const body = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'pb' },
    spec: {
      scaleTargetRef: ref,
      maxReplicas: 4,
      metrics: [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }],
      behavior: { scaleUp: { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } },
    },
  };
  const post = await fetch(env.url + V2, { method: 'POST', headers: { accept: PB, 'content-type': PB }, body: wire.encodeObject(body)! });
  assert.equal(post.status, 201);
  assert.equal(post.headers.get('content-type'), PB);
  const created = wire.decodeObject(Buffer.from(await post.arrayBuffer())) as { spec: { behavior: { scaleUp: unknown; scaleDown: { policies: unknown[] } } } };
  assert.deepEqual(created.spec.behavior.scaleUp, {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Min',
    policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }],
  });
  const v1 = await fetch(`${env.url}${V1}/pb`, { headers: { accept: PB } });
  assert.equal(v1.headers.get('content-type'), PB);
  const obj = wire.decodeObject(Buffer.from(await v1.arrayBuffer())) as { apiVersion: string; metadata: { annotations: Record<string, string> } };
  assert.equal(obj.apiVersion, 'autoscaling/v1');
  assert.match(obj.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']!, /"metricName":"qps"/);
});
