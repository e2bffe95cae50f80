/**
 * The token webhook against a recording client: the TokenReview it sends,
 * users and refusals (cached), errors (not cached), retries of transient
 * failures only, audiences.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WebhookClient } from './webhook-client.js';
import { WebhookTokenAuthenticator } from './webhook-token.js';

type Answer = { status: number; body?: unknown } | Error;

function client(answers: (body: any) => Answer) {
  const sent: any[] = [];
  const c: WebhookClient = {
    url: 'https://webhook.test/review',
    post: async <T>(body: unknown) => {
      sent.push(body);
      const a = answers(body);
      if (a instanceof Error) throw a;
      return { status: a.status, body: a.body as T };
    },
  };
  return { c, sent };
}

const review = (status: Record<string, unknown>) => ({ status: 200, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status } });

test('the TokenReview sent; a user; refusals cached, errors not', async () => {
  const { c, sent } = client((b) => {
    if (b.spec.token === 'good') return review({ authenticated: true, user: { username: 'ann', uid: 'u1', groups: ['g'], extra: { 'example.com/x': ['1'] } } });
    if (b.spec.token === 'bad') return review({ authenticated: false });
    return review({ authenticated: false, error: 'backend unavailable' });
  });
  const w = new WebhookTokenAuthenticator(c, { version: 'v1', audiences: ['https://kubernetes.default.svc'] });
  assert.deepEqual(await w.authenticateToken('good'), { name: 'ann', uid: 'u1', groups: ['g'], extra: { 'example.com/x': ['1'] } });
  assert.deepEqual(sent[0], {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: { creationTimestamp: null },
    spec: { token: 'good', audiences: ['https://kubernetes.default.svc'] },
  });
  await w.authenticateToken('good');
  assert.equal(await w.authenticateToken('bad'), undefined);
  assert.equal(await w.authenticateToken('bad'), undefined);
  assert.equal(await w.authenticateToken('flaky'), undefined);
  assert.equal(await w.authenticateToken('flaky'), undefined);
  assert.deepEqual(
    sent.map((b) => b.spec.token),
    ['good', 'bad', 'flaky', 'flaky'],
  );
});

test('version: v1beta1 by default; others refused with upstream message', () => {
  const { c } = client(() => review({}));
  assert.throws(() => new WebhookTokenAuthenticator(c, { version: 'v2' }), {
    message: 'unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"',
  });
  assert.equal((new WebhookTokenAuthenticator(c) as unknown as { apiVersion: string }).apiVersion, 'authentication.k8s.io/v1beta1');
});

test('transient failures are retried, a refused connection is not; both refuse the token', async () => {
  let n = 0;
  const flaky = client(() => (++n < 3 ? { status: 500 } : review({ authenticated: true, user: { username: 'ann' } })));
  const w = new WebhookTokenAuthenticator(flaky.c, { retryBackoff: { initialMs: 1, steps: 5 } });
  assert.equal((await w.authenticateToken('t'))?.name, 'ann');
  assert.equal(flaky.sent.length, 3);
  const down = client(() => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
  const w2 = new WebhookTokenAuthenticator(down.c, { retryBackoff: { initialMs: 1, steps: 5 } });
  assert.equal(await w2.authenticateToken('t'), undefined);
  assert.equal(down.sent.length, 1);
  const always500 = client(() => ({ status: 500 }));
  const w3 = new WebhookTokenAuthenticator(always500.c, { retryBackoff: { initialMs: 1, steps: 3 } });
  assert.equal(await w3.authenticateToken('t'), undefined);
  assert.equal(always500.sent.length, 3);
});

test('audiences: an answer for other audiences does not authenticate; a nameless user is a fault', async () => {
  const { c } = client((b) =>
    b.spec.token === 'other'
      ? review({ authenticated: true, user: { username: 'ann' }, audiences: ['elsewhere'] })
      : b.spec.token === 'ours'
        ? review({ authenticated: true, user: { username: 'ann' }, audiences: ['api'] })
        : review({ authenticated: true, user: {} }),
  );
  const w = new WebhookTokenAuthenticator(c, { audiences: ['api'] });
  assert.equal(await w.authenticateToken('other'), undefined);
  assert.equal((await w.authenticateToken('ours'))?.name, 'ann');
  assert.equal(await w.authenticateToken('nameless'), undefined);
});
