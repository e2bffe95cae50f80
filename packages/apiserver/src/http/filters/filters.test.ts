/**
 * The request filters as a chain, through inject(), in kube-apiserver's order
 * (authentication, audit, impersonation, priority and fairness,
 * authorization): who is anonymous, what answers 401, 400, 403 and 429, and
 * what the audit record says in each case.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import type { Logger } from 'pino';
import { Authenticator, StaticTokens } from '../../auth/authn.js';
import type { Attributes, Authorizer } from '../../auth/types.js';
import { statusErrors } from '../errors.js';
import { upgradeRouting } from '../upgrade.js';
import { audit } from './audit.js';
import { authentication } from './authentication.js';
import { authorization } from './authorization.js';
import { impersonation } from './impersonation.js';
import { isLongRunning, parseGoDuration, priorityAndFairness, waitLimitMs } from './priority-and-fairness.js';
import { parseRequestInfo } from '../request-info.js';
import { FlowControl } from '../../flowcontrol/controller.js';

/** admin may do anything; bob may only list pods; everyone may read /healthz. */
const authorizer: Authorizer = {
  authorize: (a: Attributes) =>
    a.user.name === 'admin' || (a.user.name === 'bob' && a.verb === 'list' && a.resource === 'pods') || a.path === '/healthz'
      ? { allowed: true, reason: '' }
      : { allowed: false, reason: '' },
};

/** Bob's requests go to a level of their own with one seat and no queue; everyone else to the imagined catch-all. */
function flowControl(): FlowControl {
  const fc = new FlowControl({ serverConcurrencyLimit: 2 });
  fc.apply('PriorityLevelConfiguration', 'ADDED', {
    metadata: { name: 'bobs', uid: 'pl-bobs' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } },
  });
  fc.apply('FlowSchema', 'ADDED', {
    metadata: { name: 'bob', uid: 'fs-bob' },
    spec: {
      priorityLevelConfiguration: { name: 'bobs' },
      matchingPrecedence: 100,
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'bob' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
        },
      ],
    },
  });
  fc.digest();
  return fc;
}

async function chain() {
  const records: Record<string, unknown>[] = [];
  const logger = { info: (rec: Record<string, unknown>) => records.push(rec) } as unknown as Logger;
  const app = Fastify();
  const tokens = new StaticTokens(
    new Map([
      ['admin-token', { name: 'admin', groups: [] }],
      ['bob-token', { name: 'bob', groups: [] }],
    ]),
  );
  app.register(statusErrors, { maxBody: 1024 });
  app.register(upgradeRouting);
  app.register(authentication, { authenticator: new Authenticator([tokens]) });
  app.register(audit, { logger, unauthenticatedUser: 'system:anonymous' });
  app.register(impersonation, { authorizer });
  app.register(priorityAndFairness, { flowControl: flowControl(), requestTimeoutSeconds: 60 });
  app.register(authorization, { authorizer });
  let release: () => void = () => undefined;
  const gate = () => new Promise<void>((r) => (release = r));
  app.register(async (routes) => {
    routes.get('/healthz', async () => 'ok');
    routes.get('/api/v1/namespaces/slow/pods', async () => {
      await gate();
      return { slow: true };
    });
    routes.get('/api/v1/pods', async (req) => ({ user: req.user?.name, authorization: req.headers.authorization ?? null }));
  });
  await app.ready();
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
  return { app, records, get, release: () => release() };
}

test('authentication: 401 without credentials except on health paths, and for unknown tokens', async () => {
  const { get, records } = await chain();
  assert.equal((await get('/healthz')).statusCode, 200);
  assert.equal((await get('/api/v1/pods')).statusCode, 401);
  assert.equal((await get('/healthz', { authorization: 'Bearer nope' })).statusCode, 401);
  assert.deepEqual(
    records.map((r) => [r.user, r.code]),
    [
      ['system:anonymous', 200],
      ['system:anonymous', 401],
      ['system:anonymous', 401],
    ],
  );
});

test('the handler sees the user, never the Authorization header', async () => {
  const { get } = await chain();
  const r = await get('/api/v1/pods', { authorization: 'Bearer bob-token' });
  assert.equal(r.statusCode, 200);
  assert.deepEqual(r.json(), { user: 'bob', authorization: null });
});

test('authorization judges the impersonated user; a refused impersonation has no user in its record', async () => {
  const { get, records } = await chain();
  const asBob = await get('/api/v1/namespaces/x/secrets', { authorization: 'Bearer admin-token', 'impersonate-user': 'bob' });
  assert.equal(asBob.statusCode, 403);
  assert.match(asBob.json().message, /User "bob" cannot list resource "secrets"/);
  const refused = await get('/api/v1/pods', { authorization: 'Bearer bob-token', 'impersonate-user': 'admin' });
  assert.equal(refused.statusCode, 403);
  assert.match(refused.json().message, /User "bob" cannot impersonate resource "users"/);
  const groupsOnly = await get('/api/v1/pods', { authorization: 'Bearer admin-token', 'impersonate-group': 'g' });
  assert.equal(groupsOnly.statusCode, 400);
  assert.deepEqual(
    records.map((r) => [r.user, r.code]),
    [
      ['bob', 403],
      ['system:anonymous', 403],
      ['system:anonymous', 400],
    ],
  );
});

test('priority and fairness judges the impersonated user, after authentication and before authorization', async () => {
  const { get } = await chain();
  const header = (r: Awaited<ReturnType<typeof get>>) => [r.headers['x-kubernetes-pf-flowschema-uid'], r.headers['x-kubernetes-pf-prioritylevel-uid']];
  assert.deepEqual(header(await get('/api/v1/pods', { authorization: 'Bearer bob-token' })), ['fs-bob', 'pl-bobs']);
  // Classified as bob (impersonation came first), and refused by authorization afterwards: the headers are there.
  const asBob = await get('/api/v1/namespaces/x/secrets', { authorization: 'Bearer admin-token', 'impersonate-user': 'bob' });
  assert.equal(asBob.statusCode, 403);
  assert.deepEqual(header(asBob), ['fs-bob', 'pl-bobs']);
  // Nothing to classify before authentication.
  const anonymous = await get('/api/v1/pods');
  assert.equal(anonymous.statusCode, 401);
  assert.deepEqual(header(anonymous), [undefined, undefined]);
});

test('a full Reject level answers 429 with Retry-After and a Status', async () => {
  const { get, release } = await chain();
  const first = get('/api/v1/namespaces/slow/pods', { authorization: 'Bearer bob-token' });
  await new Promise((r) => setTimeout(r, 20));
  const second = await get('/api/v1/pods', { authorization: 'Bearer bob-token' });
  assert.equal(second.statusCode, 429);
  assert.equal(second.headers['retry-after'], '1');
  assert.deepEqual(
    [second.json().kind, second.json().reason, second.json().message, second.json().code, second.json().details],
    ['Status', 'TooManyRequests', 'Too many requests, please try again later.', 429, { retryAfterSeconds: 1 }],
  );
  // Other users are not held back by bob's level.
  assert.equal((await get('/api/v1/pods', { authorization: 'Bearer admin-token' })).statusCode, 200);
  release();
  assert.equal((await first).statusCode, 200);
  assert.equal((await get('/api/v1/pods', { authorization: 'Bearer bob-token' })).statusCode, 200, 'the seat came back');
});

test('queue waits: a quarter of the request timeout (the shorter timeout parameter counts), at most a minute; long-running requests pass', () => {
  const info = (method: string, url: string) => parseRequestInfo(method, url.split('?')[0]!, Object.fromEntries(new URLSearchParams(url.split('?')[1] ?? '')));
  assert.equal(waitLimitMs(info('GET', '/api/v1/pods'), {}, 60), 15_000);
  assert.equal(waitLimitMs(info('GET', '/api/v1/pods'), { timeout: '2s' }, 60), 500);
  assert.equal(waitLimitMs(info('GET', '/api/v1/pods'), { timeout: '1m30s' }, 60), 15_000, 'not beyond the server timeout');
  assert.equal(waitLimitMs(info('GET', '/api/v1/pods'), {}, 600), 60_000);
  assert.equal(waitLimitMs(info('GET', '/api/v1/pods?watch=1'), { watch: '1', timeout: '2s' }, 60), 15_000, 'a watch has no deadline');
  assert.equal(parseGoDuration('1h2m3.5s'), 3_723_500);
  assert.equal(parseGoDuration('250ms'), 250);
  assert.equal(parseGoDuration('10'), undefined);
  assert.ok(isLongRunning(info('GET', '/api/v1/pods?watch=true')));
  assert.ok(isLongRunning(info('POST', '/api/v1/namespaces/a/pods/p/exec')));
  assert.ok(isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p/log')));
  assert.ok(isLongRunning(info('GET', '/api/v1/nodes/n/proxy/stats')));
  assert.ok(!isLongRunning(info('GET', '/api/v1/namespaces/a/pods/p')));
  assert.ok(!isLongRunning(info('GET', '/healthz')));
});
