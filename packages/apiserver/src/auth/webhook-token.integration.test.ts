/**
 * Webhook token authentication against a TokenReview webhook of the test's
 * own on loopback, named by a kubeconfig file: the review it receives, the
 * user it answers, refusals (401, cached), answers cached for the TTL, a
 * failing webhook (retried, 401, not cached) and a webhook that is gone (401,
 * never 500; cached answers still stand).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientFor, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let webhook: Server;
let dir: string;
const reviews: { path: string; body: any }[] = [];

const callsFor = (token: string) => reviews.filter((r) => r.body.spec?.token === token).length;
const whoami = async (token: string) => {
  const r = await clientFor(env, { token })('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return r.status === 201 ? r.body.status.userInfo : { status: r.status, reason: r.body.reason };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authn-webhook-'));
  webhook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reviews.push({ path: req.url ?? '', body });
      const token: string = body.spec?.token ?? '';
      if (token === 'broken-token') return void res.writeHead(500).end('boom');
      const status = token.startsWith('good-')
        ? { authenticated: true, user: { username: `ann-${token.slice(5)}`, uid: 'u-1', groups: ['webhook-users'], extra: { 'example.com/team': ['blue'] } } }
        : { authenticated: false };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'TokenReview', status }));
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const port = (webhook.address() as AddressInfo).port;
  const kubeconfig = join(dir, 'webhook.kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: authn\n  cluster: {server: "http://127.0.0.1:${port}/authenticate"}`,
      'users:',
      '- name: apiserver\n  user: {}',
      'contexts:',
      '- name: authn\n  context: {cluster: authn, user: apiserver}',
      'current-context: authn',
      '',
    ].join('\n'),
  );
  env = await startTestEnv({
    secure: true,
    server: { authenticationTokenWebhook: { configFile: kubeconfig, cacheTtlMs: 60_000, version: 'v1', retryBackoff: { initialMs: 5, steps: 3 } } },
  });
});

after(async () => {
  await env?.stop();
  webhook?.closeAllConnections();
  await new Promise((r) => webhook?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('a token the webhook vouches for is its user; the review is a v1 TokenReview with the API audiences', async () => {
  assert.deepEqual(await whoami('good-1'), {
    username: 'ann-1',
    uid: 'u-1',
    groups: ['webhook-users', 'system:authenticated'],
    extra: { 'example.com/team': ['blue'] },
  });
  const r = reviews.find((x) => x.body.spec?.token === 'good-1')!;
  assert.equal(r.path, '/authenticate');
  assert.deepEqual(r.body, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: { creationTimestamp: null },
    spec: { token: 'good-1', audiences: ['https://kubernetes.default.svc.cluster.local'] },
  });
});

test('answers are cached for the TTL: the webhook is asked once per token', async () => {
  for (let i = 0; i < 3; i++) assert.equal((await whoami('good-2')).username, 'ann-2');
  assert.equal(callsFor('good-2'), 1);
  for (let i = 0; i < 3; i++) assert.deepEqual(await whoami('denied'), { status: 401, reason: 'Unauthorized' });
  assert.equal(callsFor('denied'), 1, 'a refusal is cached too');
});

test('TokenReview through the API asks the webhook as well', async () => {
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const r = await clientFor(env, admin)('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: 'good-3' },
  });
  assert.equal(r.status, 201);
  assert.equal(r.body.status.authenticated, true);
  assert.equal(r.body.status.user.username, 'ann-3');
});

test('a failing webhook is retried, then 401, and not cached', async () => {
  assert.deepEqual(await whoami('broken-token'), { status: 401, reason: 'Unauthorized' });
  assert.equal(callsFor('broken-token'), 3, 'the backoff steps');
  assert.deepEqual(await whoami('broken-token'), { status: 401, reason: 'Unauthorized' });
  assert.equal(callsFor('broken-token'), 6, 'asked again');
});

test('a webhook that is gone: 401, never 500; cached users still authenticate', async () => {
  webhook.closeAllConnections();
  await new Promise((r) => webhook.close(r));
  assert.deepEqual(await whoami('good-new'), { status: 401, reason: 'Unauthorized' });
  assert.equal((await whoami('good-2')).username, 'ann-2');
  const r = await clientFor(env, { token: 'good-other' })('GET', '/api/v1/namespaces');
  assert.equal(r.status, 401);
});
