/**
 * pods/ephemeralcontainers on a secure apiserver over a real etcd: the
 * strategic merge patch `kubectl debug` computes adds a defaulted ephemeral
 * container and nothing else; JSON patches and PUTs of the subresource work
 * too; changing or removing one, or giving it ports or probes, is refused in
 * upstream's words; the main resource refuses any change to them; a kubelet
 * may not use the subresource (RBAC, then NodeRestriction), and neither may
 * the default `edit` role (upstream keeps it out of the aggregated roles).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientFor, startTestEnv, waitFor, type Reply, type TestEnv } from '@kubeling/testenv';

type Obj = Record<string, any>;
type Call = ReturnType<typeof clientFor>;

let env: TestEnv;
let admin: Call;
let node: Call;
let editor: Call;

const NS = 'eph';
const path = (name: string, sub = '') => `/api/v1/namespaces/${NS}/pods/${name}${sub}`;
const smp = { contentType: 'application/strategic-merge-patch+json' };
const invalidWith = (r: Reply, message: string | RegExp) => {
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.reason, 'Invalid');
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else assert.match(r.body.message, message);
};

async function createPod(name: string, extra: Obj = {}): Promise<Obj> {
  const r = await admin('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name } },
    spec: { nodeName: 'node-e', containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }], ...extra },
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  node = clientFor(env, await env.pki!.client('system:node:node-e', ['system:nodes']));
  editor = clientFor(env, await env.pki!.client('jane'));
  assert.equal((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  assert.equal(
    (await admin('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })).status,
    201,
  );
  const rb = await admin('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'jane-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }],
  });
  assert.equal(rb.status, 201, rb.text);
});
after(async () => {
  await env?.stop();
});

test('discovery lists pods/ephemeralcontainers (get, patch, update; kind Pod); GET answers the pod', async () => {
  const list = (await admin('GET', '/api/v1')).body.resources as Obj[];
  assert.deepEqual(
    list.find((r) => r.name === 'pods/ephemeralcontainers'),
    { name: 'pods/ephemeralcontainers', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  );
  await createPod('plain');
  const r = await admin('GET', path('plain', '/ephemeralcontainers'));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual([r.body.kind, r.body.metadata.name, r.body.spec.containers[0].name], ['Pod', 'plain', 'app']);
  const missing = await admin('GET', path('nope', '/ephemeralcontainers'));
  assert.deepEqual([missing.status, missing.body.message, missing.body.details.name], [404, 'pods "nope" not found', 'nope']);
});

test("kubectl debug's strategic merge patches add defaulted ephemeral containers and change nothing else", async () => {
  const created = await createPod('target');
  // What kubectl debug computes when the pod has no ephemeral container yet (a new list, no $setElementOrder).
  const first = await admin(
    'PATCH',
    path('target', '/ephemeralcontainers'),
    {
      metadata: { labels: { sneaky: 'yes' } },
      spec: {
        activeDeadlineSeconds: 5,
        ephemeralContainers: [
          { name: 'debugger-abcde', image: 'busybox', resources: {}, stdin: true, terminationMessagePolicy: 'File', tty: true, targetContainerName: 'app' },
        ],
      },
    },
    smp,
  );
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.body.spec.ephemeralContainers, [
    {
      name: 'debugger-abcde',
      image: 'busybox',
      resources: {},
      stdin: true,
      terminationMessagePolicy: 'File',
      tty: true,
      targetContainerName: 'app',
      terminationMessagePath: '/dev/termination-log',
      imagePullPolicy: 'Always',
    },
  ]);
  // Only the ephemeral containers are taken from the body.
  assert.deepEqual(first.body.metadata.labels, { app: 'target' });
  assert.equal(first.body.spec.activeDeadlineSeconds, undefined);
  assert.deepEqual(first.body.spec.containers, created.spec.containers);
  const mf = (first.body.metadata.managedFields as Obj[]).find((m) => m.subresource === 'ephemeralcontainers');
  assert.ok(mf, JSON.stringify(first.body.metadata.managedFields));
  assert.equal(mf.operation, 'Update');
  // The second one, as kubectl sends it once the list exists.
  const second = await admin(
    'PATCH',
    path('target', '/ephemeralcontainers'),
    {
      spec: {
        '$setElementOrder/ephemeralContainers': [{ name: 'debugger-abcde' }, { name: 'debugger-fghij' }],
        ephemeralContainers: [{ name: 'debugger-fghij', image: 'busybox:1.36', env: [{ name: 'A', value: 'b' }], terminationMessagePolicy: 'File' }],
      },
    },
    smp,
  );
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(
    (second.body.spec.ephemeralContainers as Obj[]).map((c) => [c.name, c.imagePullPolicy]),
    [
      ['debugger-abcde', 'Always'],
      ['debugger-fghij', 'IfNotPresent'],
    ],
  );
  // A JSON patch appends as well.
  const third = await admin(
    'PATCH',
    path('target', '/ephemeralcontainers'),
    [{ op: 'add', path: '/spec/ephemeralContainers/-', value: { name: 'json', image: 'busybox', command: ['sh'] } }],
    { contentType: 'application/json-patch+json' },
  );
  assert.equal(third.status, 200, third.text);
  assert.equal(third.body.spec.ephemeralContainers.length, 3);
  // PUT of the subresource keeps what it is given (here: the same list plus one).
  const cur = third.body;
  cur.spec.ephemeralContainers.push({ name: 'put', image: 'busybox' });
  const put = await admin('PUT', path('target', '/ephemeralcontainers'), cur);
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(
    (put.body.spec.ephemeralContainers as Obj[]).map((c) => c.name),
    ['debugger-abcde', 'debugger-fghij', 'json', 'put'],
  );
  // A stale resourceVersion conflicts, as any update does.
  const stale = await admin('PUT', path('target', '/ephemeralcontainers'), cur);
  assert.equal(stale.status, 409, stale.text);
});

test('changing or removing an ephemeral container, ports, probes, a bad target or a taken name: 422 in upstream words', async () => {
  await createPod('strict');
  // Without $setElementOrder a strategic merge patch puts new list items first, as upstream's does.
  const add = (c: Obj) => admin('PATCH', path('strict', '/ephemeralcontainers'), { spec: { ephemeralContainers: [c] } }, smp);
  assert.equal((await add({ name: 'dbg', image: 'busybox', stdin: true })).status, 200);
  invalidWith(
    await add({ name: 'dbg', image: 'busybox:1.36', stdin: true }),
    /^Pod "strict" is invalid: spec\.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed\n/,
  );
  const cur = (await admin('GET', path('strict'))).body;
  cur.spec.ephemeralContainers = [];
  invalidWith(
    await admin('PUT', path('strict', '/ephemeralcontainers'), cur),
    'Pod "strict" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n',
  );
  const bad = await add({
    name: 'ports',
    image: 'busybox',
    ports: [{ containerPort: 8080 }],
    readinessProbe: { exec: { command: ['true'] } },
    lifecycle: { preStop: { exec: { command: ['true'] } } },
  });
  invalidWith(
    bad,
    'Pod "strict" is invalid: [spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container]',
  );
  assert.deepEqual(
    (bad.body.details.causes as Obj[]).map((c) => [c.reason, c.field]),
    [
      ['FieldValueForbidden', 'spec.ephemeralContainers[0].ports'],
      ['FieldValueForbidden', 'spec.ephemeralContainers[0].readinessProbe'],
      ['FieldValueForbidden', 'spec.ephemeralContainers[0].lifecycle'],
    ],
  );
  invalidWith(
    await add({ name: 'tgt', image: 'busybox', targetContainerName: 'nope' }),
    'Pod "strict" is invalid: spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
  );
  invalidWith(await add({ name: 'app', image: 'busybox' }), 'Pod "strict" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "app"');
  invalidWith(await add({ name: 'noimage' }), 'Pod "strict" is invalid: spec.ephemeralContainers[0].image: Required value');
  // Nothing of that was stored.
  assert.deepEqual(
    ((await admin('GET', path('strict'))).body.spec.ephemeralContainers as Obj[]).map((c) => c.name),
    ['dbg'],
  );
});

test('the main resource refuses any change to ephemeral containers', async () => {
  const pod = await createPod('main');
  const added = structuredClone(pod);
  added.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' }];
  invalidWith(
    await admin('PUT', path('main'), added),
    /^Pod "main" is invalid: spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`,`spec\.initContainers\[\*\]\.image`,`spec\.activeDeadlineSeconds`,`spec\.tolerations` \(only additions to existing tolerations\),`spec\.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n\+ ephemeralContainers: /,
  );
  invalidWith(
    await admin('PATCH', path('main'), { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } }, smp),
    /^Pod "main" is invalid: spec: Forbidden: pod updates may not change fields other than /,
  );
  // Once added through the subresource, a PUT of the pod that keeps them is fine; one that drops them is not.
  const via = await admin('PATCH', path('main', '/ephemeralcontainers'), { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } }, smp);
  assert.equal(via.status, 200, via.text);
  const keep = structuredClone(via.body);
  keep.metadata.labels = { app: 'main', more: 'x' };
  assert.equal((await admin('PUT', path('main'), keep)).status, 200);
  const dropped = (await admin('GET', path('main'))).body;
  delete dropped.spec.ephemeralContainers;
  invalidWith(
    await admin('PUT', path('main'), dropped),
    /^Pod "main" is invalid: spec: Forbidden: pod updates may not change fields other than .*\n- ephemeralContainers: /s,
  );
});

test('a kubelet may not touch ephemeral containers, even of its own pods; the edit role may not either', async () => {
  await createPod('own');
  const body = { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } };
  const byNode = await node('PATCH', path('own', '/ephemeralcontainers'), body, smp);
  assert.equal(byNode.status, 403, byNode.text);
  assert.equal(
    byNode.body.message,
    `pods "own" is forbidden: User "system:node:node-e" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "${NS}"`,
  );
  // Granted the subresource by RBAC, a kubelet still meets NodeRestriction, in upstream's words.
  assert.equal(
    (
      await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'nodes-debug' },
        rules: [{ apiGroups: [''], resources: ['pods/ephemeralcontainers'], verbs: ['patch'] }],
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'nodes-debug' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'nodes-debug' },
        subjects: [{ kind: 'Group', name: 'system:nodes', apiGroup: 'rbac.authorization.k8s.io' }],
      })
    ).status,
    201,
  );
  let admitted: Reply | undefined;
  await waitFor(
    async () => (admitted = await node('PATCH', path('own', '/ephemeralcontainers'), body, smp)).body.message !== byNode.body.message,
    10_000,
    'the binding',
  );
  assert.equal(admitted!.status, 403, admitted!.text);
  assert.equal(admitted!.body.message, `pods "own" is forbidden: unexpected pod subresource "ephemeralcontainers", only 'status' and 'eviction' are allowed`);
  // The edit role may patch the pod itself, but not this subresource, as upstream.
  assert.equal((await editor('PATCH', path('own'), { metadata: { labels: { edited: 'yes' } } }, smp)).status, 200);
  const byEditor = await editor('PATCH', path('own', '/ephemeralcontainers'), body, smp);
  assert.equal(byEditor.status, 403, byEditor.text);
  assert.equal(
    byEditor.body.message,
    `pods "own" is forbidden: User "jane" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "${NS}"`,
  );
  assert.equal((await admin('GET', path('own'))).body.spec.ephemeralContainers, undefined);
});
