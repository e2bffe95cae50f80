/**
 * Request-header (front proxy) authentication with the TLS server trusting
 * both the client CA and the request-header CA: a proxy certificate with an
 * allowed CN names the user in X-Remote-* headers; a client-CA certificate
 * cannot (its headers are ignored); a proxy certificate is never a user of
 * its own, and one with a CN not allowed, or of a CA nobody trusts, is 401.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCA, issue } from '@kubeling/pki';
import { clientFor, startTestEnv, type TestEnv } from '@kubeling/testenv';

type Cert = { certPem: string; keyPem: string };
let env: TestEnv;
let proxy: Cert;
let intruder: Cert;
let stranger: Cert;
let jane: Cert;

const ssr = (creds: Cert & { headers?: Record<string, string> }, path = '/apis/authentication.k8s.io/v1/selfsubjectreviews') =>
  clientFor(env, creds)('POST', path, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

before(async () => {
  const proxyCA = await createCA('front-proxy-ca');
  proxy = await issue(proxyCA, { commonName: 'front-proxy-client', organizations: ['system:masters'], usage: 'client' });
  intruder = await issue(proxyCA, { commonName: 'intruder', usage: 'client' });
  stranger = await issue(await createCA('kubeling-test-ca'), { commonName: 'stranger', organizations: ['system:masters'], usage: 'client' });
  env = await startTestEnv({
    secure: true,
    server: {
      aggregation: {
        requestHeader: {
          clientCA: proxyCA.certPem,
          allowedNames: ['front-proxy-client'],
          usernameHeaders: ['X-Remote-User'],
          groupHeaders: ['X-Remote-Group'],
          extraHeadersPrefix: ['X-Remote-Extra-'],
        },
      },
    },
  });
  jane = await env.pki!.client('jane', ['developers']);
});

after(async () => {
  await env?.stop();
});

test('the front proxy names the user, its groups and extras', async () => {
  const r = await ssr({ ...proxy, headers: { 'X-Remote-User': 'alice', 'X-Remote-Group': 'readers', 'X-Remote-Extra-Acme.com%2Fproject': 'p1' } });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.status.userInfo, { username: 'alice', groups: ['readers', 'system:authenticated'], extra: { 'acme.com/project': ['p1'] } });
  const denied = await clientFor(env, { ...proxy, headers: { 'X-Remote-User': 'alice' } })('GET', '/api/v1/namespaces/kube-system/secrets');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"');
});

test('a client-CA certificate cannot set X-Remote-User: it stays its own CN', async () => {
  const r = await ssr({ ...jane, headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' } });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.status.userInfo, { username: 'jane', groups: ['developers', 'system:authenticated'] });
  const secrets = await clientFor(env, { ...jane, headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' } })(
    'GET',
    '/api/v1/namespaces/kube-system/secrets',
  );
  assert.equal(secrets.status, 403);
});

test('a proxy certificate is no user of its own: without headers it is 401, never its CN or O=system:masters', async () => {
  for (const path of ['/api/v1/namespaces/kube-system/secrets', '/api', '/healthz']) {
    const r = await clientFor(env, proxy)('GET', path);
    assert.equal(r.status, 401, path);
    assert.equal(r.body.reason, 'Unauthorized');
  }
  assert.equal((await ssr(proxy)).status, 401);
});

test('a proxy CN not in the allowed names, or a certificate of an untrusted CA, is 401', async () => {
  assert.equal((await ssr({ ...intruder, headers: { 'X-Remote-User': 'alice' } })).status, 401);
  assert.equal((await ssr({ ...stranger, headers: { 'X-Remote-User': 'alice' } })).status, 401);
  assert.equal((await clientFor(env, stranger)('GET', '/api/v1/namespaces')).status, 401, 'a CA of the same name is not the client CA');
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  assert.equal((await clientFor(env, admin)('GET', '/api/v1/namespaces/kube-system/secrets')).status, 200, 'client-CA users are unaffected');
});
