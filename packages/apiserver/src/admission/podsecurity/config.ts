/**
 * The PodSecurity plugin's configuration (k8s.io/pod-security-admission
 * admission/api: PodSecurityConfiguration of pod-security.admission.config.k8s.io
 * v1, v1beta1 or v1alpha1), given as the plugin's part of the
 * AdmissionConfiguration:
 *
 *   defaults:   {enforce, enforce-version, audit, audit-version, warn, warn-version}
 *   exemptions: {usernames, namespaces, runtimeClasses}
 *
 * Levels default to `privileged` and versions to `latest`. A configuration
 * that does not validate (an unknown level or version, an invalid or repeated
 * namespace or runtime class name, an empty or repeated username) is an error
 * at start, as upstream refuses to start the server.
 */
import { aggregateMessage, field, type FieldError, nameIsDNSSubdomain, validateNamespaceName } from '@kubeling/apimachinery';
import { DEFAULT_POLICY, type Level, type Policy, type Version, parseLevel, parseVersion } from './api.js';

export const CONFIG_GROUP = 'pod-security.admission.config.k8s.io';
const API_VERSIONS = new Set(['v1', 'v1beta1', 'v1alpha1'].map((v) => `${CONFIG_GROUP}/${v}`));

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: {
    usernames: ReadonlySet<string>;
    namespaces: ReadonlySet<string>;
    runtimeClasses: ReadonlySet<string>;
  };
}

/** No configuration: everything privileged, nothing exempt. */
export const DEFAULT_CONFIGURATION: PodSecurityConfiguration = {
  defaults: DEFAULT_POLICY,
  exemptions: { usernames: new Set(), namespaces: new Set(), runtimeClasses: new Set() },
};

const stringOf = (v: unknown, p: string, errs: FieldError[]): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  errs.push(field.typeInvalid(p, v, 'must be a string'));
  return '';
};

const listOf = (v: unknown, p: string, errs: FieldError[]): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    errs.push(field.typeInvalid(p, v, 'must be a list of strings'));
    return [];
  }
  return v.map((x, i) => stringOf(x, `${p}[${i}]`, errs));
};

/** The exemption names, each valid and listed once (validateNamespaces, validateRuntimeClasses, validateUsernames). */
function exemptionSet(names: string[], p: string, check: ((s: string) => string[]) | 'username', errs: FieldError[]): Set<string> {
  const set = new Set<string>();
  names.forEach((n, i) => {
    const at = `${p}[${i}]`;
    if (check === 'username') {
      if (n === '') return void errs.push(field.required(at, ''));
    } else {
      const msgs = check(n);
      if (msgs.length) return void errs.push(field.invalid(at, n, msgs.join(', ')));
    }
    if (set.has(n)) return void errs.push(field.duplicate(at, n));
    set.add(n);
  });
  return set;
}

/**
 * Reads and validates a configuration; undefined is the default one. Throws
 * an Error naming every problem when it does not validate.
 */
export function loadPodSecurityConfiguration(raw: Record<string, unknown> | undefined): PodSecurityConfiguration {
  if (raw === undefined) return DEFAULT_CONFIGURATION;
  const apiVersion = raw.apiVersion;
  if (raw.kind !== 'PodSecurityConfiguration' || typeof apiVersion !== 'string' || !API_VERSIONS.has(apiVersion))
    throw new Error(
      `PodSecurity configuration error: expected kind PodSecurityConfiguration of ${CONFIG_GROUP}/v1, got ${String(apiVersion)} ${String(raw.kind)}`,
    );
  const errs: FieldError[] = [];
  const defaults = (raw.defaults ?? {}) as Record<string, unknown>;
  const exemptions = (raw.exemptions ?? {}) as Record<string, unknown>;
  const level = (key: string): Level => {
    const p = `defaults.${key}`;
    const s = stringOf(defaults[key], p, errs) || 'privileged';
    const r = parseLevel(s);
    if (r.error) errs.push(field.invalid(p, s, r.error));
    return r.level;
  };
  const version = (key: string): Version => {
    const p = `defaults.${key}`;
    const s = stringOf(defaults[key], p, errs) || 'latest';
    const r = parseVersion(s);
    if (r.error) errs.push(field.invalid(p, s, r.error));
    return r.version;
  };
  // Upstream's validation order: enforce, warn, audit.
  const enforce = { level: level('enforce'), version: version('enforce-version') };
  const warn = { level: level('warn'), version: version('warn-version') };
  const audit = { level: level('audit'), version: version('audit-version') };
  const namespaces = exemptionSet(
    listOf(exemptions.namespaces, 'exemptions.namespaces', errs),
    'exemptions.namespaces',
    (n) => validateNamespaceName(n, false),
    errs,
  );
  const runtimeClasses = exemptionSet(
    listOf(exemptions.runtimeClasses, 'exemptions.runtimeClasses', errs),
    'exemptions.runtimeClasses',
    (n) => nameIsDNSSubdomain(n, false),
    errs,
  );
  const usernames = exemptionSet(listOf(exemptions.usernames, 'exemptions.usernames', errs), 'exemptions.usernames', 'username', errs);
  if (errs.length) throw new Error(`PodSecurity invalid: ${aggregateMessage(errs)}`);
  return { defaults: { enforce, audit, warn }, exemptions: { usernames, namespaces, runtimeClasses } };
}
