/**
 * The token result cache (cached_token_authenticator.go): success and
 * failure TTLs, errors never kept, one computation for concurrent lookups,
 * audiences part of the key, a bounded size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenCache } from './token-cache.js';

function cache(o: { successTtlMs?: number; failureTtlMs?: number; max?: number } = {}) {
  let now = 0;
  const c = new TokenCache<string>({
    successTtlMs: o.successTtlMs ?? 1000,
    failureTtlMs: o.failureTtlMs ?? 500,
    ...(o.max ? { max: o.max } : {}),
    now: () => now,
  });
  let calls = 0;
  const answer = (v: string | undefined) => async () => {
    calls++;
    return v;
  };
  return { c, answer, calls: () => calls, tick: (ms: number) => (now += ms) };
}

test('successes and failures are kept for their TTLs', async () => {
  const { c, answer, calls, tick } = cache();
  assert.equal(await c.get('t1', [], answer('alice')), 'alice');
  assert.equal(await c.get('t1', [], answer('bob')), 'alice');
  assert.equal(await c.get('t2', [], answer(undefined)), undefined);
  assert.equal(await c.get('t2', [], answer('late')), undefined, 'a refusal is kept too');
  assert.equal(calls(), 2);
  tick(600);
  assert.equal(await c.get('t2', [], answer('now')), 'now', 'the failure TTL ended');
  assert.equal(await c.get('t1', [], answer('bob')), 'alice');
  tick(500);
  assert.equal(await c.get('t1', [], answer('bob')), 'bob', 'the success TTL ended');
  assert.equal(await c.get('t1', ['other-audience'], answer('carol')), 'carol', 'audiences are part of the key');
});

test('errors are not kept, but concurrent callers share one computation', async () => {
  const { c, calls } = cache();
  let release!: (v: string) => void;
  let n = 0;
  const slow = () => {
    n++;
    return new Promise<string>((r) => (release = r));
  };
  const both = Promise.all([c.get('t', [], slow), c.get('t', [], slow)]);
  release('alice');
  assert.deepEqual(await both, ['alice', 'alice']);
  assert.equal(n, 1);
  const failing = async () => {
    throw new Error('webhook down');
  };
  await assert.rejects(c.get('e', [], failing), { message: 'webhook down' });
  assert.equal(await c.get('e', [], async () => 'recovered'), 'recovered');
  assert.equal(calls(), 0);
});

test('a zero TTL keeps nothing; the size is bounded', async () => {
  const none = cache({ successTtlMs: 0, failureTtlMs: 0 });
  await none.c.get('t', [], none.answer('a'));
  await none.c.get('t', [], none.answer('a'));
  assert.equal(none.calls(), 2);
  assert.equal(none.c.size, 0);
  const small = cache({ max: 3 });
  for (const t of ['a', 'b', 'c', 'd']) await small.c.get(t, [], small.answer(t));
  assert.equal(small.c.size, 3);
  assert.equal(await small.c.get('a', [], small.answer('again')), 'again', 'the oldest went first');
});
