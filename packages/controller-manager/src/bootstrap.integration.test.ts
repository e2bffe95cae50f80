/**
 * Bootstrap tokens end to end against a secure apiserver started with
 * --enable-bootstrap-token-auth: a token Secret in kube-system authenticates
 * as system:bootstrap:<id> until it expires; the bootstrap signer keeps a
 * detached JWS of cluster-info's kubeconfig per signing token (checked with the
 * token as upstream's joining nodes check it); the token cleaner deletes
 * expired token Secrets.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { compactVerify } from 'jose';
import pino from 'pino';
import { clientFor, eventually, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
let admin: ReturnType<typeof clientFor>;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const tokenSecret = (id: string, secret: string, extra: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
  type: 'bootstrap.kubernetes.io/token',
  data: Object.fromEntries(Object.entries({ 'token-id': id, 'token-secret': secret, ...extra }).map(([k, v]) => [k, b64(v)])),
});
const whoami = async (token: string) =>
  clientFor(env, { token })('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

before(async () => {
  env = await startTestEnv({ secure: true, server: { enableBootstrapTokenAuth: true } });
  admin = clientFor(env, await env.pki!.client('kubernetes-admin', ['system:masters']));
  const creds = await env.pki!.client('system:kube-controller-manager');
  mgr = new ControllerManager({
    config: {
      server: env.url,
      namespace: 'default',
      ca: Buffer.from(env.pki!.caPem),
      cert: Buffer.from(creds.certPem),
      key: Buffer.from(creds.keyPem),
      insecureSkipTLSVerify: false,
    },
    controllers: ['bootstrapsigner', 'tokencleaner'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

test('a bootstrap token authenticates as system:bootstrap:<id> with its extra groups', async () => {
  const s = tokenSecret('abcdef', '0123456789abcdef', {
    'usage-bootstrap-authentication': 'true',
    'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
  });
  assert.equal((await admin('POST', '/api/v1/namespaces/kube-system/secrets', s)).status, 201);
  const r = await whoami('abcdef.0123456789abcdef');
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.status.userInfo.username, 'system:bootstrap:abcdef');
  assert.deepEqual(r.body.status.userInfo.groups, ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated']);
  assert.equal((await whoami('abcdef.0123456789abcdeX')).status, 401);
  // Not allowed for authentication: refused.
  const s2 = tokenSecret('ghijkl', '0123456789abcdef', { 'usage-bootstrap-signing': 'true' });
  assert.equal((await admin('POST', '/api/v1/namespaces/kube-system/secrets', s2)).status, 201);
  assert.equal((await whoami('ghijkl.0123456789abcdef')).status, 401);
});

test('the bootstrap signer signs cluster-info with each signing token, and drops signatures of tokens gone', async () => {
  const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters: []\n';
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info' }, data: { kubeconfig } };
  assert.equal((await admin('POST', '/api/v1/namespaces/kube-public/configmaps', cm)).status, 201);
  const signed = await eventually(async () => {
    const c = (await admin('GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info')).body;
    return c.data?.['jws-kubeconfig-ghijkl'] && c;
  });
  // abcdef is not for signing.
  assert.equal(signed.data['jws-kubeconfig-abcdef'], undefined);
  const [header, empty, sig] = signed.data['jws-kubeconfig-ghijkl'].split('.');
  assert.equal(empty, '');
  const full = `${header}.${Buffer.from(kubeconfig).toString('base64url')}.${sig}`;
  const v = await compactVerify(full, new TextEncoder().encode('ghijkl.0123456789abcdef'));
  assert.deepEqual(v.protectedHeader, { alg: 'HS256', kid: 'ghijkl' });
  assert.equal((await admin('DELETE', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-ghijkl')).status, 200);
  await eventually(async () => {
    const c = (await admin('GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info')).body;
    return c.data['jws-kubeconfig-ghijkl'] === undefined && c.data.kubeconfig === kubeconfig;
  });
});

test('an expired token does not authenticate, and the token cleaner deletes it', async () => {
  const soon = new Date(Date.now() + 1500).toISOString().replace(/\.\d+Z$/, 'Z');
  const s = tokenSecret('mnopqr', '0123456789abcdef', { 'usage-bootstrap-authentication': 'true', expiration: soon });
  assert.equal((await admin('POST', '/api/v1/namespaces/kube-system/secrets', s)).status, 201);
  assert.equal((await whoami('mnopqr.0123456789abcdef')).status, 201);
  await eventually(async () => (await admin('GET', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-mnopqr')).status === 404);
  assert.equal((await whoami('mnopqr.0123456789abcdef')).status, 401);
});
