import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podTemplateHash, resolveFenceposts } from './util.js';

test('pod-template-hash is stable, key-order independent and changes with the template or collisions', () => {
  const a = podTemplateHash({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
  const b = podTemplateHash({ spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { app: 'x' } } });
  assert.equal(a, b);
  assert.match(a, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  assert.notEqual(a, podTemplateHash({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'j' }] } }));
  assert.notEqual(a, podTemplateHash({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, 1));
});

test('maxSurge rounds up, maxUnavailable down; both zero means one unavailable', () => {
  assert.deepEqual(resolveFenceposts({}, 10), { maxSurge: 3, maxUnavailable: 2 });
  assert.deepEqual(resolveFenceposts({ rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, 3), { maxSurge: 1, maxUnavailable: 0 });
  assert.deepEqual(resolveFenceposts({ rollingUpdate: { maxSurge: '0%', maxUnavailable: '10%' } }, 3), { maxSurge: 0, maxUnavailable: 1 });
  assert.deepEqual(resolveFenceposts({ type: 'Recreate' }, 4), { maxSurge: 0, maxUnavailable: 4 });
});
