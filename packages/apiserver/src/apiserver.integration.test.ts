/**
 * The apiserver's writes against a real etcd: storage layout, CRUD, optimistic
 * concurrency, finalizers and graceful deletion, and bad input that writes
 * nothing. Watches, lists and views are in apiserver-reads.integration.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { cm } from './apiserver.fixtures.js';

let env: TestEnv;
let etcd: Etcd3;

async function etcdRevision(): Promise<number> {
  const res = await etcd.kv.range({ key: Buffer.from('/'), count_only: true });
  return Number(res.header.revision);
}

before(async () => {
  env = await startTestEnv({ server: { compactionIntervalMs: 0, bookmarkIntervalMs: 200 } });
  etcd = new Etcd3({ hosts: env.etcd.endpoint });
});
after(async () => {
  etcd?.close();
  await env?.stop();
});

describe('system namespaces and storage layout', () => {
  test('default namespaces exist and objects live under /registry', async () => {
    const list = await request(env.url, 'GET', '/api/v1/namespaces');
    assert.equal(list.status, 200);
    const names = list.body.items.map((n: any) => n.metadata.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
    const created = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('layout'));
    assert.equal(created.status, 201);
    const raw = await etcd.get('/registry/configmaps/default/layout').string();
    assert.ok(raw);
    const stored = JSON.parse(raw!);
    assert.equal(stored.metadata.name, 'layout');
    assert.equal(stored.metadata.resourceVersion, undefined, 'resourceVersion is not stored');
    const ns = await etcd.get('/registry/namespaces/default').string();
    assert.ok(ns);
  });
});

describe('CRUD', () => {
  test('create, get, list, update, delete a ConfigMap', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('crud'));
    assert.equal(c.status, 201);
    assert.ok(c.body.metadata.uid);
    assert.ok(c.body.metadata.creationTimestamp);
    assert.match(c.body.metadata.resourceVersion, /^\d+$/);
    const g = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/crud');
    assert.equal(g.status, 200);
    assert.deepEqual(g.body.data, { a: '1' });
    assert.equal(g.body.kind, 'ConfigMap');
    const l = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(l.body.kind, 'ConfigMapList');
    assert.ok(l.body.items.some((i: any) => i.metadata.name === 'crud'));
    const upd = { ...g.body, data: { a: '2' } };
    const u = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/crud', upd);
    assert.equal(u.status, 200);
    assert.equal(u.body.data.a, '2');
    assert.ok(Number(u.body.metadata.resourceVersion) > Number(g.body.metadata.resourceVersion));
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/crud');
    assert.equal(d.status, 200);
    assert.equal(d.body.status, 'Success');
    assert.equal(d.body.details.uid, c.body.metadata.uid);
    const gone = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/crud');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.reason, 'NotFound');
    assert.equal(gone.body.message, 'configmaps "crud" not found');
  });

  test('duplicate create is 409 AlreadyExists', async () => {
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('dup'))).status, 201);
    const again = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('dup'));
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
    assert.equal(again.body.message, 'configmaps "dup" already exists');
  });

  test('generateName, generation and defaults on a Deployment', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { generateName: 'web-' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] } },
      },
    };
    const c = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', dep);
    assert.equal(c.status, 201, c.text);
    assert.match(c.body.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.equal(c.body.metadata.generation, 1);
    assert.equal(c.body.spec.replicas, 1);
    assert.equal(c.body.spec.strategy.type, 'RollingUpdate');
    assert.equal(c.body.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(c.body.spec.template.spec.restartPolicy, 'Always');
    // a label change does not bump generation; a spec change does
    const name = c.body.metadata.name;
    const labelled = { ...c.body, metadata: { ...c.body.metadata, labels: { x: 'y' } } };
    const u1 = await request(env.url, 'PUT', `/apis/apps/v1/namespaces/default/deployments/${name}`, labelled);
    assert.equal(u1.status, 200, u1.text);
    assert.equal(u1.body.metadata.generation, 1);
    const scaled = { ...u1.body, spec: { ...u1.body.spec, replicas: 3 } };
    const u2 = await request(env.url, 'PUT', `/apis/apps/v1/namespaces/default/deployments/${name}`, scaled);
    assert.equal(u2.body.metadata.generation, 2);
    // status written through the main resource is ignored
    const withStatus = { ...u2.body, status: { replicas: 99 } };
    const u3 = await request(env.url, 'PUT', `/apis/apps/v1/namespaces/default/deployments/${name}`, withStatus);
    assert.equal(u3.body.status.replicas, undefined);
    // and the status subresource ignores spec
    const st = await request(env.url, 'PUT', `/apis/apps/v1/namespaces/default/deployments/${name}/status`, {
      ...u3.body,
      spec: { ...u3.body.spec, replicas: 7 },
      status: { replicas: 3, observedGeneration: 2 },
    });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.body.status.replicas, 3);
    assert.equal(st.body.spec.replicas, 3);
  });
});

describe('optimistic concurrency', () => {
  test('a stale resourceVersion is 409 Conflict', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('stale'));
    const first = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/stale', { ...c.body, data: { a: 'x' } });
    assert.equal(first.status, 200);
    const second = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/stale', { ...c.body, data: { a: 'y' } });
    assert.equal(second.status, 409);
    assert.equal(second.body.reason, 'Conflict');
    assert.equal(
      second.body.message,
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  test('two concurrent updates from the same version: exactly one wins', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('race'));
    for (let round = 0; round < 5; round++) {
      const cur = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/race');
      const [a, b] = await Promise.all([
        request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/race', { ...cur.body, data: { a: `A${round}` } }),
        request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/race', { ...cur.body, data: { a: `B${round}` } }),
      ]);
      const codes = [a.status, b.status].sort();
      assert.deepEqual(codes, [200, 409]);
      const winner = a.status === 200 ? `A${round}` : `B${round}`;
      const after = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/race');
      assert.equal(after.body.data.a, winner);
    }
    assert.ok(c.body.metadata.uid);
  });
});

describe('deletion', () => {
  test('finalizers hold deletion until removed', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      ...cm('fin'),
      metadata: { name: 'fin', finalizers: ['example.com/hold'] },
    });
    assert.equal(c.status, 201);
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/fin', { propagationPolicy: 'Background' });
    assert.equal(d.status, 200);
    assert.ok(d.body.metadata.deletionTimestamp, 'marked for deletion');
    const still = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/fin');
    assert.equal(still.status, 200);
    assert.deepEqual(still.body.metadata.finalizers, ['example.com/hold']);
    // adding a finalizer to a deleting object is refused
    const add = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/fin', {
      ...still.body,
      metadata: { ...still.body.metadata, finalizers: ['example.com/hold', 'other/x'] },
    });
    assert.equal(add.status, 403);
    const cleared = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/fin', {
      ...still.body,
      metadata: { ...still.body.metadata, finalizers: [] },
    });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/fin')).status, 404);
  });

  test('foreground and orphan policies are recorded as finalizers', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('fg'));
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/fg', { propagationPolicy: 'Foreground' });
    assert.deepEqual(d.body.metadata.finalizers, ['foregroundDeletion']);
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('orph'));
    const o = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/orph?propagationPolicy=Orphan');
    assert.deepEqual(o.body.metadata.finalizers, ['orphan']);
  });

  test('preconditions on delete', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('precond'));
    const bad = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/precond', { preconditions: { uid: 'nope' } });
    assert.equal(bad.status, 409);
    const ok = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/precond', { preconditions: { uid: c.body.metadata.uid } });
    assert.equal(ok.status, 200);
  });

  test('a bound pod is deleted gracefully; grace 0 removes it', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'graceful' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } };
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/graceful', {});
    assert.equal(d.status, 200);
    assert.equal(d.body.metadata.deletionGracePeriodSeconds, 30);
    assert.ok(d.body.metadata.deletionTimestamp);
    const d0 = await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/graceful', { gracePeriodSeconds: 0 });
    assert.equal(d0.status, 200);
    assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/default/pods/graceful')).status, 404);
  });

  test('deletecollection removes what the selector matches', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dc' } });
    for (let i = 0; i < 3; i++) await request(env.url, 'POST', '/api/v1/namespaces/dc/configmaps', cm(`dc-${i}`, {}, { k: i === 2 ? 'keep' : 'drop' }));
    const res = await request(env.url, 'DELETE', '/api/v1/namespaces/dc/configmaps?labelSelector=k%3Ddrop');
    assert.equal(res.status, 200);
    const left = await request(env.url, 'GET', '/api/v1/namespaces/dc/configmaps');
    assert.deepEqual(
      left.body.items.map((i: any) => i.metadata.name),
      ['dc-2'],
    );
  });
});

describe('bad input is a 4xx Status and writes nothing', () => {
  const cases: [string, string, string, unknown, number, string, string?][] = [
    ['malformed JSON', 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata": {', 400, 'BadRequest'],
    ['invalid name', 'POST', '/api/v1/namespaces/default/configmaps', cm('Bad_Name'), 422, 'Invalid'],
    ['bad label value', 'POST', '/api/v1/namespaces/default/configmaps', cm('ok-name', {}, { 'a/b/c': 'x' }), 422, 'Invalid'],
    ['missing name', 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, 422, 'Invalid'],
    [
      'wrong type',
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'three' } },
      400,
      'BadRequest',
    ],
    ['unknown field (Strict)', 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { ...cm('strict'), dta: {} }, 400, 'BadRequest'],
    [
      'namespace mismatch',
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { ...cm('mism'), metadata: { name: 'mism', namespace: 'other' } },
      400,
      'BadRequest',
    ],
    ['missing namespace', 'POST', '/api/v1/namespaces/nope/configmaps', cm('lost'), 404, 'NotFound'],
    [
      'apiVersion mismatch',
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v2', kind: 'Deployment', metadata: { name: 'v2' } },
      400,
      'BadRequest',
    ],
    [
      'negative replicas',
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'neg' },
        spec: {
          replicas: -1,
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      },
      422,
      'Invalid',
    ],
    [
      'selector does not match template',
      'POST',
      '/apis/apps/v1/namespaces/default/deployments',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'nomatch' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
      },
      422,
      'Invalid',
    ],
    [
      'pod without containers',
      'POST',
      '/api/v1/namespaces/default/pods',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty' }, spec: { containers: [] } },
      422,
      'Invalid',
    ],
    ['unknown resource', 'GET', '/api/v1/namespaces/default/widgets', undefined, 404, 'NotFound'],
    ['unsupported media type', 'POST', '/api/v1/namespaces/default/configmaps', 'data', 415, 'UnsupportedMediaType', 'text/plain'],
    ['bad patch type', 'PATCH', '/api/v1/namespaces/default/configmaps/x', '{}', 415, 'UnsupportedMediaType', 'application/json'],
  ];
  for (const [title, method, path, body, code, reason, ct] of cases) {
    test(title, async () => {
      const before = await etcdRevision();
      const res = await request(env.url, method, path, body, ct ? { contentType: ct } : {});
      assert.equal(res.status, code, res.text);
      assert.equal(res.body.kind, 'Status', res.text);
      assert.equal(res.body.reason, reason, res.text);
      assert.equal(res.body.code, code);
      assert.equal(await etcdRevision(), before, 'etcd unchanged');
    });
  }

  test('Invalid carries causes in upstream format', async () => {
    const res = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'neg' },
      spec: {
        replicas: -1,
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    assert.equal(res.body.message, 'Deployment.apps "neg" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    assert.deepEqual(res.body.details.causes, [
      { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' },
    ]);
    assert.equal(res.body.details.kind, 'Deployment');
    assert.equal(res.body.details.group, 'apps');
  });

  test('a body over 3 MiB is 413', async () => {
    const big = cm('big', { a: 'x'.repeat(3 * 1024 * 1024 + 10) });
    const before = await etcdRevision();
    const res = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', big);
    assert.equal(res.status, 413);
    assert.equal(res.body.reason, 'RequestEntityTooLarge');
    assert.equal(await etcdRevision(), before);
  });

  test('unknown fields are accepted with a warning under Warn', async () => {
    const res = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Warn', { ...cm('warned'), dta: {} });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('warning'), '299 - "unknown field \\"dta\\""');
  });

  test('writes into a terminating namespace are refused', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    const del = await request(env.url, 'DELETE', '/api/v1/namespaces/doomed');
    assert.equal(del.status, 200);
    assert.equal(del.body.status.phase, 'Terminating');
    const before = await etcdRevision();
    const res = await request(env.url, 'POST', '/api/v1/namespaces/doomed/configmaps', cm('late'));
    assert.equal(res.status, 403);
    assert.equal(res.body.reason, 'Forbidden');
    assert.match(res.body.message, /unable to create new content in namespace doomed because it is being terminated/);
    assert.equal(await etcdRevision(), before);
  });
});
