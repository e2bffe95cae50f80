/** ImagePolicyWebhook with an injected webhook client and clock: reviews, cache and TTLs, retries, failure policy, configuration. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import { FAILED_OPEN_ANNOTATION, ImagePolicyWebhook, parseImagePolicyConfig, type ImagePolicyConfig } from './imagepolicy.js';
import type { AdmissionAttributes } from './index.js';

type Reply = { status: number; body: unknown } | Error;

function fakeClient(answer: (review: any) => Reply) {
  const calls: any[] = [];
  return {
    calls,
    client: {
      async post<T>(body: unknown): Promise<{ status: number; body: T | undefined }> {
        calls.push(body);
        const r = answer(body);
        if (r instanceof Error) throw r;
        return r as { status: number; body: T | undefined };
      },
    },
  };
}

const config = (over: Partial<ImagePolicyConfig> = {}): ImagePolicyConfig => ({
  kubeConfigFile: '/unused',
  allowTTL: 60_000,
  denyTTL: 10_000,
  retryBackoff: 1,
  defaultAllow: false,
  ...over,
});
const pod = (image: string, annotations: Record<string, string> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations }, spec: { containers: [{ name: 'c', image }] } }) as KubeObject;
const create: AdmissionAttributes = { operation: 'CREATE', resource: '/pods', namespace: 'team', name: 'p' };
const allowBad = (r: any): Reply => ({ status: 200, body: { status: { allowed: !r.spec.containers[0].image.startsWith('bad'), reason: 'not signed' } } });

async function outcome(p: ImagePolicyWebhook, obj: KubeObject, a = create): Promise<string> {
  try {
    await p.validate(obj, a);
    return 'allowed';
  } catch (e) {
    assert.ok(e instanceof StatusError);
    assert.equal(e.status.code, 403);
    return e.status.message ?? '';
  }
}

test('the review carries images, policy annotations and the namespace; answers are cached per review until their TTL', async () => {
  let now = 0;
  const { client, calls } = fakeClient(allowBad);
  const p = new ImagePolicyWebhook(config(), { client, now: () => now });
  assert.equal(await outcome(p, pod('good:1', { 'mycluster.image-policy.k8s.io/ticket': '42', other: 'x' })), 'allowed');
  assert.deepEqual(calls[0], {
    apiVersion: 'imagepolicy.k8s.io/v1alpha1',
    kind: 'ImageReview',
    metadata: {},
    spec: { containers: [{ image: 'good:1' }], annotations: { 'mycluster.image-policy.k8s.io/ticket': '42' }, namespace: 'team' },
    status: { allowed: false },
  });
  assert.equal(await outcome(p, pod('good:1', { 'mycluster.image-policy.k8s.io/ticket': '42' })), 'allowed');
  assert.equal(calls.length, 1, 'the same review is answered from the cache');
  assert.equal(await outcome(p, pod('bad:1')), 'pods "p" is forbidden: image policy webhook backend denied one or more images: not signed');
  assert.equal(await outcome(p, pod('bad:1')), 'pods "p" is forbidden: image policy webhook backend denied one or more images: not signed');
  assert.equal(calls.length, 2);
  now += 10_001;
  await outcome(p, pod('bad:1'));
  assert.equal(calls.length, 3, 'the denial expired after denyTTL');
  await outcome(p, pod('good:1', { 'mycluster.image-policy.k8s.io/ticket': '42' }));
  assert.equal(calls.length, 3, 'the approval lasts allowTTL');
});

test('transient failures are retried with backoff; a failure is Forbidden unless defaultAllow, which annotates the pod', async () => {
  const sleeps: number[] = [];
  let n = 0;
  const flaky = fakeClient(() => (++n < 3 ? { status: 500, body: undefined } : { status: 200, body: { status: { allowed: true } } }));
  const p = new ImagePolicyWebhook(config({ retryBackoff: 100 }), { client: flaky.client, sleep: async (ms) => void sleeps.push(ms) });
  assert.equal(await outcome(p, pod('x')), 'allowed');
  assert.equal(flaky.calls.length, 3);
  assert.equal(sleeps.length, 2);
  assert.ok(sleeps[0]! >= 100 && sleeps[0]! <= 120 && sleeps[1]! >= 150 && sleeps[1]! <= 180, String(sleeps));

  const down = fakeClient(() => new Error('connect ECONNREFUSED 127.0.0.1:1'));
  const closed = new ImagePolicyWebhook(config(), { client: down.client });
  assert.equal(await outcome(closed, pod('x')), 'pods "p" is forbidden: connect ECONNREFUSED 127.0.0.1:1');
  assert.equal(down.calls.length, 1, 'a refused connection is not retried');
  const forbiddenCode = fakeClient(() => ({ status: 403, body: {} }));
  assert.equal(
    await outcome(new ImagePolicyWebhook(config(), { client: forbiddenCode.client }), pod('x')),
    'pods "p" is forbidden: Error contacting webhook: 403',
  );

  const open = new ImagePolicyWebhook(config({ defaultAllow: true }), { client: down.client });
  const obj = pod('x');
  assert.equal(await outcome(open, obj), 'allowed');
  assert.equal(obj.metadata.annotations?.[FAILED_OPEN_ANNOTATION], 'true');
});

test('ephemeral containers are reviewed on their subresource; other resources and subresources pass by', () => {
  const p = new ImagePolicyWebhook(config(), { client: fakeClient(allowBad).client });
  assert.equal(p.handles({ ...create, operation: 'UPDATE', subresource: 'ephemeralcontainers' }), true);
  assert.equal(p.handles({ ...create, operation: 'UPDATE', subresource: 'status' }), false);
  assert.equal(p.handles({ ...create, resource: 'apps/deployments' }), false);
  assert.equal(p.handles({ ...create, operation: 'DELETE' }), false);
});

test('the configuration: defaults, -1 disables a TTL, ranges as upstream', () => {
  assert.deepEqual(parseImagePolicyConfig({ imagePolicy: { kubeConfigFile: '/k' } }), {
    kubeConfigFile: '/k',
    retryBackoff: 500,
    allowTTL: 300_000,
    denyTTL: 30_000,
    defaultAllow: false,
  });
  const c = parseImagePolicyConfig({ imagePolicy: { kubeConfigFile: '/k', allowTTL: 50, denyTTL: -1, retryBackoff: 10, defaultAllow: true } });
  assert.deepEqual([c.allowTTL, c.denyTTL, c.retryBackoff, c.defaultAllow], [50_000, 0, 10, true]);
  assert.throws(() => parseImagePolicyConfig(undefined), { message: 'no config specified' });
  assert.throws(() => parseImagePolicyConfig({ imagePolicy: {} }), /kubeConfigFile/);
  assert.throws(() => parseImagePolicyConfig({ imagePolicy: { kubeConfigFile: '/k', allowTTL: 3600 } }), {
    message: 'valid value is between 1s and 30m0s, got 1h0m0s',
  });
});
