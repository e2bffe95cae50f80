/**
 * The real kubectl and HorizontalPodAutoscalers: `kubectl get hpa` reads
 * autoscaling/v2 (the preferred version) and prints upstream's columns and
 * TARGETS, `horizontalpodautoscalers.v1.autoscaling` shows the same object in v1, `kubectl
 * autoscale` creates one, and `kubectl describe hpa` reads it.
 * Skipped with a message where no kubectl is installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const bins = kubectlBinaries();
const skip = bins.default ? false : 'kubectl is not installed on this machine';

const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 100m}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
`;

describe('real kubectl and HorizontalPodAutoscalers', { skip }, () => {
  let env: TestEnv;
  let k: Kubectl;
  before(async () => {
    env = await startTestEnv();
    k = new Kubectl(env.url, bins.default!);
  });
  after(async () => {
    k?.cleanup();
    await env?.stop();
  });

  test('create -f, get hpa (v2, upstream columns), get horizontalpodautoscalers.v1.autoscaling', async () => {
    const created = await k.run(['create', '-f', k.file('hpa.yaml', MANIFEST)]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /horizontalpodautoscaler.autoscaling\/web created/);

    const get = await k.run(['get', 'hpa']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/m);
    assert.match(get.stdout, /^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+2\s+6\s+0\s+\d+s$/m);

    const yaml = await k.run(['get', 'hpa', 'web', '-o', 'yaml']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /^apiVersion: autoscaling\/v2$/m);

    const v1 = await k.run([
      'get',
      'horizontalpodautoscalers.v1.autoscaling',
      'web',
      '-o',
      'jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage} {.spec.minReplicas}',
    ]);
    assert.equal(v1.code, 0, v1.stderr);
    assert.equal(v1.stdout, 'autoscaling/v1 50 2');

    // A measured utilization shows in TARGETS.
    const cur = (await request(env.url, 'GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web')).body;
    const status = {
      currentReplicas: 2,
      desiredReplicas: 3,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 120, averageValue: '120m' } } }],
    };
    const put = await request(env.url, 'PUT', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web/status', { ...cur, status });
    assert.equal(put.status, 200, put.text);
    const again = await k.run(['get', 'hpa', 'web']);
    assert.match(again.stdout, /^web\s+Deployment\/web\s+cpu: 120%\/50%\s+2\s+6\s+2\s+\d+s$/m);
  });

  test('autoscale creates an HPA; describe hpa reads it', async () => {
    const r = await k.run(['autoscale', 'deployment', 'web', '--name=auto', '--min=1', '--max=4', '--cpu-percent=70']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /horizontalpodautoscaler.autoscaling\/auto autoscaled/);
    const v2 = (await request(env.url, 'GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/auto')).body;
    assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
    assert.deepEqual([v2.spec.minReplicas, v2.spec.maxReplicas], [1, 4]);

    const explain = await k.run(['explain', 'hpa.spec.behavior.scaleUp']);
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout, /^GROUP:\s+autoscaling$/m);
    assert.match(explain.stdout, /^VERSION:\s+v2$/m);
    assert.match(explain.stdout, /stabilizationWindowSeconds\s+<integer>/);

    const d = await k.run(['describe', 'hpa', 'web']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^Reference:\s+Deployment\/web$/m);
    assert.match(d.stdout, /resource cpu on pods\s+\(as a percentage of request\):\s+120% \(120m\) \/ 50%/);
    assert.match(d.stdout, /^Min replicas:\s+2$/m);
    assert.match(d.stdout, /^Max replicas:\s+6$/m);
  });
});
