/**
 * Admission webhooks over HTTPS against a real etcd: a mutating webhook's
 * JSONPatch lands in the stored object, a validating webhook's denial blocks
 * the write (nothing reaches etcd), selectors pick what is sent, and an
 * unreachable webhook fails the request unless failurePolicy is Ignore.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { Etcd3 } from 'etcd3';
import { createCA, issue } from '@kubeling/pki';
import { freePort, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let hook: Server;
let hookURL: string;
let caBundle: string;
const seen: any[] = [];

before(async () => {
  env = await startTestEnv();
  const ca = await createCA('webhook-ca');
  const cert = await issue(ca, { commonName: 'webhook', ips: ['127.0.0.1'], dnsNames: ['hook-svc.svc-hooks.svc'], usage: 'server' });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      const review = JSON.parse(b);
      seen.push(review);
      const r = review.request;
      let response: any = { uid: r.uid, allowed: true };
      const url = new URL(req.url ?? '/', 'https://hook');
      review.timeout = url.searchParams.get('timeout');
      const path = url.pathname;
      if (path === '/mutate-cr') {
        const patch = [
          { op: 'remove', path: '/data/defaulted' },
          { op: 'add', path: '/data/stage-1', value: 'yes' },
          { op: 'add', path: '/data/unknown', value: 'yes' },
        ];
        response = { ...response, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
      } else if (path === '/attach') {
        if (r.name === 'to-attach' && r.object.stdin === true)
          response = { uid: r.uid, allowed: false, status: { message: `attaching to ${r.name}/${r.subResource} (${r.object.kind}) is not allowed` } };
      } else if (path === '/mutate') {
        const patch = [{ op: 'add', path: '/metadata/labels', value: { ...(r.object.metadata.labels ?? {}), mutated: 'yes' } }];
        response = { ...response, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
      } else if (path === '/protect') {
        if (r.operation === 'DELETE' && r.object === null && r.oldObject?.metadata?.labels?.protected === 'true')
          response = { uid: r.uid, allowed: false, status: { code: 403, message: `${r.oldObject.metadata.name} is protected` } };
      } else if (path === '/validate' && r.object.metadata.name.startsWith('deny-')) {
        response = { uid: r.uid, allowed: false, status: { code: 403, message: `names starting with deny- are not allowed (user ${r.userInfo.username})` } };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  hookURL = `https://127.0.0.1:${(hook.address() as { port: number }).port}`;
  const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'labeler' },
    webhooks: [
      {
        name: 'labeler.example.com',
        clientConfig: { url: `${hookURL}/mutate`, caBundle },
        rules,
        objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'namer' },
    webhooks: [
      { name: 'namer.example.com', clientConfig: { url: `${hookURL}/validate`, caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'] },
    ],
  });
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'protector' },
    webhooks: [
      {
        name: 'protector.example.com',
        clientConfig: { url: `${hookURL}/protect`, caBundle },
        rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  await new Promise((r) => setTimeout(r, 200));
});
after(async () => {
  hook?.close();
  await env?.stop();
});

const cm = (name: string, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data: { a: '1' },
});

test("a mutating webhook's patch is applied and stored", async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('patched', { app: 'x' }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.metadata.labels, { app: 'x', mutated: 'yes' });
  assert.deepEqual((await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/patched')).body.metadata.labels, { app: 'x', mutated: 'yes' });
  const review = seen.find((s) => s.request.name === 'patched');
  assert.equal(review.apiVersion, 'admission.k8s.io/v1');
  assert.deepEqual(review.request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.equal(review.request.operation, 'CREATE');
  assert.equal(review.timeout, '10s', 'the webhook is told its timeout');
  const skipped = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('skipped', { skip: 'true' }));
  assert.deepEqual(skipped.body.metadata.labels, { skip: 'true' }, 'the objectSelector leaves it out');
});

test("a validating webhook's denial blocks the write and nothing reaches etcd", async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('deny-me'));
  assert.equal(r.status, 403);
  assert.equal(r.body.message, 'admission webhook "namer.example.com" denied the request: names starting with deny- are not allowed (user system:admin)');
  const etcd = new Etcd3({ hosts: env.etcd.endpoint });
  try {
    assert.equal(await etcd.get('/registry/configmaps/default/deny-me').string(), null);
  } finally {
    etcd.close();
  }
});

test('an unreachable webhook fails the request with failurePolicy Fail and is skipped with Ignore', async () => {
  const dead = `https://127.0.0.1:${await freePort()}/x`;
  const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }];
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'dead' },
    webhooks: [
      { name: 'dead.example.com', clientConfig: { url: dead, caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 2 },
    ],
  });
  await new Promise((r) => setTimeout(r, 200));
  const failed = await request(env.url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' } });
  assert.equal(failed.status, 500);
  assert.match(
    failed.body.message,
    /^Internal error occurred: failed calling webhook "dead\.example\.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/x\?timeout=2s": /,
  );
  await request(
    env.url,
    'PATCH',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/dead',
    [{ op: 'add', path: '/webhooks/0/failurePolicy', value: 'Ignore' }],
    { contentType: 'application/json-patch+json' },
  );
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(
    (await request(env.url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's2' } })).status,
    201,
  );
});

test('webhooks see updates too: a mutating webhook on UPDATE patches the new object', async () => {
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'on-update' },
    webhooks: [
      {
        name: 'update.example.com',
        clientConfig: { url: `${hookURL}/mutate`, caBundle },
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['services'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  await new Promise((r) => setTimeout(r, 200));
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } };
  const created = await request(env.url, 'POST', '/api/v1/namespaces/default/services', svc);
  assert.equal(created.body.metadata.labels, undefined, 'CREATE is not in the rule');
  const updated = await request(
    env.url,
    'PATCH',
    '/api/v1/namespaces/default/services/web',
    { metadata: { annotations: { touched: 'yes' } } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(updated.status, 200, JSON.stringify(updated.body));
  assert.equal(updated.body.metadata.labels.mutated, 'yes');
  const review = seen.find((s) => s.request.operation === 'UPDATE' && s.request.name === 'web');
  assert.equal(review.request.oldObject.metadata.annotations, undefined);
  assert.equal(review.request.object.metadata.annotations.touched, 'yes');
});

test('validating webhooks see DELETE: the object as oldObject, no object; a denial keeps it', async () => {
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('keepme', { protected: 'true', skip: 'y' }))).status, 201);
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('dropme', { skip: 'y' }))).status, 201);
  const denied = await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/keepme');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'admission webhook "protector.example.com" denied the request: keepme is protected');
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/default/configmaps/keepme')).status, 200);
  assert.equal((await request(env.url, 'DELETE', '/api/v1/namespaces/default/configmaps/dropme')).status, 200);
  const review = seen.find((x) => x.request.operation === 'DELETE' && x.request.oldObject?.metadata?.name === 'dropme');
  assert.ok(review, 'the webhook saw the DELETE');
  assert.equal(review.request.object, null);
  assert.equal(review.request.options.kind, 'DeleteOptions');
});

test('a webhook named by a Service is called at a ready endpoint, its certificate checked for <name>.<namespace>.svc; without endpoints it fails', async () => {
  const ns = 'svc-hooks';
  const post = (path: string, body: object) => request(env.url, 'POST', path, body);
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const port = Number(new URL(hookURL).port);
  const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'https', port: 8443, targetPort: port }] } });
  assert.equal((await post(`/api/v1/namespaces/${ns}/services`, svc('hook-svc'))).status, 201);
  assert.equal((await post(`/api/v1/namespaces/${ns}/services`, svc('empty-svc'))).status, 201);
  const slice = await post(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'hook-svc-1', labels: { 'kubernetes.io/service-name': 'hook-svc' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  });
  assert.equal(slice.status, 201, slice.text);
  const hookFor = (service: string) => ({
    name: `${service}.example.com`,
    clientConfig: { service: { namespace: ns, name: service, path: '/validate', port: 8443 }, caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
  });
  const cfg = await post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'by-service' },
    webhooks: [hookFor('hook-svc')],
  });
  assert.equal(cfg.status, 201, cfg.text);
  await new Promise((r) => setTimeout(r, 200));
  const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: {} });
  const denied = await post(`/api/v1/namespaces/${ns}/secrets`, secret('deny-by-service'));
  assert.equal(denied.status, 403, denied.text);
  assert.match(denied.body.message, /^admission webhook "hook-svc.example.com" denied the request: names starting with deny- are not allowed/);
  assert.equal((await post(`/api/v1/namespaces/${ns}/secrets`, secret('allowed'))).status, 201);
  await request(env.url, 'PUT', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/by-service', {
    ...cfg.body,
    webhooks: [hookFor('empty-svc')],
  });
  await new Promise((r) => setTimeout(r, 200));
  const failed = await post(`/api/v1/namespaces/${ns}/secrets`, secret('nowhere'));
  assert.equal(failed.status, 500, failed.text);
  assert.equal(
    failed.body.message,
    `Internal error occurred: failed calling webhook "empty-svc.example.com": failed to call webhook: Post "https://empty-svc.${ns}.svc:8443/validate?timeout=10s": cannot find endpoints for service/empty-svc in "${ns}"`,
  );
});

test('a custom resource a webhook patched is pruned and defaulted by its schema, as stored and as answered', async () => {
  const crd = await request(env.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.hooks.example.com' },
    spec: {
      group: 'hooks.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                data: {
                  type: 'object',
                  properties: { start: { type: 'string' }, 'stage-1': { type: 'string' }, defaulted: { type: 'string', default: 'yes' } },
                },
              },
            },
          },
        },
      ],
    },
  });
  assert.equal(crd.status, 201, JSON.stringify(crd.body));
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'widget-mutator' },
    webhooks: [
      {
        name: 'widgets.example.com',
        clientConfig: { url: `${hookURL}/mutate-cr`, caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: ['hooks.example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  const body = { apiVersion: 'hooks.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, data: { start: 'yes' } };
  let created: { status: number; body: any } | undefined;
  for (let i = 0; i < 50; i++) {
    created = await request(env.url, 'POST', '/apis/hooks.example.com/v1/namespaces/default/widgets', body);
    if (created.status !== 404) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(created?.status, 201, JSON.stringify(created?.body));
  const review = seen.find((s) => s.request.resource?.resource === 'widgets');
  assert.deepEqual(review.request.object.data, { start: 'yes', defaulted: 'yes' }, 'the webhook sees the defaulted object');
  const want = { start: 'yes', 'stage-1': 'yes', defaulted: 'yes' };
  assert.deepEqual(created?.body.data, want);
  assert.deepEqual((await request(env.url, 'GET', '/apis/hooks.example.com/v1/namespaces/default/widgets/w1')).body.data, want);
});

test('a CONNECT webhook sees the pod by name, the subresource and the options as the object, and may refuse the attach', async () => {
  await request(env.url, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'attach-guard' },
    webhooks: [
      {
        name: 'attach.example.com',
        clientConfig: { url: `${hookURL}/attach`, caBundle },
        rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/attach'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  let r: { status: number; body: any } | undefined;
  for (let i = 0; i < 50; i++) {
    r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods/to-attach/attach?stdin=true&stdout=true&container=c1');
    if (r.status === 400) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(r?.status, 400, JSON.stringify(r?.body));
  assert.equal(r?.body.message, 'admission webhook "attach.example.com" denied the request: attaching to to-attach/attach (PodAttachOptions) is not allowed');
  const review = seen.find((s) => s.request.operation === 'CONNECT');
  assert.deepEqual(review.request.kind, { group: '', version: 'v1', kind: 'PodAttachOptions' });
  assert.deepEqual(review.request.resource, { group: '', version: 'v1', resource: 'pods' });
  assert.equal(review.request.namespace, 'default');
  assert.equal(review.request.object.container, 'c1');
});
