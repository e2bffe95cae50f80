/**
 * The format checks of k8s.io/apimachinery/pkg/util/validation (validation.go):
 * DNS labels and subdomains, qualified names, label values, C identifiers,
 * port names and numbers, environment variable names, ConfigMap keys,
 * percents and HTTP header names, with upstream's message helpers.
 *
 * Every `is*` function returns the list of problems as upstream words them
 * (same order, same text, e.g. the `(e.g. 'MyName',  or 'my.name', ...,
 * regex used for validation is '...')` suffix); an empty list means valid.
 * Length limits count UTF-8 bytes, as Go's `len` does.
 */
import { byteLen } from './internal.js';

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
  HTTP_HEADER_NAME_RE.test(value)
    ? []
    : [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", HTTP_HEADER_NAME_FMT, 'X-Header-Name')];
