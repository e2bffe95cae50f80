/**
 * syncFoo scenarios (sample-controller controller_test.go's: create the
 * Deployment, update its replicas, refuse one it does not control, write the
 * status), against plain listers and a record of the writes and events.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerRateLimiter } from './ratelimit.js';
import { messageResourceExists, newDeployment, NotManagedError, syncFoo, type SyncDeps } from './reconcile.js';
import type { Deployment, Foo } from './types.js';

const foo = (spec: NonNullable<Foo['spec']>, status?: Foo['status']): Foo => ({
  apiVersion: 'samplecontroller.k8s.io/v1alpha1',
  kind: 'Foo',
  metadata: { name: 'test', namespace: 'default', uid: 'foo-uid', resourceVersion: '7' },
  spec,
  ...(status ? { status } : {}),
});

function world(foos: Foo[], deployments: Deployment[]) {
  const writes: string[] = [];
  const events: string[] = [];
  const reports: string[] = [];
  const deps: SyncDeps = {
    getFoo: (ns, name) => foos.find((f) => f.metadata.namespace === ns && f.metadata.name === name),
    getDeployment: (ns, name) => deployments.find((d) => d.metadata.namespace === ns && d.metadata.name === name),
    createDeployment: async (d) => {
      writes.push(`create deployment ${d.metadata.name} replicas=${d.spec?.replicas}`);
      return { ...d, metadata: { ...d.metadata, resourceVersion: '10' } };
    },
    updateDeployment: async (d) => {
      writes.push(`update deployment ${d.metadata.name} replicas=${d.spec?.replicas} rv=${d.metadata.resourceVersion}`);
      // As the apiserver answers an update: the status stays what it was.
      const old = deployments.find((x) => x.metadata.name === d.metadata.name);
      return { ...d, ...(old?.status ? { status: old.status } : {}) };
    },
    updateFooStatus: async (f) => {
      writes.push(`update foo status availableReplicas=${f.status?.availableReplicas} rv=${f.metadata.resourceVersion}`);
      return f;
    },
    event: (_f, type, reason, message) => events.push(`${type} ${reason} ${message}`),
    report: (m) => reports.push(m),
  };
  return { deps, writes, events, reports };
}

test('a new Foo: its Deployment is created, controlled by the Foo, and the status written', async () => {
  const f = foo({ deploymentName: 'test', replicas: 2 });
  const w = world([f], []);
  assert.equal(await syncFoo('default/test', w.deps), 'synced');
  assert.deepEqual(w.writes, ['create deployment test replicas=2', 'update foo status availableReplicas=0 rv=7']);
  assert.deepEqual(w.events, ['Normal Synced Foo synced successfully']);
  const d = newDeployment(f);
  assert.deepEqual(d.metadata.ownerReferences, [
    { apiVersion: 'samplecontroller.k8s.io/v1alpha1', kind: 'Foo', name: 'test', uid: 'foo-uid', controller: true, blockOwnerDeletion: true },
  ]);
  assert.deepEqual(d.spec?.selector, { matchLabels: { app: 'nginx', controller: 'test' } });
  assert.equal(f.status, undefined, 'the lister object is not touched');
});

test('replicas that differ update the Deployment; the status follows availableReplicas', async () => {
  const f = foo({ deploymentName: 'test', replicas: 3 }, { availableReplicas: 1 });
  const d = { ...newDeployment(f), status: { availableReplicas: 2 } };
  d.metadata = { ...d.metadata, resourceVersion: '42' };
  d.spec = { ...d.spec!, replicas: 2 };
  const w = world([f], [d]);
  await syncFoo('default/test', w.deps);
  assert.deepEqual(w.writes, ['update deployment test replicas=3 rv=42', 'update foo status availableReplicas=2 rv=7']);
});

test('a sync that changes nothing writes nothing but the Synced event', async () => {
  const f = foo({ deploymentName: 'test', replicas: 2 }, { availableReplicas: 2 });
  const d = { ...newDeployment(f), status: { availableReplicas: 2 } };
  const w = world([f], [d]);
  await syncFoo('default/test', w.deps);
  assert.deepEqual(w.writes, []);
  assert.deepEqual(w.events, ['Normal Synced Foo synced successfully']);
});

test('a Deployment the Foo does not control: ErrResourceExists, no write, and an error so the key is retried', async () => {
  const f = foo({ deploymentName: 'taken', replicas: 1 });
  const other: Deployment = { ...newDeployment(f), metadata: { name: 'taken', namespace: 'default' } };
  const w = world([f], [other]);
  await assert.rejects(syncFoo('default/test', w.deps), (e) => e instanceof NotManagedError && e.message === messageResourceExists('taken'));
  assert.deepEqual(w.writes, []);
  assert.deepEqual(w.events, ['Warning ErrResourceExists Resource "taken" already exists and is not managed by Foo']);
  // Controlled by another object of the same name (another uid): still not ours.
  const stale = newDeployment({ ...f, metadata: { ...f.metadata, uid: 'older-foo' } });
  await assert.rejects(syncFoo('default/test', world([f], [stale]).deps), NotManagedError);
});

test('a Foo that is gone, or has no deploymentName, is reported and not retried', async () => {
  const w = world([foo({ replicas: 1 })], []);
  assert.equal(await syncFoo('default/missing', w.deps), 'gone');
  assert.equal(await syncFoo('default/test', w.deps), 'invalid');
  assert.equal(await syncFoo('no-namespace', w.deps), 'invalid');
  assert.deepEqual(w.reports, [
    "foo 'default/missing' in work queue no longer exists",
    'default/test: deployment name must be specified',
    'invalid resource key: no-namespace',
  ]);
  assert.deepEqual(w.writes, []);
});

test('the rate limiter: per-item exponential backoff, forget resets it, the bucket caps a burst of failures', () => {
  let now = 0;
  const rl = new ControllerRateLimiter<string>(5, 1_000_000, 10, 100, () => now);
  assert.deepEqual([rl.when('a'), rl.when('a'), rl.when('a')], [5, 10, 20]);
  rl.forget('a');
  assert.equal(rl.when('a'), 5);
  // 100 tokens: the 4 taken above and 96 more pass at their item delay; the next waits for the bucket (1 token per 100 ms).
  for (let i = 0; i < 96; i++) assert.equal(rl.when(`k${i}`), 5);
  assert.equal(rl.when('x'), 100);
  assert.equal(rl.when('y'), 200);
  now = 1000;
  assert.equal(rl.when('z'), 5, 'refilled after a second');
});
