/** EventRateLimit on a fake clock: token buckets, LRU eviction, keys per limit type, and the configuration's checks. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import { EventRateLimit, LruCache, TokenBucket, parseEventRateLimitConfig, type Limit } from './eventratelimit.js';
import type { AdmissionAttributes } from './index.js';

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, step: (ms: number) => (t += ms) };
};

test('a token bucket gives burst tokens at once, then qps per second up to burst', () => {
  const c = clock();
  const b = new TokenBucket(2, 3, c.now);
  assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [true, true, true, false]);
  c.step(500);
  assert.equal(b.tryAccept(), true, 'half a second at 2 qps is one token');
  assert.equal(b.tryAccept(), false);
  c.step(60_000);
  assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [true, true, true, false], 'never more than burst');
});

test('the LRU keeps the most recently used entries and recreates evicted ones', () => {
  let made = 0;
  const lru = new LruCache(2, () => ++made);
  assert.equal(lru.get('a'), 1);
  assert.equal(lru.get('b'), 2);
  assert.equal(lru.get('a'), 1);
  assert.equal(lru.get('c'), 3, 'b, the least recently used, goes');
  assert.equal(lru.get('a'), 1);
  assert.equal(lru.get('b'), 4);
});

const event = (component: string, name = 'p'): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, source: { component }, involvedObject: { kind: 'Pod', name } }) as KubeObject;
const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  resource: '/events',
  namespace: 'a',
  user: { name: 'alice', groups: [] },
  ...over,
});

async function refused(p: EventRateLimit, obj: KubeObject, a: AdmissionAttributes): Promise<string | undefined> {
  try {
    await p.validate(obj, a);
    return undefined;
  } catch (e) {
    assert.ok(e instanceof StatusError);
    assert.equal(e.status.code, 429);
    assert.equal(e.status.reason, 'TooManyRequests');
    return e.status.message;
  }
}

test('namespace buckets are separate; an evicted namespace starts again with a full bucket', async () => {
  const c = clock();
  const p = new EventRateLimit([{ type: 'Namespace', qps: 1, burst: 2, cacheSize: 2 }], c.now);
  const e = event('kubelet');
  assert.equal(await refused(p, e, attrs()), undefined);
  assert.equal(await refused(p, e, attrs()), undefined);
  assert.equal(await refused(p, e, attrs()), 'Too many requests: Too many requests: limit reached on type Namespace for key a');
  assert.equal(await refused(p, e, attrs({ namespace: 'b' })), undefined);
  assert.equal(await refused(p, e, attrs({ namespace: 'c' })), undefined, 'evicts a');
  assert.equal(await refused(p, e, attrs()), undefined, 'a is back with a full bucket');
  c.step(1000);
  assert.equal(await refused(p, e, attrs({ namespace: 'b' })), undefined);
});

test('user and source+object keys; several refusing limits are aggregated; dry runs and other resources pass', async () => {
  const c = clock();
  const limits: Limit[] = [
    { type: 'User', qps: 1, burst: 1 },
    { type: 'SourceAndObject', qps: 1, burst: 1 },
  ];
  const p = new EventRateLimit(limits, c.now);
  assert.equal(await refused(p, event('kubelet'), attrs()), undefined);
  assert.equal(await refused(p, event('scheduler'), attrs({ user: { name: 'bob', groups: [] } })), undefined);
  assert.equal(
    await refused(p, event('kubelet'), attrs()),
    'Too many requests: [Too many requests: limit reached on type User for key alice, Too many requests: limit reached on type SourceAndObject for key kubeletPodp]',
  );
  assert.equal(p.handles(attrs({ dryRun: true })), false);
  assert.equal(p.handles(attrs({ resource: '/pods' })), false);
  assert.equal(p.handles(attrs({ resource: 'events.k8s.io/events' })), false);
  assert.equal(p.handles(attrs({ operation: 'DELETE' })), false);
  assert.equal(p.handles(attrs({ operation: 'UPDATE' })), true);
});

test('the configuration must be an eventratelimit.admission.k8s.io/v1alpha1 Configuration with valid limits', () => {
  const cfg = (limits: unknown) => ({ apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits });
  assert.deepEqual(parseEventRateLimitConfig(cfg([{ type: 'Server', qps: 5, burst: 10 }])), [{ type: 'Server', qps: 5, burst: 10, cacheSize: 0 }]);
  assert.throws(() => parseEventRateLimitConfig(undefined), /limits: Invalid value: null: must not be empty/);
  assert.throws(() => parseEventRateLimitConfig(cfg([])), /limits: Invalid value: \[\]: must not be empty/);
  assert.throws(() => parseEventRateLimitConfig({ limits: [] }), /want apiVersion eventratelimit.admission.k8s.io\/v1alpha1/);
  assert.throws(
    () => parseEventRateLimitConfig(cfg([{ type: 'Pod', qps: 0, burst: 1, cacheSize: -1 }])),
    (e: Error) =>
      e.message.includes('limits[0].type: Unsupported value: "Pod"') &&
      e.message.includes('limits[0].qps: Invalid value: 0: must be positive') &&
      e.message.includes('limits[0].cacheSize: Invalid value: -1: must not be negative'),
  );
});
