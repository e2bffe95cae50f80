/** --authorization-mode and the AuthorizationConfiguration file: the plan each gives, and upstream's messages for mistakes. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goDuration, parseAuthorizationConfiguration, resolveAuthorization } from './authz-config.js';

const dir = mkdtempSync(join(tmpdir(), 'authz-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const kubeconfig = join(dir, 'webhook.kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');

const fails = (f: () => unknown, message: string) => assert.throws(f, { message });

test('modes in order; the Webhook mode is the authorizer "default" with the legacy defaults', () => {
  const plan = resolveAuthorization('Node,Webhook,RBAC', { webhookConfigFile: kubeconfig });
  assert.deepEqual(
    plan.authorizers.map((a) => [a.type, a.name]),
    [
      ['Node', 'node'],
      ['Webhook', 'default'],
      ['RBAC', 'rbac'],
    ],
  );
  assert.deepEqual(plan.authorizers[1]!.webhook, {
    timeoutMs: 30_000,
    subjectAccessReviewVersion: 'v1beta1',
    failurePolicy: 'NoOpinion',
    authorizedTTLMs: 300_000,
    unauthorizedTTLMs: 30_000,
    connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
    matchConditions: [],
  });
  const zero = resolveAuthorization(['Webhook'], { webhookConfigFile: kubeconfig, webhookVersion: 'v1', webhookCacheAuthorizedTTLMs: 0 });
  assert.equal(zero.authorizers[0]!.webhook!.authorizedTTLMs, 0, 'a zero TTL: not cached');
  assert.equal(zero.authorizers[0]!.webhook!.subjectAccessReviewVersion, 'v1');
  assert.deepEqual(resolveAuthorization(undefined, {}, ['RBAC']).authorizers, [{ type: 'RBAC', name: 'rbac' }], 'the default');
});

test('mode list mistakes, all at once, with upstream messages', () => {
  fails(() => resolveAuthorization('RBAC,Magic'), 'authorization-mode "Magic" is not a valid mode');
  fails(() => resolveAuthorization(['RBAC', 'Node', 'RBAC']), 'authorization-mode ["RBAC" "Node" "RBAC"] has mode specified more than once');
  fails(() => resolveAuthorization([]), 'at least one authorization-mode must be passed');
  fails(
    () => resolveAuthorization('ABAC,Webhook'),
    "[authorization-mode ABAC's authorization policy file not passed, authorization-mode Webhook's authorization config file not passed]",
  );
  fails(
    () => resolveAuthorization('RBAC', { policyFile: '/p', webhookConfigFile: kubeconfig }),
    '[cannot specify --authorization-policy-file without mode ABAC, cannot specify --authorization-webhook-config-file without mode Webhook]',
  );
  fails(
    () => resolveAuthorization('Webhook', { webhookConfigFile: kubeconfig, webhookVersion: 'v2' }),
    'unsupported webhook authorizer version "v2", supported versions are "v1", "v1beta1"',
  );
});

test('--authorization-config excludes the mode list and the webhook flags', () => {
  const file = join(dir, 'authz.yaml');
  writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: RBAC, name: rbac}\n');
  const message = '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined';
  fails(() => resolveAuthorization('RBAC', { configFile: file }), message);
  fails(() => resolveAuthorization(undefined, { configFile: file, webhookCacheUnauthorizedTTLMs: 1000 }), message);
  assert.deepEqual(resolveAuthorization(undefined, { configFile: file }, ['AlwaysAllow']), { authorizers: [{ type: 'RBAC', name: 'rbac' }] });
});

const config = (authorizers: unknown[], extra = '') =>
  `apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n${extra}authorizers: ${JSON.stringify(authorizers)}\n`;
const webhook = (name: string, over: Record<string, unknown> = {}) => ({
  type: 'Webhook',
  name,
  webhook: {
    timeout: '3s',
    subjectAccessReviewVersion: 'v1',
    failurePolicy: 'Deny',
    connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
    ...over,
  },
});

test('a configuration with several webhooks: defaults, caching switches, match conditions compiled', () => {
  const plan = parseAuthorizationConfiguration(
    config([
      { type: 'Node', name: 'node' },
      webhook('guard', {
        matchConditionSubjectAccessReviewVersion: 'v1',
        matchConditions: [{ expression: "request.resourceAttributes.namespace == 'kube-system'" }],
        cacheUnauthorizedRequests: false,
      }),
      webhook('audit.example.com', { authorizedTTL: '1m', failurePolicy: 'NoOpinion', subjectAccessReviewVersion: 'v1beta1' }),
      { type: 'RBAC', name: 'rbac' },
    ]),
  );
  const [guard, audit] = [plan.authorizers[1]!.webhook!, plan.authorizers[2]!.webhook!];
  assert.equal(guard.timeoutMs, 3000);
  assert.deepEqual([guard.authorizedTTLMs, guard.unauthorizedTTLMs, guard.failurePolicy], [300_000, 0, 'Deny']);
  assert.equal(guard.matchConditions.length, 1);
  assert.deepEqual([audit.authorizedTTLMs, audit.unauthorizedTTLMs, audit.subjectAccessReviewVersion], [60_000, 30_000, 'v1beta1']);
});

test('validation: every field error of the file, aggregated', () => {
  fails(() => parseAuthorizationConfiguration(config([])), 'authorizers: Required value: at least one authorization mode must be defined');
  fails(
    () =>
      parseAuthorizationConfiguration(
        config([{ type: 'Magic', name: 'm' }, { type: 'RBAC', name: 'rbac' }, { type: 'RBAC', name: 'rbac2' }, { name: 'x' }, { type: 'Webhook', name: 'w' }]),
      ),
    '[authorizers[0].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook", ' +
      'authorizers[2].type: Duplicate value: "RBAC", authorizers[3].type: Required value, authorizers[4].webhook: Required value: required when type=Webhook]',
  );
  fails(
    () => parseAuthorizationConfiguration(config([webhook('Bad_Name'), webhook('ok'), webhook('ok')])),
    '[authorizers[0].name: Invalid value: "Bad_Name": authorizer name is invalid: ' +
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
      "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), " +
      'authorizers[2].name: Duplicate value: "ok"]',
  );
  fails(
    () =>
      parseAuthorizationConfiguration(
        config([
          webhook('w', {
            timeout: '45s',
            subjectAccessReviewVersion: 'v2',
            failurePolicy: 'Sometimes',
            connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'relative.kubeconfig' },
            matchConditions: [{ expression: 'request.user' }, { expression: ' ' }],
          }),
          { type: 'RBAC', name: 'rbac', webhook: {} },
        ]),
      ),
    '[authorizers[0].timeout: Invalid value: "45s": must be > 0s and <= 30s, ' +
      'authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1", ' +
      'authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified, ' +
      'authorizers[0].failurePolicy: Unsupported value: "Sometimes": supported values: "NoOpinion", "Deny", ' +
      'authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "relative.kubeconfig": must be an absolute path, ' +
      'authorizers[0].matchConditions[0].expression: Invalid value: "request.user": must evaluate to bool but got string, ' +
      'authorizers[0].matchConditions[1].expression: Required value, ' +
      'authorizers[1].webhook: Invalid value: "non-null": may only be specified when type=Webhook]',
  );
  fails(
    () =>
      parseAuthorizationConfiguration(config([{ type: 'Webhook', name: 'w', webhook: { connectionInfo: { type: 'InClusterConfig', kubeConfigFile: '/x' } } }])),
    '[authorizers[0].timeout: Required value, authorizers[0].subjectAccessReviewVersion: Required value, authorizers[0].failurePolicy: Required value, ' +
      'authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/x": can only be set when type=KubeConfigFile]',
  );
  fails(
    () => parseAuthorizationConfiguration(config([webhook('w', { connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: join(dir, 'missing') } })])),
    `authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "${join(dir, 'missing')}": error loading file: stat ${join(dir, 'missing')}: no such file or directory`,
  );
  fails(() => parseAuthorizationConfiguration(config([{ type: 'RBAC', name: 'roles' }])), 'expected name rbac for authorizer RBAC instead of roles');
});

test('decoding: kind, version and unknown fields (the strict decoder)', () => {
  fails(
    () => parseAuthorizationConfiguration('apiVersion: apiserver.config.k8s.io/v9\nkind: AuthorizationConfiguration\n'),
    'failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver.config.k8s.io/v9"',
  );
  fails(
    () => parseAuthorizationConfiguration(config([{ type: 'RBAC', name: 'rbac', typo: 1 }], 'extra: true\n')),
    'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "extra", unknown field "authorizers[0].typo"',
  );
  fails(
    () => parseAuthorizationConfiguration(config([webhook('w', { timeout: 'soon' })])),
    'failed to load AuthorizationConfiguration from file: time: invalid duration "soon"',
  );
  assert.deepEqual(parseAuthorizationConfiguration(config([{ type: 'AlwaysDeny', name: 'alwaysdeny' }]).replace('/v1\n', '/v1beta1\n')).authorizers, [
    { type: 'AlwaysDeny', name: 'alwaysdeny' },
  ]);
});

test("Go's duration strings", () => {
  assert.deepEqual([0, 300, 1500, 30_000, 90_000, 300_000, 3_600_000].map(goDuration), ['0s', '300ms', '1.5s', '30s', '1m30s', '5m0s', '1h0m0s']);
});
