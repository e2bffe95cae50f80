/**
 * Deployments end to end against a real etcd and apiserver, with a stand-in
 * kubelet in the test marking pods Running and Ready through the status
 * subresource: creation, a rolling update within maxSurge/maxUnavailable at every
 * observed step, rollback, and the three deletion propagation policies.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, Kubectl, kubectlBinaries, repeat, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
let kubelet: { stop(): void } | undefined;

/** Marks every pending pod Running and Ready, as a kubelet would. */
async function fakeKubelet(): Promise<void> {
  const pods = (await request(env.url, 'GET', '/api/v1/pods')).body.items as any[];
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) {
      await request(env.url, 'DELETE', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, { gracePeriodSeconds: 0 });
      continue;
    }
    if (p.status?.phase === 'Running') continue;
    const now = new Date().toISOString().replace(/\.\d+Z/, 'Z');
    p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }], podIP: '127.10.0.1' };
    await request(env.url, 'PUT', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}/status`, p);
  }
}

const deployment = (name: string, image: string, replicas = 3) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } },
  },
});

const get = async (path: string) => (await request(env.url, 'GET', path)).body;
const rsOf = async (app: string) => (await get(`/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3D${app}`)).items as any[];
const podsOf = async (app: string) => (await get(`/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).items as any[];

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['*'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    qps: 200,
    burst: 400,
  });
  await mgr.start();
  kubelet = repeat(fakeKubelet, 150);
});
after(async () => {
  kubelet?.stop();
  await mgr?.stop();
  await env?.stop();
});

describe('deployment controller', () => {
  test('a Deployment of 3 gets one ReplicaSet and 3 pods, and completes', async () => {
    const c = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 'nginx:1.25'));
    assert.equal(c.status, 201, c.text);
    const d = await eventually(async () => {
      const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
      return d.status?.availableReplicas === 3 && d.status.updatedReplicas === 3 && d.status.observedGeneration === 1 && d;
    });
    const rss = await rsOf('web');
    assert.equal(rss.length, 1);
    const hash = rss[0].metadata.labels['pod-template-hash'];
    assert.equal(rss[0].metadata.name, `web-${hash}`);
    assert.equal(rss[0].metadata.annotations['deployment.kubernetes.io/revision'], '1');
    assert.equal(rss[0].metadata.ownerReferences[0].uid, c.body.metadata.uid);
    assert.equal((await podsOf('web')).length, 3);
    assert.equal(d.metadata.annotations['deployment.kubernetes.io/revision'], '1');
    const progressing = d.status.conditions.find((x: any) => x.type === 'Progressing');
    assert.equal(progressing.reason, 'NewReplicaSetAvailable');
  });

  test('an image change rolls to a second ReplicaSet within maxSurge and maxUnavailable', async () => {
    const patch = await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/web',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } } } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    assert.equal(patch.status, 200, patch.text);
    const violations: string[] = [];
    await eventually(
      async () => {
        const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
        return (
          d.status?.observedGeneration === 2 &&
          d.status.updatedReplicas === 3 &&
          d.status.availableReplicas === 3 &&
          !d.status.unavailableReplicas &&
          (d.status.replicas ?? 0) === 3
        );
      },
      20_000,
      async () => {
        const pods = (await podsOf('web')).filter((p) => !p.metadata.deletionTimestamp);
        const ready = pods.filter((p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
        if (pods.length > 3 + 1) violations.push(`${pods.length} pods > replicas + maxSurge`);
        if (ready.length < 3 - 1 - 1) violations.push(`${ready.length} ready pods`);
        const total = (await rsOf('web')).reduce((n, r) => n + (r.spec.replicas ?? 0), 0);
        if (total > 3 + 1) violations.push(`ReplicaSets want ${total} > replicas + maxSurge`);
      },
    );
    assert.deepEqual(violations, []);
    const rss = await rsOf('web');
    assert.equal(rss.length, 2);
    const byRev = Object.fromEntries(rss.map((r) => [r.metadata.annotations['deployment.kubernetes.io/revision'], r]));
    assert.equal(byRev['1'].spec.replicas, 0);
    assert.equal(byRev['2'].spec.replicas, 3);
    assert.equal(byRev['2'].spec.template.spec.containers[0].image, 'nginx:1.26');
  });

  test('kubectl rollout undo returns to the first template as revision 3', {
    skip: kubectlBinaries().default ? false : 'kubectl is not installed',
  }, async () => {
    const k = new Kubectl(env.url, kubectlBinaries().default!);
    try {
      const undo = await k.run(['rollout', 'undo', 'deployment/web']);
      assert.equal(undo.code, 0, undo.stderr);
      const status = await k.run(['rollout', 'status', 'deployment/web', '--timeout=20s']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /successfully rolled out/);
    } finally {
      k.cleanup();
    }
    const d = await get('/apis/apps/v1/namespaces/default/deployments/web');
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.25');
    assert.equal(d.metadata.annotations['deployment.kubernetes.io/revision'], '3');
    const rss = await rsOf('web');
    assert.equal(rss.length, 2, 'the old ReplicaSet is reused, not a third one made');
  });

  test('background deletion removes ReplicaSets and pods', async () => {
    const del = await request(env.url, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/web', { propagationPolicy: 'Background' });
    assert.equal(del.status, 200);
    await eventually(async () => (await rsOf('web')).length === 0 && (await podsOf('web')).length === 0, 20_000);
  });

  test('orphan deletion leaves the ReplicaSet and pods without owner', async () => {
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('orph', 'nginx', 2));
    await eventually(async () => (await podsOf('orph')).length === 2);
    const del = await request(env.url, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/orph', { propagationPolicy: 'Orphan' });
    assert.equal(del.status, 200);
    await eventually(async () => (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/orph')).status === 404);
    const rss = await eventually(async () => {
      const r = await rsOf('orph');
      return r.length === 1 && !r[0].metadata.ownerReferences?.length && r;
    });
    assert.equal(rss.length, 1);
    assert.equal((await podsOf('orph')).length, 2);
  });

  test('foreground deletion holds the owner until its children are gone', async () => {
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('fg', 'nginx', 2));
    await eventually(async () => (await podsOf('fg')).length === 2);
    const del = await request(env.url, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/fg', { propagationPolicy: 'Foreground' });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body.metadata.finalizers, ['foregroundDeletion']);
    let sawHeld = false;
    await eventually(
      async () => (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/fg')).status === 404,
      20_000,
      async () => {
        const d = await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/fg');
        const children = (await rsOf('fg')).length + (await podsOf('fg')).length;
        if (d.status === 200 && children > 0) sawHeld = true;
        if (d.status === 404) assert.equal(children, 0, 'owner gone before its children');
      },
    );
    assert.ok(sawHeld);
    assert.equal((await rsOf('fg')).length, 0);
  });
});
