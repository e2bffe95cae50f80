/**
 * The answers beside the bad-input corpus that are not 4xx, or not refusals:
 * revisions the store has not reached (504 Timeout with Retry-After, every
 * digit kept), expired continue tokens (410 with a token to go on), and
 * inputs upstream accepts that look wrong (`watch=maybe`, `a in ()`, a
 * volume with no source).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type Reply, type TestEnv } from '@kubeling/testenv';
import { encodeContinue } from '../registry/versions.js';

let env: TestEnv;
const NS = 'opts';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

before(async () => {
  env = await startTestEnv();
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  for (const [name, labels] of [
    ['empty', { a: '' }],
    ['full', { a: 'x' }],
    ['none', {}],
  ] as const) {
    assert.equal((await request(env.url, 'POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels } })).status, 201);
  }
});
after(async () => {
  await env?.stop();
});

function tooLarge(r: Reply, requested: string) {
  assert.equal(r.status, 504, r.text);
  assert.equal(r.body.reason, 'Timeout');
  assert.match(r.body.message, new RegExp(`^Timeout: Too large resource version: ${requested}, current: \\d+$`));
  assert.deepEqual(r.body.details.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
  assert.equal(r.body.details.retryAfterSeconds, 1);
  assert.equal(r.headers.get('retry-after'), '1');
}

test('a revision the store has not reached is 504 Timeout, with every digit of it', async () => {
  const max = '18446744073709551615';
  tooLarge(await request(env.url, 'GET', `${CMS}/full?resourceVersion=${max}`), max);
  tooLarge(await request(env.url, 'GET', `${CMS}?resourceVersion=${max}`), max);
  tooLarge(await request(env.url, 'GET', `${CMS}?resourceVersion=${max}&resourceVersionMatch=NotOlderThan`), max);
  tooLarge(await request(env.url, 'GET', `${CMS}?resourceVersion=99999999&resourceVersionMatch=Exact`), '99999999');
  tooLarge(await request(env.url, 'GET', `${CMS}?resourceVersion=${max}&resourceVersionMatch=Exact`), max);
  tooLarge(await request(env.url, 'GET', `${CMS}?limit=1&continue=${encodeContinue(99999999999, 'full')}`), '99999999999');
  // One past uint64 does not parse at all.
  const r = await request(env.url, 'GET', `${CMS}?resourceVersion=18446744073709551616`);
  assert.equal(r.status, 400);
  assert.equal(
    r.body.message,
    'invalid resource version: resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range',
  );
});

test('a continue token whose revision was compacted is 410, with a token that goes on at the latest revision', async () => {
  const first = await request(env.url, 'GET', `${CMS}?limit=1`);
  assert.equal(first.status, 200);
  const token = first.body.metadata.continue as string;
  assert.ok(token);
  // Two compactions: the first records the current revision, the second compacts to it.
  assert.equal((await request(env.url, 'POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later' } })).status, 201);
  await env.server!.compactOnce();
  assert.equal(
    (await request(env.url, 'PUT', `${CMS}/later`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later' }, data: { b: 'c' } })).status,
    200,
  );
  await env.server!.compactOnce();
  const r = await request(env.url, 'GET', `${CMS}?limit=1&continue=${token}`);
  assert.equal(r.status, 410, r.text);
  assert.equal(r.body.reason, 'Expired');
  assert.match(r.body.message, /^The provided continue parameter is too old/);
  const next = JSON.parse(Buffer.from(r.body.metadata.continue, 'base64url').toString());
  assert.equal(next.rv, -1);
  const rest = await request(env.url, 'GET', `${CMS}?limit=10&continue=${r.body.metadata.continue}`);
  assert.equal(rest.status, 200, rest.text);
  assert.ok(rest.body.items.length >= 1);
});

test('watch=maybe is a watch, as upstream reads booleans; ?watch=false a list', async () => {
  const ac = new AbortController();
  const res = await fetch(`${env.url}${CMS}?watch=maybe`, { signal: ac.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /stream=watch|application\/json/);
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  assert.match(Buffer.from(value!).toString(), /"type":"ADDED"/);
  ac.abort();
  const list = await request(env.url, 'GET', `${CMS}?watch=FALSE`);
  assert.equal(list.body.kind, 'ConfigMapList');
});

test('"a in ()" selects the objects whose label a is empty, as upstream parses it', async () => {
  const r = await request(env.url, 'GET', `${CMS}?labelSelector=${encodeURIComponent('a in ()')}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['empty'],
  );
});

test('a volume with no source is an emptyDir, as upstream defaults it', async () => {
  const r = await request(env.url, 'POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'scratch' }] },
  });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.body.spec.volumes, [{ name: 'scratch', emptyDir: {} }]);
});

test("kubernetes/examples' cockroachdb StatefulSet is accepted: a claim template may share a name with a template volume", async () => {
  const sts = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'cockroachdb', labels: { app: 'cockroachdb' } },
    spec: {
      serviceName: 'cockroachdb',
      replicas: 3,
      selector: { matchLabels: { app: 'cockroachdb' } },
      template: {
        metadata: { labels: { app: 'cockroachdb' } },
        spec: {
          initContainers: [
            { name: 'bootstrap', image: 'cockroachdb/cockroach-k8s-init:0.2', volumeMounts: [{ name: 'datadir', mountPath: '/cockroach/cockroach-data' }] },
          ],
          containers: [
            {
              name: 'cockroachdb',
              image: 'cockroachdb/cockroach:v1.1.0',
              ports: [
                { containerPort: 26257, name: 'grpc' },
                { containerPort: 8080, name: 'http' },
              ],
              volumeMounts: [{ name: 'datadir', mountPath: '/cockroach/cockroach-data' }],
            },
          ],
          terminationGracePeriodSeconds: 60,
          volumes: [{ name: 'datadir', persistentVolumeClaim: { claimName: 'datadir' } }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'datadir' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    },
  };
  const r = await request(env.url, 'POST', `/apis/apps/v1/namespaces/${NS}/statefulsets?dryRun=All`, sts);
  assert.equal(r.status, 201, r.text);
  // A Deployment's template is a pod spec, validated as one: two volumes of one name are a duplicate.
  const deploy = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'twice' },
    spec: { selector: sts.spec.selector, template: structuredClone(sts.spec.template) },
  };
  deploy.spec.template.spec.volumes.push({ name: 'datadir', persistentVolumeClaim: { claimName: 'other' } });
  const d = await request(env.url, 'POST', `/apis/apps/v1/namespaces/${NS}/deployments?dryRun=All`, deploy);
  assert.equal(d.status, 422, d.text);
  assert.match(d.body.message, /spec\.template\.spec\.volumes\[1\]\.name: Duplicate value: "datadir"/);
});
