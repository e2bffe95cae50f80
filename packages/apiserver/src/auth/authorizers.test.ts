/** The union of authorizers: order, final denials, reasons and errors, and the rules a review gathers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alwaysAllow, alwaysDeny, buildAuthorizer } from './authorizers.js';
import { UnionAuthorizer } from './rbac.js';
import type { Attributes, Authorizer, Decision, RuleSet } from './types.js';

const a = (name: string, groups: string[] = []): Attributes => ({
  user: { name, groups },
  verb: 'get',
  isResourceRequest: true,
  resource: 'pods',
  namespace: 'dev',
});
const fixed = (d: Decision, rules?: RuleSet): Authorizer => ({ authorize: () => d, ...(rules ? { resolveRules: () => rules } : {}) });

test('the first allow or deny wins with its own reason; no opinion gathers every reason and error', async () => {
  const deny = fixed({ allowed: false, denied: true, reason: 'webhook says no' });
  const allow = fixed({ allowed: true, reason: 'RBAC: allowed' });
  const quiet = (reason: string, error?: string) => fixed({ allowed: false, reason, ...(error ? { error } : {}) });
  assert.deepEqual(await new UnionAuthorizer([quiet('a'), deny, allow]).authorize(a('x')), { allowed: false, denied: true, reason: 'webhook says no' });
  assert.deepEqual(await new UnionAuthorizer([quiet('a'), allow, deny]).authorize(a('x')), { allowed: true, reason: 'RBAC: allowed' });
  assert.deepEqual(await new UnionAuthorizer([quiet('a', 'e1'), quiet(''), quiet('b', 'e2')]).authorize(a('x')), {
    allowed: false,
    reason: 'a\nb',
    error: '[e1, e2]',
  });
  assert.deepEqual(await new UnionAuthorizer([alwaysDeny, allow]).authorize(a('x')), { allowed: true, reason: 'RBAC: allowed' }, 'AlwaysDeny has no opinion');
});

test('rules: every resolver, incomplete when any is, errors aggregated', () => {
  const some: RuleSet = { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], nonResourceRules: [], incomplete: false };
  const webhook: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'webhook authorizer does not support user rule resolution' };
  const u = new UnionAuthorizer([
    fixed({ allowed: false, reason: '' }),
    fixed({ allowed: false, reason: '' }, some),
    fixed({ allowed: false, reason: '' }, webhook),
  ]);
  assert.deepEqual(u.resolveRules({ name: 'x', groups: [] }, 'dev'), { ...some, incomplete: true, error: webhook.error });
  assert.equal(alwaysAllow.resolveRules!({ name: 'x', groups: [] }, '').resourceRules[0]!.verbs[0], '*');
});

test('a plan becomes system:masters, then its authorizers in order', async () => {
  const calls: string[] = [];
  const built = buildAuthorizer(
    new Map(),
    {
      authorizers: [
        { type: 'AlwaysDeny', name: 'alwaysdeny' },
        {
          type: 'Webhook',
          name: 'w',
          webhook: {
            timeoutMs: 1000,
            subjectAccessReviewVersion: 'v1',
            failurePolicy: 'NoOpinion',
            authorizedTTLMs: 0,
            unauthorizedTTLMs: 0,
            connectionInfo: { type: 'InClusterConfig' },
            matchConditions: [],
          },
        },
      ],
    },
    {
      webhookClient: () => ({
        url: 'https://w',
        post: async <T>(body: unknown) => {
          calls.push((body as { spec: { user: string } }).spec.user);
          return { status: 200, body: { status: { allowed: true, reason: 'w' } } as T };
        },
      }),
    },
  );
  assert.deepEqual(await built.authorizer.authorize(a('admin', ['system:masters'])), { allowed: true, reason: 'member of system:masters' });
  assert.deepEqual(await built.authorizer.authorize(a('jane')), { allowed: true, reason: 'w' });
  assert.deepEqual(calls, ['jane'], 'masters never reach the webhook');
  assert.equal(built.rbac, undefined);
  assert.throws(() => buildAuthorizer(new Map(), { authorizers: [{ type: 'ABAC', name: 'abac' }] }), /ABAC's authorization policy file not passed/);
});
