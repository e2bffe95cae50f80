/**
 * ReplicationControllers end to end against a real etcd and apiserver:
 * defaulting and validation of the kind, the replicationcontroller controller
 * creating, adopting and deleting pods, the scale subresource, status, the
 * garbage collector removing pods with their controller, and the real kubectl's
 * `get rc` and `scale rc`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;

const rc = (name: string, replicas?: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } },
    ...extra,
  },
});

const get = async (path: string) => (await request(env.url, 'GET', path)).body;
const podsOf = async (app: string) =>
  ((await get(`/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).items as any[]).filter((p) => !p.metadata.deletionTimestamp);

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['replicationcontroller', 'garbagecollector'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    qps: 200,
    burst: 400,
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

describe('ReplicationController', () => {
  test('defaults selector, labels and replicas from the template', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', rc('defaults'));
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.spec.selector, { app: 'defaults' });
    assert.deepEqual(c.body.metadata.labels, { app: 'defaults' });
    assert.equal(c.body.spec.replicas, 1);
    assert.equal(c.body.metadata.generation, 1);
    assert.equal(c.body.spec.template.spec.restartPolicy, 'Always');
  });

  test('validation as upstream: template labels must match the selector, restartPolicy Always', async () => {
    const bad = rc('bad', 1, { selector: { app: 'other' } });
    const r = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', bad);
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
    const never = rc('never', 1);
    (never.spec.template.spec as any).restartPolicy = 'Never';
    const r2 = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', never);
    assert.equal(r2.status, 422, r2.text);
    assert.match(r2.body.message, /spec\.template\.spec\.restartPolicy: Unsupported value: "Never": supported values: "Always"/);
    const noTemplate = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'nt' }, spec: { selector: { a: 'b' } } };
    const r3 = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', noTemplate);
    assert.equal(r3.status, 422, r3.text);
    assert.match(r3.body.message, /spec\.template: Required value/);
  });

  test('the controller keeps spec.replicas pods, owned by the controller, and reports status', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', rc('web', 3));
    assert.equal(c.status, 201, c.text);
    const pods = await eventually(async () => {
      const p = await podsOf('web');
      return p.length === 3 && p;
    });
    for (const p of pods) {
      assert.equal(p.metadata.ownerReferences[0].kind, 'ReplicationController');
      assert.equal(p.metadata.ownerReferences[0].apiVersion, 'v1');
      assert.equal(p.metadata.ownerReferences[0].uid, c.body.metadata.uid);
      assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
    }
    const status = await eventually(async () => {
      const o = await get('/api/v1/namespaces/default/replicationcontrollers/web');
      return o.status?.replicas === 3 && o.status.observedGeneration === 1 && o.status;
    });
    assert.equal(status.fullyLabeledReplicas, 3);
    assert.equal(status.terminatingReplicas, undefined);
    // A deleted pod is replaced.
    await request(env.url, 'DELETE', `/api/v1/namespaces/default/pods/${pods[0].metadata.name}`, { gracePeriodSeconds: 0 });
    await eventually(async () => {
      const p = await podsOf('web');
      return p.length === 3 && !p.some((x) => x.metadata.name === pods[0].metadata.name);
    });
  });

  test('scale subresource: Scale with the equality selector, and scaling down deletes pods', async () => {
    const s = await get('/api/v1/namespaces/default/replicationcontrollers/web/scale');
    assert.equal(s.kind, 'Scale');
    assert.equal(s.apiVersion, 'autoscaling/v1');
    assert.equal(s.spec.replicas, 3);
    assert.equal(s.status.selector, 'app=web');
    const p = await request(
      env.url,
      'PATCH',
      '/api/v1/namespaces/default/replicationcontrollers/web/scale',
      { spec: { replicas: 1 } },
      {
        contentType: 'application/merge-patch+json',
      },
    );
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.spec.replicas, 1);
    await eventually(async () => (await podsOf('web')).length === 1);
    await eventually(async () => (await get('/api/v1/namespaces/default/replicationcontrollers/web')).status?.replicas === 1);
  });

  test('orphans matching the selector are adopted', async () => {
    const orphan = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stray', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', orphan)).status, 201);
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/replicationcontrollers', rc('adopt', 1));
    assert.equal(c.status, 201, c.text);
    const stray = await eventually(async () => {
      const p = await get('/api/v1/namespaces/default/pods/stray');
      return p.metadata.ownerReferences?.[0]?.uid === c.body.metadata.uid && p;
    });
    assert.equal(stray.metadata.ownerReferences[0].controller, true);
    // It counts: no second pod is made.
    await eventually(async () => (await get('/api/v1/namespaces/default/replicationcontrollers/adopt')).status?.replicas === 1);
    assert.equal((await podsOf('adopt')).length, 1);
  });

  test('deleting the controller deletes its pods (garbage collector)', async () => {
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/replicationcontrollers/adopt', { propagationPolicy: 'Background' });
    assert.equal(d.status, 200, d.text);
    await eventually(async () => (await podsOf('adopt')).length === 0);
  });

  test('foreground deletion deletes the dependents it alone owns; one with another owner that stays only lets go of it', async () => {
    const base = '/api/v1/namespaces/default/configmaps';
    const mk = async (name: string, owners: { name: string; uid: string }[]) => {
      const ownerReferences = owners.map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.name, uid: o.uid, blockOwnerDeletion: true }));
      const r = await request(env.url, 'POST', base, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, ...(owners.length ? { ownerReferences } : {}) },
      });
      assert.equal(r.status, 201, r.text);
      return { name, uid: r.body.metadata.uid as string };
    };
    const a = await mk('fg-owner-a', []);
    const b = await mk('fg-owner-b', []);
    await mk('fg-only-a', [a]);
    await mk('fg-shared', [a, b]);
    const del = await request(env.url, 'DELETE', `${base}/fg-owner-a`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
    assert.equal(del.status, 200, del.text);
    await eventually(async () => (await request(env.url, 'GET', `${base}/fg-owner-a`)).status === 404);
    assert.equal((await request(env.url, 'GET', `${base}/fg-only-a`)).status, 404);
    const shared = await request(env.url, 'GET', `${base}/fg-shared`);
    assert.equal(shared.status, 200, 'kept: its other owner stays');
    assert.deepEqual(
      shared.body.metadata.ownerReferences.map((r: { uid: string }) => r.uid),
      [b.uid],
    );
  });

  test('foreground deletion is not blocked by a circle of owners that all block', async () => {
    const base = '/api/v1/namespaces/default/configmaps';
    const made: { name: string; uid: string }[] = [];
    for (const name of ['circle-1', 'circle-2', 'circle-3']) {
      const r = await request(env.url, 'POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
      assert.equal(r.status, 201, r.text);
      made.push({ name, uid: r.body.metadata.uid });
    }
    // 1 is owned by 3, 2 by 1, 3 by 2.
    for (const [i, owner] of [made[2]!, made[0]!, made[1]!].entries()) {
      const p = await request(
        env.url,
        'PATCH',
        `${base}/${made[i]!.name}`,
        { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, blockOwnerDeletion: true }] } },
        { contentType: 'application/merge-patch+json' },
      );
      assert.equal(p.status, 200, p.text);
    }
    const del = await request(env.url, 'DELETE', `${base}/circle-1`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
    assert.equal(del.status, 200, del.text);
    await eventually(async () => {
      for (const m of made) if ((await request(env.url, 'GET', `${base}/${m.name}`)).status !== 404) return false;
      return true;
    });
  });

  test('the real kubectl: get rc (Table columns), scale rc, get cs', async (t) => {
    const bin = kubectlBinaries().default;
    if (!bin) return t.skip('no kubectl on PATH');
    const k = new Kubectl(env.url, bin);
    try {
      const g = await k.run(['get', 'rc', 'web']);
      assert.equal(g.code, 0, g.stderr);
      assert.match(g.stdout, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\n/);
      assert.match(g.stdout, /\nweb\s+1\s+1\s+0\s+\d+s\n/);
      const sc = await k.run(['scale', 'rc', 'web', '--replicas=2']);
      assert.equal(sc.code, 0, sc.stderr);
      assert.match(sc.stdout, /replicationcontroller\/web scaled/);
      await eventually(async () => (await podsOf('web')).length === 2);
      const ar = await k.run(['api-resources', '--api-group=']);
      assert.match(ar.stdout, /\nreplicationcontrollers\s+rc\s+v1\s+true\s+ReplicationController\n/);
      assert.match(ar.stdout, /\ncomponentstatuses\s+cs\s+v1\s+false\s+ComponentStatus\n/);
      const cs = await k.run(['get', 'cs']);
      assert.equal(cs.code, 0, cs.stderr);
      assert.match(cs.stdout, /^NAME\s+STATUS\s+MESSAGE\s+ERROR\n/);
      // etcd is up; no scheduler listens on the test's loopback default port, so it is Unhealthy (or, on a machine running a cluster, Healthy).
      assert.match(cs.stdout, /\netcd-0\s+Healthy\s+ok\s*\n/);
      assert.match(cs.stdout, /\nscheduler\s+(Healthy|Unhealthy)\s/);
    } finally {
      k.cleanup();
    }
  });
});
