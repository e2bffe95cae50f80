/**
 * Legacy ServiceAccount token Secrets end to end against a secure apiserver
 * (RBAC, the ServiceAccount key): a `kubernetes.io/service-account-token`
 * Secret made by hand is filled by the serviceaccount-token controller with a
 * token, the CA and the namespace; the token authenticates as the
 * ServiceAccount while the Secret holds it; the Secret goes with its
 * ServiceAccount.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { clientFor, eventually, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
let admin: ReturnType<typeof clientFor>;

before(async () => {
  env = await startTestEnv({ secure: true });
  const creds = await env.pki!.client('system:kube-controller-manager');
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  mgr = new ControllerManager({
    config: {
      server: env.url,
      namespace: 'default',
      ca: Buffer.from(env.pki!.caPem),
      cert: Buffer.from(creds.certPem),
      key: Buffer.from(creds.keyPem),
      insecureSkipTLSVerify: false,
    },
    controllers: ['serviceaccount-token'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    serviceAccountKeyPem: env.pki!.saPrivatePem,
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

const secret = (name: string, sa: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, annotations: { 'kubernetes.io/service-account.name': sa } },
  type: 'kubernetes.io/service-account-token',
});

test('a token Secret made by hand is filled, and its token authenticates as the ServiceAccount', async () => {
  assert.equal((await admin('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'robot' } })).status, 201);
  const c = await admin('POST', '/api/v1/namespaces/default/secrets', secret('robot-token', 'robot'));
  assert.equal(c.status, 201, c.text);
  const filled = await eventually(async () => {
    const s = (await admin('GET', '/api/v1/namespaces/default/secrets/robot-token')).body;
    return s.data?.token && s;
  });
  const sa = (await admin('GET', '/api/v1/namespaces/default/serviceaccounts/robot')).body;
  assert.equal(filled.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
  assert.equal(Buffer.from(filled.data.namespace, 'base64').toString(), 'default');
  assert.equal(Buffer.from(filled.data['ca.crt'], 'base64').toString(), env.pki!.caPem);
  const token = Buffer.from(filled.data.token, 'base64').toString();
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
  assert.equal(claims.iss, 'kubernetes/serviceaccount');
  assert.equal(claims.sub, 'system:serviceaccount:default:robot');
  assert.equal(claims['kubernetes.io/serviceaccount/secret.name'], 'robot-token');
  assert.equal(claims.exp, undefined);

  const asRobot = clientFor(env, { token });
  const who = await asRobot('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  assert.equal(who.status, 201, who.text);
  assert.equal(who.body.status.userInfo.username, 'system:serviceaccount:default:robot');
  assert.deepEqual(who.body.status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);

  // A token the Secret no longer holds stops working.
  const edited = { ...filled, data: { ...filled.data, token: Buffer.from('x').toString('base64') } };
  assert.equal((await admin('PUT', '/api/v1/namespaces/default/secrets/robot-token', edited)).status, 200);
  // The authenticator reads Secrets from the apiserver's watch cache, as upstream's from its informer: the change lands shortly after.
  await eventually(async () => (await asRobot('GET', '/api/v1/namespaces/default/pods')).status === 401 || undefined);
});

test('a token Secret goes with its ServiceAccount, and one naming no ServiceAccount is deleted', async () => {
  assert.equal((await admin('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'temp' } })).status, 201);
  assert.equal((await admin('POST', '/api/v1/namespaces/default/secrets', secret('temp-token', 'temp'))).status, 201);
  await eventually(async () => (await admin('GET', '/api/v1/namespaces/default/secrets/temp-token')).body.data?.token);
  assert.equal((await admin('DELETE', '/api/v1/namespaces/default/serviceaccounts/temp')).status, 200);
  await eventually(async () => (await admin('GET', '/api/v1/namespaces/default/secrets/temp-token')).status === 404);
  assert.equal((await admin('POST', '/api/v1/namespaces/default/secrets', secret('ghost-token', 'ghost'))).status, 201);
  await eventually(async () => (await admin('GET', '/api/v1/namespaces/default/secrets/ghost-token')).status === 404);
});
