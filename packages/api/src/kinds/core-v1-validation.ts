/**
 * core/v1 defaulting and validation of pod specs (pods and every pod template),
 * container resources, ports and volumes, with kube-apiserver 1.33's paths,
 * order and messages (pkg/apis/core/v1/defaults.go, pkg/apis/core/validation,
 * pkg/apis/core/helper, k8s.io/apimachinery/pkg/api/resource).
 *
 * The specs are the decoded JSON objects; Go's "unset" is `undefined`, `null`
 * and, for strings and numbers, `''` and `0`, as a Go zero value is.
 *
 * This module validates containers and pod specs; quantities
 * (core-v1-quantity.ts), resource requirements (core-v1-resources.ts), volumes
 * (core-v1-volumes.ts) and defaulting (core-v1-defaults.ts) live beside it and
 * are re-exported from here.
 */
import {
  field,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  validateAnnotations,
  validateLabels,
  type FieldError,
  type NameValidator,
} from '@kubeling/apimachinery';
import { ephemeralContainersChanges, isMirrorPod } from './core-v1-ephemeral.js';
import { validateResourceRequirements } from './core-v1-resources.js';
import { validateVolumes } from './core-v1-volumes.js';
import { type List, type Obj, isObj, listOf, numOf, objOf, strOf } from './json-fields.js';

export { type ExactQuantity, canonicalQuantity, compareQuantities, parseExactQuantity } from './core-v1-quantity.js';
export {
  isExtendedResourceName,
  isIntegerResourceName,
  isNativeResource,
  isOvercommitAllowed,
  isStandardContainerResourceName,
  isStandardResourceName,
  validateContainerResourceName,
  validateResourceName,
  validateResourceQuantityValue,
  validateResourceRequirements,
} from './core-v1-resources.js';
export { VOLUME_SOURCE_FIELDS, defaultVolume, validateVolumeSource, validateVolumes } from './core-v1-volumes.js';
export { defaultContainer, defaultPodOnlyFields, defaultPodSpec, defaultPullPolicy } from './core-v1-defaults.js';
export { objectFieldDiff, isMirrorPod } from './core-v1-ephemeral.js';

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
  if (s.terminationGracePeriodSeconds === undefined || s.terminationGracePeriodSeconds === null)
    errs.push(field.required(`${path}.terminationGracePeriodSeconds`, ''));
  const { names: volumes, errors } = validateVolumes(s.volumes, `${path}.volumes`, extraVolumes);
  errs.push(...errors);
  const podClaimNames = new Set(
    listOf(s.resourceClaims)
      .map((c) => strOf(c.name))
      .filter(Boolean),
  );

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
      if (c.restartPolicy !== undefined && c.restartPolicy !== null)
        errs.push(field.forbidden(`${ip}.restartPolicy`, 'may not be set for non-init containers'));
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
  if (ads !== undefined && (ads < 1 || ads > 2147483647))
    errs.push(field.invalid(`${path}.activeDeadlineSeconds`, ads, 'must be between 1 and 2147483647, inclusive'));
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
 * ValidatePodEphemeralContainersUpdate for a pod's `ephemeralcontainers`
 * subresource: the new spec is valid as a pod's (its ephemeral containers
 * included), and no ephemeral container the pod had is removed or changed.
 * A static (mirror) pod takes none: that refusal stands alone, as upstream
 * returns it in place of the others.
 */
export function validatePodEphemeralContainersUpdate(newSpec: unknown, oldSpec: unknown, oldAnnotations: Record<string, string> | undefined): FieldError[] {
  const errs = [...validatePodSpecForPod(newSpec, 'spec'), ...ephemeralContainersChanges(newSpec, oldSpec)];
  return isMirrorPod(oldAnnotations) ? [field.forbidden('', 'static pods do not support ephemeral containers')] : errs;
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
  if (listOf(objOf(t.spec)?.ephemeralContainers).length)
    errs.push(field.forbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return errs;
}

// =================================================================== names

/** ValidateServiceName: a Service's name is a DNS-1035 label (`1abc` is refused). */
export const validateServiceName: NameValidator = nameIsDNS1035Label;
