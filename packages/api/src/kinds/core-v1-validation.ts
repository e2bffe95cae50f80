/**
 * core/v1 defaulting and validation of pod specs (pods and every pod template),
 * container resources, ports and volumes, with kube-apiserver 1.33's paths,
 * order and messages (pkg/apis/core/v1/defaults.go, pkg/apis/core/validation,
 * pkg/apis/core/helper, k8s.io/apimachinery/pkg/api/resource).
 *
 * The specs are the decoded JSON objects; Go's "unset" is `undefined`, `null`
 * and, for strings and numbers, `''` and `0`, as a Go zero value is.
 */
import {
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  validateAnnotations,
  validateLabels,
  type FieldError,
  type NameValidator,
} from '@kubeling/apimachinery';

type Obj = Record<string, unknown>;
type List = Obj[];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objOf = (v: unknown): Obj | undefined => (isObj(v) ? v : undefined);
const listOf = (v: unknown): List => (Array.isArray(v) ? (v.filter(isObj) as List) : []);
const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');
const numOf = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
/** Whether a Go field would be unset: absent, null, '' or 0. */
const unset = (v: unknown) => v === undefined || v === null || v === '' || v === 0;
const defaultTo = (o: Obj, k: string, v: unknown) => {
  if (unset(o[k])) o[k] = v;
};

// ============================================================== quantities

/** A parsed resource.Quantity: its value in nano-units (rounded up as upstream does) and its format. */
export interface ExactQuantity {
  negative: boolean;
  /** |value| × 10⁹, rounded away from zero; capped at (2⁶³−1) × 10⁹ unless the value fits an int64 amount (`10E` stays 10¹⁹). */
  nanos: bigint;
  format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
  /** The string upstream keeps and prints back when it was already canonical. */
  cached?: string;
}

const NANO = 1_000_000_000n;
const MAX_NANOS = (2n ** 63n - 1n) * NANO;
const BINARY_EXP: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * resource.ParseQuantity, exactly, its scanner's quirks included (`.`, `1.` and
 * `Mi` parse; an exponent is narrowed to int32); undefined for what upstream
 * refuses (the decoder reports those).
 */
export function parseExactQuantity(q: unknown): ExactQuantity | undefined {
  if (typeof q === 'number') {
    if (!Number.isFinite(q)) return undefined;
    q = String(q);
  }
  if (typeof q !== 'string') return undefined;
  const str = q.trim();
  if (str === '0') return { negative: false, nanos: 0n, format: 'DecimalSI', cached: '0' };
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)$/.exec(str);
  if (!m || str === '') return undefined;
  const [, sign, rawNum = '', rawDenom, suffix = ''] = m;
  let base: 2 | 10;
  let exp: number;
  let format: ExactQuantity['format'];
  if (suffix in DECIMAL_EXP) [base, exp, format] = [10, DECIMAL_EXP[suffix]!, 'DecimalSI'];
  else if (suffix in BINARY_EXP) [base, exp, format] = [2, BINARY_EXP[suffix]!, 'BinarySI'];
  else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    const n = BigInt(suffix.slice(1));
    if (n < -(2n ** 63n) || n > 2n ** 63n - 1n) return undefined;
    [base, exp, format] = [10, Number(BigInt.asIntN(32, n)), 'DecimalExponent'];
  } else return undefined;
  const num = rawNum.replace(/^0+/, '') || '0';
  const denom = rawDenom ?? '';
  const negative = sign === '-';

  // ParseQuantity's fast path (int64 amounts) neither rounds nor caps, and keeps
  // the input as the printed form when it is canonical already.
  let cached: string | undefined;
  let fastPath = false;
  if (base === 10) {
    const scale = exp - denom.length;
    const shifted = num + denom;
    fastPath = 18 - shifted.length >= 0 && scale >= -9;
    if (fastPath && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') cached = str;
  } else if (denom === '' && 15 - num.length - Math.trunc((exp * 3) / 10) - 1 >= 0) {
    const value = BigInt(num);
    fastPath = value * 2n ** BigInt(exp) <= 2n ** 63n - 1n;
    if (fastPath && exp % 10 === 0 && (value & 7n) !== 0n) cached = str;
  }
  // The slow path parses the number with inf.Dec, which wants a digit.
  if (!fastPath && !/[0-9]/.test(rawNum + denom)) return undefined;

  let unscaled = BigInt(num + denom);
  let scale10 = -denom.length;
  if (base === 10) scale10 += exp;
  else unscaled *= 2n ** BigInt(exp);
  const digits = unscaled.toString().length;
  let nanos: bigint;
  if (unscaled === 0n) nanos = 0n;
  // Far beyond int64 (capped, or an absurd int64 amount such as 1e2000000000: kept huge, not computed).
  else if (scale10 + 9 + digits > 40) nanos = fastPath ? 10n ** 60n : MAX_NANOS;
  else if (scale10 >= -9) nanos = unscaled * 10n ** BigInt(scale10 + 9);
  // Far below a nano: rounded up to one.
  else if (-9 - scale10 > digits) nanos = 1n;
  else {
    const div = 10n ** BigInt(-9 - scale10);
    nanos = unscaled / div + (unscaled % div === 0n ? 0n : 1n);
  }
  if (!fastPath && nanos > MAX_NANOS) nanos = MAX_NANOS;
  return { negative: negative && nanos !== 0n, nanos, format, ...(cached !== undefined ? { cached } : {}) };
}

/** Quantity.String(): the canonical form (`1000m` → `1`, `1024Mi` → `1Gi`, `0.5` → `500m`, `1000` → `1k`). */
export function canonicalQuantity(q: unknown): string {
  const p = typeof q === 'object' && q !== null && 'nanos' in q ? (q as ExactQuantity) : parseExactQuantity(q);
  if (!p) return String(q);
  if (p.cached !== undefined) return p.cached;
  if (p.nanos === 0n) return '0';
  const sign = p.negative ? '-' : '';
  let format = p.format;
  if (format === 'BinarySI' && (p.nanos < 1024n * NANO || p.nanos % NANO !== 0n)) format = 'DecimalSI';
  if (format === 'BinarySI') {
    let v = p.nanos / NANO;
    let e = 0;
    while (v >= 1024n && v % 1024n === 0n) {
      v /= 1024n;
      e++;
    }
    return `${sign}${v}${BINARY_SUFFIX[e]}`;
  }
  let v = p.nanos;
  let e = -9;
  while (v >= 10n && v % 10n === 0n) {
    v /= 10n;
    e++;
  }
  const e3 = Math.floor(e / 3) * 3;
  v *= 10n ** BigInt(e - e3);
  const suffix = format === 'DecimalSI' ? (DECIMAL_SUFFIX[e3] ?? '') : e3 === 0 ? '' : `e${e3}`;
  return `${sign}${v}${suffix}`;
}

const signedNanos = (p: ExactQuantity) => (p.negative ? -p.nanos : p.nanos);

/** Quantity.Cmp: -1, 0 or 1; undefined when either does not parse. */
export function compareQuantities(a: unknown, b: unknown): number | undefined {
  const x = parseExactQuantity(a);
  const y = parseExactQuantity(b);
  if (!x || !y) return undefined;
  const d = signedNanos(x) - signedNanos(y);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

// ========================================================== resource names

const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const INTEGER_RESOURCES = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);

const isHugePageResourceName = (n: string) => n.startsWith('hugepages-');
const isQuotaHugePageResourceName = (n: string) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
/** helper.IsStandardResourceName */
export const isStandardResourceName = (n: string): boolean => STANDARD_RESOURCES.has(n) || isQuotaHugePageResourceName(n);
/** helper.IsStandardContainerResourceName */
export const isStandardContainerResourceName = (n: string): boolean => STANDARD_CONTAINER_RESOURCES.has(n) || isHugePageResourceName(n);
/** helper.IsNativeResource: no domain, or a `kubernetes.io/` one. */
export const isNativeResource = (n: string): boolean => !n.includes('/') || n.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a domain-prefixed, non-native name that is a qualified name behind `requests.`. */
export const isExtendedResourceName = (n: string): boolean => !isNativeResource(n) && !n.startsWith('requests.') && isQualifiedName(`requests.${n}`).length === 0;
/** helper.IsOvercommitAllowed: requests may be below limits (native resources but hugepages). */
export const isOvercommitAllowed = (n: string): boolean => isNativeResource(n) && !isHugePageResourceName(n);
/** helper.IsIntegerResourceName */
export const isIntegerResourceName = (n: string): boolean => INTEGER_RESOURCES.has(n) || isExtendedResourceName(n);

/** validateResourceName: a qualified name, and a standard one when it has no domain. */
export function validateResourceName(name: string, p: string): FieldError[] {
  const errs = isQualifiedName(name).map((m) => field.invalid(p, name, m));
  if (errs.length) return errs;
  if (!name.includes('/') && !isStandardResourceName(name)) errs.push(field.invalid(p, name, 'must be a standard resource type or fully qualified'));
  return errs;
}

/** validateContainerResourceName */
export function validateContainerResourceName(name: string, p: string): FieldError[] {
  const errs = validateResourceName(name, p);
  if (!name.includes('/')) {
    if (!isStandardContainerResourceName(name)) errs.push(field.invalid(p, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    errs.push(field.invalid(p, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** ValidateResourceQuantityValue: not negative (`"-1"`), and whole for integer resources. */
export function validateResourceQuantityValue(resource: string, value: unknown, p: string): FieldError[] {
  const q = parseExactQuantity(value);
  if (!q) return [];
  const errs: FieldError[] = [];
  if (q.negative) errs.push(field.invalid(p, canonicalQuantity(q), 'must be greater than or equal to 0'));
  if (isIntegerResourceName(resource) && q.nanos % NANO !== 0n) {
    // The value is a Quantity, which ErrorBody prints through its String(), unquoted.
    errs.push(field.invalid(p, new field.GoValue(canonicalQuantity(q)), 'must be an integer'));
  }
  return errs;
}

/** helper.IsHugePageResourceValueDivisible */
function hugePageValueDivisible(name: string, q: ExactQuantity): boolean {
  const page = parseExactQuantity(name.slice('hugepages-'.length));
  if (!page || page.negative || page.nanos === 0n || page.nanos % NANO !== 0n) return false;
  const value = (q.negative ? -1n : 1n) * ((q.nanos + NANO - 1n) / NANO);
  return value % (page.nanos / NANO) === 0n;
}

/**
 * ValidateContainerResourceRequirements: resource names, quantities (path with
 * the key: `...resources.requests[cpu]`), requests not above limits (path
 * without it: `...resources.requests: Invalid value: "2": must be less than or
 * equal to cpu limit of 1`), requests equal to limits for resources that may
 * not be overcommitted, hugepages, and claims that name the pod's resourceClaims.
 */
export function validateResourceRequirements(resources: unknown, p: string, podClaimNames: ReadonlySet<string> = new Set()): FieldError[] {
  const r = objOf(resources) ?? {};
  const limits = objOf(r.limits) ?? {};
  const requests = objOf(r.requests) ?? {};
  const limPath = `${p}.limits`;
  const reqPath = `${p}.requests`;
  const errs: FieldError[] = [];
  let limCpuOrMemory = false;
  let reqCpuOrMemory = false;
  let limHugePages = false;
  let reqHugePages = false;
  for (const [name, value] of Object.entries(limits)) {
    const fp = `${limPath}[${name}]`;
    errs.push(...validateContainerResourceName(name, fp));
    errs.push(...validateResourceQuantityValue(name, value, fp));
    const q = parseExactQuantity(value);
    if (isHugePageResourceName(name)) {
      limHugePages = true;
      if (q && !hugePageValueDivisible(name, q)) errs.push(field.invalid(fp, canonicalQuantity(q), `${canonicalQuantity(q)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') limCpuOrMemory = true;
  }
  for (const [name, value] of Object.entries(requests)) {
    const fp = `${reqPath}[${name}]`;
    errs.push(...validateContainerResourceName(name, fp));
    errs.push(...validateResourceQuantityValue(name, value, fp));
    const q = parseExactQuantity(value);
    if (Object.prototype.hasOwnProperty.call(limits, name)) {
      const cmp = compareQuantities(value, limits[name]);
      const limit = canonicalQuantity(limits[name]);
      if (cmp !== undefined && cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(field.invalid(reqPath, canonicalQuantity(value), `must be equal to ${name} limit of ${limit}`));
      } else if (cmp !== undefined && cmp > 0) {
        errs.push(field.invalid(reqPath, canonicalQuantity(value), `must be less than or equal to ${name} limit of ${limit}`));
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(field.required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePageResourceName(name)) {
      reqHugePages = true;
      if (q && !hugePageValueDivisible(name, q)) errs.push(field.invalid(fp, canonicalQuantity(q), `${canonicalQuantity(q)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') reqCpuOrMemory = true;
  }
  if (!limCpuOrMemory && !reqCpuOrMemory && (reqHugePages || limHugePages)) errs.push(field.forbidden(p, 'HugePages require cpu or memory'));
  errs.push(...validateResourceClaimNames(r.claims, podClaimNames, `${p}.claims`));
  return errs;
}

function validateResourceClaimNames(claims: unknown, podClaimNames: ReadonlySet<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  listOf(claims).forEach((claim, i) => {
    const ip = `${p}[${i}]`;
    const name = strOf(claim.name);
    const request = strOf(claim.request);
    if (!name) {
      errs.push(field.required(ip, ''));
      return;
    }
    if (names.has(name)) errs.push(field.duplicate(ip, name));
    else {
      let key = name;
      if (request) {
        errs.push(...isDNS1123Label(request).map((m) => field.invalid(`${ip}.request`, request, m)));
        key += `/${request}`;
      }
      if (names.has(key)) errs.push(field.duplicate(ip, key));
      else if (!request) for (const k of names) if (k.includes('/') && k.slice(0, k.indexOf('/')) === name) errs.push(field.duplicate(ip, name));
      names.add(key);
    }
    if (!podClaimNames.has(name)) {
      const detail = podClaimNames.size ? `: ${[...podClaimNames].sort().join(', ')}` : ' which is empty';
      errs.push({ ...field.notFound(ip, name), detail: `must be one of the names in pod.spec.resourceClaims${detail}` });
    }
  });
  return errs;
}

// ================================================================= volumes

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
function validateOneSource(kind: string, src: Obj, p: string): FieldError[] {
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

// ============================================================== defaulting

/** `nginx` / `nginx:latest` → Always; any other tag or a digest → IfNotPresent. */
export function defaultPullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  if (colon < 0) return 'Always';
  return image.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHTTPGet(h: Obj | undefined): void {
  if (!h) return;
  defaultTo(h, 'path', '/');
  defaultTo(h, 'scheme', 'HTTP');
}

function defaultProbe(p: Obj | undefined): void {
  if (!p) return;
  defaultTo(p, 'timeoutSeconds', 1);
  defaultTo(p, 'periodSeconds', 10);
  defaultTo(p, 'successThreshold', 1);
  defaultTo(p, 'failureThreshold', 3);
  defaultHTTPGet(objOf(p.httpGet));
}

/** SetDefaults_Container and the defaults of what a container holds (ports, env, probes, hooks). */
export function defaultContainer(c: Obj): void {
  defaultTo(c, 'terminationMessagePath', '/dev/termination-log');
  defaultTo(c, 'terminationMessagePolicy', 'File');
  defaultTo(c, 'imagePullPolicy', defaultPullPolicy(strOf(c.image)));
  c.resources ??= {};
  for (const port of listOf(c.ports)) defaultTo(port, 'protocol', 'TCP');
  for (const e of listOf(c.env)) {
    const fieldRef = objOf(objOf(e.valueFrom)?.fieldRef);
    if (fieldRef) defaultTo(fieldRef, 'apiVersion', 'v1');
  }
  defaultProbe(objOf(c.livenessProbe));
  defaultProbe(objOf(c.readinessProbe));
  defaultProbe(objOf(c.startupProbe));
  const lifecycle = objOf(c.lifecycle);
  for (const hook of ['postStart', 'preStop']) defaultHTTPGet(objOf(objOf(lifecycle?.[hook])?.httpGet));
}

/**
 * SetDefaults_PodSpec and the defaults below it, for pods and every pod
 * template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
 * PodTemplate): restart and DNS policies, grace period, scheduler, service
 * links, container defaults (regular, init and ephemeral), a volume without a
 * source becoming an emptyDir (SetDefaults_Volume), and volume file modes.
 */
export function defaultPodSpec(spec: Obj | undefined): void {
  if (!spec) return;
  defaultTo(spec, 'restartPolicy', 'Always');
  defaultTo(spec, 'dnsPolicy', 'ClusterFirst');
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) spec.terminationGracePeriodSeconds = 30;
  spec.securityContext ??= {};
  defaultTo(spec, 'schedulerName', 'default-scheduler');
  spec.enableServiceLinks ??= true;
  for (const c of listOf(spec.containers)) defaultContainer(c);
  for (const c of listOf(spec.initContainers)) defaultContainer(c);
  for (const c of listOf(spec.ephemeralContainers)) defaultContainer(c);
  for (const v of listOf(spec.volumes)) {
    defaultVolume(v);
    for (const kind of ['configMap', 'secret', 'projected', 'downwardAPI']) {
      const src = objOf(v[kind]);
      if (src && (src.defaultMode === undefined || src.defaultMode === null)) src.defaultMode = 420;
    }
    const hostPath = objOf(v.hostPath);
    if (hostPath) hostPath.type ??= '';
  }
}

/**
 * The pod-only part of SetDefaults_Pod (templates do not get it): a container's
 * requests default to its limits, and with hostNetwork a port's hostPort
 * defaults to its containerPort.
 */
export function defaultPodOnlyFields(spec: Obj | undefined): void {
  if (!spec) return;
  for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
    const res = objOf(c.resources);
    const limits = objOf(res?.limits);
    if (!res || !limits) continue;
    const requests = (res.requests = objOf(res.requests) ?? {});
    for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
  }
  if (spec.hostNetwork === true) {
    for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
      for (const port of listOf(c.ports)) if (unset(port.hostPort)) port.hostPort = port.containerPort;
    }
  }
}

// ============================================================== containers

export interface PodSpecValidationOptions {
  /** The spec is a Pod's (not a template's): with hostNetwork, every hostPort must equal its containerPort. */
  resourceIsPod?: boolean;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

/** validateContainerPorts: name (IANA_SVC_NAME, unique), containerPort, hostPort, protocol, in upstream's order. */
export function validateContainerPorts(ports: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  listOf(ports).forEach((port, i) => {
    const ip = `${p}[${i}]`;
    const name = strOf(port.name);
    if (name) {
      const msgs = isValidPortName(name);
      if (msgs.length) for (const m of msgs) errs.push(field.invalid(`${ip}.name`, name, m));
      else if (names.has(name)) errs.push(field.duplicate(`${ip}.name`, name));
      else names.add(name);
    }
    const cp = numOf(port.containerPort) ?? 0;
    if (cp === 0) errs.push(field.required(`${ip}.containerPort`, ''));
    else for (const m of isValidPortNum(cp)) errs.push(field.invalid(`${ip}.containerPort`, cp, m));
    const hp = numOf(port.hostPort) ?? 0;
    if (hp !== 0) for (const m of isValidPortNum(hp)) errs.push(field.invalid(`${ip}.hostPort`, hp, m));
    const protocol = strOf(port.protocol);
    if (!protocol) errs.push(field.required(`${ip}.protocol`, ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(field.notSupported(`${ip}.protocol`, protocol, PROTOCOLS));
  });
  return errs;
}

/** checkHostPortConflicts: one `<protocol>/<hostIP>/<hostPort>` per list. */
function checkHostPortConflicts(containers: List, p: string, seen = new Set<string>()): FieldError[] {
  const errs: FieldError[] = [];
  containers.forEach((c, ci) => {
    listOf(c.ports).forEach((port, pi) => {
      const hp = numOf(port.hostPort) ?? 0;
      if (hp === 0) return;
      const key = `${strOf(port.protocol)}/${strOf(port.hostIP)}/${hp}`;
      if (seen.has(key)) errs.push(field.duplicate(`${p}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return errs;
}

const RELAXED_ENV_NAME_ERROR = "a valid environment variable name must consist only of printable ASCII characters other than '='";

/**
 * ValidateEnv's names, as 1.33 checks them (RelaxedEnvironmentVariableValidation
 * is on by default): required, printable ASCII without `=`.
 */
function validateEnv(env: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  listOf(env).forEach((e, i) => {
    const np = `${p}[${i}].name`;
    const name = strOf(e.name);
    if (!name) errs.push(field.required(np, ''));
    else if (/[^\x20-\x7e]|=/.test(name)) errs.push(field.invalid(np, name, RELAXED_ENV_NAME_ERROR));
  });
  return errs;
}

function validateVolumeMounts(mounts: unknown, volumes: ReadonlySet<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const mountPoints = new Set<string>();
  listOf(mounts).forEach((m, i) => {
    const ip = `${p}[${i}]`;
    const name = strOf(m.name);
    const mountPath = strOf(m.mountPath);
    if (!name) errs.push(field.required(`${ip}.name`, ''));
    if (!volumes.has(name)) errs.push(field.notFound(`${ip}.name`, name));
    if (!mountPath) errs.push(field.required(`${ip}.mountPath`, ''));
    if (mountPoints.has(mountPath)) errs.push(field.invalid(`${ip}.mountPath`, mountPath, 'must be unique'));
    mountPoints.add(mountPath);
  });
  return errs;
}

/** validateContainerCommon: name, image, terminationMessagePolicy, ports, env, volumeMounts, pull policy, resources. */
function validateContainerCommon(c: Obj, volumes: ReadonlySet<string>, podClaimNames: ReadonlySet<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = strOf(c.name);
  if (!name) errs.push(field.required(`${p}.name`, ''));
  else errs.push(...isDNS1123Label(name).map((m) => field.invalid(`${p}.name`, name, m)));
  if (!strOf(c.image)) errs.push(field.required(`${p}.image`, ''));
  const tmp = strOf(c.terminationMessagePolicy);
  if (!tmp) errs.push(field.required(`${p}.terminationMessagePolicy`, ''));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp)) errs.push(field.notSupported(`${p}.terminationMessagePolicy`, tmp, TERMINATION_MESSAGE_POLICIES));
  errs.push(...validateContainerPorts(c.ports, `${p}.ports`));
  errs.push(...validateEnv(c.env, `${p}.env`));
  errs.push(...validateVolumeMounts(c.volumeMounts, volumes, `${p}.volumeMounts`));
  const pull = strOf(c.imagePullPolicy);
  if (!pull) errs.push(field.required(`${p}.imagePullPolicy`, ''));
  else if (!PULL_POLICIES.includes(pull)) errs.push(field.notSupported(`${p}.imagePullPolicy`, pull, PULL_POLICIES));
  errs.push(...validateResourceRequirements(c.resources, `${p}.resources`, podClaimNames));
  return errs;
}

const isZero = (v: unknown): boolean =>
  v === undefined || v === null || v === '' || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.values(v).every(isZero));

/** EphemeralContainerCommon fields an ephemeral container may not set, in struct order. */
const EPHEMERAL_FORBIDDEN = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'];

function validateEphemeralContainers(spec: Obj, volumes: ReadonlySet<string>, podClaimNames: ReadonlySet<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set<string>();
  for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) others.add(strOf(c.name));
  const all = new Set(others);
  listOf(spec.ephemeralContainers).forEach((c, i) => {
    const ip = `${p}[${i}]`;
    errs.push(...validateContainerCommon(c, volumes, podClaimNames, ip));
    // Ephemeral containers get the pod-only checks in templates too, as upstream does.
    errs.push(...validateContainerOnlyForPod(c, ip));
    const name = strOf(c.name);
    if (all.has(name)) errs.push(field.duplicate(`${ip}.name`, name));
    else all.add(name);
    const target = strOf(c.targetContainerName);
    if (target && !others.has(target)) errs.push(field.notFound(`${ip}.targetContainerName`, target));
    for (const k of EPHEMERAL_FORBIDDEN) if (!isZero(c[k])) errs.push(field.forbidden(`${ip}.${k}`, 'cannot be set for an Ephemeral Container'));
    listOf(c.volumeMounts).forEach((m, j) => {
      if (strOf(m.subPath)) errs.push(field.forbidden(`${ip}.volumeMounts[${j}].subPath`, 'cannot be set for an Ephemeral Container'));
      if (strOf(m.subPathExpr)) errs.push(field.forbidden(`${ip}.volumeMounts[${j}].subPathExpr`, 'cannot be set for an Ephemeral Container'));
    });
  });
  return errs;
}

/** validateContainerOnlyForPod: a pod's image may not have leading or trailing whitespace. */
function validateContainerOnlyForPod(c: Obj, p: string): FieldError[] {
  const image = strOf(c.image);
  return image.length !== image.trim().length ? [field.invalid(`${p}.image`, image, 'must not have leading or trailing whitespace')] : [];
}

// ================================================================ pod spec

/**
 * ValidatePodSpec for pods (`spec`) and templates (`spec.template.spec`), in
 * upstream's order: volumes, containers, init containers, ephemeral
 * containers, hostNetwork ports, restart and DNS policies, node selector,
 * service account, node name, active deadline, hostname, subdomain, priority
 * class and preemption policy. `extraVolumes` are volume names containers may
 * mount without the spec listing them (see validateVolumes).
 */
export function validatePodSpec(spec: unknown, path: string, extraVolumes: readonly string[] = [], opts: PodSpecValidationOptions = {}): FieldError[] {
  const s = objOf(spec);
  if (!s) return [field.required(path, '')];
  const errs: FieldError[] = [];
  if (s.terminationGracePeriodSeconds === undefined || s.terminationGracePeriodSeconds === null) errs.push(field.required(`${path}.terminationGracePeriodSeconds`, ''));
  const { names: volumes, errors } = validateVolumes(s.volumes, `${path}.volumes`, extraVolumes);
  errs.push(...errors);
  const podClaimNames = new Set(listOf(s.resourceClaims).map((c) => strOf(c.name)).filter(Boolean));

  // Regular containers.
  const containers = listOf(s.containers);
  const initContainers = listOf(s.initContainers);
  if (containers.length === 0) errs.push(field.required(`${path}.containers`, ''));
  else {
    const names = new Set<string>();
    containers.forEach((c, i) => {
      const ip = `${path}.containers[${i}]`;
      errs.push(...validateContainerCommon(c, volumes, podClaimNames, ip));
      const name = strOf(c.name);
      if (names.has(name)) errs.push(field.duplicate(`${ip}.name`, name));
      else names.add(name);
      if (c.restartPolicy !== undefined && c.restartPolicy !== null) errs.push(field.forbidden(`${ip}.restartPolicy`, 'may not be set for non-init containers'));
    });
    errs.push(...checkHostPortConflicts(containers, `${path}.containers`));
  }

  // Init containers.
  const all = new Set(containers.map((c) => strOf(c.name)));
  initContainers.forEach((c, i) => {
    const ip = `${path}.initContainers[${i}]`;
    errs.push(...validateContainerCommon(c, volumes, podClaimNames, ip));
    const rp = c.restartPolicy;
    if (rp !== undefined && rp !== null && rp !== 'Always') errs.push(field.notSupported(`${ip}.restartPolicy`, rp, ['Always']));
    const name = strOf(c.name);
    if (all.has(name)) errs.push(field.duplicate(`${ip}.name`, name));
    else if (name) all.add(name);
    errs.push(...checkHostPortConflicts([c], `${path}.initContainers`));
    if (rp !== 'Always') {
      for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (c[k] !== undefined && c[k] !== null) errs.push(field.forbidden(`${ip}.${k}`, 'may not be set for init containers without restartPolicy=Always'));
      }
    }
  });

  errs.push(...validateEphemeralContainers(s, volumes, podClaimNames, `${path}.ephemeralContainers`));

  // validatePodHostNetworkDeps
  if (s.hostNetwork === true) {
    containers.forEach((c, i) => {
      listOf(c.ports).forEach((port, j) => {
        const hp = numOf(port.hostPort) ?? 0;
        const cp = numOf(port.containerPort) ?? 0;
        if ((opts.resourceIsPod || hp !== 0) && hp !== cp) {
          errs.push(field.invalid(`${path}.containers[${i}].ports[${j}].hostPort`, hp, 'must match `containerPort` when `hostNetwork` is true'));
        }
      });
    });
  }

  const rp = strOf(s.restartPolicy);
  if (!rp) errs.push(field.required(`${path}.restartPolicy`, ''));
  else if (!RESTART_POLICIES.includes(rp)) errs.push(field.notSupported(`${path}.restartPolicy`, rp, RESTART_POLICIES));
  const dp = strOf(s.dnsPolicy);
  if (!dp) errs.push(field.required(`${path}.dnsPolicy`, ''));
  else if (!DNS_POLICIES.includes(dp)) errs.push(field.notSupported(`${path}.dnsPolicy`, dp, DNS_POLICIES));
  errs.push(...validateLabels(objOf(s.nodeSelector) as Record<string, string> | undefined, `${path}.nodeSelector`));
  const sa = strOf(s.serviceAccountName);
  if (sa) errs.push(...isDNS1123Subdomain(sa).map((m) => field.invalid(`${path}.serviceAccountName`, sa, m)));
  const nodeName = strOf(s.nodeName);
  if (nodeName) errs.push(...isDNS1123Subdomain(nodeName).map((m) => field.invalid(`${path}.nodeName`, nodeName, m)));
  const ads = numOf(s.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > 2147483647)) errs.push(field.invalid(`${path}.activeDeadlineSeconds`, ads, 'must be between 1 and 2147483647, inclusive'));
  for (const k of ['hostname', 'subdomain']) {
    const v = strOf(s[k]);
    if (v) errs.push(...isDNS1123Label(v).map((m) => field.invalid(`${path}.${k}`, v, m)));
  }
  const pc = strOf(s.priorityClassName);
  if (pc) errs.push(...isDNS1123Subdomain(pc).map((m) => field.invalid(`${path}.priorityClassName`, pc, m)));
  if (s.preemptionPolicy !== undefined && s.preemptionPolicy !== null) {
    const pp = strOf(s.preemptionPolicy);
    if (!pp) errs.push(field.required(`${path}.preemptionPolicy`, ''));
    else if (!PREEMPTION_POLICIES.includes(pp)) errs.push(field.notSupported(`${path}.preemptionPolicy`, pp, PREEMPTION_POLICIES));
  }
  return errs;
}

/**
 * A Pod's spec as validatePodMetadataAndSpec checks it: ValidatePodSpec with
 * the pod's rules for hostNetwork ports, then no image of a container or init
 * container with leading or trailing whitespace.
 */
export function validatePodSpecForPod(spec: unknown, path = 'spec'): FieldError[] {
  const errs = validatePodSpec(spec, path, [], { resourceIsPod: true });
  const s = objOf(spec) ?? {};
  for (const list of ['containers', 'initContainers']) listOf(s[list]).forEach((c, i) => errs.push(...validateContainerOnlyForPod(c, `${path}.${list}[${i}]`)));
  return errs;
}

/**
 * ValidatePodTemplateSpec: the template's labels (`<path>.labels`, as upstream
 * names them) and annotations, its pod spec, and no ephemeral containers.
 */
export function validatePodTemplateSpec(template: unknown, path: string, extraVolumes: readonly string[] = []): FieldError[] {
  const t = objOf(template) ?? {};
  const meta = objOf(t.metadata) ?? {};
  const errs = [
    ...validateLabels(objOf(meta.labels) as Record<string, string> | undefined, `${path}.labels`),
    ...validateAnnotations(objOf(meta.annotations) as Record<string, string> | undefined, `${path}.annotations`),
    ...validatePodSpec(t.spec, `${path}.spec`, extraVolumes),
  ];
  if (listOf(objOf(t.spec)?.ephemeralContainers).length) errs.push(field.forbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return errs;
}

// =================================================================== names

/** ValidateServiceName: a Service's name is a DNS-1035 label (`1abc` is refused). */
export const validateServiceName: NameValidator = nameIsDNS1035Label;
