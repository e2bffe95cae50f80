/**
 * Pod volumes, as upstream's pkg/apis/core/validation (ValidateVolumes,
 * validateVolumeSource) and SetDefaults_Volume: exactly one source per
 * volume, the checks inside the sources kubeling's workloads use, and unique
 * DNS-label names, with kube-apiserver 1.33's paths, order and messages.
 */
import { field, isDNS1123Label, validateAnnotations, validateLabels, type FieldError } from '@kubeling/apimachinery';
import { validatePersistentVolumeClaimSpec } from './core-v1-claim-validation.js';
import { parseExactQuantity } from './core-v1-quantity.js';
import { type Obj, listOf, numOf, objOf, strOf } from './json-fields.js';

/** The VolumeSource members in upstream's validateVolumeSource order, with the path its Forbidden error names. */
const VOLUME_SOURCES: readonly (readonly [json: string, forbiddenPath: string])[] = [
  ['emptyDir', 'emptyDir'],
  ['hostPath', 'hostPath'],
  ['gitRepo', 'gitRepo'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['secret', 'secret'],
  ['nfs', 'nfs'],
  ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['persistentVolumeClaim', 'persistentVolumeClaim'],
  ['rbd', 'rbd'],
  ['cinder', 'cinder'],
  ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'],
  ['downwardAPI', 'downwarAPI'], // sic: upstream's path has the typo
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['configMap', 'configMap'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'],
  ['projected', 'projected'],
  ['scaleIO', 'scaleIO'],
  ['csi', 'csi'],
  ['ephemeral', 'ephemeral'],
  ['image', 'image'],
];

/** The JSON names of every VolumeSource member. */
export const VOLUME_SOURCE_FIELDS: readonly string[] = VOLUME_SOURCES.map(([json]) => json);

/** SetDefaults_Volume: a volume that names no source gets `emptyDir: {}`. */
export function defaultVolume(v: Obj): void {
  if (VOLUME_SOURCE_FIELDS.every((k) => v[k] === undefined || v[k] === null)) v.emptyDir = {};
  // SetDefaults_PersistentVolumeClaimSpec of a generic ephemeral volume's claim template.
  const spec = objOf(objOf(objOf(v.ephemeral)?.volumeClaimTemplate)?.spec);
  if (spec && (spec.volumeMode === undefined || spec.volumeMode === null)) spec.volumeMode = 'Filesystem';
}

/** ObjectMeta's fields in Go order, named as validateFieldAllowList names them (the Go name, first letter lowered). */
const TEMPLATE_META_FIELDS: readonly (readonly [json: string, goName: string])[] = [
  ['name', 'name'],
  ['generateName', 'generateName'],
  ['namespace', 'namespace'],
  ['selfLink', 'selfLink'],
  ['uid', 'uID'],
  ['resourceVersion', 'resourceVersion'],
  ['generation', 'generation'],
  ['creationTimestamp', 'creationTimestamp'],
  ['deletionTimestamp', 'deletionTimestamp'],
  ['deletionGracePeriodSeconds', 'deletionGracePeriodSeconds'],
  ['ownerReferences', 'ownerReferences'],
  ['finalizers', 'finalizers'],
  ['managedFields', 'managedFields'],
];

/** validateEphemeralVolumeSource: a claim template with labels and annotations only, and a valid claim spec. */
function validateEphemeralSource(src: Obj, p: string): FieldError[] {
  const tpl = objOf(src.volumeClaimTemplate);
  const tp = `${p}.volumeClaimTemplate`;
  if (!tpl) return [field.required(tp, '')];
  const meta = objOf(tpl.metadata) ?? {};
  const errs = validateAnnotations(objOf(meta.annotations) as Record<string, string> | undefined, `${tp}.metadata.annotations`);
  errs.push(...validateLabels(objOf(meta.labels) as Record<string, string> | undefined, `${tp}.metadata.labels`));
  for (const [json, goName] of TEMPLATE_META_FIELDS) {
    const v = meta[json];
    const set = v !== undefined && v !== null && v !== '' && v !== 0 && !(Array.isArray(v) && !v.length);
    if (set) errs.push(field.forbidden(`${tp}.metadata.${goName}`, 'cannot be set'));
  }
  errs.push(...validatePersistentVolumeClaimSpec(tpl.spec, `${tp}.spec`));
  return errs;
}

const FILE_MODE_ERROR = 'must be a number between 0 and 0777 (octal), both inclusive';
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

function validatePathNoBacksteps(path: string, p: string): FieldError[] {
  return path.split('/').includes('..') ? [field.invalid(p, path, "must not contain '..'")] : [];
}

function validateLocalDescendingPath(path: string, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (path.startsWith('/')) errs.push(field.invalid(p, path, 'must be a relative path'));
  errs.push(...validatePathNoBacksteps(path, p));
  return errs;
}

function validateLocalNonReservedPath(path: string, p: string): FieldError[] {
  const errs = validateLocalDescendingPath(path, p);
  if (path.startsWith('..')) errs.push(field.invalid(p, path, "must not start with '..'"));
  return errs;
}

function validateFileMode(mode: unknown, p: string): FieldError[] {
  const m = numOf(mode);
  return m !== undefined && (m > 0o777 || m < 0) ? [field.invalid(p, m, FILE_MODE_ERROR)] : [];
}

function validateKeyToPaths(items: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  listOf(items).forEach((kp, i) => {
    const ip = `${p}[${i}]`;
    if (!strOf(kp.key)) errs.push(field.required(`${ip}.key`, ''));
    const path = strOf(kp.path);
    if (!path) errs.push(field.required(`${ip}.path`, ''));
    errs.push(...validateLocalNonReservedPath(path, `${ip}.path`));
    errs.push(...validateFileMode(kp.mode, `${ip}.mode`));
  });
  return errs;
}

/** What upstream checks inside the sources kubeling's workloads use; other sources are only counted. */
export function validateOneSource(kind: string, src: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  switch (kind) {
    case 'emptyDir': {
      const q = src.sizeLimit === undefined || src.sizeLimit === null ? undefined : parseExactQuantity(src.sizeLimit);
      if (q?.negative) errs.push(field.forbidden(`${p}.sizeLimit`, 'SizeLimit field must be a valid resource quantity'));
      break;
    }
    case 'hostPath': {
      const path = strOf(src.path);
      if (!path) return [field.required(`${p}.path`, '')];
      errs.push(...validatePathNoBacksteps(path, `${p}.path`));
      const t = strOf(src.type);
      if (!HOST_PATH_TYPES.includes(t)) errs.push(field.notSupported(`${p}.type`, t, HOST_PATH_TYPES));
      break;
    }
    case 'secret':
      if (!strOf(src.secretName)) errs.push(field.required(`${p}.secretName`, ''));
      errs.push(...validateFileMode(src.defaultMode, `${p}.defaultMode`));
      errs.push(...validateKeyToPaths(src.items, `${p}.items`));
      break;
    case 'configMap':
      if (!strOf(src.name)) errs.push(field.required(`${p}.name`, ''));
      errs.push(...validateFileMode(src.defaultMode, `${p}.defaultMode`));
      errs.push(...validateKeyToPaths(src.items, `${p}.items`));
      break;
    case 'persistentVolumeClaim':
      if (!strOf(src.claimName)) errs.push(field.required(`${p}.claimName`, ''));
      break;
    case 'ephemeral':
      errs.push(...validateEphemeralSource(src, p));
      break;
    case 'nfs': {
      if (!strOf(src.server)) errs.push(field.required(`${p}.server`, ''));
      const path = strOf(src.path);
      if (!path) errs.push(field.required(`${p}.path`, ''));
      else if (!path.startsWith('/')) errs.push(field.invalid(`${p}.path`, path, 'must be an absolute path'));
      break;
    }
  }
  return errs;
}

/**
 * validateVolumeSource: exactly one source. A second one is `Forbidden: may
 * not specify more than 1 volume type` on the path of the one found later in
 * upstream's order (`spec.volumes[0].hostPath` for emptyDir + hostPath); none
 * is `spec.volumes[0]: Required value: must specify a volume type` (v1
 * defaulting turns an empty volume into an emptyDir first, so only internal
 * callers that skip defaulting see it).
 */
export function validateVolumeSource(v: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  let count = 0;
  for (const [json, forbiddenPath] of VOLUME_SOURCES) {
    const src = v[json];
    if (src === undefined || src === null) continue;
    if (count > 0) {
      errs.push(field.forbidden(`${p}.${forbiddenPath}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    errs.push(...validateOneSource(json, objOf(src) ?? {}, `${p}.${json}`));
  }
  if (count === 0) errs.push(field.required(p, 'must specify a volume type'));
  return errs;
}

/**
 * ValidateVolumes: each volume's source, then its name (required, a DNS label,
 * unique). Answers the names containers may mount: the volumes without errors,
 * plus `extraVolumes` (volumes that exist without being listed, such as a
 * StatefulSet's claim templates; a listed volume of the same name is no
 * duplicate, since the claim replaces it when the pod is made).
 */
export function validateVolumes(volumes: unknown, p: string, extraVolumes: readonly string[] = []): { names: Set<string>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const listed = new Set<string>();
  const names = new Set<string>(extraVolumes);
  listOf(volumes).forEach((v, i) => {
    const ip = `${p}[${i}]`;
    const name = strOf(v.name);
    const el = validateVolumeSource(v, ip);
    if (!name) el.push(field.required(`${ip}.name`, ''));
    else el.push(...isDNS1123Label(name).map((m) => field.invalid(`${ip}.name`, name, m)));
    if (listed.has(name)) el.push(field.duplicate(`${ip}.name`, name));
    if (el.length === 0) {
      listed.add(name);
      names.add(name);
    } else errors.push(...el);
  });
  return { names, errors };
}
