/**
 * PersistentVolumeClaim defaulting, data source normalization and
 * validation, as kube-apiserver 1.33 (pkg/apis/core/v1/defaults.go,
 * pkg/api/persistentvolumeclaim/util.go, pkg/apis/core/validation
 * ValidatePersistentVolumeClaimSpec, ValidatePersistentVolumeClaimUpdate,
 * ValidatePersistentVolumeClaimStatusUpdate), with upstream's paths and
 * messages. RecoverVolumeExpansionFailure is on (beta since 1.32): a bound
 * claim's request may go down, but not to its status capacity or below.
 * VolumeAttributesClass and CrossNamespaceVolumeDataSource are off, as
 * upstream's defaults: their fields are dropped unless the old object had them.
 */
import {
  field,
  isDNS1123Subdomain,
  jsonEqual,
  validateLabelSelector,
  validateNamespaceName,
  type FieldError,
  type LabelSelectorLike,
} from '@kubeling/apimachinery';
import { objectFieldDiff } from './core-v1-ephemeral.js';
import { compareQuantities, parseExactQuantity } from './core-v1-quantity.js';
import { isNativeResource, validateResourceQuantityValue } from './core-v1-resources.js';
import {
  BETA_STORAGE_CLASS_ANNOTATION,
  VOLUME_MODES,
  validateAccessModes,
  validateBasicResource,
  validateClassName,
  validatePositiveQuantity,
  validateQualifiedName,
  validateResourceVersionSet,
} from './core-v1-storage-common.js';
import { type Obj, objOf, strOf } from './json-fields.js';

const RESIZE_STATUSES = ['ControllerResizeFailed', 'ControllerResizeInProgress', 'NodeResizeFailed', 'NodeResizeInProgress', 'NodeResizePending'];

const specOf = (o: Obj): Obj => (objOf(o.spec) ?? {}) as Obj;
const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? (v as unknown[]).map(String) : []);
const hasString = (v: unknown): v is string => typeof v === 'string';

/** SetDefaults_PersistentVolumeClaim and _Spec: phase Pending, volume mode Filesystem. */
export function defaultPersistentVolumeClaim(pvc: Obj): void {
  const spec = (pvc.spec ??= {}) as Obj;
  const status = (pvc.status ??= {}) as Obj;
  if (!strOf(status.phase)) status.phase = 'Pending';
  defaultPersistentVolumeClaimSpec(spec);
}

/** SetDefaults_PersistentVolumeClaimSpec (claim templates too). */
export function defaultPersistentVolumeClaimSpec(spec: Obj): void {
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
}

/**
 * DropDisabledFields, EnforceDataSourceBackwardsCompatibility and
 * NormalizeDataSources: what the claim strategy does to a spec before
 * validation, on create (`old` undefined) and update.
 */
export function prepareClaimSpec(spec: Obj, old: Obj | undefined): void {
  if (!hasString(old?.volumeAttributesClassName)) delete spec.volumeAttributesClassName;
  const ref = objOf(spec.dataSourceRef);
  const oldRef = objOf(old?.dataSourceRef);
  if (ref && strOf(ref.namespace) && !strOf(oldRef?.namespace)) delete ref.namespace;
  const inUse = !!old && (objOf(old.dataSource) !== undefined || oldRef !== undefined);
  const ds = objOf(spec.dataSource);
  if (!inUse && !ref && ds && !isClaimOrSnapshot(ds)) delete spec.dataSource;
  normalizeDataSources(spec);
}

function isClaimOrSnapshot(ds: Obj): boolean {
  const group = strOf(ds.apiGroup);
  return (ds.kind === 'PersistentVolumeClaim' && group === '') || (ds.kind === 'VolumeSnapshot' && group === 'snapshot.storage.k8s.io');
}

/** NormalizeDataSources: dataSource and dataSourceRef mirror each other (when the ref names no namespace). */
function normalizeDataSources(spec: Obj): void {
  const ds = objOf(spec.dataSource);
  const ref = objOf(spec.dataSourceRef);
  const copy = (from: Obj) => ({ ...(hasString(from.apiGroup) ? { apiGroup: from.apiGroup } : {}), kind: from.kind, name: from.name });
  if (ds && !ref) spec.dataSourceRef = copy(ds);
  else if (ref && !ds && !strOf(ref.namespace)) spec.dataSource = copy(ref);
}

function validateDataSource(ds: Obj, p: string, isRef: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!strOf(ds.name)) errs.push(field.required(`${p}.name`, ''));
  if (!strOf(ds.kind)) errs.push(field.required(`${p}.kind`, ''));
  const group = strOf(ds.apiGroup);
  if (!group && ds.kind !== 'PersistentVolumeClaim')
    errs.push(field.invalid(p, strOf(ds.kind), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(field.invalid(`${p}.apiGroup`, group, m));
  const ns = strOf(ds.namespace);
  if (isRef && ns) for (const m of validateNamespaceName(ns, false)) errs.push(field.invalid(`${p}.namespace`, ns, m));
  return errs;
}

/** ValidatePersistentVolumeClaimSpec at `p` (`spec`, or a template's `...spec`). */
export function validatePersistentVolumeClaimSpec(specIn: unknown, p = 'spec'): FieldError[] {
  const spec = objOf(specIn) ?? {};
  const errs: FieldError[] = [];
  const modes = stringsOf(spec.accessModes);
  if (!modes.length) errs.push(field.required(`${p}.accessModes`, 'at least 1 access mode is required'));
  const selector = objOf(spec.selector);
  if (selector) errs.push(...validateLabelSelector(selector as LabelSelectorLike, `${p}.selector`));
  errs.push(...validateAccessModes(modes, `${p}.accessModes`));
  const requests = objOf(objOf(spec.resources)?.requests) ?? {};
  const sp = `${p}.resources[storage]`;
  if (!Object.hasOwn(requests, 'storage')) errs.push(field.required(sp, ''));
  else {
    const positive = validatePositiveQuantity(requests.storage, sp);
    errs.push(...(positive.length ? positive : validateResourceQuantityValue('storage', requests.storage, sp)));
  }
  const cls = spec.storageClassName;
  if (hasString(cls) && cls) for (const m of validateClassName(cls)) errs.push(field.invalid(`${p}.storageClassName`, cls, m));
  if (hasString(spec.volumeMode) && !VOLUME_MODES.includes(spec.volumeMode)) errs.push(field.notSupported(`${p}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  const ds = objOf(spec.dataSource);
  const ref = objOf(spec.dataSourceRef);
  if (ds) errs.push(...validateDataSource(ds, `${p}.dataSource`, false));
  if (ref) errs.push(...validateDataSource(ref, `${p}.dataSourceRef`, true));
  if (ref && strOf(ref.namespace)) {
    if (ds) errs.push(field.invalid(p, `${p}.dataSource`, 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (ds && ref) {
    const same = (ds.apiGroup ?? null) === (ref.apiGroup ?? null) && ds.kind === ref.kind && ds.name === ref.name;
    if (!same) errs.push(field.invalid(p, `${p}.dataSource`, 'must match dataSourceRef'));
  }
  return errs;
}

/** validateStorageClassUpgradeFromAnnotation: the class moves from the beta annotation to the field, unchanged. */
function upgradeFromAnnotation(oldAnn: Record<string, string>, newAnn: Record<string, string>, oldCls: unknown, newCls: unknown): boolean {
  if (!Object.hasOwn(oldAnn, BETA_STORAGE_CLASS_ANNOTATION) || hasString(oldCls)) return false;
  const oldSc = oldAnn[BETA_STORAGE_CLASS_ANNOTATION];
  return hasString(newCls) && newCls === oldSc && (!Object.hasOwn(newAnn, BETA_STORAGE_CLASS_ANNOTATION) || newAnn[BETA_STORAGE_CLASS_ANNOTATION] === oldSc);
}

const annotationsOf = (o: Obj): Record<string, string> => (objOf(objOf(o.metadata)?.annotations) ?? {}) as Record<string, string>;

/** ValidatePersistentVolumeClaimUpdate beyond the new object's own validity. */
export function validatePersistentVolumeClaimUpdate(newPvc: Obj, oldPvc: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const newSpec = structuredClone(specOf(newPvc));
  const oldSpec = structuredClone(specOf(oldPvc));
  // The binder sets volumeName once.
  if (!strOf(oldSpec.volumeName)) {
    if (newSpec.volumeName === undefined) delete oldSpec.volumeName;
    else oldSpec.volumeName = newSpec.volumeName;
  }
  const oldAnn = annotationsOf(oldPvc);
  const newAnn = annotationsOf(newPvc);
  if (upgradeFromAnnotation(oldAnn, newAnn, oldSpec.storageClassName, newSpec.storageClassName)) delete newSpec.storageClassName;
  else {
    const before = oldAnn[BETA_STORAGE_CLASS_ANNOTATION] ?? '';
    const after = newAnn[BETA_STORAGE_CLASS_ANNOTATION] ?? '';
    if (before !== after) errs.push(field.invalid(`metadata.annotations.${BETA_STORAGE_CLASS_ANNOTATION}`, after, 'field is immutable'));
    // A class may be set once where none was (nor an annotation naming another).
    if (
      hasString(newSpec.storageClassName) &&
      !hasString(oldSpec.storageClassName) &&
      (!Object.hasOwn(oldAnn, BETA_STORAGE_CLASS_ANNOTATION) || newSpec.storageClassName === before)
    )
      oldSpec.storageClassName = newSpec.storageClassName;
  }
  const phase = strOf(objOf(newPvc.status)?.phase);
  const newRequests = objOf(objOf(newSpec.resources)?.requests);
  if (phase === 'Bound' && newRequests) {
    const oldStorage = objOf(objOf(oldSpec.resources)?.requests)?.storage;
    if (oldStorage === undefined) delete newRequests.storage;
    else newRequests.storage = oldStorage;
  }
  if (oldSpec.volumeAttributesClassName === undefined) delete newSpec.volumeAttributesClassName;
  else newSpec.volumeAttributesClassName = oldSpec.volumeAttributesClassName;
  if (!claimSpecsEqual(newSpec, oldSpec)) {
    errs.push(
      field.forbidden(
        'spec',
        `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${objectFieldDiff(oldSpec, newSpec)}`,
      ),
    );
  }
  const newSize = objOf(objOf(specOf(newPvc).resources)?.requests)?.storage ?? '0';
  const oldSize = objOf(objOf(specOf(oldPvc).resources)?.requests)?.storage ?? '0';
  const statusSize = objOf(objOf(oldPvc.status)?.capacity)?.storage ?? '0';
  if ((compareQuantities(newSize, oldSize) ?? 0) < 0 && (compareQuantities(newSize, statusSize) ?? 1) <= 0)
    errs.push(field.forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  const newMode = specOf(newPvc).volumeMode ?? null;
  const oldMode = specOf(oldPvc).volumeMode ?? null;
  if (newMode !== oldMode) errs.push(field.invalid('volumeMode', newMode, 'field is immutable'));
  if (!jsonEqual(specOf(oldPvc).volumeAttributesClassName ?? null, specOf(newPvc).volumeAttributesClassName ?? null))
    errs.push(field.forbidden('spec.volumeAttributesClassName', 'update is forbidden when the VolumeAttributesClass feature gate is disabled'));
  return errs;
}

/** apiequality.Semantic.DeepEqual of two specs: quantities compare by value, empty maps and lists as absent. */
function claimSpecsEqual(a: Obj, b: Obj): boolean {
  const norm = (s: Obj): Obj => {
    const c = structuredClone(s);
    for (const k of Object.keys(c)) if (c[k] === null) delete c[k];
    const res = objOf(c.resources);
    for (const k of ['limits', 'requests'] as const) {
      const m = objOf(res?.[k]);
      if (!m) continue;
      for (const [r, q] of Object.entries(m)) {
        const x = parseExactQuantity(q);
        if (x) m[r] = `${x.negative ? '-' : ''}${x.nanos}`;
      }
      if (!Object.keys(m).length) delete res![k];
    }
    if (res && !Object.keys(res).length) delete c.resources;
    if (Array.isArray(c.accessModes) && !c.accessModes.length) delete c.accessModes;
    if (c.volumeName === '') delete c.volumeName;
    return c;
  };
  return jsonEqual(norm(a), norm(b));
}

/** validatePersistentVolumeClaimResourceKey: a qualified name, `storage` when native. */
function validateClaimResourceKey(key: string, p: string): FieldError[] {
  const errs = validateQualifiedName(key, p);
  if (errs.length) return errs;
  if (isNativeResource(key) && key !== 'storage') return [field.notSupported(p, key, ['storage'])];
  return [];
}

/** ValidatePersistentVolumeClaimStatusUpdate beyond metadata. */
export function validatePersistentVolumeClaimStatusUpdate(newPvc: Obj): FieldError[] {
  const errs = validateResourceVersionSet(newPvc);
  if (!stringsOf(specOf(newPvc).accessModes).length) errs.push(field.required('Spec.accessModes', ''));
  const status = objOf(newPvc.status) ?? {};
  for (const [r, q] of Object.entries(objOf(status.capacity) ?? {})) errs.push(...validateBasicResource(q, `status.capacity[${r}]`));
  const statusPath = 'status.allocatedResourceStatus';
  for (const [k, v] of Object.entries(objOf(status.allocatedResourceStatuses) ?? {})) {
    errs.push(...validateClaimResourceKey(k, statusPath));
    if (!RESIZE_STATUSES.includes(String(v))) errs.push(field.notSupported(statusPath, k, RESIZE_STATUSES));
  }
  for (const [r, q] of Object.entries(objOf(status.allocatedResources) ?? {})) {
    const keyErrs = validateClaimResourceKey(r, 'status.allocatedResources');
    if (keyErrs.length) {
      errs.push(...keyErrs);
      continue;
    }
    const basic = validateBasicResource(q, `status.allocatedResources[${r}]`);
    errs.push(...(basic.length ? basic : validateResourceQuantityValue('storage', q, `status.allocatedResources[${r}]`)));
  }
  return errs;
}
