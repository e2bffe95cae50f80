/**
 * JWT authentication from an --authentication-config against an OIDC issuer
 * of the test's own (HTTPS on loopback with its own CA, keys signed with
 * jose): mapped users seen through SelfSubjectReview, the refusals upstream
 * makes (audience, expiry, issuer, claim rules), key rotation at the issuer,
 * CEL mappings behind a discovery URL, and the real kubectl logging in
 * through an exec credential plugin.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createCA, issue } from '@kubeling/pki';
import { clientFor, eventually, Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';
import type { AuthenticationConfiguration } from './authn-config.js';

let env: TestEnv;
let issuerServer: Server;
let base: string;
let dir: string;
let admin: { certPem: string; keyPem: string };
const hits: string[] = [];
let published: JWK[] = [];

type Key = { privateKey: CryptoKey; jwk: JWK; kid: string; alg: 'RS256' | 'ES256' };
let rsa: Key;

async function key(alg: 'RS256' | 'ES256', kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { privateKey: privateKey as CryptoKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, kid, alg };
}

const now = () => Math.floor(Date.now() / 1000);
const sign = (k: Key, claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: k.alg, kid: k.kid }).sign(k.privateKey);
/** A token of the first issuer that passes every rule, with `over` applied. */
const token = (over: Record<string, unknown> = {}, k = rsa) =>
  sign(k, { iss: base, aud: 'kubeling', sub: 'alice', hd: 'example.com', groups: ['dev'], iat: now(), exp: now() + 600, ...over });
const celToken = (over: Record<string, unknown> = {}) =>
  sign(rsa, {
    iss: `${base}/cel`,
    aud: ['other'],
    sub: 'u-123',
    email: 'bob@example.com',
    email_verified: true,
    roles: ['ops'],
    tier: 'gold',
    exp: now() + 600,
    ...over,
  });

const whoami = async (t: string) => {
  const r = await clientFor(env, { token: t })('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return r.status === 201 ? r.body.status.userInfo : { status: r.status, reason: r.body.reason, message: r.body.message };
};
const UNAUTHORIZED = { status: 401, reason: 'Unauthorized', message: 'Unauthorized' };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-authn-'));
  const ca = await createCA('oidc-test-ca');
  const serving = await issue(ca, { commonName: 'issuer', ips: ['127.0.0.1'], usage: 'server' });
  rsa = await key('RS256', 'first');
  published = [rsa.jwk];
  issuerServer = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    hits.push(req.url ?? '');
    const json = (o: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));
    if (req.url === '/.well-known/openid-configuration') json({ issuer: base, jwks_uri: `${base}/keys` });
    else if (req.url === '/cel-discovery') json({ issuer: `${base}/cel`, jwks_uri: `${base}/keys` });
    else if (req.url === '/keys') json({ keys: published });
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  const authenticationConfig: AuthenticationConfiguration = {
    apiVersion: 'apiserver.config.k8s.io/v1beta1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: base, certificateAuthority: ca.certPem, audiences: ['kubeling'] },
        claimValidationRules: [
          { claim: 'hd', requiredValue: 'example.com' },
          { expression: 'claims.?banned.orValue(false) == false', message: 'banned' },
        ],
        claimMappings: { username: { claim: 'sub', prefix: 'oidc:' }, groups: { claim: 'groups', prefix: 'oidc:' } },
      },
      {
        issuer: {
          url: `${base}/cel`,
          discoveryURL: `${base}/cel-discovery`,
          certificateAuthority: ca.certPem,
          audiences: ['kubeling', 'other'],
          audienceMatchPolicy: 'MatchAny',
        },
        claimMappings: {
          username: { expression: "claims.email_verified ? 'cel:' + claims.email : ''" },
          groups: { expression: "claims.roles.map(r, 'role:' + r)" },
          uid: { claim: 'sub' },
          extra: [{ key: 'example.com/tier', valueExpression: 'claims.tier' }],
        },
        userValidationRules: [{ expression: "!user.username.startsWith('cel:system:')", message: 'no system users' }],
      },
    ],
  };
  env = await startTestEnv({ secure: true, server: { authenticationConfig } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
});

after(async () => {
  await env?.stop();
  await new Promise((r) => issuerServer?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

test('a token of the issuer is its mapped user (claim and prefix), in system:authenticated', async () => {
  assert.deepEqual(await whoami(await token({ jti: 'id-1' })), {
    username: 'oidc:alice',
    groups: ['oidc:dev', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/credential-id': ['JTI=id-1'] },
  });
  assert.deepEqual(hits.filter((h) => h !== '/cel-discovery').slice(0, 2), ['/.well-known/openid-configuration', '/keys'], 'discovery, then the key set');
});

test('refused tokens are 401: audience, expiry, not-before, claim rules, missing username claim', async () => {
  for (const [what, over] of [
    ['wrong audience', { aud: 'someone-else' }],
    ['expired', { exp: now() - 5 }],
    ['no exp', { exp: undefined }],
    ['nbf beyond the one-minute leeway', { nbf: now() + 120 }],
    ['required claim', { hd: 'evil.com' }],
    ['CEL claim rule', { banned: true }],
    ['no sub', { sub: undefined }],
  ] as const)
    assert.deepEqual(await whoami(await token(over)), UNAUTHORIZED, what);
  const r = await clientFor(env, { token: await token({ hd: 'evil.com' }) })('GET', '/healthz');
  assert.equal(r.status, 401, 'a refused token is not anonymous, even where anonymous may go');
});

test('a JWT of an issuer not configured costs the issuer nothing', async () => {
  const before = hits.length;
  for (const iss of [`${base}/nope`, 'https://elsewhere.example']) assert.deepEqual(await whoami(await token({ iss })), UNAUTHORIZED, iss);
  assert.equal(hits.length, before);
});

test('key rotation at the issuer: a token signed with a new key is verified after a refetch', async () => {
  const next = await key('ES256', 'second');
  published = [next.jwk];
  const keyFetches = () => hits.filter((h) => h === '/keys').length;
  const fetched = keyFetches();
  assert.equal((await whoami(await token({ sub: 'rotated' }, next))).username, 'oidc:rotated');
  assert.equal(keyFetches(), fetched + 1);
  assert.equal((await whoami(await token({ sub: 'again' }, next))).username, 'oidc:again', 'cached now');
  assert.equal(keyFetches(), fetched + 1);
  published = [rsa.jwk, next.jwk];
  const forged = await key('RS256', 'first');
  assert.deepEqual(await whoami(await token({}, forged)), UNAUTHORIZED, 'a published kid, another key');
});

test('CEL mappings behind a discovery URL: username expression, groups, uid, extra; user validation', async () => {
  assert.deepEqual(await whoami(await celToken()), {
    username: 'cel:bob@example.com',
    uid: 'u-123',
    groups: ['role:ops', 'system:authenticated'],
    extra: { 'example.com/tier': ['gold'] },
  });
  assert.ok(hits.includes('/cel-discovery'));
  assert.deepEqual(await whoami(await celToken({ email_verified: false })), UNAUTHORIZED, 'empty username');
  assert.deepEqual(await whoami(await celToken({ email: 'system:admin' })), UNAUTHORIZED, 'user validation rule');
  assert.deepEqual(await whoami(await celToken({ aud: 'nobody' })), UNAUTHORIZED, 'MatchAny over kubeling, other');
});

const kubectlBin = kubectlBinaries().default;
test('kubectl logs in through an exec credential plugin; RBAC grants the OIDC user', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
  const plugin = join(dir, 'oidc-login.sh');
  const credential = {
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: await token({ sub: 'carol', groups: [] }), expirationTimestamp: new Date((now() + 600) * 1000).toISOString() },
  };
  writeFileSync(plugin, `#!/bin/sh\ncat <<'EOF'\n${JSON.stringify(credential)}\nEOF\n`);
  chmodSync(plugin, 0o755);
  const k = new Kubectl(env.url, kubectlBin!);
  try {
    writeFileSync(
      k.kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: test',
        '  cluster:',
        `    server: ${env.url}`,
        `    certificate-authority-data: ${Buffer.from(env.pki!.caPem).toString('base64')}`,
        'users:',
        '- name: oidc',
        '  user:',
        '    exec:',
        '      apiVersion: client.authentication.k8s.io/v1',
        `      command: ${plugin}`,
        '      interactiveMode: Never',
        'contexts:',
        '- name: test',
        '  context: {cluster: test, user: oidc}',
        'current-context: test',
        '',
      ].join('\n'),
    );
    const who = await k.run(['auth', 'whoami', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(JSON.parse(who.stdout).status.userInfo.username, 'oidc:carol');
    const denied = await k.run(['get', 'ns']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /namespaces is forbidden: User "oidc:carol" cannot list resource "namespaces" in API group "" at the cluster scope/);
    const admin_ = clientFor(env, admin);
    await admin_('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'ns-reader' },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
    });
    await admin_('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'carol-reads-ns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ns-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'oidc:carol' }],
    });
    const ok = await eventually(async () => {
      const r = await k.run(['get', 'ns', '-o', 'name']);
      return r.code === 0 && r;
    });
    assert.match(ok.stdout, /namespace\/default/);
  } finally {
    k.cleanup();
  }
});
