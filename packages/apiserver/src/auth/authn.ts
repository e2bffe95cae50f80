/**
 * Authentication (k8s.io/apiserver pkg/authentication): x509 client
 * certificates verified against the client CA (CN = user, O = groups), then
 * bearer tokens from the static token file. The first that recognises the
 * request wins; a bearer token nobody recognises is a 401 even where anonymous
 * access would do. Authenticated users are in `system:authenticated`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
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

export class Authenticator {
  constructor(private readonly tokens: TokenAuthenticator[]) {}

  /** TokenReview: the user a bearer token stands for, if any. */
  async authenticateBearer(token: string): Promise<UserInfo | undefined> {
    for (const t of this.tokens) {
      const u = await t.authenticateToken(token);
      if (u) return withAuthenticated(u);
    }
    return undefined;
  }

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const sock = req.socket as TLSSocket;
    if (sock.encrypted && sock.authorized) {
      const subj = sock.getPeerCertificate()?.subject as { CN?: string | string[]; O?: string | string[] } | undefined;
      const cn = Array.isArray(subj?.CN) ? subj.CN[0] : subj?.CN;
      if (cn) {
        const o = subj?.O;
        return { user: withAuthenticated({ name: cn, groups: Array.isArray(o) ? o : o ? [o] : [] }) };
      }
    }
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
    return undefined;
  }
}
