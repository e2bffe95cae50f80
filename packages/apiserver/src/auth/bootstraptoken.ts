/**
 * Bootstrap tokens (plugin/pkg/auth/authenticator/token/bootstrap): a bearer
 * token `<id>.<secret>` (6 and 16 of [a-z0-9]) authenticates as
 * `system:bootstrap:<id>` in `system:bootstrappers` (plus its extra groups)
 * while kube-system holds the Secret `bootstrap-token-<id>` of type
 * `bootstrap.kubernetes.io/token` with that secret, allowed for
 * authentication and not expired. What kubeadm-style node joins start with.
 */
import { timingSafeEqual } from 'node:crypto';
import type { KubeObject } from '@kubeling/api';
import type { TokenAuthenticator } from './authn.js';
import type { UserInfo } from './types.js';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_GROUP = 'system:bootstrappers';

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

const str = (s: Secret, k: string) => Buffer.from(s.data?.[k] ?? '', 'base64').toString('utf8');

/** Whether the token Secret's `expiration` (RFC 3339) has passed; an unparsable one counts as expired. */
export function bootstrapTokenExpired(s: Secret, now: number): boolean {
  const exp = str(s, 'expiration');
  if (!exp) return false;
  const t = Date.parse(exp);
  return Number.isNaN(t) || t <= now;
}

/** The user of `token` given the Secret it names (or none), at `now`. */
export function bootstrapTokenUser(token: string, secret: Secret | undefined, now: number): UserInfo | undefined {
  const m = BOOTSTRAP_TOKEN_RE.exec(token);
  if (!m || !secret || secret.metadata.deletionTimestamp || secret.type !== BOOTSTRAP_TOKEN_TYPE) return undefined;
  const [, id, sec] = m as unknown as [string, string, string];
  const stored = Buffer.from(str(secret, 'token-secret'));
  if (str(secret, 'token-id') !== id || stored.length !== sec.length || !timingSafeEqual(stored, Buffer.from(sec))) return undefined;
  if (bootstrapTokenExpired(secret, now)) return undefined;
  if (str(secret, 'usage-bootstrap-authentication') !== 'true') return undefined;
  const extra = str(secret, 'auth-extra-groups')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  // Extra groups must stay within system:bootstrappers:* (validation in the bootstrap token API).
  if (extra.some((g) => !/^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/.test(g))) return undefined;
  return { name: `system:bootstrap:${id}`, groups: [BOOTSTRAP_GROUP, ...extra], extra: {} };
}

export class BootstrapTokens implements TokenAuthenticator {
  constructor(
    private readonly secret: (namespace: string, name: string) => Promise<KubeObject | undefined>,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const m = BOOTSTRAP_TOKEN_RE.exec(token);
    if (!m) return undefined;
    return bootstrapTokenUser(token, (await this.secret('kube-system', `bootstrap-token-${m[1]}`)) as Secret | undefined, this.now());
  }
}
