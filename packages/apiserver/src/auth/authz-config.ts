/**
 * Which authorizers answer, in order (kubernetes pkg/kubeapiserver/options
 * authorization.go, pkg/kubeapiserver/authorizer/config.go, and k8s.io/apiserver
 * pkg/apis/apiserver AuthorizationConfiguration with its validation).
 *
 * Either the legacy flags — `--authorization-mode` (an ordered list of
 * AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node), the ABAC policy file
 * and the one webhook's kubeconfig, version and cache TTLs — or
 * `--authorization-config`, a file naming each authorizer (several webhooks,
 * each with its timeout, failure policy, caching and CEL matchConditions).
 * The two are exclusive. Both become the same plan; every mistake is reported
 * at once with upstream's messages, aggregated as `[a, b]`.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { field, isDNS1123Subdomain, type FieldError, parseDuration } from '@kubeling/apimachinery';
import { parse as parseYaml } from 'yaml';
import { compileMatchCondition, type CompiledCondition } from './cel-authz.js';
import type { FailurePolicy } from './webhook-authz.js';

/** modes.AuthorizationModeChoices. */
export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;

export interface WebhookSettings {
  timeoutMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: FailurePolicy;
  /** TTLs of answers; 0 when the answers are not cached. */
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  connectionInfo: { type: 'KubeConfigFile'; kubeConfigFile: string } | { type: 'InClusterConfig' };
  matchConditions: CompiledCondition[];
}

export interface AuthorizerConfig {
  type: string;
  name: string;
  webhook?: WebhookSettings;
}

export interface AuthorizationPlan {
  authorizers: AuthorizerConfig[];
  /** --authorization-policy-file, for ABAC. */
  policyFile?: string;
}

/** The --authorization-* flags besides the mode list; undefined means not given. */
export interface AuthorizationFlags {
  policyFile?: string;
  webhookConfigFile?: string;
  webhookVersion?: string;
  webhookCacheAuthorizedTTLMs?: number;
  webhookCacheUnauthorizedTTLMs?: number;
  /** --authorization-config. */
  configFile?: string;
}

/** Only AlwaysAllow: the development mode with neither authentication nor authorization. */
export const allowsEverything = (plan: AuthorizationPlan): boolean => plan.authorizers.every((a) => a.type === 'AlwaysAllow');

export const authorizerTypes = (plan: AuthorizationPlan): string[] => plan.authorizers.map((a) => a.type);

/** Go's time.Duration.String() of a count of milliseconds ("30s", "5m0s", "1.5s", "300ms"). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(3))}s`;
  if (h) return `${sign}${h}h${m}m${s}`;
  if (m) return `${sign}${m}m${s}`;
  return sign + s;
}

/** Go's %q of a []string, as the duplicate-mode message prints the list. */
const goList = (l: readonly string[]) => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/**
 * BuiltInAuthorizationOptions.Validate for the legacy flags, then
 * buildAuthorizationConfiguration: the Webhook mode is the authorizer
 * `default` (30s timeout, NoOpinion on failure, cached per the TTL flags),
 * every other mode the authorizer named by its lower-cased mode.
 */
function fromModes(modes: readonly string[], f: AuthorizationFlags): AuthorizationPlan {
  const errors: string[] = [];
  if (!modes.length) errors.push('at least one authorization-mode must be passed');
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) errors.push(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    if (m === 'ABAC' && !f.policyFile) errors.push("authorization-mode ABAC's authorization policy file not passed");
    if (m === 'Webhook' && !f.webhookConfigFile) errors.push("authorization-mode Webhook's authorization config file not passed");
  }
  if (f.policyFile && !modes.includes('ABAC')) errors.push('cannot specify --authorization-policy-file without mode ABAC');
  if (f.webhookConfigFile && !modes.includes('Webhook')) errors.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  if (new Set(modes).size !== modes.length) errors.push(`authorization-mode ${goList(modes)} has mode specified more than once`);
  const version = f.webhookVersion ?? 'v1beta1';
  if (modes.includes('Webhook') && version !== 'v1' && version !== 'v1beta1')
    errors.push(`unsupported webhook authorizer version ${JSON.stringify(version)}, supported versions are "v1", "v1beta1"`);
  if (errors.length) throw new Error(field.aggregateStrings(errors));
  const authorizedTTLMs = f.webhookCacheAuthorizedTTLMs ?? 5 * 60_000;
  const unauthorizedTTLMs = f.webhookCacheUnauthorizedTTLMs ?? 30_000;
  return {
    authorizers: modes.map((m) =>
      m === 'Webhook'
        ? {
            type: m,
            name: 'default',
            webhook: {
              timeoutMs: 30_000,
              subjectAccessReviewVersion: version as 'v1' | 'v1beta1',
              failurePolicy: 'NoOpinion',
              authorizedTTLMs,
              unauthorizedTTLMs,
              connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: f.webhookConfigFile! },
              matchConditions: [],
            },
          }
        : { type: m, name: m.toLowerCase() },
    ),
    ...(f.policyFile ? { policyFile: f.policyFile } : {}),
  };
}

// ---- the AuthorizationConfiguration file ------------------------------------------

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];

/** The fields each object of the file may have (the strict decoder refuses others). */
const KNOWN: Record<string, readonly string[]> = {
  '': ['apiVersion', 'kind', 'authorizers'],
  authorizer: ['type', 'name', 'webhook'],
  webhook: [
    'authorizedTTL',
    'cacheAuthorizedRequests',
    'unauthorizedTTL',
    'cacheUnauthorizedRequests',
    'timeout',
    'subjectAccessReviewVersion',
    'matchConditionSubjectAccessReviewVersion',
    'failurePolicy',
    'connectionInfo',
    'matchConditions',
  ],
  connectionInfo: ['type', 'kubeConfigFile'],
  matchCondition: ['expression'],
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The decoder's checks: field types and unknown fields, as `strict decoding error: unknown field "a.b"` and json type errors. */
function decodeErrors(doc: Obj): string[] {
  const unknown: string[] = [];
  const typeErrors: string[] = [];
  const check = (o: Obj, kind: string, at: string) => {
    for (const k of Object.keys(o)) if (!KNOWN[kind]!.includes(k)) unknown.push(`unknown field "${at ? `${at}.` : ''}${k}"`);
  };
  const expect = (v: unknown, type: 'string' | 'boolean' | 'object' | 'array', at: string) => {
    if (v === undefined || v === null) return true;
    const ok = type === 'array' ? Array.isArray(v) : type === 'object' ? isObj(v) : typeof v === type;
    if (!ok)
      typeErrors.push(
        `json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go struct field ${at} of type ${type === 'boolean' ? 'bool' : type}`,
      );
    return ok;
  };
  check(doc, '', '');
  if (!expect(doc.authorizers, 'array', 'AuthorizationConfiguration.authorizers')) return typeErrors;
  ((doc.authorizers as unknown[] | undefined) ?? []).forEach((a, i) => {
    const at = `authorizers[${i}]`;
    if (!expect(a, 'object', 'AuthorizationConfiguration.authorizers')) return;
    const az = a as Obj;
    check(az, 'authorizer', at);
    expect(az.type, 'string', 'AuthorizerConfiguration.type');
    expect(az.name, 'string', 'AuthorizerConfiguration.name');
    if (!expect(az.webhook, 'object', 'AuthorizerConfiguration.webhook') || !az.webhook) return;
    const w = az.webhook as Obj;
    check(w, 'webhook', `${at}.webhook`);
    for (const k of ['authorizedTTL', 'unauthorizedTTL', 'timeout', 'subjectAccessReviewVersion', 'matchConditionSubjectAccessReviewVersion', 'failurePolicy'])
      expect(w[k], 'string', `WebhookConfiguration.${k}`);
    for (const k of ['cacheAuthorizedRequests', 'cacheUnauthorizedRequests']) expect(w[k], 'boolean', `WebhookConfiguration.${k}`);
    for (const k of ['authorizedTTL', 'unauthorizedTTL', 'timeout']) {
      if (typeof w[k] !== 'string') continue;
      try {
        parseDuration(w[k] as string);
      } catch {
        typeErrors.push(`time: invalid duration ${JSON.stringify(w[k])}`);
      }
    }
    if (expect(w.connectionInfo, 'object', 'WebhookConfiguration.connectionInfo') && w.connectionInfo) {
      const c = w.connectionInfo as Obj;
      check(c, 'connectionInfo', `${at}.webhook.connectionInfo`);
      expect(c.type, 'string', 'WebhookConnectionInfo.type');
      expect(c.kubeConfigFile, 'string', 'WebhookConnectionInfo.kubeConfigFile');
    }
    if (expect(w.matchConditions, 'array', 'WebhookConfiguration.matchConditions'))
      ((w.matchConditions as unknown[] | undefined) ?? []).forEach((m, j) => {
        if (!expect(m, 'object', 'WebhookConfiguration.matchConditions')) return;
        check(m as Obj, 'matchCondition', `${at}.webhook.matchConditions[${j}]`);
        expect((m as Obj).expression, 'string', 'WebhookMatchCondition.expression');
      });
  });
  if (typeErrors.length) return typeErrors;
  return unknown.length ? [`strict decoding error: ${unknown.join(', ')}`] : [];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const ms = (v: unknown, dflt: number): number => (typeof v === 'string' && v !== '' ? parseDuration(v) : dflt);

/** The kubeConfigFile checks (absolute, there, a regular file). */
function kubeConfigFileErrors(p: field.Path, file: string): FieldError[] {
  if (!file) return [field.required(p)];
  if (!isAbsolute(file)) return [field.invalid(p, file, 'must be an absolute path')];
  try {
    if (!statSync(file).isFile()) return [field.invalid(p, file, 'must be a regular file')];
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? `stat ${file}: no such file or directory` : err.message;
    return [field.invalid(p, file, `error loading file: ${why}`)];
  }
  return [];
}

/** ValidateWebhookConfiguration (defaults applied: TTLs 5m and 30s, both cached). */
function webhookSettings(at: field.Path, w: Obj, errs: FieldError[]): WebhookSettings {
  const timeoutMs = ms(w.timeout, 0);
  if (timeoutMs === 0) errs.push(field.required(at.child('timeout')));
  else if (timeoutMs > 30_000 || timeoutMs < 0) errs.push(field.invalid(at.child('timeout'), goDuration(timeoutMs), 'must be > 0s and <= 30s'));
  const authorizedTTLMs = ms(w.authorizedTTL, 5 * 60_000);
  if (authorizedTTLMs === 0) errs.push(field.required(at.child('authorizedTTL')));
  const unauthorizedTTLMs = ms(w.unauthorizedTTL, 30_000);
  if (unauthorizedTTLMs === 0) errs.push(field.required(at.child('unauthorizedTTL')));
  const version = str(w.subjectAccessReviewVersion);
  if (!version) errs.push(field.required(at.child('subjectAccessReviewVersion')));
  else if (version !== 'v1' && version !== 'v1beta1') errs.push(field.notSupported(at.child('subjectAccessReviewVersion'), version, ['v1', 'v1beta1']));
  const conditions = Array.isArray(w.matchConditions) ? (w.matchConditions as Obj[]) : [];
  const mcVersion = str(w.matchConditionSubjectAccessReviewVersion);
  if (!mcVersion) {
    if (conditions.length) errs.push(field.required(at.child('matchConditionSubjectAccessReviewVersion'), 'required if match conditions are specified'));
  } else if (mcVersion !== 'v1') errs.push(field.notSupported(at.child('matchConditionSubjectAccessReviewVersion'), mcVersion, ['v1']));
  const failurePolicy = str(w.failurePolicy);
  if (!failurePolicy) errs.push(field.required(at.child('failurePolicy')));
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny')
    errs.push(field.notSupported(at.child('failurePolicy'), failurePolicy, ['NoOpinion', 'Deny']));
  const ci = isObj(w.connectionInfo) ? w.connectionInfo : {};
  const ciType = str(ci.type);
  const kubeConfigFile = str(ci.kubeConfigFile);
  const ciPath = at.child('connectionInfo');
  if (!ciType) errs.push(field.required(ciPath.child('type')));
  else if (ciType === 'InClusterConfig') {
    if (ci.kubeConfigFile !== undefined) errs.push(field.invalid(ciPath.child('kubeConfigFile'), kubeConfigFile, 'can only be set when type=KubeConfigFile'));
  } else if (ciType === 'KubeConfigFile') errs.push(...kubeConfigFileErrors(ciPath.child('kubeConfigFile'), kubeConfigFile));
  else errs.push(field.notSupported(ciPath.child('type'), ci, ['InClusterConfig', 'KubeConfigFile']));
  // compileMatchConditions
  const compiled: CompiledCondition[] = [];
  if (conditions.length > 64) errs.push(field.tooMany(at.child('matchConditions'), conditions.length, 64));
  else {
    const seen = new Set<string>();
    conditions.forEach((c, i) => {
      const p = at.child('matchConditions').index(i).child('expression');
      const expr = str(c.expression);
      if (!expr.trim()) return void errs.push(field.required(p));
      if (seen.has(expr)) return void errs.push(field.duplicate(p, expr));
      seen.add(expr);
      const r = compileMatchCondition(expr);
      if ('error' in r) errs.push(field.invalid(p, expr, r.error));
      else compiled.push(r.condition);
    });
  }
  return {
    timeoutMs,
    subjectAccessReviewVersion: version === 'v1' ? 'v1' : 'v1beta1',
    failurePolicy: failurePolicy === 'Deny' ? 'Deny' : 'NoOpinion',
    authorizedTTLMs: w.cacheAuthorizedRequests === false ? 0 : authorizedTTLMs,
    unauthorizedTTLMs: w.cacheUnauthorizedRequests === false ? 0 : unauthorizedTTLMs,
    connectionInfo: ciType === 'InClusterConfig' ? { type: 'InClusterConfig' } : { type: 'KubeConfigFile', kubeConfigFile },
    matchConditions: compiled,
  };
}

/** LoadAndValidateData: decode, ValidateAuthorizationConfiguration, then kube-apiserver's name rule for non-webhooks. */
export function parseAuthorizationConfiguration(data: string): AuthorizationPlan {
  let doc: unknown;
  try {
    doc = data.trim() ? parseYaml(data) : {};
  } catch (e) {
    throw new Error(`failed to load AuthorizationConfiguration from file: ${(e as Error).message}`);
  }
  const load = (why: string) => new Error(`failed to load AuthorizationConfiguration from file: ${why}`);
  if (!isObj(doc)) throw load('the file is not an AuthorizationConfiguration object');
  if (data.trim()) {
    if (!doc.apiVersion) throw load("Object 'apiVersion' is missing");
    if (!doc.kind) throw load("Object 'Kind' is missing");
    if (doc.kind !== 'AuthorizationConfiguration' || !API_VERSIONS.includes(String(doc.apiVersion)))
      throw load(`no kind ${JSON.stringify(String(doc.kind))} is registered for version ${JSON.stringify(String(doc.apiVersion))}`);
  }
  const decode = decodeErrors(doc);
  if (decode.length) throw load(decode.join(', '));

  const list = (doc.authorizers as Obj[] | undefined) ?? [];
  const errs: FieldError[] = [];
  if (!list.length) errs.push(field.required('authorizers', 'at least one authorization mode must be defined'));
  const types = new Set<string>();
  const names = new Set<string>();
  const authorizers: AuthorizerConfig[] = [];
  list.forEach((a, i) => {
    const at = field.path('authorizers').index(i);
    const type = str(a.type);
    const name = str(a.name);
    if (!type) return void errs.push(field.required(at.child('type')));
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(type))
      return void errs.push(field.notSupported(at.child('type'), type, [...AUTHORIZATION_MODES].sort()));
    if (types.has(type) && type !== 'Webhook') return void errs.push(field.duplicate(at.child('type'), type));
    types.add(type);
    if (!name) errs.push(field.required(at.child('name')));
    else if (names.has(name)) errs.push(field.duplicate(at.child('name'), name));
    else {
      const bad = isDNS1123Subdomain(name);
      if (bad.length) errs.push(field.invalid(at.child('name'), name, `authorizer name is invalid: ${bad.join(', ')}`));
    }
    names.add(name);
    if (type === 'Webhook') {
      if (!isObj(a.webhook)) return void errs.push(field.required(at.child('webhook'), 'required when type=Webhook'));
      authorizers.push({ type, name, webhook: webhookSettings(at, a.webhook, errs) });
      return;
    }
    if (a.webhook !== undefined && a.webhook !== null) errs.push(field.invalid(at.child('webhook'), 'non-null', 'may only be specified when type=Webhook'));
    authorizers.push({ type, name });
  });
  if (errs.length) throw new Error(field.aggregateMessage(errs));
  const nameErrors = authorizers
    .filter((a) => a.type !== 'Webhook' && a.name !== a.type.toLowerCase())
    .map((a) => `expected name ${a.type.toLowerCase()} for authorizer ${a.type} instead of ${a.name}`);
  if (nameErrors.length) throw new Error(field.aggregateStrings(nameErrors));
  return { authorizers };
}

/**
 * The plan from the options: `--authorization-config` (exclusive with the
 * mode list and the webhook flags), else the mode list (a comma-separated
 * string or a list), else `defaultModes`. Throws with upstream's messages.
 */
export function resolveAuthorization(
  modes: string | readonly string[] | undefined,
  flags: AuthorizationFlags = {},
  defaultModes: readonly string[] = ['AlwaysAllow'],
): AuthorizationPlan {
  const list = typeof modes === 'string' ? modes.split(',').filter(Boolean) : modes;
  if (flags.configFile) {
    const legacy =
      list !== undefined ||
      flags.webhookConfigFile !== undefined ||
      flags.webhookVersion !== undefined ||
      flags.webhookCacheAuthorizedTTLMs !== undefined ||
      flags.webhookCacheUnauthorizedTTLMs !== undefined;
    if (legacy) throw new Error('--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
    const plan = parseAuthorizationConfiguration(readFileSync(flags.configFile, 'utf8'));
    if (plan.authorizers.some((a) => a.type === 'ABAC') && !flags.policyFile) throw new Error("authorization-mode ABAC's authorization policy file not passed");
    return flags.policyFile ? { ...plan, policyFile: flags.policyFile } : plan;
  }
  return fromModes(list ?? defaultModes, flags);
}
