/**
 * Name and metadata validation with upstream's messages
 * (k8s.io/apimachinery/pkg/util/validation, pkg/api/validation/objectmeta.go).
 * Each `is*` function returns the list of problems; empty means valid.
 */
import { type FieldError, forbidden, invalid, required, tooLong } from './field-errors.js';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);
const DNS1035_LABEL_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const C_IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_VAR_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIGMAP_KEY_RE = /^[-._a-zA-Z0-9]+$/;
const PORT_NAME_CHARS = /^[-a-z0-9]+$/;

const regexError = (msg: string, fmt: string, ...examples: string[]) =>
  `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(' or ')}, regex used for validation is '${fmt}')`;

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL_RE.test(v)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN_RE.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035_LABEL_RE.test(v)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", '[a-z]([-a-z0-9]*[a-z0-9])?', 'my-name', 'abc-123'));
  }
  return errs;
}

export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      regexError(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character with an optional DNS subdomain prefix and '/'",
        '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]',
        'MyName',
        'my.name',
        '123-abc',
      ),
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (name.length && !QUALIFIED_NAME_RE.test(name)) {
    errs.push(
      regexError(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]',
        'MyName',
        'my.name',
        '123-abc',
      ),
    );
  }
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE_RE.test(v)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?',
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

export const isValidPortNum = (p: number): string[] => (Number.isInteger(p) && p >= 1 && p <= 65535 ? [] : ['must be between 1 and 65535, inclusive']);

export function isValidPortName(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push('must be no more than 15 characters');
  if (!PORT_NAME_CHARS.test(v)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (v.includes('--')) errs.push("must not contain consecutive hyphens");
  if (v.length && (v.startsWith('-') || v.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  return errs;
}

export const isCIdentifier = (v: string): string[] =>
  C_IDENTIFIER_RE.test(v) ? [] : [regexError("a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'", '[A-Za-z_][A-Za-z0-9_]*', 'my_name', 'MY_NAME', 'MyName')];

export function isEnvVarName(v: string): string[] {
  const errs: string[] = [];
  if (!ENV_VAR_RE.test(v)) errs.push(regexError("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit", '[-._a-zA-Z][-._a-zA-Z0-9]*', 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  if (v === '.' || v === '..' || v.startsWith('..')) errs.push(v.startsWith('..') && v.length > 2 ? "must not start with '..'" : `must not be '${v}'`);
  return errs;
}

export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!CONFIGMAP_KEY_RE.test(v)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", '[-._a-zA-Z0-9]+', 'key.name', 'KEY_NAME', 'key-name'));
  if (v === '.' || v === '..') errs.push(`must not be '${v}'`);
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isValidIP(v: string): string[] {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v);
  if (v4 && v4.slice(1).every((o) => Number(o) <= 255 && !(o.length > 1 && o.startsWith('0')))) return [];
  if (v.includes(':') && /^[0-9a-fA-F:.]+$/.test(v) && (v.match(/::/g) ?? []).length <= 1) return [];
  return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

/** Path-segment rules every object name must pass (pkg/api/validation/path). */
function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
}

export type NameValidator = (name: string, prefix: boolean) => string[];

/** ValidateNameFunc for DNS-subdomain names; `prefix` validates a generateName prefix. */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) => {
  const errs = pathSegmentErrors(name);
  if (errs.length) return errs;
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
};

export const nameIsDNSLabel: NameValidator = (name, prefix) => {
  const errs = pathSegmentErrors(name);
  if (errs.length) return errs;
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
};

const maskTrailingDash = (s: string) => (s.length > 1 && s.endsWith('-') ? `${s.slice(0, -1)}a` : s);

export function validateLabels(labels: Record<string, string> | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(invalid(p, k, m));
    for (const m of isValidLabelValue(String(v))) errs.push(invalid(`${p}`, v, m));
  }
  return errs;
}

const TOTAL_ANNOTATION_SIZE = 256 * 1024;

export function validateAnnotations(annotations: Record<string, string> | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(p, k, m));
    total += k.length + String(v).length;
  }
  if (total > TOTAL_ANNOTATION_SIZE) errs.push(tooLong(p, '', TOTAL_ANNOTATION_SIZE));
  return errs;
}

export function validateOwnerReferences(refs: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (refs === undefined) return errs;
  if (!Array.isArray(refs)) return [invalid(p, refs, 'must be a list')];
  let controllers = 0;
  refs.forEach((r: Record<string, unknown>, i) => {
    const rp = `${p}[${i}]`;
    if (!r.apiVersion) errs.push(invalid(`${rp}.apiVersion`, r.apiVersion ?? '', 'version must not be empty'));
    if (!r.kind) errs.push(invalid(`${rp}.kind`, r.kind ?? '', 'kind must not be empty'));
    if (!r.name) errs.push(invalid(`${rp}.name`, r.name ?? '', 'name must not be empty'));
    if (!r.uid) errs.push(invalid(`${rp}.uid`, r.uid ?? '', 'uid must not be empty'));
    if (r.controller === true) controllers++;
  });
  if (controllers > 1) errs.push(invalid(p, refs, 'Only one reference can have Controller set to true'));
  return errs;
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export function validateFinalizers(finalizers: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (finalizers === undefined) return errs;
  if (!Array.isArray(finalizers)) return [invalid(p, finalizers, 'must be a list')];
  const seen = new Set<string>();
  finalizers.forEach((f: string, i) => {
    for (const m of isQualifiedName(f)) errs.push(invalid(`${p}[${i}]`, f, m));
    if (!STANDARD_FINALIZERS.has(f) && !f.includes('/') && isQualifiedName(f).length === 0) {
      // upstream warns about non-domain-qualified finalizers; not an error
    }
    if (seen.has(f)) errs.push(invalid(p, finalizers, `the finalizer ${f} is duplicated`));
    seen.add(f);
  });
  if (seen.has('orphan') && seen.has('foregroundDeletion')) {
    errs.push(invalid(p, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

export interface ObjectMetaLike {
  name?: string | undefined;
  generateName?: string | undefined;
  namespace?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  ownerReferences?: unknown;
  finalizers?: unknown;
  uid?: string | undefined;
  creationTimestamp?: string | undefined;
}

export function validateObjectMeta(meta: ObjectMetaLike, opts: { namespaced: boolean; nameFn: NameValidator }, p = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) for (const m of opts.nameFn(meta.generateName, true)) errs.push(invalid(`${p}.generateName`, meta.generateName, m));
  if (!meta.name) errs.push(required(`${p}.name`, 'name or generateName is required'));
  else for (const m of opts.nameFn(meta.name, false)) errs.push(invalid(`${p}.name`, meta.name, m));
  if (opts.namespaced) {
    if (!meta.namespace) errs.push(required(`${p}.namespace`, ''));
    else for (const m of isDNS1123Label(meta.namespace)) errs.push(invalid(`${p}.namespace`, meta.namespace, m));
  } else if (meta.namespace) {
    errs.push(forbidden(`${p}.namespace`, 'not allowed on this type'));
  }
  errs.push(...validateLabels(meta.labels, `${p}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${p}.annotations`));
  errs.push(...validateOwnerReferences(meta.ownerReferences, `${p}.ownerReferences`));
  errs.push(...validateFinalizers(meta.finalizers, `${p}.finalizers`));
  return errs;
}

export function validateObjectMetaUpdate(meta: ObjectMetaLike, old: ObjectMetaLike, p = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (f: keyof ObjectMetaLike) => {
    if ((meta[f] ?? '') !== (old[f] ?? '')) errs.push(invalid(`${p}.${f}`, meta[f] ?? '', 'field is immutable'));
  };
  immutable('name');
  immutable('namespace');
  immutable('uid');
  immutable('creationTimestamp');
  return errs;
}
