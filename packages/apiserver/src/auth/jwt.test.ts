/**
 * The JWT authenticator with an injected fetch and clock: issuer gating
 * before any network call, go-oidc's claim checks and messages, signing
 * algorithms, key rotation (a refetch on an unknown key, rate-limited) and
 * discovery failures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { JwtAuthenticator, untrustedIssuer } from './jwt.js';
import { ALL_SIGNING_ALGS, compileAuthenticationConfiguration, type JWTAuthenticator } from './jwt-config.js';

const ISSUER = 'https://issuer.test';

async function keyPair(alg: 'RS256' | 'ES256', kid?: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const jwk: JWK = { ...(await exportJWK(publicKey)), alg, use: 'sig', ...(kid ? { kid } : {}) };
  return { privateKey, jwk, alg, kid };
}
type Key = Awaited<ReturnType<typeof keyPair>>;

const sign = (k: Key, claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  new SignJWT(claims).setProtectedHeader({ alg: k.alg, ...(k.kid ? { kid: k.kid } : {}), ...header }).sign(k.privateKey as CryptoKey);

function setup(o: { keys: Key[]; discovery?: Record<string, unknown>; algs?: string[]; config?: Partial<JWTAuthenticator> }) {
  let now = 1_700_000_000_000;
  const calls: string[] = [];
  const state = { keys: o.keys, discovery: o.discovery ?? { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` } };
  const config: JWTAuthenticator = {
    issuer: { url: ISSUER, audiences: ['kubeling'] },
    claimMappings: { username: { claim: 'sub', prefix: 'oidc:' } },
    ...o.config,
  };
  const compiled = compileAuthenticationConfiguration({ jwt: [config] }, []);
  assert.deepEqual(compiled.errs, []);
  const authn = new JwtAuthenticator(compiled.jwt[0]!, {
    signingAlgs: o.algs ?? ALL_SIGNING_ALGS,
    now: () => now,
    fetch: async (url) => {
      calls.push(url);
      if (url === `${ISSUER}/.well-known/openid-configuration`) return state.discovery;
      if (url === `${ISSUER}/keys`) return { keys: state.keys.map((k) => k.jwk) };
      throw new Error(`404 ${url}`);
    },
  });
  const nowS = () => Math.floor(now / 1000);
  const claims = (extra: Record<string, unknown> = {}) => ({ iss: ISSUER, aud: 'kubeling', sub: 'alice', exp: nowS() + 300, ...extra });
  return { authn, calls, state, claims, tick: (ms: number) => (now += ms), nowS };
}

test('untrustedIssuer: only compact JWTs with a string iss', () => {
  const body = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  assert.equal(untrustedIssuer(`e30.${body({ iss: 'https://x' })}.sig`), 'https://x');
  assert.equal(untrustedIssuer(`e30.${body({ iss: 'accounts.google.com' })}.sig`), 'https://accounts.google.com');
  assert.equal(untrustedIssuer(`e30.${body({ iss: 1 })}.sig`), undefined);
  assert.equal(untrustedIssuer('{"iss":"https://x"}'), undefined);
  assert.equal(untrustedIssuer('static-token'), undefined);
  assert.equal(untrustedIssuer(`e30.${body({ iss: 'https://x' })}=.sig`), undefined);
});

test('a token of another issuer costs no fetch; a valid one authenticates after discovery and keys', async () => {
  const k = await keyPair('RS256', 'k1');
  const { authn, calls, claims } = setup({ keys: [k] });
  assert.equal(await authn.authenticateToken(await sign(k, claims({ iss: 'https://other.test' }))), undefined);
  assert.equal(await authn.authenticateToken('not-a-jwt'), undefined);
  assert.deepEqual(calls, []);
  assert.deepEqual(await authn.authenticateToken(await sign(k, claims({ groups: ['x'] }))), { name: 'oidc:alice', groups: [] });
  assert.deepEqual(calls, [`${ISSUER}/.well-known/openid-configuration`, `${ISSUER}/keys`]);
});

test("go-oidc's checks: audience, exp (required, no leeway), nbf (one minute), algorithm", async () => {
  const k = await keyPair('ES256', 'k1');
  const { authn, claims, nowS } = setup({ keys: [k], algs: ['ES256'] });
  const refused = async (c: Record<string, unknown>, message: string | RegExp) => assert.rejects(authn.verify(await sign(k, c)), { message });
  await refused(claims({ aud: ['other', 'x'] }), 'oidc: verify token: oidc: expected audience "kubeling" got ["other" "x"]');
  await refused(claims({ exp: nowS() - 1 }), /^oidc: verify token: oidc: token is expired \(Token Expiry: /);
  await refused(claims({ exp: undefined }), /^oidc: verify token: oidc: token is expired/);
  await refused(claims({ nbf: nowS() + 61 }), /^oidc: verify token: oidc: current time .* before the nbf \(not before\) time: /);
  assert.equal((await authn.verify(await sign(k, claims({ nbf: nowS() + 59, aud: ['x', 'kubeling'] })))).name, 'oidc:alice');
  const rsa = await keyPair('RS256', 'k1');
  await assert.rejects(authn.verify(await sign(rsa, claims())), {
    message: 'oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["ES256"] got "RS256"',
  });
});

test('several audiences: MatchAny, with the sorted list in the message', async () => {
  const k = await keyPair('RS256', 'k1');
  const { authn, claims } = setup({ keys: [k], config: { issuer: { url: ISSUER, audiences: ['b', 'a'], audienceMatchPolicy: 'MatchAny' } } });
  assert.equal((await authn.verify(await sign(k, claims({ aud: 'a' })))).name, 'oidc:alice');
  await assert.rejects(authn.verify(await sign(k, claims({ aud: 'c' }))), { message: 'oidc: verify token: oidc: expected audience in ["a" "b"] got ["c"]' });
});

test('key rotation: an unknown key refetches the key set; refetches are rate-limited', async () => {
  const k1 = await keyPair('RS256', 'k1');
  const k2 = await keyPair('RS256', 'k2');
  const stranger = await keyPair('RS256', 'k3');
  const { authn, calls, state, claims, tick } = setup({ keys: [k1] });
  assert.ok(await authn.authenticateToken(await sign(k1, claims())));
  state.keys = [k2];
  assert.ok(await authn.authenticateToken(await sign(k2, claims())), 'the rotated key is fetched');
  const keyFetches = () => calls.filter((c) => c.endsWith('/keys')).length;
  assert.equal(keyFetches(), 2);
  const forged = await sign(stranger, claims());
  for (let i = 0; i < 5; i++) assert.equal(await authn.authenticateToken(forged), undefined);
  assert.equal(keyFetches(), 4, 'a burst of two more, then none');
  tick(10_000);
  await assert.rejects(authn.verify(forged), { message: 'oidc: verify token: failed to verify signature: failed to verify id token signature' });
  assert.equal(keyFetches(), 5, 'one more after the interval');
  assert.ok(await authn.authenticateToken(await sign(k2, claims())), 'known keys keep working');
});

test('keys without kid: any matching key may verify', async () => {
  const a = await keyPair('ES256');
  const b = await keyPair('ES256');
  const { authn, claims } = setup({ keys: [a, b] });
  assert.equal((await authn.verify(await sign(b, claims()))).name, 'oidc:alice');
});

test('discovery must name the configured issuer; until it does, tokens are refused and retried after 10 s', async () => {
  const k = await keyPair('RS256', 'k1');
  const { authn, calls, state, claims, tick } = setup({ keys: [k], discovery: { issuer: 'https://elsewhere.test', jwks_uri: `${ISSUER}/keys` } });
  const token = await sign(k, claims());
  await assert.rejects(authn.verify(token), { message: 'oidc: authenticator not initialized' });
  await assert.rejects(authn.verify(token), { message: 'oidc: authenticator not initialized' });
  assert.equal(calls.length, 1, 'no second attempt within 10 s');
  state.discovery = { issuer: ISSUER, jwks_uri: `${ISSUER}/keys` };
  tick(10_001);
  assert.equal((await authn.verify(token)).name, 'oidc:alice');
});
