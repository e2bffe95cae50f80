/**
 * ImagePolicyWebhook against a loopback HTTPS ImageReview webhook named by a
 * kubeconfig file (allow, deny, cached answers, defaultAllow when the webhook
 * fails), EventRateLimit (a namespace's burst, then 429), and
 * NamespaceAutoProvision (a create in a missing namespace creates it; a dry
 * run does not), enabled together against a real etcd.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue } from '@kubeling/pki';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let hook: Server;
let dir: string;
const reviews: any[] = [];

before(async () => {
  const ca = await createCA('imagepolicy-ca');
  const cert = await issue(ca, { commonName: 'imagepolicy', ips: ['127.0.0.1'], usage: 'server' });
  hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      const review = JSON.parse(b);
      reviews.push({ path: req.url, review });
      const image: string = review.spec.containers?.[0]?.image ?? '';
      if (image.startsWith('broken/')) return void res.writeHead(500).end();
      const allowed = !image.startsWith('unsigned/');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...review, status: { allowed, ...(allowed ? {} : { reason: `${image} is not signed` }) } }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const port = (hook.address() as { port: number }).port;
  dir = mkdtempSync(join(tmpdir(), 'imagepolicy-'));
  const kubeconfig = join(dir, 'imagepolicy.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'policy', cluster: { server: `https://127.0.0.1:${port}/review`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } },
      ],
      users: [{ name: 'apiserver', user: {} }],
      contexts: [{ name: 'default', context: { cluster: 'policy', user: 'apiserver' } }],
      'current-context': 'default',
    }),
  );
  env = await startTestEnv({
    server: {
      admission: { enable: ['ImagePolicyWebhook', 'EventRateLimit', 'NamespaceAutoProvision'] },
      admissionConfig: {
        ImagePolicyWebhook: { imagePolicy: { kubeConfigFile: kubeconfig, allowTTL: 50, denyTTL: 50, retryBackoff: 1, defaultAllow: true } },
        EventRateLimit: {
          apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1',
          kind: 'Configuration',
          limits: [{ type: 'Namespace', qps: 1, burst: 3 }],
        },
      },
    },
  });
  for (const name of ['images', 'events-a', 'events-b'])
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
});
after(async () => {
  await env?.stop();
  await new Promise((r) => hook?.close(r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pod = (name: string, image: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, annotations },
  spec: { containers: [{ name: 'c', image }] },
});
const createPod = (body: object) => request(env.url, 'POST', '/api/v1/namespaces/images/pods', body);

test('ImagePolicyWebhook: the webhook sees the images, policy annotations and namespace, and its denial is Forbidden', async () => {
  const ok = await createPod(pod('signed', 'signed/app:1', { 'ci.image-policy.k8s.io/build': '7', unrelated: 'x' }));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  const seen = reviews.at(-1)!;
  assert.equal(seen.path, '/review');
  assert.equal(seen.review.apiVersion, 'imagepolicy.k8s.io/v1alpha1');
  assert.equal(seen.review.kind, 'ImageReview');
  assert.deepEqual(seen.review.spec, { containers: [{ image: 'signed/app:1' }], annotations: { 'ci.image-policy.k8s.io/build': '7' }, namespace: 'images' });
  const denied = await createPod(pod('rogue', 'unsigned/app:1'));
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'pods "rogue" is forbidden: image policy webhook backend denied one or more images: unsigned/app:1 is not signed');
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/images/pods/rogue')).status, 404);
});

test('ImagePolicyWebhook: the same review is answered from the cache, allowed or denied', async () => {
  const before = reviews.length;
  assert.equal((await createPod(pod('signed-2', 'signed/app:1', { 'ci.image-policy.k8s.io/build': '7' }))).status, 201);
  assert.equal((await createPod(pod('rogue-2', 'unsigned/app:1'))).status, 403);
  assert.equal(reviews.length, before, 'no new call to the webhook');
  assert.equal((await createPod(pod('signed-3', 'signed/app:2'))).status, 201);
  assert.equal(reviews.length, before + 1, 'another image is a new review');
});

test('ImagePolicyWebhook: when the webhook fails (after its retries), defaultAllow admits the pod and marks it failed-open', async () => {
  const before = reviews.length;
  const r = await createPod(pod('unreviewed', 'broken/app:1'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.metadata.annotations['alpha.image-policy.k8s.io/failed-open'], 'true');
  assert.equal(reviews.length - before, 5, 'a 500 is retried, five tries in all');
});

test('EventRateLimit: a namespace’s burst of events passes, then 429 TooManyRequests; another namespace has its own bucket', async () => {
  const event = (ns: string, i: number) =>
    request(env.url, 'POST', `/api/v1/namespaces/${ns}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `e${i}` },
      involvedObject: { kind: 'Pod', namespace: ns, name: 'p' },
      reason: 'Test',
      message: 'hello',
      type: 'Normal',
    });
  const statuses: number[] = [];
  const refusals: string[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await event('events-a', i);
    statuses.push(r.status);
    if (r.status === 429) refusals.push(r.body.message);
  }
  assert.deepEqual(statuses.slice(0, 3), [201, 201, 201], statuses.join(','));
  // One token comes back a second: unless each request took a second, some of the rest are refused.
  assert.ok(refusals.length >= 1, statuses.join(','));
  assert.equal(refusals[0], 'Too many requests: Too many requests: limit reached on type Namespace for key events-a');
  assert.equal((await event('events-b', 0)).status, 201);
});

test('NamespaceAutoProvision: a create in a missing namespace creates it; a dry run creates nothing', async () => {
  const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
  const r = await request(env.url, 'POST', '/api/v1/namespaces/provisioned/configmaps', cm('c1'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const ns = await request(env.url, 'GET', '/api/v1/namespaces/provisioned');
  assert.equal(ns.status, 200);
  assert.equal(ns.body.status.phase, 'Active');
  const dry = await request(env.url, 'POST', '/api/v1/namespaces/not-provisioned/configmaps?dryRun=All', cm('c2'));
  assert.equal(dry.status, 404);
  assert.equal(dry.body.message, 'namespaces "not-provisioned" not found');
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/not-provisioned')).status, 404);
});
