/**
 * ObjectMeta validation, as upstream's k8s.io/apimachinery/pkg/api/validation
 * (objectmeta.go): name and generateName, namespace by scope, generation,
 * labels, annotations (keys and total size), ownerReferences and finalizers on
 * create, and the fields that may not change on update.
 *
 * The functions return `FieldError`s with upstream's field paths, bad values
 * and details, in upstream's order, so that `aggregateMessage` over them reads
 * as the apiserver's `... is invalid: ...` text.
 */
import { type FieldError, type PathLike, forbidden, goQuote, invalid, required, tooLong } from '../field-errors.js';
import { isQualifiedName } from './format.js';
import { type NameValidator, validateNamespaceName, validateNonnegativeField } from './generic.js';
import { byteLen, child } from './internal.js';
import { validateLabels } from './metav1.js';
import { jsonEqual } from '../util.js';

/** `field is immutable` */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';
/** 256 KiB: the limit on the summed size of an object's annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/** ValidateImmutableField: `Invalid value: <new>: field is immutable` when the values differ (deep, JSON-wise). */
export function validateImmutableField(newVal: unknown, oldVal: unknown, p: PathLike): FieldError[] {
  return jsonEqual(newVal, oldVal) ? [] : [invalid(p, newVal, FIELD_IMMUTABLE_ERROR_MSG)];
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
      out.push(
        `${String(p)}: ${goQuote(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
      );
    }
  }
  return out;
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
