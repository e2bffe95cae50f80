/**
 * The authentication.k8s.io reviews, created and never stored: TokenReview
 * (is this bearer token valid, and whose is it) and SelfSubjectReview (who am I).
 */
import type { KubeObject } from '@kubeling/api';
import type { Authenticator, ServiceAccountTokens, UserInfo } from '../../auth/index.js';

const userInfo = (u: UserInfo) => ({
  username: u.name,
  ...(u.uid ? { uid: u.uid } : {}),
  groups: u.groups,
  ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
});

const reviewed = (obj: KubeObject, kind: string) => ({
  ...obj,
  apiVersion: 'authentication.k8s.io/v1',
  kind,
  metadata: { ...(obj.metadata ?? {}), creationTimestamp: null },
});

export async function tokenReview(
  obj: KubeObject,
  deps: { authenticator?: Authenticator | undefined; tokens?: ServiceAccountTokens | undefined },
): Promise<Record<string, unknown>> {
  const spec = (obj as { spec?: { token?: string; audiences?: string[] } }).spec ?? {};
  const out = reviewed(obj, 'TokenReview');
  if (!deps.authenticator) return { ...out, status: { authenticated: false, error: 'no authenticator is configured' } };
  const token = spec.token ?? '';
  let u: UserInfo | undefined;
  if (spec.audiences?.length && deps.tokens)
    u = await deps.tokens.authenticateToken(token, spec.audiences).then((x) => (x ? { ...x, groups: [...x.groups, 'system:authenticated'] } : undefined));
  else u = await deps.authenticator.authenticateBearer(token);
  if (!u) return { ...out, status: { authenticated: false, user: {}, error: 'invalid bearer token' } };
  return { ...out, status: { authenticated: true, user: userInfo(u), audiences: spec.audiences?.length ? spec.audiences : (deps.tokens?.audiences ?? []) } };
}

export function selfSubjectReview(obj: KubeObject, user: UserInfo | undefined): Record<string, unknown> {
  const u = user ?? { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] };
  return { ...reviewed(obj, 'SelfSubjectReview'), status: { userInfo: userInfo(u) } };
}
