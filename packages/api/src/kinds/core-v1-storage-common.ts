/**
 * What PersistentVolume, claim and storage.k8s.io/v1 validation share, as
 * kube-apiserver 1.33's pkg/apis/core/validation and pkg/apis/core/helper:
 * access modes, class names, quantities, CSI driver names, and how kubectl's
 * printers name access modes and classes.
 */
import { field, isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain, type FieldError } from '@kubeling/apimachinery';
import { canonicalQuantity, compareQuantities, NANO, parseExactQuantity } from './core-v1-quantity.js';
import { type Obj, objOf, strOf } from './json-fields.js';

export const SUPPORTED_ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
export const VOLUME_MODES = ['Block', 'Filesystem'];
/** The annotation that named a class before `storageClassName` (still honoured first). */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** ValidateClassName: a DNS subdomain. */
export const validateClassName = (name: string): string[] => nameIsDNSSubdomain(name, false);

/** validateBasicResource: `Invalid value: -1: must be a valid resource quantity` (the value as an integer, rounded up). */
export function validateBasicResource(q: unknown, p: string): FieldError[] {
  const x = parseExactQuantity(q);
  if (!x?.negative) return [];
  const value = -((x.nanos + NANO - 1n) / NANO);
  return [field.invalid(p, new field.GoValue(value === 0n ? '0' : String(value)), 'must be a valid resource quantity')];
}

/** ValidatePositiveQuantityValue: `must be greater than zero`, the value quoted. */
export function validatePositiveQuantity(q: unknown, p: string): FieldError[] {
  const c = compareQuantities(q, '0');
  return c !== undefined && c <= 0 ? [field.invalid(p, canonicalQuantity(q), 'must be greater than zero')] : [];
}

/** ValidateNonnegativeQuantity: `must be greater than or equal to 0`, the value quoted. */
export function validateNonnegativeQuantity(q: unknown, p: string): FieldError[] {
  const c = compareQuantities(q, '0');
  return c !== undefined && c < 0 ? [field.invalid(p, canonicalQuantity(q), 'must be greater than or equal to 0')] : [];
}

/** ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain once lower-cased. */
export function validateCSIDriverName(name: string, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!name) errs.push(field.required(p, ''));
  if (name.length > 63) errs.push(field.tooLong(p, name, 63));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) errs.push(field.invalid(p, name, m));
  return errs;
}

/** ValidateQualifiedName. */
export const validateQualifiedName = (value: string, p: string): FieldError[] => isQualifiedName(value).map((m) => field.invalid(p, value, m));

/** The access modes rules claims and volumes share: known modes, ReadWriteOncePod alone. */
export function validateAccessModes(modes: readonly string[], p: string): FieldError[] {
  const errs: FieldError[] = [];
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!SUPPORTED_ACCESS_MODES.includes(m)) errs.push(field.notSupported(p, m, SUPPORTED_ACCESS_MODES));
    if (m === 'ReadWriteOncePod') rwop = true;
    else if (SUPPORTED_ACCESS_MODES.includes(m)) other = true;
  }
  if (rwop && other) errs.push(field.forbidden(p, 'may not use ReadWriteOncePod with other access modes'));
  return errs;
}

/** ValidatePersistentVolumeStatusUpdate (and the claim's): a status write names the version it replaces. */
export function validateResourceVersionSet(obj: Obj): FieldError[] {
  return strOf(objOf(obj.metadata)?.resourceVersion) ? [] : [field.required('resourceVersion', '')];
}

/** GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, each once. */
export function accessModesAsString(modes: readonly string[] | undefined): string {
  const have = new Set(modes ?? []);
  const out: string[] = [];
  if (have.has('ReadWriteOnce')) out.push('RWO');
  if (have.has('ReadOnlyMany')) out.push('ROX');
  if (have.has('ReadWriteMany')) out.push('RWX');
  if (have.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName. */
export function persistentVolumeClass(pv: { metadata?: { annotations?: Record<string, string> }; spec?: { storageClassName?: string } }): string {
  const a = pv.metadata?.annotations;
  if (a && Object.hasOwn(a, BETA_STORAGE_CLASS_ANNOTATION)) return a[BETA_STORAGE_CLASS_ANNOTATION]!;
  return pv.spec?.storageClassName ?? '';
}

/** GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName; '' when none. */
export function persistentVolumeClaimClass(pvc: { metadata?: { annotations?: Record<string, string> }; spec?: { storageClassName?: string } }): string {
  return persistentVolumeClass(pvc);
}
