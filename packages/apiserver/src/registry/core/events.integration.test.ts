/**
 * Events against a real etcd and apiserver: an events.k8s.io/v1 Event is
 * selectable in core/v1 by `source` (its reporting controller stands in for the
 * source it lacks) and in events.k8s.io/v1 by the v1 field labels
 * (`reportingController`, `regarding.*`), as upstream's field label conversion.
 * And a review asked for as a Table: 406, unless a plain type is acceptable too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const names = (r: { body: { items: { metadata: { name: string } }[] } }) => r.body.items.map((e) => e.metadata.name);

test('events.k8s.io Events are selectable by source and by their v1 field labels', async () => {
  const ev = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e1' },
    eventTime: '2026-01-01T00:00:00.000000Z',
    reportingController: 'test-controller',
    reportingInstance: 'test-node',
    action: 'Do',
    reason: 'Test',
    type: 'Normal',
    regarding: { kind: 'Pod', namespace: 'default', name: 'p1' },
    note: 'hello',
  };
  const c = await request(env.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', ev);
  assert.equal(c.status, 201, c.text);
  const core = await request(env.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=source%3Dtest-controller');
  assert.deepEqual(names(core), ['e1']);
  const v1 = await request(env.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=reportingController%3Dtest-controller');
  assert.deepEqual(names(v1), ['e1']);
  const regarding = await request(env.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dp1');
  assert.deepEqual(names(regarding), ['e1']);
  const none = await request(env.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dp2');
  assert.deepEqual(names(none), []);
  const bad = await request(env.url, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp1');
  assert.equal(bad.status, 400, bad.text);
});

test('a review asked for only as a Table is 406 NotAcceptable', async () => {
  const sar = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { nonResourceAttributes: { path: '/', verb: 'get' } } };
  const path = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
  const r = await request(env.url, 'POST', path, sar, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.equal(r.status, 406, r.text);
  assert.equal(r.body.reason, 'NotAcceptable');
  const ok = await request(env.url, 'POST', path, sar, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json' });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.kind, 'SelfSubjectAccessReview');
});
