/**
 * Name, label, annotation and ObjectMeta validation with upstream's messages:
 * k8s.io/apimachinery/pkg/util/validation (the `is*` checks),
 * pkg/api/validation (generic.go name functions, objectmeta.go),
 * pkg/api/validation/path (path-segment names) and
 * pkg/apis/meta/v1/validation (labels, label selectors, managed fields).
 *
 * Guarantees:
 * - Every `is*` function returns the list of problems as upstream words them
 *   (same order, same text, e.g. the `(e.g. 'MyName',  or 'my.name', ...,
 *   regex used for validation is '...')` suffix); an empty list means valid.
 *   Length limits count UTF-8 bytes, as Go's `len` does.
 * - The `validate*` functions return `FieldError`s with upstream's field paths,
 *   bad values and details, in upstream's order, so that `aggregateMessage`
 *   over them reads as the apiserver's `... is invalid: ...` text.
 */
import { Buffer } from 'node:buffer';
import { type FieldError, type PathLike, forbidden, goQuote, invalid, required, tooLong } from './field-errors.js';

const byteLen = (s: string) => Buffer.byteLength(s, 'utf8');
const child = (p: PathLike, name: string) => (String(p) ? `${String(p)}.${name}` : name);

// ---- message helpers (validation.MaxLenError etc.) ---------------------------

/** `must be no more than N characters` */
export const maxLenError = (n: number): string => `must be no more than ${n} characters`;
/** `must be non-empty` */
export const emptyError = (): string => 'must be non-empty';
/** `must be between LO and HI, inclusive` */
export const inclusiveRangeError = (lo: number, hi: number): string => `must be between ${lo} and ${hi}, inclusive`;

/** Upstream `RegexError`: `msg (e.g. 'a',  or 'b', regex used for validation is 're')`. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

// ---- format checks -----------------------------------------------------------

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_DNS1123_SUBDOMAIN_ERR =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const C_IDENTIFIER_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const C_IDENTIFIER_ERR = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const ENV_VAR_NAME_FMT = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const ENV_VAR_NAME_ERR = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const CONFIGMAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIGMAP_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const PERCENT_FMT = '[0-9]+%';
const HTTP_HEADER_NAME_FMT = '[-A-Za-z0-9]+';

const whole = (fmt: string) => new RegExp(`^${fmt}$`);
const DNS1123_LABEL_RE = whole(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = whole(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = whole(DNS1035_LABEL_FMT);
const WILDCARD_DNS1123_SUBDOMAIN_RE = whole(WILDCARD_DNS1123_SUBDOMAIN_FMT);
const QUALIFIED_NAME_RE = whole(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = whole(LABEL_VALUE_FMT);
const C_IDENTIFIER_RE = whole(C_IDENTIFIER_FMT);
const ENV_VAR_NAME_RE = whole(ENV_VAR_NAME_FMT);
const CONFIGMAP_KEY_RE = whole(CONFIGMAP_KEY_FMT);
const PERCENT_RE = whole(PERCENT_FMT);
const HTTP_HEADER_NAME_RE = whole(HTTP_HEADER_NAME_FMT);

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const DNS1035_LABEL_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;
const QUALIFIED_NAME_MAX_LENGTH = 63;

/** A DNS (RFC 1123) label: at most 63 characters of `[a-z0-9-]`, alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a label: the length was checked, so it has dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** A DNS (RFC 1123) subdomain: dot-separated labels, at most 253 characters. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** A DNS (RFC 1035) label: like an RFC 1123 label but starting with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/** `*.` followed by a DNS subdomain (RFC 1034 4.3.3). */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!WILDCARD_DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(WILDCARD_DNS1123_SUBDOMAIN_ERR, WILDCARD_DNS1123_SUBDOMAIN_FMT, '*.example.com'));
  return errs;
}

/** A "qualified name" (label key): an optional DNS-subdomain prefix and `/`, then a 63-character name. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLen(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!QUALIFIED_NAME_RE.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** A label value: empty, or up to 63 characters of `[A-Za-z0-9-_.]`, alphanumeric at both ends. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** A C identifier (format only, no length limit). */
export const isCIdentifier = (value: string): string[] =>
  C_IDENTIFIER_RE.test(value) ? [] : [regexError(C_IDENTIFIER_ERR, C_IDENTIFIER_FMT, 'my_name', 'MY_NAME', 'MyName')];

/** A non-zero port number: 1..65535. */
export const isValidPortNum = (port: number): string[] => (Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)]);

/** `value` within [min, max]. */
export const isInRange = (value: number, min: number, max: number): string[] => (value >= min && value <= max ? [] : [inclusiveRangeError(min, max)]);

const PORT_NAME_CHARSET_RE = /^[-a-z0-9]+$/;
const PORT_NAME_ONE_LETTER_RE = /[a-z]/;

/** An IANA_SVC_NAME: at most 15 of `[-a-z0-9]`, at least one letter, no `--`, no hyphen at either end. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLen(port) > 15) errs.push(maxLenError(15));
  if (!PORT_NAME_CHARSET_RE.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!PORT_NAME_ONE_LETTER_RE.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

/** An environment variable name (`[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`/`..`/`..*`). */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!ENV_VAR_NAME_RE.test(value)) errs.push(regexError(ENV_VAR_NAME_ERR, ENV_VAR_NAME_FMT, 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  errs.push(...hasChDirPrefix(value));
  return errs;
}

/** A ConfigMap/Secret key: up to 253 of `[-._a-zA-Z0-9]`, not `.`/`..`/`..*`. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!CONFIGMAP_KEY_RE.test(value)) errs.push(regexError(CONFIGMAP_KEY_ERR, CONFIGMAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  errs.push(...hasChDirPrefix(value));
  return errs;
}

/** A percent string: digits then `%`. */
export const isValidPercent = (value: string): string[] =>
  PERCENT_RE.test(value) ? [] : [regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FMT, '1%', '93%')];

/** An HTTP header name as Go's HTTP library accepts it. */
export const isHTTPHeaderName = (value: string): string[] =>
  HTTP_HEADER_NAME_RE.test(value) ? [] : [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", HTTP_HEADER_NAME_FMT, 'X-Header-Name')];

// ---- IP addresses (k8s.io/utils/net ParseIPSloppy: Go 1.16's net.ParseIP) --

const BIG = 0xffffff;

function dtoi(s: string, i: number): [n: number, end: number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length && s[j]! >= '0' && s[j]! <= '9'; j++) {
    n = n * 10 + (s.charCodeAt(j) - 48);
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

function xtoi(s: string, i: number): [n: number, end: number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length; j++) {
    const ch = s[j]!;
    if (!/^[0-9a-fA-F]$/.test(ch)) break;
    n = n * 16 + parseInt(ch, 16);
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

function parseIPv4(s: string): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  for (let k = 0; k < 4; k++) {
    if (i >= s.length) return undefined;
    if (k > 0) {
      if (s[i] !== '.') return undefined;
      i++;
    }
    const r = dtoi(s, i);
    if (!r || r[0] > 0xff) return undefined;
    out.push(r[0]);
    i = r[1];
  }
  return i === s.length ? out : undefined;
}

function parseIPv6(input: string): boolean {
  let s = input;
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return true;
  }
  let i = 0;
  while (i < 16) {
    const r = xtoi(s, 0);
    if (!r || r[0] > 0xffff) return false;
    const c = r[1];
    if (c < s.length && s[c] === '.') {
      if (ellipsis < 0 && i !== 12) return false;
      if (i + 4 > 16) return false;
      if (!parseIPv4(s)) return false;
      s = '';
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return false;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return false;
  if (i < 16) return ellipsis >= 0;
  return ellipsis < 0;
}

/** Whether `value` parses as an IP address the way upstream's (sloppy) parser accepts it. */
export function parseIPSloppy(value: string): boolean {
  for (const c of value) {
    if (c === '.') return parseIPv4(value) !== undefined;
    if (c === ':') return parseIPv6(value);
  }
  return false;
}

/** An IPv4 or IPv6 address (IPv4 octets may have leading zeros, as upstream still accepts). */
export const isValidIP = (value: string): string[] => (parseIPSloppy(value) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);

// ---- object names --------------------------------------------------------------

/**
 * A ValidateNameFunc: the problems with `name`; `prefix` means the value is a
 * `generateName` prefix that will have a random suffix appended.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** path.IsValidPathSegmentName: not `.` or `..`, no `/` or `%`. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isValidPathSegmentPrefix(name);
}

/** path.IsValidPathSegmentPrefix: no `/` or `%`. */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** path.ValidatePathSegmentName: the name rule for kinds whose names are free-form (RBAC roles, ...). */
export const validatePathSegmentName: NameValidator = (name, prefix) => (prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name));

/** Upstream's maskTrailingDash (quirk included: it drops two characters and appends one). */
const maskTrailingDash = (name: string) => (name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name);

const withPathSegment = (errs: string[], name: string, prefix: boolean) => (errs.length ? errs : validatePathSegmentName(name, prefix));

/** ValidateNameFunc for DNS-subdomain names (most kinds), refusing what is not a valid path segment too. */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) => withPathSegment(isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name), name, prefix);

/** ValidateNameFunc for DNS-label names (namespaces, services, ...). */
export const nameIsDNSLabel: NameValidator = (name, prefix) => withPathSegment(isDNS1123Label(prefix ? maskTrailingDash(name) : name), name, prefix);

/** ValidateNameFunc for DNS-1035-label names. */
export const nameIsDNS1035Label: NameValidator = (name, prefix) => withPathSegment(isDNS1035Label(prefix ? maskTrailingDash(name) : name), name, prefix);

/** ValidateNamespaceName. */
export const validateNamespaceName: NameValidator = nameIsDNSLabel;

// ---- field validators -----------------------------------------------------------

/** `must be greater than or equal to 0` */
export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';
/** `field is immutable` */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';
/** 256 KiB: the limit on the summed size of an object's annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/** ValidateNonnegativeField. */
export const validateNonnegativeField = (value: number, p: PathLike): FieldError[] => (value < 0 ? [invalid(p, value, IS_NEGATIVE_ERROR_MSG)] : []);

/** ValidateImmutableField: `Invalid value: <new>: field is immutable` when the values differ (deep, JSON-wise). */
export function validateImmutableField(newVal: unknown, oldVal: unknown, p: PathLike): FieldError[] {
  return deepEqual(newVal, oldVal) ? [] : [invalid(p, newVal, FIELD_IMMUTABLE_ERROR_MSG)];
}

/** ValidateLabelName: the key must be a qualified name. */
export const validateLabelName = (name: string, p: PathLike): FieldError[] => isQualifiedName(name).map((m) => invalid(p, name, m));

/** ValidateLabels: qualified-name keys and label values; errors sit on the map's path. */
export function validateLabels(labels: Readonly<Record<string, string>> | null | undefined, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    errs.push(...validateLabelName(k, p));
    for (const m of isValidLabelValue(String(v))) errs.push(invalid(p, v, m));
  }
  return errs;
}

export interface LabelSelectorRequirementLike {
  key: string;
  operator: string;
  values?: readonly string[] | null | undefined;
}
export interface LabelSelectorLike {
  matchLabels?: Readonly<Record<string, string>> | null | undefined;
  matchExpressions?: readonly LabelSelectorRequirementLike[] | null | undefined;
}

/** ValidateLabelSelectorRequirement (values validated as label values, upstream's default). */
export function validateLabelSelectorRequirement(sr: LabelSelectorRequirementLike, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  const values = sr.values ?? [];
  switch (sr.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    default:
      errs.push(invalid(child(p, 'operator'), sr.operator, 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(sr.key, child(p, 'key')));
  values.forEach((v, i) => {
    for (const m of isValidLabelValue(v)) errs.push(invalid(`${child(p, 'values')}[${i}]`, v, m));
  });
  return errs;
}

/** ValidateLabelSelector: matchLabels as labels, each matchExpressions entry as a requirement. */
export function validateLabelSelector(ls: LabelSelectorLike | null | undefined, p: PathLike): FieldError[] {
  if (!ls) return [];
  const errs = validateLabels(ls.matchLabels, child(p, 'matchLabels'));
  (ls.matchExpressions ?? []).forEach((e, i) => errs.push(...validateLabelSelectorRequirement(e, `${child(p, 'matchExpressions')}[${i}]`)));
  return errs;
}

/** The summed byte size of annotation keys and values. */
export const annotationsSize = (annotations: Readonly<Record<string, string>> | null | undefined): number =>
  Object.entries(annotations ?? {}).reduce((n, [k, v]) => n + byteLen(k) + byteLen(String(v)), 0);

/** ValidateAnnotations: keys are qualified names (case-insensitively); keys+values at most 256 KiB. */
export function validateAnnotations(annotations: Readonly<Record<string, string>> | null | undefined, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of Object.keys(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(p, k, m));
  }
  if (annotationsSize(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLong(p, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean | null;
  blockOwnerDeletion?: boolean | null;
}

/** schema.FromAPIVersionAndKind: `apps/v1` → group apps, version v1; malformed → empty group and version. */
function gvkOf(apiVersion: string, kind: string): { group: string; version: string; kind: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '', kind };
  const slashes = apiVersion.split('/').length - 1;
  if (slashes === 0) return { group: '', version: apiVersion, kind };
  if (slashes === 1) {
    const i = apiVersion.indexOf('/');
    return { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1), kind };
  }
  return { group: '', version: '', kind };
}

/** Kinds that may not own objects (upstream BannedOwners). */
const BANNED_OWNERS = new Set(['/v1, Kind=Event']);

/** ValidateOwnerReferences: required fields (errors on the list's path, as upstream), banned owners, one controller. */
export function validateOwnerReferences(refs: unknown, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  if (refs === undefined || refs === null) return errs;
  if (!Array.isArray(refs)) return [invalid(p, refs, 'must be a list')];
  let firstController = '';
  for (const raw of refs as unknown[]) {
    const ref = (raw ?? {}) as OwnerReferenceLike;
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const name = typeof ref.name === 'string' ? ref.name : '';
    const uid = typeof ref.uid === 'string' ? ref.uid : '';
    const gvk = gvkOf(apiVersion, kind);
    if (!gvk.version) errs.push(invalid(child(p, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!gvk.kind) errs.push(invalid(child(p, 'kind'), kind, 'must not be empty'));
    if (!name) errs.push(invalid(child(p, 'name'), name, 'must not be empty'));
    if (!uid) errs.push(invalid(child(p, 'uid'), uid, 'must not be empty'));
    const gvkString = `${gvk.group}/${gvk.version}, Kind=${gvk.kind}`;
    if (BANNED_OWNERS.has(gvkString)) errs.push(invalid(p, raw, `${gvkString} is disallowed from being an owner`));
    if (ref.controller === true) {
      const cur = `${kind}/${name}`;
      if (firstController) {
        errs.push(invalid(p, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`));
      } else {
        firstController = cur;
      }
    }
  }
  return errs;
}

/** Finalizers every kind understands without a domain prefix. */
export const STANDARD_FINALIZERS: ReadonlySet<string> = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** ValidateFinalizerName (apimachinery): the name must be a qualified name. */
export const validateFinalizerName = (name: string, p: PathLike): FieldError[] => isQualifiedName(name).map((m) => invalid(p, name, m));

/**
 * The core API's finalizer-name rule (Namespace `spec.finalizers`): a qualified
 * name that is either a standard finalizer or domain-qualified.
 */
export function validateKubeFinalizerName(name: string, p: PathLike): FieldError[] {
  const errs = validateFinalizerName(name, p);
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    errs.push(invalid(p, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

/** ValidateFinalizers: qualified names, and not both `orphan` and `foregroundDeletion`. */
export function validateFinalizers(finalizers: unknown, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  if (finalizers === undefined || finalizers === null) return errs;
  if (!Array.isArray(finalizers)) return [invalid(p, finalizers, 'must be a list')];
  let orphan = false;
  let foreground = false;
  for (const f of finalizers as unknown[]) {
    const name = String(f);
    errs.push(...validateFinalizerName(name, p));
    if (name === 'orphan') orphan = true;
    if (name === 'foregroundDeletion') foreground = true;
  }
  if (orphan && foreground) errs.push(invalid(p, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  return errs;
}

/**
 * The warnings upstream returns for finalizers that are neither standard nor
 * domain-qualified with a path: `metadata.finalizers: "x": prefer a
 * domain-qualified finalizer name including a path (/) to avoid accidental
 * conflicts with other finalizer writers`.
 */
export function finalizerWarnings(finalizers: readonly string[] | null | undefined, p: PathLike = 'metadata.finalizers'): string[] {
  const out: string[] = [];
  for (const f of finalizers ?? []) {
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      out.push(`${String(p)}: ${goQuote(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`);
    }
  }
  return out;
}

const FIELD_MANAGER_MAX_LENGTH = 128;
const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const IS_PRINT = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
export function validateFieldManager(manager: string, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLen(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(tooLong(p, manager, FIELD_MANAGER_MAX_LENGTH));
  let pos = 0;
  for (const ch of manager) {
    if (!IS_PRINT.test(ch)) {
      const cp = ch.codePointAt(0)!;
      errs.push(invalid(p, manager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${pos})`));
    }
    pos += byteLen(ch);
  }
  return errs;
}

/** ValidateManagedFields: operation Apply/Update, fieldsType FieldsV1, manager, subresource length. */
export function validateManagedFields(entries: unknown, p: PathLike): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(entries)) return errs;
  entries.forEach((raw: unknown, i) => {
    const e = (raw ?? {}) as { operation?: unknown; fieldsType?: unknown; manager?: unknown; subresource?: unknown };
    const ep = `${String(p)}[${i}]`;
    const op = typeof e.operation === 'string' ? e.operation : '';
    if (op !== 'Apply' && op !== 'Update') errs.push(invalid(`${ep}.operation`, op, 'must be `Apply` or `Update`'));
    const ft = typeof e.fieldsType === 'string' ? e.fieldsType : '';
    if (ft && ft !== 'FieldsV1') errs.push(invalid(`${ep}.fieldsType`, ft, 'must be `FieldsV1`'));
    errs.push(...validateFieldManager(typeof e.manager === 'string' ? e.manager : '', `${ep}.manager`));
    const sub = typeof e.subresource === 'string' ? e.subresource : '';
    if (byteLen(sub) > MAX_SUBRESOURCE_NAME_LENGTH) errs.push(tooLong(`${ep}.subresource`, sub, MAX_SUBRESOURCE_NAME_LENGTH));
  });
  return errs;
}

// ---- ObjectMeta ---------------------------------------------------------------

export interface ObjectMetaLike {
  name?: string | undefined;
  generateName?: string | undefined;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  generation?: number | undefined;
  creationTimestamp?: string | null | undefined;
  deletionTimestamp?: string | null | undefined;
  deletionGracePeriodSeconds?: number | null | undefined;
  labels?: Readonly<Record<string, string>> | null | undefined;
  annotations?: Readonly<Record<string, string>> | null | undefined;
  ownerReferences?: unknown;
  finalizers?: unknown;
  managedFields?: unknown;
}

export interface ObjectMetaValidationOptions {
  /** Namespaced kinds require metadata.namespace; cluster-scoped kinds forbid it. */
  namespaced: boolean;
  /** The kind's name rule (nameIsDNSSubdomain for most kinds). */
  nameFn: NameValidator;
}

/**
 * ValidateObjectMetaAccessor (create): generateName and name against `nameFn`
 * (`name or generateName is required` when there is no name), namespace
 * required/forbidden by scope and a DNS label, generation non-negative,
 * labels, annotations, ownerReferences and finalizers, in upstream's order.
 * managedFields are left out: upstream's field manager resets malformed ones
 * before validation runs, and there is no field manager here; callers that
 * keep client-sent managedFields can add `validateManagedFields`.
 */
export function validateObjectMeta(meta: ObjectMetaLike, opts: ObjectMetaValidationOptions, p: PathLike = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const m = meta ?? {};
  if (m.generateName) for (const msg of opts.nameFn(m.generateName, true)) errs.push(invalid(child(p, 'generateName'), m.generateName, msg));
  if (!m.name) errs.push(required(child(p, 'name'), 'name or generateName is required'));
  else for (const msg of opts.nameFn(m.name, false)) errs.push(invalid(child(p, 'name'), m.name, msg));
  if (opts.namespaced) {
    if (!m.namespace) errs.push(required(child(p, 'namespace'), ''));
    else for (const msg of validateNamespaceName(m.namespace, false)) errs.push(invalid(child(p, 'namespace'), m.namespace, msg));
  } else if (m.namespace) {
    errs.push(forbidden(child(p, 'namespace'), 'not allowed on this type'));
  }
  if (typeof m.generation === 'number') errs.push(...validateNonnegativeField(m.generation, child(p, 'generation')));
  errs.push(...validateLabels(m.labels, child(p, 'labels')));
  errs.push(...validateAnnotations(m.annotations, child(p, 'annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, child(p, 'ownerReferences')));
  errs.push(...validateFinalizers(m.finalizers, child(p, 'finalizers')));
  return errs;
}

/**
 * The immutability part of ValidateObjectMetaAccessorUpdate: name, namespace,
 * uid, creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds may
 * not change (`<field>: Invalid value: <new>: field is immutable`). The caller
 * checks resourceVersion and generation, and validates the new metadata itself.
 */
export function validateObjectMetaUpdate(newMeta: ObjectMetaLike, oldMeta: ObjectMetaLike, p: PathLike = 'metadata'): FieldError[] {
  const n = newMeta ?? {};
  const o = oldMeta ?? {};
  return [
    ...validateImmutableField(n.name ?? '', o.name ?? '', child(p, 'name')),
    ...validateImmutableField(n.namespace ?? '', o.namespace ?? '', child(p, 'namespace')),
    ...validateImmutableField(n.uid ?? '', o.uid ?? '', child(p, 'uid')),
    ...validateImmutableField(n.creationTimestamp ?? null, o.creationTimestamp ?? null, child(p, 'creationTimestamp')),
    ...validateImmutableField(n.deletionTimestamp ?? null, o.deletionTimestamp ?? null, child(p, 'deletionTimestamp')),
    ...validateImmutableField(n.deletionGracePeriodSeconds ?? null, o.deletionGracePeriodSeconds ?? null, child(p, 'deletionGracePeriodSeconds')),
  ];
}

/** Structural equality of JSON-like values (key order ignored, undefined members ignored). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const ka = Object.keys(ao).filter((k) => ao[k] !== undefined);
    const kb = Object.keys(bo).filter((k) => bo[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(ao[k], bo[k]));
  }
  return false;
}
