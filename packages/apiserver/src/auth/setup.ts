/**
 * The authenticator and authorizers a server's options call for.
 *
 * With RBAC, requests are authenticated (client certificates, the static
 * token file, ServiceAccount tokens) and authorized by system:masters, the
 * Node authorizer and RBAC, the first allow winning. The RBAC and Node
 * authorizers follow their objects through store subscriptions, which the
 * returned `unsubscribe` functions end. With AlwaysAllow there is neither, and
 * every request is allowed. ServiceAccount tokens are issued and verified
 * (TokenRequest, TokenReview) whenever a signing key is given.
 */
import type { Store } from '../registry/store.js';
import { Authenticator, StaticTokens, type TokenAuthenticator } from './authn.js';
import { bootstrapPolicy } from './bootstrap.js';
import { BootstrapTokens } from './bootstraptoken.js';
import { NodeAuthorizer } from './node.js';
import { MastersAuthorizer, RbacAuthorizer, UnionAuthorizer, type PolicyRule } from './rbac.js';
import { ServiceAccountTokens } from './serviceaccount.js';
import type { Authorizer } from './types.js';

const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface AuthOptions {
  mode: 'AlwaysAllow' | 'RBAC';
  /** Static bearer tokens (the --token-auth-file format). */
  tokenFile?: string;
  /** --enable-bootstrap-token-auth: Secrets of type bootstrap.kubernetes.io/token in kube-system authenticate. */
  bootstrapTokens?: boolean;
  serviceAccount?: { signingKeyPem: string; publicKeyPems: string[]; issuer?: string; audiences?: string[] };
}

export interface Auth {
  /** Absent with AlwaysAllow. */
  authenticator?: Authenticator;
  /** Absent with AlwaysAllow. */
  authorizer?: Authorizer;
  rbac?: RbacAuthorizer;
  saTokens?: ServiceAccountTokens;
  unsubscribe: (() => void)[];
}

export function buildAuth(registry: Map<string, Store>, o: AuthOptions): Auth {
  const cached = async (resource: string, ns: string, name: string) =>
    registry
      .get(resource)!
      .get(ns, name, '0')
      .catch(() => undefined);
  const saTokens = o.serviceAccount
    ? new ServiceAccountTokens({
        signingKeyPem: o.serviceAccount.signingKeyPem,
        publicKeyPems: o.serviceAccount.publicKeyPems,
        issuer: o.serviceAccount.issuer ?? DEFAULT_ISSUER,
        audiences: o.serviceAccount.audiences ?? [o.serviceAccount.issuer ?? DEFAULT_ISSUER],
        lookup: {
          serviceAccount: (ns, n) => cached('/v1/serviceaccounts', ns, n),
          pod: (ns, n) => cached('/v1/pods', ns, n),
          secret: (ns, n) => cached('/v1/secrets', ns, n),
        },
      })
    : undefined;
  if (o.mode !== 'RBAC') return { ...(saTokens ? { saTokens } : {}), unsubscribe: [] };
  const unsubscribe: (() => void)[] = [];
  const rbac = new RbacAuthorizer();
  for (const kind of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const) {
    unsubscribe.push(registry.get(`rbac.authorization.k8s.io/v1/${kind}`)!.subscribe((type, obj) => rbac.apply(kind, type, obj)));
  }
  const nodeRules = (bootstrapPolicy().clusterRoles.find((x) => x.metadata.name === 'system:node') as unknown as { rules: PolicyRule[] }).rules;
  const nodes = new NodeAuthorizer(nodeRules);
  unsubscribe.push(registry.get('/v1/pods')!.subscribe((type, pod) => nodes.applyPod(type, pod)));
  const tokenAuth: TokenAuthenticator[] = o.tokenFile ? [StaticTokens.fromFile(o.tokenFile)] : [];
  if (o.bootstrapTokens) tokenAuth.push(new BootstrapTokens((ns, n) => cached('/v1/secrets', ns, n)));
  if (saTokens) tokenAuth.push(saTokens);
  return {
    authenticator: new Authenticator(tokenAuth),
    authorizer: new UnionAuthorizer([new MastersAuthorizer(), nodes, rbac]),
    rbac,
    ...(saTokens ? { saTokens } : {}),
    unsubscribe,
  };
}
