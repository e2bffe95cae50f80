/**
 * The pluggable authenticators and their flags (kube-apiserver's
 * pkg/kubeapiserver/options/authentication.go and
 * pkg/kubeapiserver/authenticator/config.go):
 *
 * - --authentication-config=FILE: an AuthenticationConfiguration
 *   (apiserver.config.k8s.io/v1, v1beta1 or v1alpha1) whose `jwt` issuers
 *   authenticate bearer tokens, any upstream signing algorithm allowed;
 * - or the legacy --oidc-* flags, mapped onto one such issuer as upstream
 *   maps them (a username claim other than `email` is prefixed with
 *   `<issuer>#` unless --oidc-username-prefix says otherwise, `-` meaning
 *   none); the two are mutually exclusive;
 * - --authentication-token-webhook-*: TokenReviews to a webhook;
 * - --client-ca-file and --requestheader-*: certificate and front-proxy
 *   authentication, each checking certificates against its own CA.
 *
 * `buildAuthentication` validates all of it first: an invalid configuration
 * stops the apiserver (`invalid authentication configuration: ...`) before it
 * serves anything. Token authenticators come after the built-in ones, JWT
 * issuers then the webhook, as upstream's union orders them.
 */
import { readFileSync } from 'node:fs';
import { aggregateMessage, parseDuration } from '@kubeling/apimachinery';
import type { Logger } from 'pino';
import { parse } from 'yaml';
import type { ApiServerOptions } from '../server.js';
import type { CertificateAuthenticators, TokenAuthenticator } from './authn.js';
import { JwtAuthenticator } from './jwt.js';
import {
  ALL_SIGNING_ALGS,
  type AuthenticationConfiguration,
  checkSigningAlgs,
  compileAuthenticationConfiguration,
  decodeAuthenticationConfiguration,
} from './jwt-config.js';
import { CertPool, RequestHeaderAuthenticator, type RequestHeaderSettings } from './requestheader.js';
import { checkWebhookVersion, type TokenWebhookOptions, tokenWebhook } from './webhook-token.js';

export type { AuthenticationConfiguration } from './jwt-config.js';
export type { TokenWebhookOptions } from './webhook-token.js';

const API_VERSIONS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1']);

/** loadAuthenticationConfig: the file's AuthenticationConfiguration, decoded strictly. */
export function readAuthenticationConfigFile(path: string): AuthenticationConfiguration {
  const fail = (m: string) => new Error(`failed to load authentication configuration from file "${path}": ${m}`);
  const text = readFileSync(path, 'utf8');
  if (!text.trim()) throw fail('empty config data');
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw fail((e as Error).message);
  }
  const { apiVersion, kind } = (doc ?? {}) as { apiVersion?: unknown; kind?: unknown };
  if (kind !== 'AuthenticationConfiguration' || !API_VERSIONS.has(String(apiVersion)))
    throw fail(`no kind "${String(kind ?? '')}" is registered for version "${String(apiVersion ?? '')}"`);
  try {
    return decodeAuthenticationConfiguration(doc);
  } catch (e) {
    throw fail((e as Error).message);
  }
}

export interface OidcFlags {
  issuerURL: string;
  clientID: string;
  caPem?: string;
  usernameClaim?: string;
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims?: Record<string, string>;
}

/** ToAuthenticationConfig's mapping of the --oidc-* flags onto one JWT authenticator. */
export function oidcFlagsToConfig(f: OidcFlags): AuthenticationConfiguration {
  const claim = f.usernameClaim || 'sub';
  let prefix = f.usernamePrefix ?? '';
  // Legacy behaviour (kubernetes#31380): claims other than email are namespaced by the issuer.
  if (!prefix && claim !== 'email') prefix = `${f.issuerURL}#`;
  if (f.usernamePrefix === '-') prefix = '';
  return {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: f.issuerURL, audiences: [f.clientID], ...(f.caPem ? { certificateAuthority: f.caPem } : {}) },
        claimMappings: {
          username: { claim, prefix },
          ...(f.groupsClaim ? { groups: { claim: f.groupsClaim, prefix: f.groupsPrefix ?? '' } } : {}),
        },
        ...(f.requiredClaims && Object.keys(f.requiredClaims).length
          ? { claimValidationRules: Object.entries(f.requiredClaims).map(([c, requiredValue]) => ({ claim: c, requiredValue })) }
          : {}),
      },
    ],
  };
}

type FlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** The options those flags call for; throws on the combinations upstream refuses. */
export function authenticationFlags(values: FlagValues): Pick<ApiServerOptions, 'authenticationConfig' | 'oidcSigningAlgs' | 'authenticationTokenWebhook'> {
  const str = (k: string) => values[k] as string | undefined;
  const oidcSet = Object.keys(values).some((k) => k.startsWith('oidc-') && values[k] !== undefined);
  const out: ReturnType<typeof authenticationFlags> = {};
  const file = str('authentication-config');
  if (file) {
    if (oidcSet) throw new Error('authentication-config file and oidc-* flags are mutually exclusive');
    out.authenticationConfig = readAuthenticationConfigFile(file);
  } else if (oidcSet) {
    const issuerURL = str('oidc-issuer-url');
    const clientID = str('oidc-client-id');
    if (!issuerURL || !clientID) throw new Error('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    const required: Record<string, string> = {};
    for (const kv of (values['oidc-required-claim'] as string[] | undefined) ?? []) {
      const i = kv.indexOf('=');
      if (i < 0) throw new Error(`--oidc-required-claim: ${JSON.stringify(kv)} must be formatted as key=value`);
      required[kv.slice(0, i)] = kv.slice(i + 1);
    }
    const caFile = str('oidc-ca-file');
    const f: OidcFlags = { issuerURL, clientID, requiredClaims: required };
    if (caFile) f.caPem = readFileSync(caFile, 'utf8');
    for (const [k, flag] of [
      ['usernameClaim', 'oidc-username-claim'],
      ['usernamePrefix', 'oidc-username-prefix'],
      ['groupsClaim', 'oidc-groups-claim'],
      ['groupsPrefix', 'oidc-groups-prefix'],
    ] as const) {
      const v = str(flag);
      if (v !== undefined) f[k] = v;
    }
    out.authenticationConfig = oidcFlagsToConfig(f);
    out.oidcSigningAlgs = (str('oidc-signing-algs') ?? 'RS256').split(',').filter(Boolean);
  }
  const webhook = str('authentication-token-webhook-config-file');
  if (webhook) {
    const version = str('authentication-token-webhook-version') ?? 'v1beta1';
    checkWebhookVersion(version);
    out.authenticationTokenWebhook = { configFile: webhook, cacheTtlMs: parseDuration(str('authentication-token-webhook-cache-ttl') ?? '2m0s'), version };
  }
  return out;
}

/** What buildAuthentication needs of the server's options. */
export interface AuthenticationOptions {
  /** --client-ca-file (PEM). */
  clientCA?: string;
  requestHeader?: RequestHeaderSettings;
  config?: AuthenticationConfiguration;
  signingAlgs?: string[];
  tokenWebhook?: TokenWebhookOptions;
  /** Issuers JWT authenticators may not claim: the ServiceAccount token issuer. */
  serviceAccountIssuers: string[];
  /** --api-audiences, asked of the token webhook. */
  apiAudiences: string[];
  logger?: Logger;
}

const DEFAULT_SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export function authenticationOptions(o: ApiServerOptions): AuthenticationOptions {
  const saIssuer = o.serviceAccount ? (o.serviceAccount.issuer ?? DEFAULT_SA_ISSUER) : undefined;
  return {
    ...(o.tls?.clientCA ? { clientCA: o.tls.clientCA } : {}),
    ...(o.aggregation?.requestHeader ? { requestHeader: o.aggregation.requestHeader } : {}),
    ...(o.authenticationConfig ? { config: o.authenticationConfig } : {}),
    ...(o.oidcSigningAlgs ? { signingAlgs: o.oidcSigningAlgs } : {}),
    ...(o.authenticationTokenWebhook ? { tokenWebhook: o.authenticationTokenWebhook } : {}),
    serviceAccountIssuers: saIssuer ? [saIssuer] : [],
    apiAudiences: o.serviceAccount ? (o.serviceAccount.audiences ?? [saIssuer!]) : [],
    ...(o.logger ? { logger: o.logger } : {}),
  };
}

export interface BuiltAuthentication {
  tokens: TokenAuthenticator[];
  certificates: CertificateAuthenticators;
  /** Stops the JWT authenticators' background key loading. */
  close(): void;
}

/** The authenticators the options call for; throws when a configuration is invalid. */
export function buildAuthentication(o: AuthenticationOptions): BuiltAuthentication {
  const certificates: CertificateAuthenticators = {};
  if (o.clientCA) certificates.clientCA = new CertPool(o.clientCA);
  if (o.requestHeader) certificates.requestHeader = new RequestHeaderAuthenticator(o.requestHeader);
  const tokens: TokenAuthenticator[] = [];
  const jwts: JwtAuthenticator[] = [];
  if (o.config) {
    const algs = o.signingAlgs ?? [...ALL_SIGNING_ALGS];
    checkSigningAlgs(algs);
    const { errs, jwt } = compileAuthenticationConfiguration(decodeAuthenticationConfiguration(o.config), o.serviceAccountIssuers);
    if (errs.length) throw new Error(`invalid authentication configuration: ${aggregateMessage(errs)}`);
    for (const c of jwt) jwts.push(new JwtAuthenticator(c, { signingAlgs: algs, ...(o.logger ? { logger: o.logger } : {}) }));
  }
  const webhook = o.tokenWebhook ? tokenWebhook(o.tokenWebhook, o.apiAudiences, o.logger) : undefined;
  tokens.push(...jwts);
  if (webhook) tokens.push(webhook);
  for (const j of jwts) j.start();
  return { tokens, certificates, close: () => jwts.forEach((j) => j.close()) };
}
