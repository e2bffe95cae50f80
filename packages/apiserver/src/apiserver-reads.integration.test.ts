/**
 * The apiserver's reads against a real etcd: watch resume, selectors and
 * bookmarks, compaction, list selectors and pagination, health and discovery,
 * and the views (watch-list, events.k8s.io, Tables, YAML, scale). Writes are in
 * apiserver.integration.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readWatch, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { cm } from './apiserver.fixtures.js';

let env: TestEnv;

before(async () => {
  env = await startTestEnv({ server: { compactionIntervalMs: 0, bookmarkIntervalMs: 200 } });
});
after(async () => {
  await env?.stop();
});

describe('watch', () => {
  test('resume from an old resourceVersion delivers exactly the missed events, in order', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-resume', { v: '0' }));
    const from = c.body.metadata.resourceVersion;
    const expected: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const cur = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/w-resume');
      const u = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/w-resume', { ...cur.body, data: { v: String(i) } });
      expected.push(`MODIFIED:${i}:${u.body.metadata.resourceVersion}`);
    }
    const d = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/w-resume');
    assert.equal(d.status, 200);
    const events = await readWatch(
      `${env.url}/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dw-resume&resourceVersion=${from}`,
      (_ev, all) => all.length >= 6,
    );
    const got = events.slice(0, 5).map((e) => `${e.type}:${e.object.data.v}:${e.object.metadata.resourceVersion}`);
    assert.deepEqual(got, expected);
    assert.equal(events[5]!.type, 'DELETED');
    assert.equal(events.length, 6);
  });

  test('watch with python-style watch=True and initial ADDED events', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-initial', { v: 'i' }, { watchtest: 'initial' }));
    const events = await readWatch(
      `${env.url}/api/v1/namespaces/default/configmaps?watch=True&labelSelector=watchtest%3Dinitial`,
      (_e, all) => all.length >= 1,
    );
    assert.equal(events[0]!.type, 'ADDED');
    assert.equal(events[0]!.object.metadata.name, 'w-initial');
    assert.equal(events[0]!.object.kind, 'ConfigMap');
  });

  test('label-selected watch: leaving the selector is DELETED, entering is ADDED', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-sel', { v: '1' }, { tier: 'front' }));
    const rv = c.body.metadata.resourceVersion;
    const pending = readWatch(
      `${env.url}/api/v1/namespaces/default/configmaps?watch=1&labelSelector=tier%3Dfront&resourceVersion=${rv}`,
      (_e, all) => all.length >= 3,
      10_000,
    );
    await new Promise((r) => setTimeout(r, 200));
    let cur = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/w-sel');
    cur = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/w-sel', { ...cur.body, data: { v: '2' } });
    cur = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/w-sel', {
      ...cur.body,
      metadata: { ...cur.body.metadata, labels: { tier: 'back' } },
    });
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-sel-other', {}, { tier: 'back' }));
    cur = await request(env.url, 'PUT', '/api/v1/namespaces/default/configmaps/w-sel', {
      ...cur.body,
      metadata: { ...cur.body.metadata, labels: { tier: 'front' } },
    });
    const events = await pending;
    assert.deepEqual(
      events.map((e) => `${e.type}:${e.object.metadata.name}`),
      ['MODIFIED:w-sel', 'DELETED:w-sel', 'ADDED:w-sel'],
    );
  });

  test('field-selected watch on spec.nodeName sees only its pods', async () => {
    const pod = (name: string, node?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'busybox' }] },
    });
    const list = await request(env.url, 'GET', '/api/v1/pods');
    const rv = list.body.metadata.resourceVersion;
    const pending = readWatch(`${env.url}/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=${rv}`, (_e, all) => all.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('on-b', 'node-b'))).status, 201);
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('on-a', 'node-a'))).status, 201);
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('unbound'))).status, 201);
    const bind = await request(env.url, 'POST', '/api/v1/namespaces/default/pods/unbound/binding', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'unbound' },
      target: { kind: 'Node', name: 'node-a' },
    });
    assert.equal(bind.status, 201, bind.text);
    const events = await pending;
    assert.deepEqual(
      events.map((e) => `${e.type}:${e.object.metadata.name}`),
      ['ADDED:on-a', 'ADDED:unbound'],
    );
    const again = await request(env.url, 'POST', '/api/v1/namespaces/default/pods/unbound/binding', { target: { name: 'node-b' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'Conflict');
  });

  test('bookmarks arrive when allowed', async () => {
    const list = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps');
    const events = await readWatch(
      `${env.url}/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=${list.body.metadata.resourceVersion}`,
      (e) => e.type === 'BOOKMARK',
      5000,
    );
    const bm = events.find((e) => e.type === 'BOOKMARK');
    assert.ok(bm, 'a bookmark');
    assert.equal(bm.object.kind, 'ConfigMap');
    assert.match(bm.object.metadata.resourceVersion, /^\d+$/);
  });

  test('timeoutSeconds ends the stream', async () => {
    const start = Date.now();
    const events = await readWatch(`${env.url}/api/v1/namespaces/kube-public/configmaps?watch=true&timeoutSeconds=1&resourceVersion=1`, () => false, 10_000);
    assert.ok(Date.now() - start < 5000);
    assert.ok(Array.isArray(events));
  });

  test('after compaction, an old resourceVersion gets a 410 Expired ERROR event', async () => {
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-compact'));
    const old = Number(c.body.metadata.resourceVersion);
    for (let i = 0; i < 3; i++) await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm(`w-compact-${i}`));
    await env.server!.compactOnce(); // remembers the current revision
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('w-compact-late'));
    await env.server!.compactOnce(); // compacts up to it
    const events = await readWatch(`${env.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${old}`, (e) => e.type === 'ERROR');
    const err = events.find((e) => e.type === 'ERROR');
    assert.ok(err, JSON.stringify(events));
    assert.equal(err.object.code, 410);
    assert.equal(err.object.reason, 'Expired');
    assert.match(err.object.message, /^too old resource version: \d+ \(\d+\)$/);
    // a list at that exact revision is gone too
    const exact = await request(env.url, 'GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${old}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 410);
  });
});

describe('lists', () => {
  test('label and field selectors filter lists; a bad selector is 400', async () => {
    for (const [n, env_] of [
      ['sel-1', 'prod'],
      ['sel-2', 'dev'],
      ['sel-3', 'prod'],
    ] as const) {
      await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm(n, {}, { env: env_, group: 'sel' }));
    }
    const names = async (q: string) =>
      (await request(env.url, 'GET', `/api/v1/namespaces/default/configmaps?${q}`)).body.items.map((i: any) => i.metadata.name).sort();
    assert.deepEqual(await names('labelSelector=env%3Dprod'), ['sel-1', 'sel-3']);
    assert.deepEqual(await names('labelSelector=group%3Dsel,env!%3Dprod'), ['sel-2']);
    assert.deepEqual(await names('labelSelector=env%20in%20(dev,prod),group'), ['sel-1', 'sel-2', 'sel-3']);
    assert.deepEqual(await names('labelSelector=group%3Dsel,env%20notin%20(prod)'), ['sel-2']);
    assert.deepEqual(await names('fieldSelector=metadata.name%3Dsel-2'), ['sel-2']);
    assert.deepEqual(await names('labelSelector=group%3Dsel&fieldSelector=metadata.name!%3Dsel-2'), ['sel-1', 'sel-3']);
    const bad = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20(');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.kind, 'Status');
    const badField = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps?fieldSelector=spec.nodeName%3Dx');
    assert.equal(badField.status, 400);
    assert.equal(badField.body.message, 'field label not supported: spec.nodeName');
  });

  test('pagination stays consistent across a write between pages', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'paging' } });
    for (let i = 0; i < 7; i++) await request(env.url, 'POST', '/api/v1/namespaces/paging/configmaps', cm(`p-${i}`));
    const first = await request(env.url, 'GET', '/api/v1/namespaces/paging/configmaps?limit=3');
    assert.equal(first.body.items.length, 3);
    assert.ok(first.body.metadata.continue);
    assert.equal(first.body.metadata.remainingItemCount, 4);
    // a write between pages is not seen by the continued list
    await request(env.url, 'POST', '/api/v1/namespaces/paging/configmaps', cm('p-9-late'));
    await request(env.url, 'DELETE', '/api/v1/namespaces/paging/configmaps/p-6');
    const seen = first.body.items.map((i: any) => i.metadata.name);
    let token = first.body.metadata.continue;
    while (token) {
      const page = await request(env.url, 'GET', `/api/v1/namespaces/paging/configmaps?limit=3&continue=${encodeURIComponent(token)}`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
      seen.push(...page.body.items.map((i: any) => i.metadata.name));
      token = page.body.metadata.continue;
    }
    assert.deepEqual(seen, ['p-0', 'p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6']);
    const now = await request(env.url, 'GET', '/api/v1/namespaces/paging/configmaps');
    assert.ok(now.body.items.some((i: any) => i.metadata.name === 'p-9-late'));
  });

  test('resourceVersion=0 lists are served from the watch cache', async () => {
    const l = await request(env.url, 'GET', '/api/v1/namespaces?resourceVersion=0');
    assert.equal(l.status, 200);
    assert.ok(l.body.items.length >= 4);
  });
});

describe('health, version, metrics, discovery', () => {
  test('health endpoints', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await request(env.url, 'GET', p);
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
    }
    const v = await request(env.url, 'GET', '/version');
    assert.equal(v.body.major, '1');
  });

  test('metrics count requests by verb, resource and code', async () => {
    await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps');
    const m = await request(env.url, 'GET', '/metrics');
    assert.match(m.text, /apiserver_request_total\{verb="LIST",resource="configmaps",subresource="",code="200"\} \d+/);
    assert.match(m.text, /etcd_request_duration_seconds_bucket/);
    assert.match(m.text, /apiserver_request_duration_seconds_bucket/);
  });

  test('discovery names the resources', async () => {
    const r = await request(env.url, 'GET', '/apis/apps/v1');
    const deploy = r.body.resources.find((x: any) => x.name === 'deployments');
    assert.deepEqual(deploy.shortNames, ['deploy']);
    const agg = await request(env.url, 'GET', '/apis', undefined, {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    assert.equal(agg.headers.get('content-type'), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  });
});

describe('views', () => {
  test('watch-list: sendInitialEvents ends the initial state with an annotated BOOKMARK', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wl' } });
    await request(env.url, 'POST', '/api/v1/namespaces/wl/configmaps', cm('wl-1'));
    await request(env.url, 'POST', '/api/v1/namespaces/wl/configmaps', cm('wl-2'));
    const events = await readWatch(
      `${env.url}/api/v1/namespaces/wl/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      (e) => e.type === 'BOOKMARK',
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'ADDED', 'BOOKMARK'],
    );
    assert.equal(events[2]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  });

  test('events.k8s.io/v1 is a view of the same stored core events', async () => {
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reason: 'Tested',
      note: 'a note',
      type: 'Normal',
      action: 'Test',
      reportingController: 'kubeling.test/ctl',
      reportingInstance: 'ctl-1',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    };
    const c = await request(env.url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', ev);
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.note, 'a note');
    const core = await request(env.url, 'GET', '/api/v1/namespaces/default/events/e1');
    assert.equal(core.body.message, 'a note');
    assert.equal(core.body.involvedObject.name, 'p');
    assert.equal(core.body.reportingComponent, 'kubeling.test/ctl');
    const sel = await request(env.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp,reason%3DTested');
    assert.deepEqual(
      sel.body.items.map((i: any) => i.metadata.name),
      ['e1'],
    );
  });

  test('Table responses carry rows with PartialObjectMetadata; YAML in and out', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n';
    const c = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', yaml, { contentType: 'application/yaml' });
    assert.equal(c.status, 201, c.text);
    const y = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/from-yaml', undefined, { accept: 'application/yaml' });
    // Keys sorted, as sigs.k8s.io/yaml writes them.
    assert.match(y.text, /^apiVersion: v1\ndata:\n {2}k: v\nkind: ConfigMap\nmetadata:\n {2}creationTimestamp: /);
    const t = await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dfrom-yaml', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    assert.equal(t.body.kind, 'Table');
    assert.deepEqual(
      t.body.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.equal(t.body.rows[0].cells[0], 'from-yaml');
    assert.equal(t.body.rows[0].cells[1], 1);
    assert.equal(t.body.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(t.body.rows[0].object.metadata.name, 'from-yaml');
  });

  test('scale subresource reads and writes spec.replicas', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'scaled' },
      spec: { selector: { matchLabels: { a: 's' } }, template: { metadata: { labels: { a: 's' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    };
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', dep);
    const s = await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/scaled/scale');
    assert.equal(s.body.kind, 'Scale');
    assert.equal(s.body.spec.replicas, 1);
    assert.equal(s.body.status.selector, 'a=s');
    const p = await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/deployments/scaled/scale',
      { spec: { replicas: 4 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.spec.replicas, 4);
    const d = await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/scaled');
    assert.equal(d.body.spec.replicas, 4);
    assert.equal(d.body.metadata.generation, 2);
    const stale = await request(env.url, 'PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', { ...s.body, spec: { replicas: 2 } });
    assert.equal(stale.status, 409);
    const fresh = await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/deployments/scaled/scale');
    const neg = await request(env.url, 'PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', { ...fresh.body, spec: { replicas: -1 } });
    assert.equal(neg.status, 422);
  });
});
