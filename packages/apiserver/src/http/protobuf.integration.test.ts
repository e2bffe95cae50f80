/**
 * Protobuf in both directions against a real apiserver and etcd, as client-go
 * configured with `application/vnd.kubernetes.protobuf` speaks it: create, get,
 * list, delete (with protobuf DeleteOptions) and watch for several kinds,
 * Statuses in protobuf with the HTTP code unchanged, Tables still JSON; and JSON
 * written as Go writes it (a DaemonSet's zero status counts present), read by
 * @kubernetes/client-node and by the real kubectl (which sends protobuf).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { wire } from '@kubeling/api';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const PB = 'application/vnd.kubernetes.protobuf';
const CLIENT_GO_ACCEPT = `${PB}, application/json`;
const NS = 'pb';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
});
after(async () => {
  await env?.stop();
});

type Obj = Record<string, any>;

/** A request with a protobuf body (when `body` is given) and client-go's Accept; the answer decoded. */
async function pb(method: string, path: string, body?: Obj, accept = CLIENT_GO_ACCEPT): Promise<{ status: number; type: string; obj: Obj }> {
  const res = await fetch(env.url + path, {
    method,
    headers: { accept, ...(body ? { 'content-type': PB } : {}) },
    ...(body ? { body: wire.encodeObject(body)! } : {}),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, obj: type.startsWith(PB) ? wire.decodeObject(bytes) : (JSON.parse(bytes.toString()) as Obj) };
}

test('create, get, list and delete in protobuf: Deployment, ConfigMap, Service, Secret, Role', async () => {
  const cases: [string, Obj, (o: Obj) => void][] = [
    [
      `/apis/apps/v1/namespaces/${NS}/deployments`,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', labels: { app: 'd' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'd' } },
          template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
      (o) => {
        assert.equal(o.spec.replicas, 0, 'a pointer field at zero stays zero');
        assert.equal(o.spec.revisionHistoryLimit, 10, 'defaulting saw the unset fields');
        assert.equal(o.spec.template.spec.containers[0].terminationMessagePolicy, 'File');
      },
    ],
    [
      `/api/v1/namespaces/${NS}/configmaps`,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm' },
        data: { a: '1', empty: '' },
        binaryData: { b: Buffer.from([0, 1, 2]).toString('base64') },
      },
      (o) => {
        assert.deepEqual(o.data, { a: '1', empty: '' });
        assert.equal(o.binaryData.b, 'AAEC');
      },
    ],
    [
      `/api/v1/namespaces/${NS}/services`,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { selector: { app: 'd' }, ports: [{ port: 80, targetPort: 'http' }] } },
      (o) => {
        assert.equal(o.spec.ports[0].targetPort, 'http');
        assert.equal(o.spec.ports[0].protocol, 'TCP');
        assert.equal(o.spec.type, 'ClusterIP');
      },
    ],
    [
      `/api/v1/namespaces/${NS}/secrets`,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: Buffer.from('v').toString('base64') }, immutable: false },
      (o) => {
        assert.equal(o.data.k, Buffer.from('v').toString('base64'));
        assert.equal(o.immutable, false);
        assert.equal(o.type, 'Opaque');
      },
    ],
    [
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
      (o) => assert.deepEqual(o.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
    ],
  ];
  for (const [path, body, check] of cases) {
    const created = await pb('POST', path, body);
    assert.equal(created.status, 201, JSON.stringify(created.obj));
    assert.equal(created.type, PB);
    assert.equal(created.obj.kind, body.kind);
    check(created.obj);
    const name = body.metadata.name;
    const got = await pb('GET', `${path}/${name}`);
    assert.equal(got.status, 200);
    assert.equal(got.type, PB);
    assert.equal(got.obj.metadata.uid, created.obj.metadata.uid);
    check(got.obj);
    const list = await pb('GET', path);
    assert.equal(list.obj.kind, `${body.kind}List`);
    assert.ok(list.obj.metadata.resourceVersion);
    assert.deepEqual(
      list.obj.items.map((i: Obj) => i.metadata.name),
      [name],
    );
    // client-go sends DeleteOptions in protobuf with the group-version of the resource.
    const apiVersion = body.apiVersion;
    const stale = await pb('DELETE', `${path}/${name}`, { apiVersion, kind: 'DeleteOptions', preconditions: { uid: 'nope' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.type, PB);
    assert.equal(stale.obj.kind, 'Status');
    assert.equal(stale.obj.code, 409);
    assert.equal(stale.obj.reason, 'Conflict');
    const del = await pb('DELETE', `${path}/${name}`, {
      apiVersion,
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      propagationPolicy: 'Background',
      preconditions: { uid: created.obj.metadata.uid },
    });
    assert.equal(del.status, 200, JSON.stringify(del.obj));
    assert.equal(del.type, PB);
    const gone = await pb('GET', `${path}/${name}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.type, PB);
    assert.deepEqual([gone.obj.kind, gone.obj.apiVersion, gone.obj.status, gone.obj.reason, gone.obj.code], ['Status', 'v1', 'Failure', 'NotFound', 404]);
  }
});

test('a malformed or mistyped protobuf body is 400, and deletecollection takes protobuf DeleteOptions', async () => {
  const CMS = `/api/v1/namespaces/${NS}/configmaps`;
  const good = wire.encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })!;
  for (const body of [good.subarray(0, good.length - 3), Buffer.concat([good.subarray(0, 6), Buffer.from('ffffffff0f', 'hex')])]) {
    const r = await fetch(env.url + CMS, { method: 'POST', headers: { 'content-type': PB, accept: 'application/json' }, body });
    assert.equal(r.status, 400, await r.text());
  }
  for (const name of ['c1', 'c2'])
    assert.equal((await pb('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { dc: 'y' } } })).status, 201);
  const r = await pb('DELETE', `${CMS}?labelSelector=dc%3Dy`, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
  assert.equal(r.status, 200);
  assert.equal(r.obj.kind, 'ConfigMapList');
  assert.equal((await pb('GET', `${CMS}?labelSelector=dc%3Dy`)).obj.items, undefined);
});

test('subresources and reviews in protobuf: Scale (replicas 0), Binding, Eviction, SelfSubjectAccessReview', async () => {
  const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'scaled' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 's' } },
      template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };
  assert.equal((await pb('POST', DEPLOYS, deploy)).status, 201);
  const scale = await pb('PUT', `${DEPLOYS}/scaled/scale`, {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name: 'scaled', namespace: NS },
    spec: { replicas: 0 },
  });
  assert.equal(scale.status, 200, JSON.stringify(scale.obj));
  assert.equal(scale.type, PB);
  // ScaleSpec.replicas is no pointer: Go writes 0 and reads it back as unset, which is 0.
  assert.deepEqual([scale.obj.apiVersion, scale.obj.kind, scale.obj.spec?.replicas ?? 0], ['autoscaling/v1', 'Scale', 0]);
  assert.equal((await pb('GET', `${DEPLOYS}/scaled`)).obj.spec.replicas, 0);

  const PODS = `/api/v1/namespaces/${NS}/pods`;
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  assert.equal((await pb('POST', PODS, pod)).status, 201);
  const bound = await pb('POST', `${PODS}/bound/binding`, {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'bound' },
    target: { apiVersion: 'v1', kind: 'Node', name: 'n1' },
  });
  assert.equal(bound.status, 201, JSON.stringify(bound.obj));
  assert.equal((await pb('GET', `${PODS}/bound`)).obj.spec.nodeName, 'n1');
  const evicted = await pb('POST', `${PODS}/bound/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: 'bound', namespace: NS },
    deleteOptions: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
  });
  assert.equal(evicted.status, 201, JSON.stringify(evicted.obj));
  assert.equal(evicted.obj.kind, 'Status');

  const review = await pb('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace: NS, verb: 'get', resource: 'pods' } },
  });
  assert.equal(review.status, 201, JSON.stringify(review.obj));
  assert.equal(review.obj.kind, 'SelfSubjectAccessReview');
  assert.equal(review.obj.status.allowed, true);
});

/** Reads protobuf watch frames until `until` says stop (or 10 s pass). */
async function watchFrames(path: string, until: (events: Obj[]) => boolean, onOpen: () => Promise<void>): Promise<{ type: string; events: Obj[] }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 10_000);
  const events: Obj[] = [];
  const res = await fetch(env.url + path, { headers: { accept: CLIENT_GO_ACCEPT }, signal: ctrl.signal });
  const type = res.headers.get('content-type') ?? '';
  let buf = Buffer.alloc(0);
  const opened = onOpen();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        const frame = buf.subarray(4, 4 + buf.readUInt32BE(0));
        buf = buf.subarray(4 + frame.length);
        // The event is raw (the stream serializer writes no envelope); its object is enveloped.
        events.push(wire.decodeMessage(frame, wire.wireStruct('meta/v1.WatchEvent')!));
      }
      if (until(events)) break;
    }
  } catch (e) {
    if ((e as Error).name !== 'AbortError') throw e;
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
  await opened;
  return { type, events };
}

test('watch in protobuf: length-prefixed WatchEvents carrying enveloped objects, and the initial-events bookmark', async () => {
  const CMS = `/api/v1/namespaces/${NS}/configmaps`;
  const { type, events } = await watchFrames(
    `${CMS}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=w%3D1`,
    (evs) => evs.some((e) => e.type === 'DELETED'),
    async () => {
      await new Promise((r) => setTimeout(r, 200));
      assert.equal((await pb('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', labels: { w: '1' } }, data: { a: 'b' } })).status, 201);
      assert.equal((await pb('DELETE', `${CMS}/w`, { apiVersion: 'v1', kind: 'DeleteOptions' })).status, 200);
    },
  );
  assert.equal(type, `${PB};stream=watch`);
  const seen = events.filter((e) => e.type !== 'BOOKMARK');
  assert.deepEqual(
    seen.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name]),
    [
      ['ADDED', 'ConfigMap', 'v1', 'w'],
      ['DELETED', 'ConfigMap', 'v1', 'w'],
    ],
  );
  assert.deepEqual(seen[0]!.object.data, { a: 'b' });
  // The end of the initial events is a BOOKMARK of the watched kind, in protobuf too.
  const bookmark = events.find((e) => e.type === 'BOOKMARK')!;
  assert.equal(bookmark.object.kind, 'ConfigMap');
  assert.equal(bookmark.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  assert.ok(Number(bookmark.object.metadata.resourceVersion) > 0);
});

test('Tables stay JSON for a client that takes protobuf first; JSON is written as Go writes it', async () => {
  const table = await pb(
    'GET',
    `/api/v1/namespaces/${NS}/configmaps`,
    undefined,
    `${PB};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io, application/json`,
  );
  assert.match(table.type, /^application\/json/);
  assert.equal(table.obj.kind, 'Table');
  // A DaemonSet's status counts are written at zero, and keys in Go order.
  const DS = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
  const ds = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'ds' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  };
  assert.equal((await pb('POST', DS, ds)).status, 201);
  const r = await request(env.url, 'GET', `${DS}/ds`);
  assert.deepEqual(r.body.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  assert.ok(r.text.startsWith('{"kind":"DaemonSet","apiVersion":"apps/v1","metadata":'), r.text.slice(0, 80));
  const missing = await request(env.url, 'GET', `${DS}/nope`);
  assert.match(missing.text, /"details":\{[^}]*\},"code":404\}$/);
  // @kubernetes/client-node reads it typed.
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: env.url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const typed = await apps.readNamespacedDaemonSet({ name: 'ds', namespace: NS });
  assert.equal(typed.status?.numberReady, 0);
  assert.equal(typed.status?.desiredNumberScheduled, 0);
  const listed = await apps.listNamespacedDaemonSet({ namespace: NS });
  assert.deepEqual(
    listed.items.map((i) => i.metadata?.name),
    ['ds'],
  );
});

const bins = kubectlBinaries();
test('kubectl (protobuf bodies since 1.32) creates with server dry-run and for real', { skip: bins.default ? false : 'kubectl is not installed' }, async () => {
  const k = new Kubectl(env.url, bins.default!, { namespace: NS });
  try {
    const dry = await k.run(['create', 'deployment', 'kd', '--image=nginx', '--replicas=0', '--dry-run=server', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const obj = JSON.parse(dry.stdout) as Obj;
    assert.equal(obj.spec.replicas, 0);
    assert.equal(obj.spec.template.spec.containers[0].image, 'nginx');
    const cm = await k.run(['create', 'configmap', 'kcm', '--from-literal=a=b']);
    assert.equal(cm.code, 0, cm.stderr);
    const get = await k.run(['get', 'configmap', 'kcm', '-o', 'jsonpath={.data.a}']);
    assert.equal(get.stdout, 'b');
    const del = await k.run(['delete', 'configmap', 'kcm']);
    assert.equal(del.code, 0, del.stderr);
  } finally {
    k.cleanup();
  }
});
