/**
 * The request filters as a chain, through inject(): who is anonymous, what
 * answers 401, 400 and 403, and what the audit record says in each case.
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

/** admin may do anything; bob may only list pods; everyone may read /healthz. */
const authorizer: Authorizer = {
  authorize: (a: Attributes) =>
    a.user.name === 'admin' || (a.user.name === 'bob' && a.verb === 'list' && a.resource === 'pods') || a.path === '/healthz'
      ? { allowed: true, reason: '' }
      : { allowed: false, reason: '' },
};

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
  app.register(authorization, { authorizer });
  app.register(async (routes) => {
    routes.get('/healthz', async () => 'ok');
    routes.get('/api/v1/pods', async (req) => ({ user: req.user?.name, authorization: req.headers.authorization ?? null }));
  });
  await app.ready();
  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
  return { app, records, get };
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
