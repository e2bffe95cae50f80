/**
 * Object name rules and generic field checks, as upstream's
 * k8s.io/apimachinery/pkg/api/validation (generic.go) and
 * pkg/api/validation/path (name.go): the ValidateNameFunc family
 * (`nameIsDNSSubdomain`, `nameIsDNSLabel`, ...), path-segment names for kinds
 * whose names are free-form, and ValidateNonnegativeField.
 */
import { type FieldError, type PathLike, invalid } from '../field-errors.js';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain } from './format.js';

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

/** `must be greater than or equal to 0` */
export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';

/** ValidateNonnegativeField. */
export const validateNonnegativeField = (value: number, p: PathLike): FieldError[] => (value < 0 ? [invalid(p, value, IS_NEGATIVE_ERROR_MSG)] : []);
