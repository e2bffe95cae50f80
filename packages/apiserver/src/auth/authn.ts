/**
 * Authentication (k8s.io/apiserver pkg/authentication): the front proxy's
 * request headers (requestheader.ts), x509 client certificates chaining to the
 * client CA (CN = user, O = groups; each authenticator checks its own CA, as
 * the TLS server trusts both), then bearer tokens (static file, bootstrap,
 * ServiceAccount, JWT issuers, webhook). The first that recognises the
 * request wins; credentials nobody accepts (a bearer token, a certificate of
 * no trusted CA, a proxy CN not allowed) are a 401 even where anonymous
 * access would do. Authenticated users are in `system:authenticated`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { CertPool, RequestHeaderAuthenticator } from './requestheader.js';
import type { UserInfo } from './types.js';

export type AuthnResult = { user: UserInfo } | { error: string } | undefined;

export interface TokenAuthenticator {
  authenticateToken(token: string): Promise<UserInfo | undefined>;
}

/** Parses a static token file: `token,user,uid[,"group1,group2"]` per line. */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const out = new Map<string, UserInfo>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const cols: string[] = [];
    let cur = '';
    let quoted = false;
    for (const ch of line) {
      if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) {
        cols.push(cur);
        cur = '';
      } else cur += ch;
    }
    cols.push(cur);
    const [token, name, uid, groups] = cols.map((c) => c.trim());
    if (!token || !name) throw new Error('token file: each line needs at least token,user,uid');
    out.set(token, {
      name,
      ...(uid ? { uid } : {}),
      groups: groups
        ? groups
            .split(',')
            .map((g) => g.trim())
            .filter(Boolean)
        : [],
    });
  }
  return out;
}

export class StaticTokens implements TokenAuthenticator {
  constructor(private readonly tokens: Map<string, UserInfo>) {}
  static fromFile(path: string): StaticTokens {
    return new StaticTokens(parseTokenFile(readFileSync(path, 'utf8')));
  }
  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    return this.tokens.get(token);
  }
}

function withAuthenticated(u: UserInfo): UserInfo {
  const groups = u.groups.includes('system:authenticated') ? u.groups : [...u.groups, 'system:authenticated'];
  return { ...u, groups };
}

export interface CertificateAuthenticators {
  /** --client-ca-file: certificates chaining to it are users. */
  clientCA?: CertPool;
  /** --requestheader-*: asked first, as in upstream's chain. */
  requestHeader?: RequestHeaderAuthenticator;
}

export class Authenticator {
  constructor(
    private readonly tokens: TokenAuthenticator[],
    private readonly certs: CertificateAuthenticators = {},
  ) {}

  /** TokenReview: the user a bearer token stands for, if any. */
  async authenticateBearer(token: string): Promise<UserInfo | undefined> {
    for (const t of this.tokens) {
      const u = await t.authenticateToken(token);
      if (u) return withAuthenticated(u);
    }
    return undefined;
  }

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const errors: string[] = [];
    const proxied = this.certs.requestHeader?.authenticate(req);
    if (proxied && 'user' in proxied) return { user: withAuthenticated(proxied.user) };
    if (proxied) errors.push(proxied.error);
    const cert = this.certs.clientCA?.verifyPeer(req.socket as TLSSocket);
    if (cert && 'error' in cert) errors.push(cert.error);
    else if (cert?.cn) return { user: withAuthenticated({ name: cert.cn, groups: cert.orgs }) };
    const auth = req.headers.authorization;
    if (auth) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (m) {
        for (const t of this.tokens) {
          const u = await t.authenticateToken(m[1]!);
          if (u) return { user: withAuthenticated(u) };
        }
        return { error: 'invalid bearer token' };
      }
    }
    return errors.length ? { error: errors.join('; ') } : undefined;
  }
}
