/**
 * The authenticator and authorizers a server's options call for.
 *
 * Unless the authorization plan is AlwaysAllow alone, requests are
 * authenticated (client certificates, the static token file, ServiceAccount
 * tokens) and authorized by the plan's union (authorizers.ts: system:masters,
 * then Node, RBAC, ABAC, webhooks... in order, the first allow or deny
 * winning). The RBAC and Node authorizers follow their objects through store
 * subscriptions, which the returned `unsubscribe` functions end. With
 * AlwaysAllow alone there is neither, and every request is allowed.
 * ServiceAccount tokens are issued and verified (TokenRequest, TokenReview)
 * whenever a signing key is given.
 */
import type { Store } from '../registry/store.js';
import { Authenticator, StaticTokens, type TokenAuthenticator } from './authn.js';
import { type AuthenticationOptions, buildAuthentication } from './authn-config.js';
import { buildAuthorizer } from './authorizers.js';
import { allowsEverything, type AuthorizationPlan } from './authz-config.js';
import { BootstrapTokens } from './bootstraptoken.js';
import type { RbacAuthorizer } from './rbac.js';
import { ServiceAccountTokens } from './serviceaccount.js';
import type { Authorizer } from './types.js';

const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface AuthOptions {
  /** Which authorizers answer, in order (authz-config.ts resolveAuthorization). */
  authorization: AuthorizationPlan;
  /** Static bearer tokens (the --token-auth-file format). */
  tokenFile?: string;
  /** --enable-bootstrap-token-auth: Secrets of type bootstrap.kubernetes.io/token in kube-system authenticate. */
  bootstrapTokens?: boolean;
  serviceAccount?: { signingKeyPem: string; publicKeyPems: string[]; issuer?: string; audiences?: string[] };
  /** Client CA, front proxy, JWT issuers, token webhook (authn-config.ts). */
  authentication?: AuthenticationOptions;
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
  if (allowsEverything(o.authorization)) return { ...(saTokens ? { saTokens } : {}), unsubscribe: [] };
  // Before the authorizers subscribe: an invalid authentication configuration throws with nothing to undo.
  const pluggable = buildAuthentication(o.authentication ?? { serviceAccountIssuers: [], apiAudiences: [] });
  const { authorizer, rbac, unsubscribe } = buildAuthorizer(registry, o.authorization);
  const tokenAuth: TokenAuthenticator[] = o.tokenFile ? [StaticTokens.fromFile(o.tokenFile)] : [];
  if (o.bootstrapTokens) tokenAuth.push(new BootstrapTokens((ns, n) => cached('/v1/secrets', ns, n)));
  if (saTokens) tokenAuth.push(saTokens);
  tokenAuth.push(...pluggable.tokens);
  unsubscribe.push(pluggable.close);
  return {
    authenticator: new Authenticator(tokenAuth, pluggable.certificates),
    authorizer,
    ...(rbac ? { rbac } : {}),
    ...(saTokens ? { saTokens } : {}),
    unsubscribe,
  };
}
