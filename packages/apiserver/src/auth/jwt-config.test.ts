/**
 * AuthenticationConfiguration validation with upstream's field errors
 * (validation.go), and claims → user mapping with upstream's rules and
 * messages (oidc.go): prefixes, email_verified, groups, CEL mappings and
 * validation rules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage } from '@kubeling/apimachinery';
import { claimsToUser } from './jwt-claims.js';
import {
  type AuthenticationConfiguration,
  compileAuthenticationConfiguration,
  decodeAuthenticationConfiguration,
  type JWTAuthenticator,
} from './jwt-config.js';

const base = (over: Partial<JWTAuthenticator> = {}): JWTAuthenticator => ({
  issuer: { url: 'https://issuer.example.com', audiences: ['kubernetes'] },
  claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } },
  ...over,
});

const errorsOf = (jwt: JWTAuthenticator[], disallowed: string[] = []) =>
  compileAuthenticationConfiguration({ jwt } as AuthenticationConfiguration, disallowed).errs.map((e) => aggregateMessage([e]));

const mapperOf = (a: JWTAuthenticator) => {
  const r = compileAuthenticationConfiguration({ jwt: [a] }, []);
  assert.deepEqual(r.errs, []);
  return r.jwt[0]!.mapper;
};

test('issuer: https only, no userinfo/query/fragment, audiences, match policy, discovery URL, disallowed issuers', () => {
  assert.deepEqual(errorsOf([base({ issuer: { url: 'http://issuer.example.com?x=1#f', audiences: [] } })]), [
    'jwt[0].issuer.url: Invalid value: "http://issuer.example.com?x=1#f": URL scheme must be https',
    'jwt[0].issuer.url: Invalid value: "http://issuer.example.com?x=1#f": URL must not contain a query',
    'jwt[0].issuer.url: Invalid value: "http://issuer.example.com?x=1#f": URL must not contain a fragment',
    'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required',
  ]);
  assert.deepEqual(errorsOf([base({ issuer: { url: '', audiences: ['a', 'a'] } })]), [
    'jwt[0].issuer.url: Required value',
    'jwt[0].issuer.audiences[1]: Duplicate value: "a"',
    'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
  ]);
  assert.deepEqual(
    errorsOf([base({ issuer: { url: 'https://a.example', discoveryURL: 'https://a.example/', audiences: ['x'], audienceMatchPolicy: 'MatchAll' } })]),
    [
      'jwt[0].issuer.discoveryURL: Invalid value: "https://a.example/": discoveryURL must be different from URL',
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience',
    ],
  );
  assert.deepEqual(errorsOf([base({ issuer: { url: 'https://kubernetes.default.svc', audiences: ['x'] } })], ['https://kubernetes.default.svc']), [
    'jwt[0].issuer.url: Invalid value: "https://kubernetes.default.svc": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc]',
  ]);
  assert.deepEqual(errorsOf([base({ issuer: { url: 'https://u:p@a.example', audiences: ['x'], certificateAuthority: 'not a pem' } })]), [
    'jwt[0].issuer.url: Invalid value: "https://u:p@a.example": URL must not contain a username or password',
    'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates',
  ]);
  assert.deepEqual(errorsOf([base(), base()]), ['jwt[1].issuer.url: Duplicate value: "https://issuer.example.com"']);
});

test('claim mappings: prefix required with a claim, not with an expression; claim xor expression; extra keys', () => {
  assert.deepEqual(errorsOf([base({ claimMappings: { username: { claim: 'sub' } } })]), [
    'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
  ]);
  assert.deepEqual(errorsOf([base({ claimMappings: { username: { expression: 'claims.sub', prefix: 'x:' } } })]), [
    'jwt[0].claimMappings.username.prefix: Invalid value: "x:": may not be specified when expression is set',
  ]);
  assert.deepEqual(errorsOf([base({ claimMappings: { username: {}, uid: { claim: 'sub', expression: 'claims.sub' } } })]), [
    'jwt[0].claimMappings.username: Required value: claim or expression is required',
    `jwt[0].claimMappings.uid: Invalid value: "": claim and expression can't both be set`,
  ]);
  assert.deepEqual(
    errorsOf([
      base({
        claimMappings: {
          username: { claim: 'sub', prefix: '' },
          extra: [
            { key: 'example.com/Tier', valueExpression: 'claims.tier' },
            { key: 'kubernetes.io/x', valueExpression: 'claims.x' },
            { key: 'nodomain', valueExpression: 'claims.y' },
            { key: 'example.com/a', valueExpression: '' },
          ],
        },
      }),
    ]),
    [
      'jwt[0].claimMappings.extra[0].key: Invalid value: "example.com/Tier": must be lowercase',
      'jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      'jwt[0].claimMappings.extra[2].key: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")',
      'jwt[0].claimMappings.extra[3].valueExpression: Required value',
    ],
  );
});

test('CEL: compile errors, bool rules, claims.email needs claims.email_verified', () => {
  const errs = errorsOf([
    base({
      claimValidationRules: [{ expression: 'claims.x ==' }, { expression: "claims.hd + ''" }, { claim: 'hd', requiredValue: 'x', message: 'm' }],
      userValidationRules: [{ expression: 'user.nope' }],
    }),
  ]);
  assert.match(errs[0]!, /^jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value: "claims\.x ==": compilation failed: ERROR: <input>:1:/);
  assert.equal(errs[1], `jwt[0].claimValidationRules[1].expression: Invalid value: "claims.hd + ''": must evaluate to bool`);
  assert.equal(errs[2], 'jwt[0].claimValidationRules[2].message: Invalid value: "m": may not be specified when claim is set');
  assert.match(
    errs[3]!,
    /^jwt\[0\]\.userValidationRules\[0\]\.expression: Invalid value: "user\.nope": compilation failed: ERROR: <input>:1:5: undefined field 'nope'/,
  );
  assert.deepEqual(errorsOf([base({ claimMappings: { username: { expression: 'claims.email' } } })]), [
    'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
  ]);
  assert.deepEqual(
    errorsOf([
      base({
        claimMappings: { username: { expression: 'claims.email' } },
        claimValidationRules: [{ expression: 'claims.?email_verified.orValue(true) == true' }],
      }),
    ]),
    [],
  );
});

test('strict decoding: unknown fields and wrong types are errors; null is absent', () => {
  assert.throws(() => decodeAuthenticationConfiguration({ jwt: [{ issuer: { url: 'https://a', audiences: 'x', foo: 1 } }] }), {
    message:
      'json: cannot unmarshal string into Go struct field jwt[0].issuer.audiences of type array, strict decoding error: unknown field "jwt[0].issuer.foo"',
  });
  const c = decodeAuthenticationConfiguration({
    jwt: [{ issuer: { url: 'https://a', audiences: ['x'] }, claimMappings: { username: { claim: 'sub', prefix: null } } }],
  });
  assert.deepEqual(errorsOf(c.jwt!), [
    'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
  ]);
});

test('username from a claim: prefix, email requires email_verified true when present', () => {
  const m = mapperOf(base());
  assert.deepEqual(claimsToUser(m, { sub: 'alice' }), { name: 'oidc:alice', groups: [] });
  const email = mapperOf(base({ claimMappings: { username: { claim: 'email', prefix: '' } } }));
  assert.equal(claimsToUser(email, { email: 'a@example.com' }).name, 'a@example.com');
  assert.equal(claimsToUser(email, { email: 'a@example.com', email_verified: true }).name, 'a@example.com');
  assert.throws(() => claimsToUser(email, { email: 'a@example.com', email_verified: false }), { message: 'oidc: email not verified' });
  assert.throws(() => claimsToUser(email, { email: 'a@example.com', email_verified: 'true' }), {
    message: "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool",
  });
  assert.throws(() => claimsToUser(m, {}), { message: 'oidc: parse username claims "sub": claim not present' });
  assert.throws(() => claimsToUser(m, { sub: 7 }), {
    message: 'oidc: parse username claims "sub": json: cannot unmarshal number into Go value of type string',
  });
  // A claim named like an Object.prototype member is not "present".
  const proto = mapperOf(base({ claimValidationRules: [{ claim: 'constructor', requiredValue: 'x' }] }));
  assert.throws(() => claimsToUser(proto, { sub: 'a' }), { message: 'oidc: required claim constructor not present in ID token' });
});

test('groups: a string or a list, prefixed; uid from a claim; required claims; credential id from jti', () => {
  const m = mapperOf(
    base({
      claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { claim: 'groups', prefix: 'g:' }, uid: { claim: 'oid' } },
      claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }],
    }),
  );
  assert.deepEqual(claimsToUser(m, { sub: 'a', groups: ['x', 'y'], oid: 'u1', hd: 'example.com', jti: 'j1' }), {
    name: 'a',
    groups: ['g:x', 'g:y'],
    uid: 'u1',
    extra: { 'authentication.kubernetes.io/credential-id': ['JTI=j1'] },
  });
  assert.deepEqual(claimsToUser(m, { sub: 'a', groups: 'solo', oid: 'u1', hd: 'example.com' }).groups, ['g:solo']);
  assert.deepEqual(claimsToUser(m, { sub: 'a', oid: 'u1', hd: 'example.com' }).groups, []);
  assert.throws(() => claimsToUser(m, { sub: 'a', oid: 'u1', hd: 'evil.com' }), {
    message: 'oidc: required claim hd value does not match. Got = evil.com, want = example.com',
  });
  assert.throws(() => claimsToUser(m, { sub: 'a', hd: 'example.com' }), { message: 'oidc: parse uid claim "oid": claim not present' });
});

test('CEL mappings and rules: username, groups, uid, extra; claim and user validation messages', () => {
  const m = mapperOf(
    base({
      claimMappings: {
        username: { expression: "claims.email_verified ? 'cel:' + claims.email : ''" },
        groups: { expression: "claims.roles.map(r, 'role:' + r)" },
        uid: { expression: 'string(claims.num)' },
        extra: [
          { key: 'example.com/tier', valueExpression: 'claims.?tier.orValue(null)' },
          { key: 'example.com/teams', valueExpression: "['a', '', 'b']" },
        ],
      },
      claimValidationRules: [{ expression: 'claims.?banned.orValue(false) == false', message: 'banned users are refused' }],
      userValidationRules: [{ expression: "!user.username.startsWith('cel:system:')", message: 'no system users' }],
    }),
  );
  const claims = { email: 'bob@example.com', email_verified: true, roles: ['dev', 'ops'], num: 42 };
  assert.deepEqual(claimsToUser(m, claims), {
    name: 'cel:bob@example.com',
    groups: ['role:dev', 'role:ops'],
    uid: '42',
    extra: { 'example.com/teams': ['a', 'b'] },
  });
  assert.deepEqual(claimsToUser(m, { ...claims, tier: 'gold' }).extra?.['example.com/tier'], ['gold']);
  assert.throws(() => claimsToUser(m, { ...claims, email_verified: false }), { message: 'oidc: empty username via CEL expression is not allowed' });
  assert.throws(() => claimsToUser(m, { ...claims, banned: true }), {
    message:
      "oidc: error evaluating claim validation expression: validation expression 'claims.?banned.orValue(false) == false' failed: banned users are refused",
  });
  assert.throws(() => claimsToUser(m, { ...claims, email: 'system:admin' }), {
    message: "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('cel:system:')' failed: no system users",
  });
  assert.throws(() => claimsToUser(m, { email: 'x', email_verified: true, num: 1 }), {
    message: "oidc: error evaluating group claim expression: expression 'claims.roles.map(r, 'role:' + r)' resulted in error: no such key: roles",
  });
  const notString = mapperOf(base({ claimMappings: { username: { expression: 'claims.n' } } }));
  assert.throws(() => claimsToUser(notString, { n: 1 }), {
    message: 'oidc: error evaluating username claim expression: username claim expression must return a string',
  });
  const badGroups = mapperOf(base({ claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { expression: '[1]' } } }));
  assert.throws(() => claimsToUser(badGroups, { sub: 'a' }), {
    message: 'oidc: error evaluating group claim expression: expression must return a string or a list of strings',
  });
});
