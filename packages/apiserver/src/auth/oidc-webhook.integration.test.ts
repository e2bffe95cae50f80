/**
 * Authentication and authorization chained, as a cluster with an identity
 * provider and an external policy engine runs them: the real kubectl logs in
 * with an OIDC issuer's token printed by an exec credential plugin, and a
 * SubjectAccessReview webhook (ahead of RBAC in --authorization-mode) decides
 * what that user may do. The webhook sees the user the JWT authenticator
 * mapped; what it has no opinion on falls through to RBAC.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createCA, issue } from '@kubeling/pki';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { type SarWebhook, startSarWebhook } from './authz.fixtures.js';

const kubectlBin = kubectlBinaries().default;
let env: TestEnv;
let issuer: Server;
let webhook: SarWebhook;
let dir: string;
let kubectl: Kubectl;

before(async () => {
  if (!kubectlBin) return;
  dir = mkdtempSync(join(tmpdir(), 'oidc-webhook-'));
  const ca = await createCA('oidc-issuer-ca');
  const serving = await issue(ca, { commonName: 'issuer', ips: ['127.0.0.1'], usage: 'server' });
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  let base = '';
  issuer = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const json = (o: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));
    if (req.url === '/.well-known/openid-configuration') json({ issuer: base, jwks_uri: `${base}/keys` });
    else if (req.url === '/keys') json({ keys: [jwk] });
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
  // The policy engine: the OIDC group "oidc:viewers" may read namespaces; nothing else is its business.
  webhook = await startSarWebhook((spec) =>
    (spec.groups ?? []).includes('oidc:viewers') &&
    spec.resourceAttributes?.resource === 'namespaces' &&
    ['get', 'list'].includes(spec.resourceAttributes?.verb)
      ? { allowed: true, reason: 'viewers read namespaces' }
      : { allowed: false },
  );
  env = await startTestEnv({
    secure: true,
    server: {
      authenticationConfig: {
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AuthenticationConfiguration',
        jwt: [
          {
            issuer: { url: base, certificateAuthority: ca.certPem, audiences: ['kubectl'] },
            claimMappings: { username: { claim: 'email', prefix: 'oidc:' }, groups: { claim: 'groups', prefix: 'oidc:' } },
          },
        ],
      },
      authorizationMode: ['Node', 'Webhook', 'RBAC'],
      authorization: { webhookConfigFile: webhook.kubeconfig(dir, 'authz'), webhookVersion: 'v1' },
    },
  });
  const now = Math.floor(Date.now() / 1000);
  const idToken = await new SignJWT({
    iss: base,
    aud: 'kubectl',
    sub: '42',
    email: 'dana@example.com',
    email_verified: true,
    groups: ['viewers'],
    exp: now + 600,
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(privateKey);
  // What a login helper (kubelogin and the like) does: print an ExecCredential with the ID token.
  const plugin = join(dir, 'oidc-login.sh');
  const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: idToken } };
  writeFileSync(plugin, `#!/bin/sh\ncat <<'EOF'\n${JSON.stringify(credential)}\nEOF\n`);
  chmodSync(plugin, 0o755);
  kubectl = new Kubectl(env.url, kubectlBin);
  writeFileSync(
    kubectl.kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: test',
      `  cluster: {server: "${env.url}", certificate-authority-data: ${Buffer.from(env.pki!.caPem).toString('base64')}}`,
      'users:',
      '- name: oidc',
      '  user:',
      '    exec: {apiVersion: client.authentication.k8s.io/v1, command: "' + plugin + '", interactiveMode: Never}',
      'contexts:',
      '- name: test',
      '  context: {cluster: test, user: oidc}',
      'current-context: test',
      '',
    ].join('\n'),
  );
});

after(async () => {
  kubectl?.cleanup();
  await env?.stop();
  await webhook?.close();
  await new Promise((r) => (issuer ? issuer.close(r) : r(undefined)));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('kubectl logs in through the OIDC issuer and the Webhook authorizer decides', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
  const who = await kubectl.run(['auth', 'whoami', '-o', 'json']);
  assert.equal(who.code, 0, who.stderr);
  const info = JSON.parse(who.stdout).status.userInfo;
  assert.equal(info.username, 'oidc:dana@example.com');
  assert.deepEqual(info.groups, ['oidc:viewers', 'system:authenticated']);

  const ns = await kubectl.run(['get', 'ns', '-o', 'name']);
  assert.equal(ns.code, 0, ns.stderr);
  assert.match(ns.stdout, /^namespace\/default$/m);
  const asked = webhook.reviews.find((r) => r.body.spec.resourceAttributes?.resource === 'namespaces');
  assert.ok(asked, 'the webhook was asked about namespaces');
  assert.equal(asked.body.kind, 'SubjectAccessReview');
  assert.equal(asked.body.apiVersion, 'authorization.k8s.io/v1');
  assert.equal(asked.body.spec.user, 'oidc:dana@example.com');
  assert.equal(asked.token, 'webhook-secret', 'the apiserver presents the kubeconfig user to the webhook');

  // No opinion from the webhook and no RBAC binding: RBAC's refusal, upstream's message.
  const pods = await kubectl.run(['get', 'pods', '-A']);
  assert.notEqual(pods.code, 0);
  assert.match(pods.stderr, /pods is forbidden: User "oidc:dana@example.com" cannot list resource "pods" in API group "" at the cluster scope/);
});
