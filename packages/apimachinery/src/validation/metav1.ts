/**
 * The checks of k8s.io/apimachinery/pkg/apis/meta/v1/validation: label keys
 * and values, LabelSelector objects, and managedFields entries (operation,
 * fieldsType, manager, subresource). Errors carry upstream's field paths, bad
 * values and details, in upstream's order.
 */
import { type FieldError, type PathLike, forbidden, invalid, required, tooLong } from '../field-errors.js';
import { isQualifiedName, isValidLabelValue } from './format.js';
import { byteLen, child } from './internal.js';

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

// ---- managed fields -------------------------------------------------------------

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
