/**
 * The smaller pieces of CustomResourceDefinition validation
 * (pkg/apis/apiextensions/validation/validation.go and
 * k8s.io/apiserver/pkg/util/webhook/validation.go): names, printer columns,
 * subresources, deprecation warnings, conversion webhooks, stored versions,
 * and the API-approval annotation of protected groups.
 */
import { type FieldError, field, isDNS1035Label, isDNS1123Subdomain, isValidPortNum } from '@kubeling/apimachinery';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  WebhookClientConfig,
} from '../types.js';
import { hasControlChar } from './formats.js';

const { required, invalid, notSupported, goQuote, GoValue } = field;

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

/** `%#v` of a []string. */
export const goStrings = (a: readonly string[] | undefined): InstanceType<typeof GoValue> =>
  new GoValue(a === undefined ? '[]string(nil)' : `[]string{${a.map((s) => goQuote(s)).join(', ')}}`);

/** validateEnumStrings. */
export function validateEnumStrings(p: string, value: string | undefined, accepted: string[]): FieldError[] {
  if (!value) return [required(p, '')];
  return accepted.includes(value) ? [] : [notSupported(p, value, accepted)];
}

/** ValidateCustomResourceDefinitionNames (spec.names and status.acceptedNames). */
export function validateNames(names: Partial<CustomResourceDefinitionNames> | undefined, p: string): FieldError[] {
  const n = names ?? {};
  const errs: FieldError[] = [];
  const label = (v: string | undefined, name: string, mixedCase = false): void => {
    if (!v) return;
    const e = isDNS1035Label(mixedCase ? v.toLowerCase() : v);
    if (e.length) errs.push(invalid(`${p}.${name}`, v, `${mixedCase ? 'may have mixed case, but should otherwise match: ' : ''}${e.join(',')}`));
  };
  label(n.plural, 'plural');
  label(n.singular, 'singular');
  label(n.kind, 'kind', true);
  label(n.listKind, 'listKind', true);
  (n.shortNames ?? []).forEach((s, i) => {
    const e = isDNS1035Label(s);
    if (e.length) errs.push(invalid(`${p}.shortNames[${i}]`, s, e.join(',')));
  });
  if (n.kind && n.kind === n.listKind) errs.push(invalid(`${p}.listKind`, n.listKind, 'kind and listKind may not be the same'));
  (n.categories ?? []).forEach((c, i) => {
    const e = isDNS1035Label(c);
    if (e.length) errs.push(invalid(`${p}.categories[${i}]`, c, e.join(',')));
  });
  return errs;
}

/** validateSimpleJSONPath. */
export function validateSimpleJSONPath(s: string, p: string): FieldError[] {
  if (s.length === 0) return [invalid(p, s, 'must not be empty')];
  if (s[0] !== '.') return [invalid(p, s, 'must be a simple json path starting with .')];
  return [];
}

/** ValidateCustomResourceColumnDefinition. */
export function validateColumn(col: Partial<CustomResourceColumnDefinition>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!col.name) errs.push(required(`${p}.name`, ''));
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!col.type) errs.push(required(`${p}.type`, types));
  else if (!PRINTER_COLUMN_TYPES.includes(col.type)) errs.push(invalid(`${p}.type`, col.type, types));
  if (col.format && !PRINTER_COLUMN_FORMATS.includes(col.format))
    errs.push(invalid(`${p}.format`, col.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  if (!col.jsonPath) errs.push(required(`${p}.JSONPath`, ''));
  else errs.push(...validateSimpleJSONPath(col.jsonPath, `${p}.JSONPath`));
  return errs;
}

/** ValidateCustomResourceDefinitionSubresources. */
export function validateSubresources(sub: CustomResourceSubresources | undefined, p: string): FieldError[] {
  const scale = sub?.scale;
  if (!scale) return [];
  const errs: FieldError[] = [];
  const under = (value: string | undefined, name: string, prefix: string): void => {
    const fp = `${p}.scale.${name}`;
    if (!value) return void errs.push(required(fp, ''));
    const e = validateSimpleJSONPath(value, fp);
    if (e.length) errs.push(...e);
    else if (!value.startsWith(prefix)) errs.push(invalid(fp, value, `should be a json path under ${prefix.slice(0, -1)}`));
  };
  under(scale.specReplicasPath, 'specReplicasPath', '.spec.');
  under(scale.statusReplicasPath, 'statusReplicasPath', '.status.');
  const ls = scale.labelSelectorPath;
  if (ls) {
    const fp = `${p}.scale.labelSelectorPath`;
    const e = validateSimpleJSONPath(ls, fp);
    if (e.length) errs.push(...e);
    else if (!ls.startsWith('.spec.') && !ls.startsWith('.status.')) errs.push(invalid(fp, ls, 'should be a json path under either .spec or .status'));
  }
  return errs;
}

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const isPrint = (c: string): boolean => c === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(c);

/** validateDeprecationWarning. */
export function deprecationWarningErrors(version: CustomResourceDefinitionVersion, p: string): FieldError[] {
  const w = version.deprecationWarning;
  const fp = `${p}.deprecationWarning`;
  if (!version.deprecated && w !== undefined) return [invalid(fp, w, 'can only be set for deprecated versions')];
  if (w === undefined) return [];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(w) > 256) errs.push(invalid(fp, w, 'must be <= 256 characters long'));
  if (w.length === 0) errs.push(invalid(fp, w, 'must not be an empty string'));
  let byte = 0;
  for (const c of w) {
    if (!isPrint(c)) {
      errs.push(invalid(fp, w, `must only contain printable UTF-8 characters; non-printable character found at index ${byte}`));
      break;
    }
    byte += Buffer.byteLength(c);
  }
  if (/[\ud800-\udfff]/u.test(w)) errs.push(invalid(fp, w, 'must only contain printable UTF-8 characters'));
  return errs;
}

/** The error Go's url.Parse gives for the common malformed URLs, or ''. */
function urlParseError(raw: string, authority: string): string {
  if (hasControlChar(raw)) return 'net/url: invalid control character in URL';
  if (raw.startsWith(':')) return 'missing protocol scheme';
  const esc = /%(?![0-9A-Fa-f]{2})(.{0,2})/s.exec(raw);
  if (esc) return `invalid URL escape ${goQuote(`%${esc[1]}`)}`;
  const bad = /[ "<>\\^`{|}]/.exec(authority.slice(authority.lastIndexOf('@') + 1));
  if (bad) return `invalid character ${goQuote(bad[0])} in host name`;
  return '';
}

/** webhook.ValidateWebhookURL with forceHttps. */
export function validateWebhookURL(p: string, raw: string): FieldError[] {
  const form = '; desired format: https://host[/path]';
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s.exec(raw)!;
  const [, scheme = '', authority = '', , query = '', fragment = ''] = m;
  const parseErr = urlParseError(raw, authority);
  if (parseErr) return [required(p, `url must be a valid URL: parse ${goQuote(raw)}: ${parseErr}${form}`)];
  const errs: FieldError[] = [];
  if (scheme.toLowerCase() !== 'https') errs.push(invalid(p, scheme.toLowerCase(), `'https' is the only allowed URL scheme${form}`));
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? authority.slice(at + 1) : authority;
  if (!host) errs.push(invalid(p, host, `host must be provided${form}`));
  if (at >= 0) errs.push(invalid(p, authority.slice(0, at), 'user information is not permitted in the URL'));
  if (fragment) errs.push(invalid(p, fragment, 'fragments are not permitted in the URL'));
  if (query) errs.push(invalid(p, query, 'query parameters are not permitted in the URL'));
  return errs;
}

/** webhook.ValidateWebhookService (the port defaults to 443 in v1). */
export function validateWebhookService(p: string, svc: NonNullable<WebhookClientConfig['service']>): FieldError[] {
  const errs: FieldError[] = [];
  if (!svc.name) errs.push(required(`${p}.name`, 'service name is required'));
  if (!svc.namespace) errs.push(required(`${p}.namespace`, 'service namespace is required'));
  const port = svc.port ?? 443;
  const pe = isValidPortNum(port);
  if (pe.length) errs.push(invalid(`${p}.port`, port, `port is not valid: ${pe.join(', ')}`));
  const path = svc.path;
  if (path === undefined || path === '/' || path === '') return errs;
  const pp = `${p}.path`;
  if (path === '//') return [...errs, invalid(pp, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) errs.push(invalid(pp, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (!step) return void errs.push(invalid(pp, path, `segment[${i}] may not be empty`));
    for (const f of isDNS1123Subdomain(step)) errs.push(invalid(pp, path, `segment[${i}]: ${f}`));
  });
  return errs;
}

/** validateConversionReviewVersions. */
export function validateConversionReviewVersions(versions: readonly string[] | undefined, requireRecognized: boolean, p: string): FieldError[] {
  if (!versions || versions.length === 0) return [required(p, '')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) return void errs.push(invalid(`${p}[${i}]`, v, 'duplicate version'));
    seen.add(v);
    for (const e of isDNS1035Label(v)) errs.push(invalid(`${p}[${i}]`, v, e));
    if (ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted)
    errs.push(invalid(p, goStrings(versions), `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

/** hasValidConversionReviewVersionOrEmpty. */
export const hasValidConversionReviewVersionOrEmpty = (versions: readonly string[] | undefined): boolean =>
  !versions || versions.length === 0 || versions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v));

/** ValidateCustomResourceDefinitionStoredVersions. */
export function validateStoredVersions(stored: readonly string[] | undefined, versions: readonly CustomResourceDefinitionVersion[], p: string): FieldError[] {
  if (!stored || stored.length === 0) return [invalid(p, goStrings(stored), 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const remaining = new Map<string, number>();
  stored.forEach((v, i) => remaining.set(v, i));
  for (const v of versions) {
    const found = remaining.has(v.name);
    if (v.storage && !found) errs.push(invalid(p, goStrings(stored), `must have the storage version ${v.name}`));
    if (found) remaining.delete(v.name);
  }
  for (const [v, i] of [...remaining].sort((a, b) => a[1] - b[1]))
    errs.push(
      invalid(
        `${p}[${i}]`,
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  return errs;
}

const isProtectedCommunityGroup = (g: string): boolean => g === 'k8s.io' || g.endsWith('.k8s.io') || g === 'kubernetes.io' || g.endsWith('.kubernetes.io');

type Approval = 'missing' | 'bypassed' | 'approved' | 'invalid';
function approvalState(annotations: Record<string, string> | undefined): { state: Approval; reason: string } {
  const a = annotations?.[API_APPROVED_ANNOTATION] ?? '';
  const q = goQuote(API_APPROVED_ANNOTATION);
  if (!a) return { state: 'missing', reason: `protected groups must have approval annotation ${q}, see https://github.com/kubernetes/enhancements/pull/1111` };
  if (a.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: ${goQuote(a)}` };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]+/.test(a)) return { state: 'approved', reason: `approved in ${a}` };
  return {
    state: 'invalid',
    reason: `protected groups must have approval annotation ${q} with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

/** validateAPIApproval: `*.k8s.io` and `*.kubernetes.io` groups need the approval annotation (unchanged state is always fine on update). */
export function validateAPIApproval(crd: CustomResourceDefinition, old?: CustomResourceDefinition): FieldError[] {
  if (!isProtectedCommunityGroup(crd.spec.group ?? '')) return [];
  const next = approvalState(crd.metadata?.annotations);
  if (old && approvalState(old.metadata?.annotations).state === next.state) return [];
  const p = `metadata.annotations[${API_APPROVED_ANNOTATION}]`;
  if (next.state === 'missing') return [required(p, next.reason)];
  if (next.state === 'invalid') return [invalid(p, crd.metadata?.annotations?.[API_APPROVED_ANNOTATION] ?? '', next.reason)];
  return [];
}

/** The Established condition is True. */
export const isEstablished = (crd: CustomResourceDefinition | undefined): boolean =>
  (crd?.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
