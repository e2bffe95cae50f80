/**
 * The authentication flags and files: --oidc-* mapped as upstream maps them,
 * the combinations upstream refuses, --authentication-config loading, and an
 * invalid configuration stopping the build with upstream's message.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticationFlags, buildAuthentication, oidcFlagsToConfig, readAuthenticationConfigFile } from './authn-config.js';

const dir = mkdtempSync(join(tmpdir(), 'authn-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

test('--oidc-* flags: username prefix defaults as upstream (issuer# unless email; "-" for none)', () => {
  const user = (f: Partial<Parameters<typeof oidcFlagsToConfig>[0]>) =>
    oidcFlagsToConfig({ issuerURL: 'https://i.example', clientID: 'kube', ...f }).jwt![0]!.claimMappings.username;
  assert.deepEqual(user({}), { claim: 'sub', prefix: 'https://i.example#' });
  assert.deepEqual(user({ usernameClaim: 'email' }), { claim: 'email', prefix: '' });
  assert.deepEqual(user({ usernameClaim: 'upn', usernamePrefix: '-' }), { claim: 'upn', prefix: '' });
  assert.deepEqual(user({ usernamePrefix: 'corp:' }), { claim: 'sub', prefix: 'corp:' });
  const values = {
    'oidc-issuer-url': 'https://i.example',
    'oidc-client-id': 'kube',
    'oidc-groups-claim': 'groups',
    'oidc-required-claim': ['hd=example.com', 'tier=a=b'],
    'oidc-signing-algs': 'RS256,ES256',
  };
  const o = authenticationFlags(values);
  assert.deepEqual(o.oidcSigningAlgs, ['RS256', 'ES256']);
  assert.deepEqual(o.authenticationConfig?.jwt?.[0], {
    issuer: { url: 'https://i.example', audiences: ['kube'] },
    claimMappings: { username: { claim: 'sub', prefix: 'https://i.example#' }, groups: { claim: 'groups', prefix: '' } },
    claimValidationRules: [
      { claim: 'hd', requiredValue: 'example.com' },
      { claim: 'tier', requiredValue: 'a=b' },
    ],
  });
});

test('flag combinations upstream refuses', () => {
  assert.throws(() => authenticationFlags({ 'oidc-issuer-url': 'https://i.example' }), {
    message: 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set',
  });
  assert.throws(() => authenticationFlags({ 'authentication-config': '/nonexistent', 'oidc-groups-claim': 'g' }), {
    message: 'authentication-config file and oidc-* flags are mutually exclusive',
  });
  const o = authenticationFlags({ 'oidc-issuer-url': 'https://i.example', 'oidc-client-id': 'c', 'oidc-signing-algs': 'HS256' });
  assert.throws(() => buildAuthentication({ config: o.authenticationConfig!, signingAlgs: o.oidcSigningAlgs!, serviceAccountIssuers: [], apiAudiences: [] }), {
    message: 'oidc: unsupported signing alg: "HS256"',
  });
  assert.deepEqual(authenticationFlags({ 'authentication-token-webhook-config-file': '/k', 'authentication-token-webhook-cache-ttl': '30s' }), {
    authenticationTokenWebhook: { configFile: '/k', cacheTtlMs: 30_000, version: 'v1beta1' },
  });
});

test('--authentication-config: versions, kind, strict decoding', () => {
  const good = file(
    'good.yaml',
    [
      'apiVersion: apiserver.config.k8s.io/v1beta1',
      'kind: AuthenticationConfiguration',
      'jwt:',
      '- issuer: {url: "https://i.example", audiences: [kube]}',
      '  claimMappings:',
      '    username: {claim: sub, prefix: ""}',
    ].join('\n'),
  );
  assert.equal(readAuthenticationConfigFile(good).jwt?.[0]?.claimMappings.username.prefix, '');
  assert.equal(authenticationFlags({ 'authentication-config': good }).authenticationConfig?.jwt?.length, 1);
  const empty = file('empty.yaml', '\n');
  assert.throws(() => readAuthenticationConfigFile(empty), { message: `failed to load authentication configuration from file "${empty}": empty config data` });
  const wrong = file('wrong.yaml', 'apiVersion: v1\nkind: ConfigMap\n');
  assert.throws(() => readAuthenticationConfigFile(wrong), {
    message: `failed to load authentication configuration from file "${wrong}": no kind "ConfigMap" is registered for version "v1"`,
  });
  const unknown = file(
    'unknown.yaml',
    'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: [{issuer: {url: "https://x", audiences: [a], typo: 1}}]\n',
  );
  assert.throws(() => readAuthenticationConfigFile(unknown), { message: /strict decoding error: unknown field "jwt\[0\]\.issuer\.typo"$/ });
});

test('an invalid configuration stops the build with every field error', () => {
  assert.throws(
    () =>
      buildAuthentication({
        config: { jwt: [{ issuer: { url: 'https://kubernetes.default.svc.cluster.local', audiences: [] }, claimMappings: { username: { claim: 'sub' } } }] },
        serviceAccountIssuers: ['https://kubernetes.default.svc.cluster.local'],
        apiAudiences: [],
      }),
    {
      message:
        'invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc.cluster.local": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc.cluster.local], jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]',
    },
  );
});
