/**
 * The AuthenticationConfiguration's JWT authenticators (k8s.io/apiserver
 * pkg/apis/apiserver types.go, v1/v1beta1/v1alpha1 alike) and their validation
 * (pkg/apis/apiserver/validation/validation.go ValidateAuthenticationConfiguration),
 * which also compiles their CEL expressions: a configuration that does not
 * validate stops the apiserver, with upstream's field errors.
 *
 * Decoding is strict, as upstream's (an unknown field or a value of the wrong
 * type is an error); a null value counts as absent, so `prefix:` with nothing
 * after it is a missing prefix, and `prefix: ""` an empty one.
 */
import { field, type FieldError, isDNS1123Subdomain, Path, regexError } from '@kubeling/apimachinery';
import { type ClaimMapper, CLAIMS_DECLS, type Compiled, compileAuthnExpression, selects, USER_DECLS } from './jwt-claims.js';
import { parseBundle } from './requestheader.js';

export interface AuthenticationConfiguration {
  apiVersion?: string;
  kind?: string;
  jwt?: JWTAuthenticator[];
  anonymous?: { enabled?: boolean; conditions?: { path?: string }[] };
}

export interface JWTAuthenticator {
  issuer: Issuer;
  claimValidationRules?: ClaimValidationRule[];
  claimMappings: ClaimMappings;
  userValidationRules?: UserValidationRule[];
}

export interface Issuer {
  url: string;
  discoveryURL?: string;
  /** PEM: the CA the issuer's (and discovery URL's) serving certificates chain to; the host's roots without it. */
  certificateAuthority?: string;
  audiences: string[];
  audienceMatchPolicy?: string;
  egressSelectorType?: string;
}

export interface ClaimValidationRule {
  claim?: string;
  requiredValue?: string;
  expression?: string;
  message?: string;
}

export interface PrefixedClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: string;
}

export interface ClaimMappings {
  username: PrefixedClaimOrExpression;
  groups?: PrefixedClaimOrExpression;
  uid?: { claim?: string; expression?: string };
  extra?: { key: string; valueExpression: string }[];
}

export interface UserValidationRule {
  expression: string;
  message?: string;
}

export interface CompiledJWTAuthenticator {
  config: JWTAuthenticator;
  mapper: ClaimMapper;
}

// ---------------------------------------------------------------- strict decoding

type Shape = 'string' | 'bool' | readonly [Shape] | { readonly [k: string]: Shape };
const S = 'string';
const PREFIXED = { claim: S, prefix: S, expression: S } as const;
const JWT_SHAPE: Shape = {
  issuer: { url: S, discoveryURL: S, certificateAuthority: S, audiences: [S], audienceMatchPolicy: S, egressSelectorType: S },
  claimValidationRules: [{ claim: S, requiredValue: S, expression: S, message: S }],
  claimMappings: { username: PREFIXED, groups: PREFIXED, uid: { claim: S, expression: S }, extra: [{ key: S, valueExpression: S }] },
  userValidationRules: [{ expression: S, message: S }],
};
const CONFIG_SHAPE: Shape = { apiVersion: S, kind: S, jwt: [JWT_SHAPE], anonymous: { enabled: 'bool', conditions: [{ path: S }] } };

const jsonKind = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'object' ? 'object' : typeof v);

function decode(v: unknown, shape: Shape, at: string, errs: string[]): unknown {
  if (v === null || v === undefined) return undefined;
  if (shape === 'string' || shape === 'bool') {
    const want = shape === 'string' ? 'string' : 'boolean';
    if (typeof v === want) return v;
    errs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${at} of type ${shape}`);
    return undefined;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) {
      errs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${at} of type array`);
      return undefined;
    }
    return v.map((x, i) => decode(x, shape[0], `${at}[${i}]`, errs) ?? (shape[0] === 'string' ? '' : {}));
  }
  if (typeof v !== 'object' || Array.isArray(v)) {
    errs.push(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${at} of type object`);
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const sub = (shape as Record<string, Shape>)[k];
    const p = at ? `${at}.${k}` : k;
    if (!sub || !Object.hasOwn(shape, k)) {
      errs.push(`strict decoding error: unknown field "${p}"`);
      continue;
    }
    const d = decode(x, sub, p, errs);
    if (d !== undefined) out[k] = d;
  }
  return out;
}

/** The configuration as upstream's strict decoder reads it; throws on unknown fields and wrong types. */
export function decodeAuthenticationConfiguration(raw: unknown): AuthenticationConfiguration {
  const errs: string[] = [];
  const c = (decode(raw ?? {}, CONFIG_SHAPE, '', errs) ?? {}) as AuthenticationConfiguration;
  if (errs.length) throw new Error(errs.join(', '));
  for (const a of c.jwt ?? []) {
    a.issuer ??= { url: '', audiences: [] };
    a.issuer.url ??= '';
    a.issuer.audiences ??= [];
    a.claimMappings ??= { username: {} };
    a.claimMappings.username ??= {};
  }
  return c;
}

// ---------------------------------------------------------------- validation

const SIGNING_ALGS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

/** oidc.AllValidSigningAlgorithms: what tokens of an --authentication-config issuer may be signed with. */
export const ALL_SIGNING_ALGS: readonly string[] = SIGNING_ALGS;

export function checkSigningAlgs(algs: readonly string[]): void {
  for (const a of algs) if (!SIGNING_ALGS.includes(a)) throw new Error(`oidc: unsupported signing alg: "${a}"`);
}

interface State {
  errs: FieldError[];
  usesEmail: boolean;
  usesEmailVerified: boolean;
}

function validateURL(u: string, disallowed: ReadonlySet<string>, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (disallowed.has(u)) errs.push(field.invalid(p, u, `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  let parsed: URL | undefined;
  try {
    parsed = new URL(u);
  } catch {
    // Go parses a scheme-less string as a relative URL: it fails the scheme check.
  }
  if (parsed?.protocol !== 'https:') errs.push(field.invalid(p, u, 'URL scheme must be https'));
  if (parsed?.username || parsed?.password) errs.push(field.invalid(p, u, 'URL must not contain a username or password'));
  if (parsed?.search) errs.push(field.invalid(p, u, 'URL must not contain a query'));
  if (parsed?.hash) errs.push(field.invalid(p, u, 'URL must not contain a fragment'));
  return errs;
}

function validateIssuer(i: Issuer, disallowed: ReadonlySet<string>, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (!i.url) errs.push(field.required(p.child('url'), ''));
  else errs.push(...validateURL(i.url, disallowed, p.child('url')));
  if (i.discoveryURL) {
    if (i.url && i.url.replace(/\/+$/, '') === i.discoveryURL.replace(/\/+$/, ''))
      errs.push(field.invalid(p.child('discoveryURL'), i.discoveryURL, 'discoveryURL must be different from URL'));
    errs.push(...validateURL(i.discoveryURL, new Set(), p.child('discoveryURL')));
  }
  const ap = p.child('audiences');
  if (!i.audiences.length) errs.push(field.required(ap, `at least one ${ap} is required`));
  else {
    const seen = new Set<string>();
    i.audiences.forEach((a, n) => {
      if (!a) errs.push(field.required(ap.index(n), ''));
      if (seen.has(a)) errs.push(field.duplicate(ap.index(n), a));
      seen.add(a);
    });
    const policy = i.audienceMatchPolicy ?? '';
    if (i.audiences.length > 1 && policy !== 'MatchAny')
      errs.push(field.invalid(p.child('audienceMatchPolicy'), policy, 'audienceMatchPolicy must be MatchAny for multiple audiences'));
    if (i.audiences.length === 1 && policy && policy !== 'MatchAny')
      errs.push(field.invalid(p.child('audienceMatchPolicy'), policy, 'audienceMatchPolicy must be empty or MatchAny for single audience'));
  }
  if (i.certificateAuthority) {
    let problem: string | undefined;
    try {
      if (!parseBundle(i.certificateAuthority).length) problem = 'data does not contain any valid RSA or ECDSA certificates';
    } catch (e) {
      problem = (e as Error).message;
    }
    if (problem) errs.push(field.invalid(p.child('certificateAuthority'), '<omitted>', problem));
  }
  if (i.egressSelectorType) {
    const ep = p.child('egressSelectorType');
    errs.push(
      field.invalid(
        ep,
        i.egressSelectorType,
        'egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled',
      ),
    );
    if (i.egressSelectorType !== 'controlplane' && i.egressSelectorType !== 'cluster')
      errs.push(field.invalid(ep, i.egressSelectorType, 'egress selector must be either controlplane or cluster'));
  }
  return errs;
}

function compileClaims(s: State, expr: string, p: Path, bool: boolean): Compiled | undefined {
  const c = compileAuthnExpression(expr, CLAIMS_DECLS, bool);
  if ('error' in c) {
    s.errs.push(field.invalid(p, expr, c.error));
    return undefined;
  }
  return c;
}

/** validatePrefixClaimOrExpression. */
function prefixedClaimOrExpression(s: State, m: PrefixedClaimOrExpression, p: Path, required: boolean): ClaimMapper['username'] | undefined {
  if (m.expression && m.claim) s.errs.push(field.invalid(p, '', "claim and expression can't both be set"));
  else if (!m.expression && !m.claim) {
    if (required) s.errs.push(field.required(p, 'claim or expression is required'));
  } else if (m.expression) {
    if (m.prefix !== undefined) s.errs.push(field.invalid(p.child('prefix'), m.prefix, 'may not be specified when expression is set'));
    return compileClaims(s, m.expression, p.child('expression'), false);
  } else if (m.claim) {
    if (m.prefix === undefined)
      s.errs.push(field.required(p.child('prefix'), 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
    return { claim: m.claim, prefix: m.prefix ?? '' };
  }
  return undefined;
}

/** validation.IsDomainPrefixedPath. */
function domainPrefixedPath(p: Path, v: string): FieldError[] {
  if (!v) return [field.required(p, '')];
  const i = v.indexOf('/');
  const host = i < 0 ? '' : v.slice(0, i);
  const rest = i < 0 ? '' : v.slice(i + 1);
  if (!host || !rest) return [field.invalid(p, v, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => field.invalid(p, host, m));
  const fmt = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
  if (!new RegExp(`^${fmt}$`).test(rest)) errs.push(field.invalid(p, rest, regexError('Invalid path', fmt)));
  return errs;
}

function isKubernetesDomain(key: string): boolean {
  const i = key.indexOf('/');
  const d = i < 0 ? '' : key.slice(0, i);
  return d === 'kubernetes.io' || d.endsWith('.kubernetes.io') || d === 'k8s.io' || d.endsWith('.k8s.io');
}

function rules<R extends { expression?: string; message?: string }>(
  s: State,
  list: R[],
  p: Path,
  decls: typeof CLAIMS_DECLS,
): { compiled: (Compiled & { message: string })[]; required: [string, string][] } {
  const compiled: (Compiled & { message: string })[] = [];
  const required: [string, string][] = [];
  const seenClaims = new Set<string>();
  const seenExprs = new Set<string>();
  list.forEach((r, i) => {
    const rp = p.index(i);
    const claim = (r as ClaimValidationRule).claim;
    if (decls === CLAIMS_DECLS && claim && r.expression) s.errs.push(field.invalid(rp, claim, "claim and expression can't both be set"));
    else if (decls === CLAIMS_DECLS && !claim && !r.expression) s.errs.push(field.required(rp, 'claim or expression is required'));
    else if (decls === USER_DECLS && !r.expression) s.errs.push(field.required(rp.child('expression'), ''));
    else if (claim) {
      if (r.message) s.errs.push(field.invalid(rp.child('message'), r.message, 'may not be specified when claim is set'));
      if (seenClaims.has(claim)) s.errs.push(field.duplicate(rp.child('claim'), claim));
      seenClaims.add(claim);
      required.push([claim, (r as ClaimValidationRule).requiredValue ?? '']);
    } else if (r.expression) {
      const rv = (r as ClaimValidationRule).requiredValue;
      if (rv) s.errs.push(field.invalid(rp.child('requiredValue'), rv, 'may not be specified when expression is set'));
      if (seenExprs.has(r.expression)) {
        s.errs.push(field.duplicate(rp.child('expression'), r.expression));
        return;
      }
      seenExprs.add(r.expression);
      const c = compileAuthnExpression(r.expression, decls, true);
      if ('error' in c) s.errs.push(field.invalid(rp.child('expression'), r.expression, c.error));
      else {
        compiled.push({ ...c, message: r.message ?? '' });
        if (decls === CLAIMS_DECLS) s.usesEmailVerified ||= selects(c.program.root, 'claims', 'email_verified');
      }
    }
  });
  return { compiled, required };
}

function claimMappings(s: State, m: ClaimMappings, p: Path): Omit<ClaimMapper, 'requiredClaims' | 'claimRules' | 'userRules'> | undefined {
  const username = prefixedClaimOrExpression(s, m.username, p.child('username'), true);
  if (username && 'program' in username) {
    s.usesEmail ||= selects(username.program.root, 'claims', 'email');
    s.usesEmailVerified ||= selects(username.program.root, 'claims', 'email_verified');
  }
  const groups = m.groups ? prefixedClaimOrExpression(s, m.groups, p.child('groups'), false) : undefined;
  let uid: ClaimMapper['uid'];
  if (m.uid?.claim && m.uid.expression) s.errs.push(field.invalid(p.child('uid'), '', "claim and expression can't both be set"));
  else if (m.uid?.expression) uid = compileClaims(s, m.uid.expression, p.child('uid', 'expression'), false);
  else if (m.uid?.claim) uid = { claim: m.uid.claim };
  const extra: ClaimMapper['extra'] = [];
  const seen = new Set<string>();
  (m.extra ?? []).forEach((e, i) => {
    const ep = p.child('extra').index(i);
    const key = e.key ?? '';
    s.errs.push(...domainPrefixedPath(ep.child('key'), key));
    if (key !== key.toLowerCase()) s.errs.push(field.invalid(ep.child('key'), key, 'must be lowercase'));
    if (isKubernetesDomain(key)) s.errs.push(field.invalid(ep.child('key'), key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'));
    if (seen.has(key)) {
      s.errs.push(field.duplicate(ep.child('key'), key));
      return;
    }
    seen.add(key);
    if (!e.valueExpression) {
      s.errs.push(field.required(ep.child('valueExpression'), ''));
      return;
    }
    const c = compileClaims(s, e.valueExpression, ep.child('valueExpression'), false);
    if (c) {
      extra.push({ ...c, key });
      s.usesEmailVerified ||= selects(c.program.root, 'claims', 'email_verified');
    }
  });
  if (!username) return undefined;
  return { username, ...(groups ? { groups } : {}), ...(uid ? { uid } : {}), extra };
}

/** validateJWTAuthenticator: the field errors, and the compiled mapper when there are none. */
export function compileJWTAuthenticator(a: JWTAuthenticator, p: Path, disallowed: ReadonlySet<string>): { errs: FieldError[]; mapper?: ClaimMapper } {
  const s: State = { errs: [], usesEmail: false, usesEmailVerified: false };
  s.errs.push(...validateIssuer(a.issuer, disallowed, p.child('issuer')));
  const claimRules = rules(s, a.claimValidationRules ?? [], p.child('claimValidationRules'), CLAIMS_DECLS);
  const mp = p.child('claimMappings');
  const mappings = claimMappings(s, a.claimMappings, mp);
  // An email is an identity only if the expressions also look at whether it was verified.
  if (s.usesEmail && !s.usesEmailVerified)
    s.errs.push(
      field.invalid(
        mp.child('username', 'expression'),
        a.claimMappings.username.expression ?? '',
        'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      ),
    );
  const userRules = rules(s, a.userValidationRules ?? [], p.child('userValidationRules'), USER_DECLS);
  if (s.errs.length || !mappings) return { errs: s.errs };
  return { errs: [], mapper: { ...mappings, requiredClaims: claimRules.required, claimRules: claimRules.compiled, userRules: userRules.compiled } };
}

/** ValidateAuthenticationConfiguration; `disallowedIssuers` are the ServiceAccount issuers. */
export function compileAuthenticationConfiguration(
  c: AuthenticationConfiguration,
  disallowedIssuers: readonly string[],
): { errs: FieldError[]; jwt: CompiledJWTAuthenticator[] } {
  const root = new Path('jwt');
  const list = c.jwt ?? [];
  if (list.length > 64) return { errs: [field.tooMany(root, list.length, 64)], jwt: [] };
  const errs: FieldError[] = [];
  const jwt: CompiledJWTAuthenticator[] = [];
  const issuers = new Set<string>();
  const discovery = new Set<string>();
  const disallowed = new Set(disallowedIssuers);
  list.forEach((a, i) => {
    const p = root.index(i);
    const r = compileJWTAuthenticator(a, p, disallowed);
    errs.push(...r.errs);
    if (r.mapper) jwt.push({ config: a, mapper: r.mapper });
    if (issuers.has(a.issuer.url)) errs.push(field.duplicate(p.child('issuer', 'url'), a.issuer.url));
    issuers.add(a.issuer.url);
    if (a.issuer.discoveryURL) {
      if (discovery.has(a.issuer.discoveryURL)) errs.push(field.duplicate(p.child('issuer', 'discoveryURL'), a.issuer.discoveryURL));
      discovery.add(a.issuer.discoveryURL);
    }
  });
  if (c.anonymous)
    errs.push(field.forbidden('anonymous', 'anonymous is not supported: requests without credentials are anonymous on the health and version paths only'));
  return { errs, jwt: errs.length ? [] : jwt };
}
