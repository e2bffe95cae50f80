/**
 * Delegated authentication and authorization, as an aggregated API server
 * does it (k8s.io/apiserver pkg/authentication/authenticatorfactory
 * delegating.go, pkg/authorization/authorizerfactory delegating.go):
 *
 * 1. Request header: a client certificate signed by the request-header CA
 *    whose CN is in the allowed names (any, when the list is empty) names the
 *    user in X-Remote-User, its groups in X-Remote-Group (one group per header
 *    line, as headerrequest/requestheader.go allHeaderValues) and its extras in
 *    X-Remote-Extra-<key> (key lowercased and %-unescaped). Without a user
 *    header this authenticator passes; with a CN not allowed it fails.
 * 2. Client certificate: one signed by the client CA is user CN, groups O.
 * 3. Bearer token: a TokenReview to the apiserver, answers cached 10 s.
 *
 * The TLS server trusts both CAs at once and so only says "authorized";
 * which CA signed the certificate is checked here (X509Certificate
 * checkIssued/verify). Certificates must be signed directly by a CA of the
 * bundle (no intermediates). An authenticated user gets system:authenticated
 * (group/authenticated_group_adder.go).
 *
 * Authorization is a SubjectAccessReview per request attributes, allowed and
 * denied answers cached 10 s (DelegatingAuthorizationOptions defaults).
 * Tokens are never logged nor kept: the cache is keyed by their SHA-256.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { RestClient } from '@kubeling/client';

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The request-header settings of extension-apiserver-authentication (the --requestheader-* flags). */
export interface RequestHeaderConfig {
  /** PEM bundle. */
  clientCA: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeadersPrefix: string[];
}

export interface AuthConfig {
  requestHeader?: RequestHeaderConfig | undefined;
  /** PEM bundle of the CA signing user client certificates (client-ca-file). */
  clientCA?: string | undefined;
}

export type AuthnResult = { user: UserInfo } | { error: string } | { anonymous: true };

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

/** The certificates of a PEM bundle. */
export function parseBundle(pem: string | undefined): X509Certificate[] {
  if (!pem) return [];
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((c) => new X509Certificate(c));
}

/** Whether `leaf` was signed by one of `cas` and is valid now for client authentication. */
export function signedBy(leaf: X509Certificate, cas: X509Certificate[], now = Date.now()): boolean {
  if (now < Date.parse(leaf.validFrom) || now > Date.parse(leaf.validTo)) return false;
  const eku = leaf.keyUsage;
  if (eku?.length && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return false;
  return cas.some((ca) => {
    try {
      return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
    } catch {
      return false;
    }
  });
}

/** CN and O entries of a peer certificate's parsed subject (node:tls; a repeated entry is an array). */
export function subjectNames(subject: Readonly<Record<string, string | string[] | undefined>> | undefined): { cn: string; orgs: string[] } {
  const all = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  return { cn: all(subject?.CN)[0] ?? '', orgs: all(subject?.O) };
}

/** url.PathUnescape: %XX decoded; a malformed key is kept as it is (requestheader.go unescapeExtraKey). */
function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

/** The user the request headers name, once the proxy's certificate is trusted. */
export function requestHeaderUser(req: IncomingMessage, rh: RequestHeaderConfig): UserInfo | undefined {
  const h = req.headersDistinct;
  const first = (names: string[]) => {
    for (const n of names) {
      const v = h[n.toLowerCase()]?.[0];
      if (v) return v;
    }
    return '';
  };
  const name = first(rh.usernameHeaders);
  if (!name) return undefined;
  const groups: string[] = [];
  for (const n of rh.groupHeaders) for (const v of h[n.toLowerCase()] ?? []) if (v) groups.push(v);
  const extra: Record<string, string[]> = {};
  for (const prefix of rh.extraHeadersPrefix) {
    const p = prefix.toLowerCase();
    for (const [k, vs] of Object.entries(h)) {
      if (!k.startsWith(p) || !vs) continue;
      const key = unescapeKey(k.slice(p.length));
      (extra[key] ??= []).push(...vs);
    }
  }
  return { name, groups, extra };
}

const withAuthenticated = (u: UserInfo): UserInfo =>
  u.name === 'system:anonymous' || u.groups.includes('system:authenticated') || u.groups.includes('system:unauthenticated')
    ? u
    : { ...u, groups: [...u.groups, 'system:authenticated'] };

interface Cached<T> {
  value: T;
  until: number;
}

/** A map whose entries expire; bounded so that a flood of distinct keys cannot grow it without limit. */
class TtlCache<T> {
  private readonly m = new Map<string, Cached<T>>();
  constructor(private readonly max = 10_000) {}
  get(k: string): T | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (e.until < Date.now()) {
      this.m.delete(k);
      return undefined;
    }
    return e.value;
  }
  set(k: string, value: T, ttlMs: number): void {
    if (this.m.size >= this.max) this.m.delete(this.m.keys().next().value as string);
    this.m.set(k, { value, until: Date.now() + ttlMs });
  }
}

export class Authenticator {
  private rhCAs: X509Certificate[] = [];
  private clientCAs: X509Certificate[] = [];
  private cfg: AuthConfig = {};
  private readonly tokens = new TtlCache<UserInfo | null>();

  constructor(
    private readonly client: RestClient | undefined,
    private readonly cacheTtlMs = 10_000,
  ) {}

  /** Replaces the trusted CAs and header names. */
  setConfig(cfg: AuthConfig): void {
    this.cfg = cfg;
    this.rhCAs = parseBundle(cfg.requestHeader?.clientCA);
    this.clientCAs = parseBundle(cfg.clientCA);
  }

  get config(): AuthConfig {
    return this.cfg;
  }

  /** The CA certificates a TLS server should ask client certificates for (both bundles). */
  trustedCAs(): string[] {
    return [...this.rhCAs, ...this.clientCAs].map((c) => c.toString());
  }

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const sock = req.socket as TLSSocket;
    const errors: string[] = [];
    const peer = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate() : undefined;
    const leaf = peer?.raw ? new X509Certificate(peer.raw) : undefined;
    if (leaf) {
      const rh = this.cfg.requestHeader;
      if (rh && sock.authorized && signedBy(leaf, this.rhCAs)) {
        const { cn } = subjectNames(peer?.subject as Record<string, string | string[]> | undefined);
        if (rh.allowedNames.length && !rh.allowedNames.includes(cn)) errors.push(`x509: subject with cn=${cn} is not in the allowed list`);
        else {
          const user = requestHeaderUser(req, rh);
          if (user) return { user: withAuthenticated(user) };
        }
      }
      if (sock.authorized && signedBy(leaf, this.clientCAs)) {
        const { cn, orgs } = subjectNames(peer?.subject as Record<string, string | string[]> | undefined);
        return { user: withAuthenticated({ name: cn, groups: orgs, extra: {} }) };
      }
      if (!sock.authorized) errors.push('x509: certificate signed by unknown authority');
    }
    const auth = req.headers.authorization;
    const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
    if (m) {
      // A review that could not be made fails this request (401, as a webhook error does upstream) and is not cached.
      const user = await this.reviewToken(m[1]!).catch((e: unknown) => {
        errors.push(`token review failed: ${(e as Error).message}`);
        return undefined;
      });
      if (user) return { user: withAuthenticated(user) };
      errors.push('invalid bearer token');
    }
    return errors.length ? { error: errors.join('; ') } : { anonymous: true };
  }

  /** A TokenReview, cached by the token's hash (successes and failures alike). */
  private async reviewToken(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.tokens.get(key);
    if (hit !== undefined) return hit ?? undefined;
    if (!this.client) return undefined;
    const review = await this.client.post<{
      status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } };
    }>('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const u = review.status?.authenticated ? review.status.user : undefined;
    const user: UserInfo | null = u?.username ? { name: u.username, groups: u.groups ?? [], extra: u.extra ?? {}, ...(u.uid ? { uid: u.uid } : {}) } : null;
    this.tokens.set(key, user, this.cacheTtlMs);
    return user ?? undefined;
  }
}

/** What a request asks to do, for a SubjectAccessReview (authorizer.Attributes). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  version: string;
  resource: string;
  namespace: string;
  name: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

export const isResourceRequest = (a: RequestAttributes): a is ResourceAttributes => 'resource' in a;

export interface Decision {
  allowed: boolean;
  reason: string;
}

export class Authorizer {
  private readonly cache = new TtlCache<Decision>();

  constructor(
    private readonly client: RestClient,
    private readonly allowTtlMs = 10_000,
    private readonly denyTtlMs = 10_000,
  ) {}

  async authorize(user: UserInfo, a: RequestAttributes): Promise<Decision> {
    const spec = {
      user: user.name,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      ...(Object.keys(user.extra).length ? { extra: user.extra } : {}),
      ...(isResourceRequest(a)
        ? {
            resourceAttributes: {
              verb: a.verb,
              group: a.group,
              version: a.version,
              resource: a.resource,
              ...(a.namespace ? { namespace: a.namespace } : {}),
              ...(a.name ? { name: a.name } : {}),
            },
          }
        : { nonResourceAttributes: { path: a.path, verb: a.verb } }),
    };
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const review = await this.client.post<{ status?: { allowed?: boolean; reason?: string; evaluationError?: string } }>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    );
    const d: Decision = { allowed: !!review.status?.allowed, reason: review.status?.reason ?? '' };
    this.cache.set(key, d, d.allowed ? this.allowTtlMs : this.denyTtlMs);
    return d;
  }
}

/** apiserver endpoints/handlers/responsewriters forbiddenMessage. */
export function forbiddenMessage(user: string, a: RequestAttributes): string {
  if (!isResourceRequest(a)) return `User "${user}" cannot ${a.verb} path "${a.path}"`;
  if (a.namespace) return `User "${user}" cannot ${a.verb} resource "${a.resource}" in API group "${a.group}" in the namespace "${a.namespace}"`;
  return `User "${user}" cannot ${a.verb} resource "${a.resource}" in API group "${a.group}" at the cluster scope`;
}
