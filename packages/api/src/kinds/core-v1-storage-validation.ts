/**
 * PersistentVolume defaulting and validation, as kube-apiserver 1.33
 * (pkg/apis/core/v1/defaults.go SetDefaults_PersistentVolume,
 * pkg/apis/core/validation ValidatePersistentVolumeSpec,
 * ValidatePersistentVolumeUpdate, ValidatePersistentVolumeStatusUpdate), with
 * upstream's paths and messages: access modes, a `storage` capacity, exactly
 * one source (csi, local with node affinity, hostPath, nfs checked inside),
 * reclaim policy, class name, volume mode, node affinity; on update the
 * source and volume mode are immutable, and node affinity once set.
 *
 * Node selectors and topology terms are exported for storage.k8s.io/v1; what
 * claims share with volumes is core-v1-storage-common.ts.
 */
import {
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidLabelValue,
  jsonEqual,
  nameIsDNSSubdomain,
  validateLabelName,
  type FieldError,
} from '@kubeling/apimachinery';
import { objectFieldDiff } from './core-v1-ephemeral.js';
import {
  VOLUME_MODES,
  validateAccessModes,
  validateBasicResource,
  validateCSIDriverName,
  validateClassName,
  validatePositiveQuantity,
} from './core-v1-storage-common.js';
import { validateOneSource } from './core-v1-volumes.js';
import { type Obj, listOf, objOf, strOf } from './json-fields.js';

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];

function validateNodeSelectorRequirement(rq: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = Array.isArray(rq.values) ? (rq.values as unknown[]).map(String) : [];
  const op = strOf(rq.operator);
  if (op === 'In' || op === 'NotIn') {
    if (!values.length) errs.push(field.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (values.length) errs.push(field.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else if (op === 'Gt' || op === 'Lt') {
    if (values.length !== 1) errs.push(field.required(`${p}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else errs.push(field.invalid(`${p}.operator`, op, 'not a valid selector operator'));
  errs.push(...validateLabelName(strOf(rq.key), `${p}.key`));
  values.forEach((v, i) => {
    for (const m of isValidLabelValue(v)) errs.push(field.invalid(`${p}.values[${i}]`, v, m));
  });
  return errs;
}

function validateNodeFieldSelectorRequirement(rq: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = Array.isArray(rq.values) ? (rq.values as unknown[]).map(String) : [];
  const op = strOf(rq.operator);
  if (op === 'In' || op === 'NotIn') {
    if (values.length !== 1) errs.push(field.required(`${p}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else errs.push(field.invalid(`${p}.operator`, op, 'not a valid selector operator'));
  const key = strOf(rq.key);
  if (key !== 'metadata.name') errs.push(field.invalid(`${p}.key`, key, 'not a valid field selector key'));
  else values.forEach((v, i) => errs.push(...nameIsDNSSubdomain(v, false).map((m) => field.invalid(`${p}.values[${i}]`, v, m))));
  return errs;
}

/** ValidateNodeSelector: at least one term; each requirement on labels or on `metadata.name`. */
export function validateNodeSelector(sel: Obj, p: string): FieldError[] {
  const terms = listOf(sel.nodeSelectorTerms);
  const tp = `${p}.nodeSelectorTerms`;
  if (!terms.length) return [field.required(tp, 'must have at least one node selector term')];
  const errs: FieldError[] = [];
  terms.forEach((t, i) => {
    listOf(t.matchExpressions).forEach((r, j) => errs.push(...validateNodeSelectorRequirement(r, `${tp}[${i}].matchExpressions[${j}]`)));
    listOf(t.matchFields).forEach((r, j) => errs.push(...validateNodeFieldSelectorRequirement(r, `${tp}[${i}].matchFields[${j}]`)));
  });
  return errs;
}

/** ValidateTopologySelectorTerm: values required and unique, keys label names and unique; answers key → values. */
export function validateTopologySelectorTerm(term: Obj, p: string): { exprs: Map<string, Set<string>>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const exprs = new Map<string, Set<string>>();
  listOf(term.matchLabelExpressions).forEach((rq, i) => {
    const ip = `${p}.matchLabelExpressions[${i}]`;
    const values = Array.isArray(rq.values) ? (rq.values as unknown[]).map(String) : [];
    const set = new Set<string>();
    if (!values.length) errors.push(field.required(`${ip}.values`, ''));
    values.forEach((v, j) => {
      if (set.has(v)) errors.push(field.duplicate(`${ip}.values[${j}]`, v));
      set.add(v);
    });
    const key = strOf(rq.key);
    errors.push(...validateLabelName(key, `${ip}.key`));
    if (exprs.has(key)) errors.push(field.duplicate(`${ip}.key`, key));
    exprs.set(key, set);
  });
  return { exprs, errors };
}

const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? (v as unknown[]).map(String) : []);

function validatePVSecretReference(ref: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = strOf(ref.name);
  const ns = strOf(ref.namespace);
  if (!name) errs.push(field.required(`${p}.name`, ''));
  else errs.push(...isDNS1123Subdomain(name).map((m) => field.invalid(`${p}.name`, name, m)));
  if (!ns) errs.push(field.required(`${p}.namespace`, ''));
  else errs.push(...isDNS1123Label(ns).map((m) => field.invalid(`${p}.namespace`, ns, m)));
  return errs;
}

const CSI_SECRET_REFS = ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef'];

function validateCSIPersistentVolumeSource(csi: Obj, p: string): FieldError[] {
  const errs = validateCSIDriverName(strOf(csi.driver), `${p}.driver`);
  if (!strOf(csi.volumeHandle)) errs.push(field.required(`${p}.volumeHandle`, ''));
  for (const k of CSI_SECRET_REFS) {
    const ref = objOf(csi[k]);
    if (ref) errs.push(...validatePVSecretReference(ref, `${p}.${k}`));
  }
  return errs;
}

/** The PersistentVolumeSource members in upstream's order, with the path their Forbidden error names. */
const PV_SOURCES: readonly (readonly [json: string, forbiddenPath: string | undefined])[] = [
  ['hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['nfs', 'nfs'],
  ['rbd', 'rbd'],
  ['quobyte', 'quobyte'],
  ['cephfs', 'cephFS'],
  ['iscsi', 'iscsi'],
  ['cinder', 'cinder'],
  ['fc', 'fc'],
  ['flexVolume', undefined], // counted, never refused (sic)
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO'],
  ['local', 'local'],
  ['storageos', 'storageos'],
  ['csi', 'csi'],
];

/** The JSON names of the PersistentVolumeSource members (the part of a PV spec that is immutable). */
export const PV_SOURCE_FIELDS: readonly string[] = PV_SOURCES.map(([json]) => json);

function validatePVSource(spec: Obj, nodeAffinitySpecified: boolean): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const [json, forbiddenPath] of PV_SOURCES) {
    const src = objOf(spec[json]);
    if (!src) continue;
    if (count > 0 && forbiddenPath) {
      errs.push(field.forbidden(`spec.${forbiddenPath}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    const p = `spec.${json}`;
    if (json === 'hostPath' || json === 'nfs') errs.push(...validateOneSource(json, src, p));
    else if (json === 'csi') errs.push(...validateCSIPersistentVolumeSource(src, p));
    else if (json === 'local') {
      const path = strOf(src.path);
      if (!path) errs.push(field.required(`${p}.path`, ''));
      else if (path.split('/').includes('..')) errs.push(field.invalid(`${p}.path`, path, "must not contain '..'"));
      if (!nodeAffinitySpecified) errs.push(field.required('spec.nodeAffinity', 'Local volume requires node affinity'));
    }
  }
  if (count === 0) errs.push(field.required('spec', 'must specify a volume type'));
  return errs;
}

/** SetDefaults_PersistentVolume: phase Pending, reclaim policy Retain, volume mode Filesystem. */
export function defaultPersistentVolume(pv: Obj): void {
  const spec = (pv.spec ??= {}) as Obj;
  const status = (pv.status ??= {}) as Obj;
  if (!strOf(status.phase)) status.phase = 'Pending';
  if (!strOf(spec.persistentVolumeReclaimPolicy)) spec.persistentVolumeReclaimPolicy = 'Retain';
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
}

/** ValidatePersistentVolumeSpec for a PersistentVolume (not an inline spec). */
export function validatePersistentVolumeSpec(specIn: unknown): FieldError[] {
  const spec = objOf(specIn) ?? {};
  const errs: FieldError[] = [];
  const modes = stringsOf(spec.accessModes);
  if (!modes.length) errs.push(field.required('spec.accessModes', ''));
  errs.push(...validateAccessModes(modes, 'spec.accessModes'));
  const capacity = objOf(spec.capacity) ?? {};
  const keys = Object.keys(capacity);
  if (!keys.length) errs.push(field.required('spec.capacity', ''));
  if (!keys.includes('storage') || keys.length > 1) errs.push(field.notSupported('spec.capacity', field.goStringMap(capacity), ['storage']));
  for (const [r, q] of Object.entries(capacity)) {
    errs.push(...validateBasicResource(q, `spec.capacity[${r}]`));
    errs.push(...validatePositiveQuantity(q, `spec.capacity[${r}]`));
  }
  const policy = strOf(spec.persistentVolumeReclaimPolicy);
  if (policy && !RECLAIM_POLICIES.includes(policy)) errs.push(field.notSupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  let nodeAffinitySpecified = false;
  const affinity = objOf(spec.nodeAffinity);
  if (affinity) {
    nodeAffinitySpecified = true;
    const required = objOf(affinity.required);
    if (required) errs.push(...validateNodeSelector(required, 'spec.nodeAffinity.required'));
    else errs.push(field.required('spec.nodeAffinity.required', 'must specify required node constraints'));
  }
  errs.push(...validatePVSource(spec, nodeAffinitySpecified));
  const hostPath = strOf(objOf(spec.hostPath)?.path);
  if (hostPath && hostPath.replace(/\/+$/, '') === '' && policy === 'Recycle')
    errs.push(field.forbidden('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'"));
  const cls = strOf(spec.storageClassName);
  if (cls) for (const m of validateClassName(cls)) errs.push(field.invalid('spec.storageClassName', cls, m));
  const mode = spec.volumeMode;
  if (typeof mode === 'string' && !VOLUME_MODES.includes(mode)) errs.push(field.notSupported('spec.volumeMode', mode, VOLUME_MODES));
  return errs;
}

/** Topology labels whose beta keys a volume's node affinity may move to the GA ones (upstream's beta-to-GA exception). */
const BETA_TO_GA: Readonly<Record<string, string>> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

function withGALabels(affinity: unknown): unknown {
  const a = structuredClone(affinity) as Obj | undefined;
  for (const t of listOf(objOf(a?.required)?.nodeSelectorTerms)) for (const r of listOf(t.matchExpressions)) r.key = BETA_TO_GA[strOf(r.key)] ?? r.key;
  return a;
}

/** The internal VolumeNodeAffinity as upstream's error prints it: JSON of the Go structs, field names capitalized. */
function goNodeAffinity(a: unknown): field.GoValue {
  const req = (r: Obj) => ({ Key: strOf(r.key), Operator: strOf(r.operator), Values: Array.isArray(r.values) ? r.values : null });
  const reqs = (v: unknown) => (Array.isArray(v) ? listOf(v).map(req) : null);
  const sel = objOf(objOf(a)?.required);
  const terms = sel ? listOf(sel.nodeSelectorTerms).map((t) => ({ MatchExpressions: reqs(t.matchExpressions), MatchFields: reqs(t.matchFields) })) : undefined;
  return new field.GoValue(a ? JSON.stringify({ Required: sel ? { NodeSelectorTerms: terms } : null }) : 'null');
}

const pvSource = (spec: Obj): Obj => Object.fromEntries(PV_SOURCE_FIELDS.filter((k) => spec[k] !== undefined && spec[k] !== null).map((k) => [k, spec[k]]));

/** ValidatePersistentVolumeUpdate beyond the new object's own validity. */
export function validatePersistentVolumeUpdate(newPv: Obj, oldPv: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = objOf(newPv.spec) ?? {};
  const old = objOf(oldPv.spec) ?? {};
  const newSource = pvSource(spec);
  const oldSource = pvSource(old);
  // A controllerExpandSecretRef may be added to a CSI volume that had none.
  const oldCsi = objOf(oldSource.csi);
  const newCsi = objOf(newSource.csi);
  if (oldCsi && newCsi && !oldCsi.controllerExpandSecretRef && newCsi.controllerExpandSecretRef) {
    newSource.csi = { ...newCsi };
    delete (newSource.csi as Obj).controllerExpandSecretRef;
  }
  if (!jsonEqual(newSource, oldSource)) {
    errs.push(
      field.forbidden('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n${objectFieldDiff(oldSource, newSource)}`),
    );
  }
  if ((spec.volumeMode ?? null) !== (old.volumeMode ?? null)) errs.push(field.invalid('volumeMode', spec.volumeMode ?? null, 'field is immutable'));
  if (old.nodeAffinity && !jsonEqual(spec.nodeAffinity ?? null, old.nodeAffinity) && !jsonEqual(spec.nodeAffinity ?? null, withGALabels(old.nodeAffinity))) {
    errs.push(field.invalid('nodeAffinity', goNodeAffinity(spec.nodeAffinity), 'field is immutable, except for updating from beta label to GA'));
  }
  return errs;
}
