/**
 * storage.k8s.io/v1 defaulting and validation, as kube-apiserver 1.33
 * (pkg/apis/storage/v1/defaults.go, pkg/apis/storage/validation): StorageClass
 * (provisioner, parameters, reclaim policy, binding mode, allowed topologies;
 * provisioner, parameters, reclaimPolicy and volumeBindingMode immutable),
 * CSIDriver (required booleans, fsGroupPolicy, token requests, lifecycle
 * modes; attachRequired and volumeLifecycleModes immutable), CSINode (driver
 * names, node IDs, topology keys; an existing driver's entry immutable),
 * VolumeAttachment (attacher, exactly one source, node name; spec
 * immutable) and CSIStorageCapacity (topology and class immutable).
 * SELinuxMountReadWriteOncePod is on (beta since 1.28), MutableCSINodeAllocatableCount off.
 */
import { field, jsonEqual, nameIsDNSSubdomain, validateLabelSelector, type FieldError, type LabelSelectorLike } from '@kubeling/apimachinery';
import { validateClassName, validateCSIDriverName, validateNonnegativeQuantity, validateQualifiedName } from './core-v1-storage-common.js';
import { validatePersistentVolumeSpec, validateTopologySelectorTerm } from './core-v1-storage-validation.js';
import { type Obj, listOf, objOf, strOf } from './json-fields.js';

const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;
const MAX_ATTACHED_METADATA_SIZE = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE = 1024;
const CSI_NODE_ID_MAX_LENGTH = 256; // AllowLongNodeID: the strategies always allow it
const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];

/** The annotations that make a StorageClass the default one. */
export const DEFAULT_STORAGE_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
export const BETA_DEFAULT_STORAGE_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

/** IsDefaultAnnotation: either annotation says "true". */
export function isDefaultStorageClass(sc: { metadata?: { annotations?: Record<string, string> } }): boolean {
  const a = sc.metadata?.annotations ?? {};
  return a[DEFAULT_STORAGE_CLASS_ANNOTATION] === 'true' || a[BETA_DEFAULT_STORAGE_CLASS_ANNOTATION] === 'true';
}

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

/** SetDefaults_StorageClass: reclaim policy Delete, binding mode Immediate. */
export function defaultStorageClass(sc: Obj): void {
  if (sc.reclaimPolicy === undefined || sc.reclaimPolicy === null) sc.reclaimPolicy = 'Delete';
  if (sc.volumeBindingMode === undefined || sc.volumeBindingMode === null) sc.volumeBindingMode = 'Immediate';
}

/** ValidateStorageClass beyond metadata. */
export function validateStorageClass(sc: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = strOf(sc.provisioner);
  if (!provisioner) errs.push(field.required('provisioner', ''));
  else errs.push(...validateQualifiedName(provisioner.toLowerCase(), 'provisioner'));
  const params = (objOf(sc.parameters) ?? {}) as Record<string, unknown>;
  const keys = Object.keys(params);
  if (keys.length > MAX_PARAMETERS) errs.push(field.tooLong('parameters', '', MAX_PARAMETERS));
  else {
    let size = 0;
    for (const k of keys) {
      if (!k) errs.push(field.invalid('parameters', k, 'field can not be empty.'));
      size += byteLength(k) + byteLength(String(params[k] ?? ''));
    }
    if (size > MAX_PARAMETERS_SIZE) errs.push(field.tooLong('parameters', '', MAX_PARAMETERS_SIZE));
  }
  const policy = strOf(sc.reclaimPolicy);
  if (policy && !RECLAIM_POLICIES.includes(policy)) errs.push(field.notSupported('reclaimPolicy', policy, RECLAIM_POLICIES));
  const mode = sc.volumeBindingMode;
  if (typeof mode !== 'string') errs.push(field.required('volumeBindingMode', ''));
  else if (!BINDING_MODES.includes(mode)) errs.push(field.notSupported('volumeBindingMode', mode, BINDING_MODES));
  const seen: Map<string, Set<string>>[] = [];
  listOf(sc.allowedTopologies).forEach((term, i) => {
    const { exprs, errors } = validateTopologySelectorTerm(term, `allowedTopologies[${i}]`);
    errs.push(...errors);
    if (seen.some((m) => sameExprs(m, exprs))) errs.push(field.duplicate(`allowedTopologies[${i}].matchLabelExpressions`, ''));
    seen.push(exprs);
  });
  return errs;
}

const sameExprs = (a: Map<string, Set<string>>, b: Map<string, Set<string>>) =>
  a.size === b.size && [...a].every(([k, v]) => b.has(k) && b.get(k)!.size === v.size && [...v].every((x) => b.get(k)!.has(x)));

/** ValidateStorageClassUpdate. */
export function validateStorageClassUpdate(sc: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (!jsonEqual(sc.parameters ?? {}, old.parameters ?? {})) errs.push(field.forbidden('parameters', 'updates to parameters are forbidden.'));
  if (strOf(sc.provisioner) !== strOf(old.provisioner)) errs.push(field.forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (strOf(sc.reclaimPolicy) !== strOf(old.reclaimPolicy)) errs.push(field.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if ((sc.volumeBindingMode ?? null) !== (old.volumeBindingMode ?? null))
    errs.push(field.invalid('volumeBindingMode', sc.volumeBindingMode ?? null, 'field is immutable'));
  return errs;
}

/** SetDefaults_CSIDriver. */
export function defaultCSIDriver(d: Obj): void {
  const spec = (d.spec ??= {}) as Obj;
  const set = (k: string, v: unknown) => {
    if (spec[k] === undefined || spec[k] === null) spec[k] = v;
  };
  set('attachRequired', true);
  set('podInfoOnMount', false);
  set('storageCapacity', false);
  set('fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!Array.isArray(spec.volumeLifecycleModes) || !spec.volumeLifecycleModes.length) spec.volumeLifecycleModes = ['Persistent'];
  set('requiresRepublish', false);
  set('seLinuxMount', false);
}

/** validateCSIDriverSpec. */
export function validateCSIDriver(d: Obj): FieldError[] {
  const spec = objOf(d.spec) ?? {};
  const errs: FieldError[] = [];
  const requiredBool = (k: string, p: string) => {
    if (typeof spec[k] !== 'boolean') errs.push(field.required(`spec.${p}`, ''));
  };
  requiredBool('attachRequired', 'attachedRequired'); // sic: upstream's path
  requiredBool('podInfoOnMount', 'podInfoOnMount');
  requiredBool('storageCapacity', 'storageCapacity');
  const fsGroup = spec.fsGroupPolicy;
  if (typeof fsGroup === 'string' && !FS_GROUP_POLICIES.includes(fsGroup)) errs.push(field.notSupported('spec.fsGroupPolicy', fsGroup, FS_GROUP_POLICIES));
  const audiences = new Set<string>();
  listOf(spec.tokenRequests).forEach((t, i) => {
    const p = `spec.tokenRequests[${i}]`;
    const aud = strOf(t.audience);
    if (audiences.has(aud)) {
      errs.push(field.duplicate(`${p}.audience`, aud));
      return;
    }
    audiences.add(aud);
    const exp = t.expirationSeconds;
    if (typeof exp !== 'number') return;
    if (exp < 600) errs.push(field.invalid(`${p}.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
    if (exp > 2 ** 32) errs.push(field.invalid(`${p}.expirationSeconds`, exp, 'may not specify a duration larger than 2^32 seconds'));
  });
  for (const m of Array.isArray(spec.volumeLifecycleModes) ? (spec.volumeLifecycleModes as unknown[]) : [])
    if (!LIFECYCLE_MODES.includes(String(m))) errs.push(field.notSupported('spec.volumeLifecycleModes', String(m), LIFECYCLE_MODES));
  requiredBool('seLinuxMount', 'seLinuxMount');
  const period = spec.nodeAllocatableUpdatePeriodSeconds;
  if (typeof period === 'number' && period < 10)
    errs.push(field.invalid('spec.nodeAllocatableUpdatePeriodSeconds', period, 'must be greater than or equal to 10 seconds'));
  return errs;
}

/** ValidateCSIDriverUpdate: attachRequired and volumeLifecycleModes are immutable. */
export function validateCSIDriverUpdate(d: Obj, old: Obj): FieldError[] {
  const spec = objOf(d.spec) ?? {};
  const oldSpec = objOf(old.spec) ?? {};
  const errs: FieldError[] = [];
  if ((spec.attachRequired ?? null) !== (oldSpec.attachRequired ?? null))
    errs.push(field.invalid('spec.attachedRequired', spec.attachRequired ?? null, 'field is immutable'));
  if (!jsonEqual(spec.volumeLifecycleModes ?? null, oldSpec.volumeLifecycleModes ?? null))
    errs.push(field.invalid('spec.volumeLifecycleModes', spec.volumeLifecycleModes ?? null, 'field is immutable'));
  return errs;
}

/** validateCSINodeSpec. */
export function validateCSINode(n: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  listOf(objOf(n.spec)?.drivers).forEach((d, i) => {
    const p = `spec.drivers[${i}]`;
    const name = strOf(d.name);
    errs.push(...validateCSIDriverName(name, `${p}.name`));
    const nodeID = strOf(d.nodeID);
    if (!nodeID) errs.push(field.required(`${p}.nodeID`, ''));
    if (nodeID.length > CSI_NODE_ID_MAX_LENGTH) errs.push(field.invalid(`${p}.nodeID`, nodeID, `must be ${CSI_NODE_ID_MAX_LENGTH} characters or less`));
    const count = objOf(d.allocatable)?.count;
    if (typeof count === 'number' && count < 0) errs.push(field.invalid(`${p}.allocatable.count`, count, 'must be greater than or equal to 0'));
    if (names.has(name)) errs.push(field.duplicate(`${p}.name`, name));
    names.add(name);
    const keys = new Set<string>();
    for (const key of Array.isArray(d.topologyKeys) ? (d.topologyKeys as unknown[]).map(String) : []) {
      if (!key) errs.push(field.required(p, key));
      if (keys.has(key)) errs.push(field.duplicate(p, key));
      keys.add(key);
      errs.push(...validateQualifiedName(key, p));
    }
  });
  return errs;
}

/** The internal CSINodeDriver as upstream's immutable-field error prints it (Go field names). */
function goCSINodeDriver(d: Obj): field.GoValue {
  const count = objOf(d.allocatable)?.count;
  return new field.GoValue(
    JSON.stringify({
      Name: strOf(d.name),
      NodeID: strOf(d.nodeID),
      TopologyKeys: Array.isArray(d.topologyKeys) ? d.topologyKeys : null,
      Allocatable: objOf(d.allocatable) ? { Count: typeof count === 'number' ? count : null } : null,
    }),
  );
}

/** ValidateCSINodeUpdate: a driver already listed keeps its entry. */
export function validateCSINodeUpdate(n: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const drivers = listOf(objOf(n.spec)?.drivers);
  for (const o of listOf(objOf(old.spec)?.drivers))
    for (const d of drivers) if (d.name === o.name && !jsonEqual(d, o)) errs.push(field.invalid('spec.drivers', goCSINodeDriver(d), 'field is immutable'));
  return errs;
}

function validateVolumeError(e: unknown, p: string): FieldError[] {
  const err = objOf(e);
  if (!err) return [];
  const errs: FieldError[] = [];
  if (strOf(err.message).length > MAX_VOLUME_ERROR_MESSAGE) errs.push(field.tooLong(`${p}.message`, '', MAX_ATTACHED_METADATA_SIZE));
  if (typeof err.errorCode === 'number' && err.errorCode < 0)
    errs.push(field.invalid(`${p}.errorCode`, err.errorCode, 'must be between 0 and 2147483647, inclusive'));
  return errs;
}

/** ValidateVolumeAttachment and ValidateVolumeAttachmentV1 beyond metadata. */
export function validateVolumeAttachment(va: Obj): FieldError[] {
  const spec = objOf(va.spec) ?? {};
  const errs: FieldError[] = [];
  const attacher = strOf(spec.attacher);
  if (!attacher) errs.push(field.required('spec.attacher', ''));
  const source = objOf(spec.source) ?? {};
  const pvName = source.persistentVolumeName;
  const inline = objOf(source.inlineVolumeSpec);
  const hasPV = typeof pvName === 'string';
  if (!inline && !hasPV) errs.push(field.required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (inline && hasPV) errs.push(field.forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasPV && !pvName) errs.push(field.required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  else if (inline) errs.push(...validateInlineVolumeSpec(inline));
  const node = strOf(spec.nodeName);
  for (const m of nameIsDNSSubdomain(node, false)) errs.push(field.invalid('spec.nodeName', node, m));
  const status = objOf(va.status) ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(objOf(status.attachmentMetadata) ?? {})) size += byteLength(k) + byteLength(String(v));
  if (size > MAX_ATTACHED_METADATA_SIZE) errs.push(field.tooLong('status.attachmentMetadata', '', MAX_ATTACHED_METADATA_SIZE));
  errs.push(...validateVolumeError(status.attachError, 'status.attachError'), ...validateVolumeError(status.detachError, 'status.detachError'));
  errs.push(...validateCSIDriverName(attacher, 'spec.attacher'));
  if (hasPV && pvName) for (const m of nameIsDNSSubdomain(pvName, false)) errs.push(field.invalid('spec.source.persistentVolumeName', pvName, m));
  return errs;
}

/** ValidatePersistentVolumeSpec of an inline (CSI migration) spec: what it may not have, then the rest at its path. */
function validateInlineVolumeSpec(spec: Obj): FieldError[] {
  const p = 'spec.source.inlineVolumeSpec';
  const errs: FieldError[] = [];
  if (spec.claimRef) errs.push(field.forbidden(`${p}.claimRef`, 'may not be specified in the context of inline volumes'));
  if (Object.keys(objOf(spec.capacity) ?? {}).length) errs.push(field.forbidden(`${p}.capacity`, 'may not be specified in the context of inline volumes'));
  if (!objOf(spec.csi)) errs.push(field.required(`${p}.csi`, 'has to be specified in the context of inline volumes'));
  const policy = strOf(spec.persistentVolumeReclaimPolicy);
  if (policy && policy !== 'Retain') errs.push(field.forbidden(`${p}.persistentVolumeReclaimPolicy`, 'may only be Retain in the context of inline volumes'));
  if (spec.nodeAffinity) errs.push(field.forbidden(`${p}.nodeAffinity`, 'may not be specified in the context of inline volumes'));
  if (strOf(spec.storageClassName)) errs.push(field.forbidden(`${p}.storageClassName`, 'may not be specified in the context of inline volumes'));
  if (typeof spec.volumeMode === 'string' && spec.volumeMode !== 'Filesystem')
    errs.push(field.forbidden(`${p}.volumeMode`, 'may not specify volumeMode other than Filesystem in the context of inline volumes'));
  // The rules an inline spec shares with a PersistentVolume's (access modes, the source), at the inline spec's path.
  const shared: Obj = { ...spec, capacity: { storage: '1' } };
  for (const k of ['persistentVolumeReclaimPolicy', 'nodeAffinity', 'storageClassName', 'volumeMode']) delete shared[k];
  const rest = validatePersistentVolumeSpec(shared);
  errs.push(...rest.map((e) => ({ ...e, field: e.field.replace(/^spec/, p) })));
  return errs;
}

/** The internal VolumeAttachmentSpec as upstream's immutable-field error prints it (Go field names). */
function goVolumeAttachmentSpec(spec: Obj): field.GoValue {
  const source = objOf(spec.source) ?? {};
  return new field.GoValue(
    JSON.stringify({
      Attacher: strOf(spec.attacher),
      Source: {
        PersistentVolumeName: typeof source.persistentVolumeName === 'string' ? source.persistentVolumeName : null,
        InlineVolumeSpec: source.inlineVolumeSpec ?? null,
      },
      NodeName: strOf(spec.nodeName),
    }),
  );
}

/** ValidateVolumeAttachmentUpdate: the spec is immutable. */
export function validateVolumeAttachmentUpdate(va: Obj, old: Obj): FieldError[] {
  return jsonEqual(va.spec ?? null, old.spec ?? null) ? [] : [field.invalid('spec', goVolumeAttachmentSpec(objOf(va.spec) ?? {}), 'field is immutable')];
}

/** ValidateCSIStorageCapacity beyond metadata. */
export function validateCSIStorageCapacity(c: Obj): FieldError[] {
  const errs = validateLabelSelector(objOf(c.nodeTopology) as LabelSelectorLike | undefined, 'nodeTopology');
  const cls = strOf(c.storageClassName);
  for (const m of validateClassName(cls)) errs.push(field.invalid('storageClassName', cls, m));
  if (c.capacity !== undefined && c.capacity !== null) errs.push(...validateNonnegativeQuantity(c.capacity, 'capacity'));
  return errs;
}

/** ValidateCSIStorageCapacityUpdate: the topology and class are immutable. */
export function validateCSIStorageCapacityUpdate(c: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (!jsonEqual(c.nodeTopology ?? null, old.nodeTopology ?? null)) errs.push(field.invalid('nodeTopology', c.nodeTopology ?? null, 'field is immutable'));
  if (strOf(c.storageClassName) !== strOf(old.storageClassName)) errs.push(field.invalid('storageClassName', strOf(c.storageClassName), 'field is immutable'));
  return errs;
}
