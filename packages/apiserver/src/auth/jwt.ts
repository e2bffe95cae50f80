/**
 * JWT (OIDC) token authentication, one authenticator per configured issuer
 * (k8s.io/apiserver plugin/pkg/authenticator/token/oidc/oidc.go over
 * coreos/go-oidc's verifier):
 *
 * - A token whose unverified `iss` is not this issuer is not looked at: no
 *   parsing beyond that, no network call. The other authenticators get it.
 * - The issuer's keys come from its discovery document
 *   (`<url>/.well-known/openid-configuration`, or `discoveryURL`), whose
 *   `issuer` must be the configured URL, then its `jwks_uri`, over HTTPS
 *   checked against `certificateAuthority` (the host's roots without one).
 *   Until that succeeds tokens are refused, and it is tried again every 10 s.
 * - Claims are checked before the signature, as go-oidc does, so a token that
 *   fails them never causes a key refresh: `iss` equal to the URL, an
 *   audience among `audiences` (MatchAny), `exp` in the future (no leeway,
 *   required), `nbf` at most one minute ahead; `iat` is not checked, as
 *   upstream does not. The algorithm must be one upstream accepts (RS*, ES*,
 *   PS*; --oidc-signing-algs narrows it).
 * - A signature no cached key verifies makes the keys be fetched again, at
 *   most `REFRESH_BURST` times in a row and then one per `REFRESH_EVERY_MS`;
 *   keys older than `KEYS_MAX_AGE_MS` are refreshed in the background.
 * - Verified claims become the user through jwt-claims.ts.
 *
 * Why a token is refused is logged at debug level; tokens and claims never are.
 */
import { request as httpsRequest } from 'node:https';
import { compactVerify, createLocalJWKSet, type CryptoKey, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import type { TokenAuthenticator } from './authn.js';
import { claimsToUser } from './jwt-claims.js';
import type { CompiledJWTAuthenticator } from './jwt-config.js';
import type { UserInfo } from './types.js';

const INIT_RETRY_MS = 10_000;
const KEYS_MAX_AGE_MS = 10 * 60_000;
const REFRESH_BURST = 3;
const REFRESH_EVERY_MS = 10_000;
/** go-oidc's allowance for an `nbf` slightly ahead of this clock. */
const NBF_LEEWAY_S = 60;
const FETCH_TIMEOUT_MS = 30_000;
const MAX_DOCUMENT_BYTES = 1024 * 1024;

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(s: string): unknown {
  if (!B64URL.test(s)) throw new Error('illegal base64 data');
  return JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
}

/** untrustedIssuer: the `iss` of a compact JWT, unverified; undefined when it is not one. */
export function untrustedIssuer(token: string): string | undefined {
  if (token.trimStart().startsWith('{')) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const iss = (decodeSegment(parts[1]!) as { iss?: unknown } | null)?.iss;
    if (typeof iss !== 'string') return undefined;
    return iss === 'accounts.google.com' ? 'https://accounts.google.com' : iss;
  } catch {
    return undefined;
  }
}

/** GET a JSON document over HTTPS, trusting `ca` when given; any non-200 answer is an error. */
export function fetchJSON(url: string, ca: string | undefined, timeoutMs = FETCH_TIMEOUT_MS): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'https:') {
      reject(new Error(`${url}: only https is fetched`));
      return;
    }
    const req = httpsRequest(u, { method: 'GET', headers: { accept: 'application/json' }, timeout: timeoutMs, ...(ca ? { ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOCUMENT_BYTES) req.destroy(new Error(`${url}: document larger than ${MAX_DOCUMENT_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`${res.statusCode} ${res.statusMessage ?? ''}: ${text.slice(0, 200)}`));
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`${url}: not a JSON document`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export interface JwtAuthenticatorOptions {
  signingAlgs: readonly string[];
  logger?: Logger;
  /** Injected for tests: how documents are fetched, and the clock (ms). */
  fetch?: (url: string, ca: string | undefined) => Promise<unknown>;
  now?: () => number;
}

interface Keys {
  get: JWTVerifyGetKey;
  fetchedAt: number;
}

export class JwtAuthenticator implements TokenAuthenticator {
  readonly issuer: string;
  private jwksURI: string | undefined;
  private keys: Keys | undefined;
  private loading: Promise<Keys> | undefined;
  private initTimer: NodeJS.Timeout | undefined;
  private refreshTokens = REFRESH_BURST;
  private refreshStamp: number;
  private failedAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private readonly fetch: (url: string, ca: string | undefined) => Promise<unknown>;
  private readonly now: () => number;

  constructor(
    private readonly c: CompiledJWTAuthenticator,
    private readonly o: JwtAuthenticatorOptions,
  ) {
    this.issuer = c.config.issuer.url;
    this.fetch = o.fetch ?? fetchJSON;
    this.now = o.now ?? Date.now;
    this.refreshStamp = this.now();
  }

  /** Fetches the keys now, and again every 10 s until that works (as upstream's PollImmediateUntil). */
  start(): void {
    const attempt = () => {
      if (this.closed || this.keys) return;
      this.load().then(
        () => {
          clearInterval(this.initTimer);
          this.initTimer = undefined;
        },
        (err: Error) => this.o.logger?.warn({ issuer: this.issuer, err: err.message }, 'oidc authenticator: initializing plugin'),
      );
    };
    attempt();
    this.initTimer = setInterval(attempt, INIT_RETRY_MS);
    this.initTimer.unref();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.initTimer);
  }

  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    if (untrustedIssuer(token) !== this.issuer) return undefined;
    try {
      return await this.verify(token);
    } catch (err) {
      this.o.logger?.debug({ issuer: this.issuer, reason: (err as Error).message }, 'jwt authenticator refused a token');
      return undefined;
    }
  }

  /** Discovery (once), then the key set; concurrent callers share one load. */
  private load(): Promise<Keys> {
    this.loading ??= (async () => {
      const iss = this.c.config.issuer;
      if (!this.jwksURI) {
        const wellKnown = iss.discoveryURL || `${iss.url.replace(/\/$/, '')}/.well-known/openid-configuration`;
        const doc = (await this.fetch(wellKnown, iss.certificateAuthority)) as { issuer?: unknown; jwks_uri?: unknown } | null;
        if (doc?.issuer !== iss.url)
          throw new Error(`oidc: issuer did not match the issuer returned by provider, expected "${iss.url}" got "${String(doc?.issuer)}"`);
        if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new Error('oidc: discovery document has no https jwks_uri');
        this.jwksURI = doc.jwks_uri;
      }
      const jwks = (await this.fetch(this.jwksURI, iss.certificateAuthority)) as JSONWebKeySet;
      const keys = { get: createLocalJWKSet(jwks), fetchedAt: this.now() };
      this.keys = keys;
      return keys;
    })()
      .catch((e: unknown) => {
        this.failedAt = this.now();
        throw e;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** Whether an unknown key may cause a fetch now (a token bucket: a burst, then one per interval). */
  private mayRefresh(): boolean {
    const now = this.now();
    const earned = Math.floor((now - this.refreshStamp) / REFRESH_EVERY_MS);
    if (earned > 0) {
      this.refreshTokens = Math.min(REFRESH_BURST, this.refreshTokens + earned);
      this.refreshStamp += earned * REFRESH_EVERY_MS;
    }
    if (this.refreshTokens <= 0) return false;
    this.refreshTokens--;
    return true;
  }

  /**
   * The current keys. Before the first load has worked, a token waits for a
   * load in progress, or starts one if the last failed more than 10 s ago;
   * otherwise it is refused at once, as upstream's uninitialized verifier.
   */
  private async keySet(): Promise<Keys> {
    if (!this.keys) {
      if (!this.loading && this.now() - this.failedAt < INIT_RETRY_MS) throw new Error('oidc: authenticator not initialized');
      return this.load().catch(() => {
        throw new Error('oidc: authenticator not initialized');
      });
    }
    if (this.now() - this.keys.fetchedAt > KEYS_MAX_AGE_MS) this.load().catch(() => undefined);
    return this.keys;
  }

  /** The token's user; throws with the reason it is refused. */
  async verify(token: string): Promise<UserInfo> {
    const keys = await this.keySet();
    const parts = token.split('.');
    let header: { alg?: unknown };
    let claims: Record<string, unknown>;
    try {
      header = decodeSegment(parts[0]!) as { alg?: unknown };
      claims = decodeSegment(parts[1]!) as Record<string, unknown>;
      if (!claims || typeof claims !== 'object' || Array.isArray(claims) || !header || typeof header !== 'object') throw new Error('not a JSON object');
    } catch (e) {
      throw new Error(`oidc: verify token: oidc: malformed jwt: ${(e as Error).message}`);
    }
    this.checkClaims(claims);
    if (typeof header.alg !== 'string' || !this.o.signingAlgs.includes(header.alg))
      throw new Error(
        `oidc: verify token: oidc: id token signed with unsupported algorithm, expected ${goList(this.o.signingAlgs)} got "${String(header.alg)}"`,
      );
    if (!(await this.signatureValid(token, keys.get))) {
      let fresh: Keys | undefined;
      if (this.mayRefresh()) fresh = await this.load().catch(() => undefined);
      if (!fresh || !(await this.signatureValid(token, fresh.get)))
        throw new Error('oidc: verify token: failed to verify signature: failed to verify id token signature');
    }
    return claimsToUser(this.c.mapper, claims);
  }

  /** go-oidc's checks of issuer, audience, exp and nbf, and the audience policy MatchAny. */
  private checkClaims(claims: Record<string, unknown>): void {
    const fail = (m: string) => {
      throw new Error(`oidc: verify token: ${m}`);
    };
    if (claims.iss !== this.issuer) fail(`oidc: id token issued by a different provider, expected "${this.issuer}" got "${String(claims.iss)}"`);
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
    const want = this.c.config.issuer.audiences;
    if (!want.some((a) => aud.includes(a)))
      fail(
        want.length === 1
          ? `oidc: expected audience "${want[0]}" got ${goList(aud)}`
          : `oidc: expected audience in ${goList([...want].sort())} got ${goList(aud)}`,
      );
    for (const k of ['exp', 'nbf'])
      if (claims[k] !== undefined && typeof claims[k] !== 'number') fail(`oidc: failed to unmarshal claims: json: cannot unmarshal into field ${k}`);
    const now = this.now() / 1000;
    const exp = (claims.exp as number | undefined) ?? 0;
    if (exp < now) fail(`oidc: token is expired (Token Expiry: ${new Date(exp * 1000).toISOString()})`);
    const nbf = claims.nbf as number | undefined;
    if (nbf !== undefined && now + NBF_LEEWAY_S < nbf)
      fail(`oidc: current time ${new Date(now * 1000).toISOString()} before the nbf (not before) time: ${new Date(nbf * 1000).toISOString()}`);
  }

  private async signatureValid(token: string, get: JWTVerifyGetKey): Promise<boolean> {
    try {
      await compactVerify(token, get, { algorithms: [...this.o.signingAlgs] });
      return true;
    } catch (e) {
      // Several keys match (no kid): any one of them may have signed it.
      const candidates = (e as { [Symbol.asyncIterator]?: () => AsyncIterator<CryptoKey> })[Symbol.asyncIterator];
      if (typeof candidates !== 'function') return false;
      for await (const key of { [Symbol.asyncIterator]: candidates.bind(e) } as AsyncIterable<CryptoKey>) {
        try {
          await compactVerify(token, key, { algorithms: [...this.o.signingAlgs] });
          return true;
        } catch {
          // the next one
        }
      }
      return false;
    }
  }
}

/** A Go `%q` of a string slice: ["a" "b"]. */
function goList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
}
