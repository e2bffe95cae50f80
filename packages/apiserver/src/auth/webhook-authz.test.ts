/** The Webhook authorizer over an injected client: the review sent, decisions, caching, retries, failure policy, matchConditions. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMatchCondition, type CompiledCondition } from './cel-authz.js';
import type { Attributes } from './types.js';
import { WebhookAuthorizer, type WebhookAuthorizerOptions } from './webhook-authz.js';
import type { WebhookClient, WebhookReply } from './webhook-client.js';

type Answer = WebhookReply<unknown> | Error;

/** A client answering from `answer(body)`, recording what it was sent. */
function fakeClient(answer: (body: any) => Answer) {
  const sent: any[] = [];
  const client: WebhookClient = {
    url: 'https://authz.example/authorize',
    post: async <T>(body: unknown) => {
      sent.push(body);
      const a = answer(body);
      if (a instanceof Error) throw a;
      return a as WebhookReply<T>;
    },
  };
  return { client, sent };
}

const review = (status: Record<string, unknown>): Answer => ({
  status: 200,
  body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status },
});

const pods = (user = 'jane', namespace = 'dev', verb = 'list'): Attributes => ({
  user: { name: user, uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } },
  verb,
  isResourceRequest: true,
  namespace,
  apiGroup: '',
  resource: 'pods',
});

function authorizer(client: WebhookClient, over: Partial<WebhookAuthorizerOptions> = {}) {
  let now = 1_000_000;
  const sleeps: number[] = [];
  const w = new WebhookAuthorizer({
    name: 'default',
    client,
    version: 'v1',
    authorizedTTLMs: 300_000,
    unauthorizedTTLMs: 30_000,
    failurePolicy: 'NoOpinion',
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...over,
  });
  return { w, sleeps, advance: (ms: number) => (now += ms) };
}

const conditions = (...exprs: string[]): CompiledCondition[] =>
  exprs.map((e) => {
    const r = compileMatchCondition(e);
    if ('error' in r) throw new Error(r.error);
    return r.condition;
  });

test('the review sent: a v1 SubjectAccessReview of the user and the resource attributes; v1beta1 calls the groups "group"', async () => {
  const { client, sent } = fakeClient(() => review({ allowed: true }));
  await authorizer(client).w.authorize(pods());
  assert.deepEqual(sent[0], {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: { namespace: 'dev', verb: 'list', resource: 'pods' },
      user: 'jane',
      groups: ['devs', 'system:authenticated'],
      extra: { scopes: ['a'] },
      uid: 'u-1',
    },
    status: { allowed: false },
  });
  await authorizer(client, { version: 'v1beta1' }).w.authorize({ user: { name: 'x', groups: ['g'] }, verb: 'get', isResourceRequest: false, path: '/healthz' });
  assert.equal(sent[1].apiVersion, 'authorization.k8s.io/v1beta1');
  assert.deepEqual(sent[1].spec, { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'x', group: ['g'] });
});

test('allowed, denied (final), neither (no opinion), both (a denial with an error); only JSON true counts', async () => {
  const answers: Record<string, Record<string, unknown>> = {
    a: { allowed: true, reason: 'ok' },
    d: { allowed: false, denied: true, reason: 'no way' },
    n: { allowed: false, reason: 'not mine' },
    b: { allowed: true, denied: true },
    s: { allowed: 'true' },
  };
  const { client } = fakeClient((body) => review(answers[body.spec.user]!));
  const { w } = authorizer(client);
  assert.deepEqual(await w.authorize(pods('a')), { allowed: true, reason: 'ok' });
  assert.deepEqual(await w.authorize(pods('d')), { allowed: false, reason: 'no way', denied: true });
  assert.deepEqual(await w.authorize(pods('n')), { allowed: false, reason: 'not mine' });
  assert.deepEqual(await w.authorize(pods('b')), {
    allowed: false,
    reason: '',
    denied: true,
    error: 'webhook subject access review returned both allow and deny response',
  });
  assert.deepEqual(await w.authorize(pods('s')), { allowed: false, reason: '' });
});

test('answers are cached per distinct request for their TTL (allowed 5m, refused 30s)', async () => {
  const { client, sent } = fakeClient((body) => review({ allowed: body.spec.resourceAttributes.verb === 'list' }));
  const { w, advance } = authorizer(client);
  for (let i = 0; i < 3; i++) await w.authorize(pods('jane', 'dev', 'list'));
  for (let i = 0; i < 3; i++) await w.authorize(pods('jane', 'dev', 'delete'));
  assert.equal(sent.length, 2, 'one call per distinct attributes');
  await w.authorize(pods('jane', 'prod', 'list'));
  assert.equal(sent.length, 3);
  advance(31_000);
  await w.authorize(pods('jane', 'dev', 'list'));
  assert.equal(sent.length, 3, 'the allowed answer lives 5m');
  await w.authorize(pods('jane', 'dev', 'delete'));
  assert.equal(sent.length, 4, 'the refused one 30s');
  const { w: uncached } = authorizer(client, { authorizedTTLMs: 0 });
  await uncached.authorize(pods());
  await uncached.authorize(pods());
  assert.equal(sent.length, 6, 'TTL 0: not cached');
});

test('transient failures are retried with backoff; then the failure policy decides, with the error', async () => {
  let calls = 0;
  const { client } = fakeClient(() => (++calls < 3 ? { status: 500, body: undefined } : review({ allowed: true })));
  const { w, sleeps } = authorizer(client, { backoff: { durationMs: 500, factor: 1.5, jitter: 0, steps: 5 } });
  assert.deepEqual(await w.authorize(pods()), { allowed: true, reason: '' });
  assert.deepEqual(sleeps, [500, 750]);

  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const down = fakeClient(() => refused);
  const noOpinion = authorizer(down.client);
  assert.deepEqual(await noOpinion.w.authorize(pods()), {
    allowed: false,
    reason: '',
    error: 'Post "https://authz.example/authorize": connect ECONNREFUSED 127.0.0.1:1',
  });
  assert.equal(down.sent.length, 1, 'a refused connection is not retried');
  const deny = authorizer(fakeClient(() => ({ status: 503, body: undefined })).client, { failurePolicy: 'Deny' });
  const d = await deny.w.authorize(pods());
  assert.equal(d.allowed, false);
  assert.equal(!d.allowed && d.denied, true);
  assert.match(d.error ?? '', /status code 503/);
  assert.deepEqual(deny.sleeps, [], '503 is not retried');
  const flaky = fakeClient(() => ({ status: 500, body: undefined }));
  const exhausted = authorizer(flaky.client);
  await exhausted.w.authorize(pods());
  assert.equal(flaky.sent.length, 5, 'five tries at most');
});

test('matchConditions: a false one skips the webhook; an error follows the failure policy', async () => {
  const { client, sent } = fakeClient(() => review({ allowed: false, denied: true, reason: 'guarded' }));
  const guard = conditions("has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'", "!('system:masters' in request.groups)");
  const { w } = authorizer(client, { matchConditions: guard });
  assert.deepEqual(await w.authorize(pods('jane', 'dev')), { allowed: false, reason: '' });
  assert.equal(sent.length, 0);
  assert.equal((await w.authorize(pods('jane', 'kube-system'))).reason, 'guarded');
  assert.equal(sent.length, 1);

  const failing = conditions("request.resourceAttributes.namespace == 'x'");
  const nonResource: Attributes = { user: { name: 'u', groups: [] }, verb: 'get', isResourceRequest: false, path: '/apis' };
  const expected = "cel evaluation error: expression 'request.resourceAttributes.namespace == 'x'' resulted in error: no such key: resourceAttributes";
  assert.deepEqual(await authorizer(client, { matchConditions: failing }).w.authorize(nonResource), { allowed: false, reason: '', error: expected });
  assert.deepEqual(await authorizer(client, { matchConditions: failing, failurePolicy: 'Deny' }).w.authorize(nonResource), {
    allowed: false,
    reason: '',
    denied: true,
    error: expected,
  });
  assert.equal(sent.length, 1, 'never called on an error');
  // A false condition wins over an error in another.
  const falseFirst = conditions("request.user == 'nobody'", "request.resourceAttributes.namespace == 'x'");
  assert.deepEqual(await authorizer(client, { matchConditions: falseFirst, failurePolicy: 'Deny' }).w.authorize(nonResource), { allowed: false, reason: '' });
});

test('match conditions must compile to bool', () => {
  assert.deepEqual(compileMatchCondition('request.groups.size()'), { error: 'must evaluate to bool but got int' });
  const bad = compileMatchCondition('request.nope == 1');
  assert.ok('error' in bad && bad.error.startsWith('compilation failed: ERROR: <input>:1:8: undefined field'), JSON.stringify(bad));
});

test('rules reviews: a webhook lists nothing and says so', () => {
  const { w } = authorizer(fakeClient(() => review({})).client);
  assert.deepEqual(w.resolveRules({ name: 'x', groups: [] }, 'dev'), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    error: 'webhook authorizer does not support user rule resolution',
  });
});
