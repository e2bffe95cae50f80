/**
 * The baseline Pod Security Standard (k8s.io/pod-security-admission
 * policy/check_*.go of level Baseline): each check with its versions, and the
 * reasons and details upstream prints, byte for byte.
 *
 * appArmorProfile, capabilities_baseline, hostNamespaces, hostPathVolumes,
 * hostPorts, privileged, procMount, seLinuxOptions (1.0, 1.31),
 * seccompProfile_baseline (annotations before 1.19, fields from 1.19),
 * sysctls (1.0, 1.27, 1.29, 1.32), windowsHostProcess.
 *
 * Not modelled: the user-namespace relaxations behind the alpha
 * UserNamespacesPodSecurityStandards gate (off by default in 1.32).
 */
import { field } from '@kubeling/apimachinery';
import {
  ALLOWED,
  type Check,
  type CheckResult,
  type PodMeta,
  type PodSpec,
  type SELinuxOptions,
  containersOf,
  containersPhrase,
  forbiddenResult,
  joinQuote,
  nameOf,
  pluralize,
  sortedSet,
} from './pod.js';

const goQuote = field.goQuote;

/** AppArmor: no `Unconfined` profile type, and the deprecated annotations only `runtime/default`, `localhost/*` or empty. */
function appArmorProfile(meta: PodMeta, spec: PodSpec): CheckResult {
  const badSetters: string[] = [];
  const badValues = new Set<string>();
  const allowedType = (t: string | null | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
  const podProfile = spec.securityContext?.appArmorProfile;
  if (podProfile && !allowedType(podProfile.type)) {
    badSetters.push('pod');
    badValues.add(podProfile.type ?? '');
  }
  const badContainers: string[] = [];
  for (const c of containersOf(spec)) {
    const p = c.securityContext?.appArmorProfile;
    if (p && !allowedType(p.type)) {
      badContainers.push(nameOf(c));
      badValues.add(p.type ?? '');
    }
  }
  if (badContainers.length) badSetters.push(containersPhrase(badContainers));
  const forbiddenAnnotations: string[] = [];
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    const allowed = v === '' || v === 'runtime/default' || v.startsWith('localhost/');
    if (k.startsWith('container.apparmor.security.beta.kubernetes.io/') && !allowed) forbiddenAnnotations.push(`${k}=${goQuote(v)}`);
  }
  const badValueList = sortedSet(badValues);
  if (forbiddenAnnotations.length) {
    badValueList.push(...sortedSet(forbiddenAnnotations));
    badSetters.push(pluralize('annotation', 'annotations', forbiddenAnnotations.length));
  }
  if (!badSetters.length) return ALLOWED;
  return forbiddenResult(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', badValueList.length),
    `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(badValueList)}`,
  );
}

const CAPABILITIES_ALLOWED_1_0 = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** Capabilities may be added only from the container runtime's default set. */
function capabilitiesBaseline(_meta: PodMeta, spec: PodSpec): CheckResult {
  const badContainers: string[] = [];
  const nonDefault: string[] = [];
  for (const c of containersOf(spec)) {
    const caps = c.securityContext?.capabilities;
    if (!caps) continue;
    let valid = true;
    for (const cap of caps.add ?? []) {
      if (CAPABILITIES_ALLOWED_1_0.has(cap)) continue;
      valid = false;
      nonDefault.push(cap);
    }
    if (!valid) badContainers.push(nameOf(c));
  }
  if (!badContainers.length) return ALLOWED;
  return forbiddenResult(
    'non-default capabilities',
    `${containersPhrase(badContainers)} must not include ${joinQuote(sortedSet(nonDefault))} in securityContext.capabilities.add`,
  );
}

function hostNamespaces(_meta: PodMeta, spec: PodSpec): CheckResult {
  const used: string[] = [];
  if (spec.hostNetwork) used.push('hostNetwork=true');
  if (spec.hostPID) used.push('hostPID=true');
  if (spec.hostIPC) used.push('hostIPC=true');
  return used.length ? forbiddenResult('host namespaces', used.join(', ')) : ALLOWED;
}

function hostPathVolumes(_meta: PodMeta, spec: PodSpec): CheckResult {
  const names = (spec.volumes ?? []).filter((v) => v.hostPath != null).map(nameOf);
  return names.length ? forbiddenResult('hostPath volumes', `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`) : ALLOWED;
}

function hostPorts(_meta: PodMeta, spec: PodSpec): CheckResult {
  const badContainers: string[] = [];
  const ports: string[] = [];
  for (const c of containersOf(spec)) {
    let valid = true;
    for (const p of c.ports ?? []) {
      if (!p?.hostPort) continue;
      valid = false;
      ports.push(String(p.hostPort));
    }
    if (!valid) badContainers.push(nameOf(c));
  }
  if (!badContainers.length) return ALLOWED;
  const list = sortedSet(ports);
  return forbiddenResult(
    'hostPort',
    `${containersPhrase(badContainers)} ${pluralize('uses', 'use', badContainers.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`,
  );
}

function privileged(_meta: PodMeta, spec: PodSpec): CheckResult {
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.privileged === true)
    .map(nameOf);
  return bad.length ? forbiddenResult('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED;
}

/** The default /proc masks must stay: procMount unset or `Default`. */
function procMount(_meta: PodMeta, spec: PodSpec): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containersOf(spec)) {
    const pm = c.securityContext?.procMount;
    if (pm == null || pm === 'Default') continue;
    bad.push(nameOf(c));
    types.push(pm);
  }
  if (!bad.length) return ALLOWED;
  return forbiddenResult('procMount', `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`);
}

const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

/** SELinux: a type from the allowed set; user and role never set. */
const seLinuxOptions =
  (allowedTypes: ReadonlySet<string>) =>
  (_meta: PodMeta, spec: PodSpec): CheckResult => {
    const badSetters: string[] = [];
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (o: SELinuxOptions): boolean => {
      let ok = true;
      if (!allowedTypes.has(o.type ?? '')) {
        ok = false;
        badTypes.push(o.type ?? '');
      }
      if (o.user) {
        ok = false;
        setUser = true;
      }
      if (o.role) {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOpts = spec.securityContext?.seLinuxOptions;
    if (podOpts && !valid(podOpts)) badSetters.push('pod');
    const badContainers: string[] = [];
    for (const c of containersOf(spec)) {
      const o = c.securityContext?.seLinuxOptions;
      if (o && !valid(o)) badContainers.push(nameOf(c));
    }
    if (badContainers.length) badSetters.push(containersPhrase(badContainers));
    if (!badSetters.length) return ALLOWED;
    const badData: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length) badData.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) badData.push('user may not be set');
    if (setRole) badData.push('role may not be set');
    return forbiddenResult('seLinuxOptions', `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${badData.join('; ')}`);
  };

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

export const validSeccomp = (t: string | null | undefined): boolean => t === 'Localhost' || t === 'RuntimeDefault';

const validSeccompAnnotation = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

/** Before 1.19 seccomp was chosen by annotations. */
function seccompProfileBaseline1_0(meta: PodMeta, spec: PodSpec): CheckResult {
  const annotations = meta.annotations ?? {};
  const forbidden: string[] = [];
  const podValue = annotations[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !validSeccompAnnotation(podValue)) forbidden.push(`${SECCOMP_POD_ANNOTATION}=${goQuote(podValue)}`);
  for (const c of containersOf(spec)) {
    const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c);
    const v = annotations[key];
    if (v !== undefined && !validSeccompAnnotation(v)) forbidden.push(`${key}=${goQuote(v)}`);
  }
  const list = sortedSet(forbidden);
  if (!list.length) return ALLOWED;
  return forbiddenResult('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}`);
}

/** The pod's and containers' explicit seccomp types that are neither RuntimeDefault nor Localhost. */
export function explicitSeccompViolations(spec: PodSpec): { badSetters: string[]; badValues: string[]; podSet: boolean; implicit: string[] } {
  const badSetters: string[] = [];
  const badValues: string[] = [];
  let podSet = false;
  const podProfile = spec.securityContext?.seccompProfile;
  if (podProfile) {
    if (!validSeccomp(podProfile.type)) {
      badSetters.push('pod');
      badValues.push(podProfile.type ?? '');
    } else podSet = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containersOf(spec)) {
    const p = c.securityContext?.seccompProfile;
    if (p) {
      if (!validSeccomp(p.type)) {
        explicit.push(nameOf(c));
        badValues.push(p.type ?? '');
      }
    } else if (!podSet) implicit.push(nameOf(c));
  }
  if (explicit.length) badSetters.push(containersPhrase(explicit));
  return { badSetters, badValues: sortedSet(badValues), podSet, implicit };
}

/** From 1.19: seccomp, when set, is RuntimeDefault or Localhost. */
function seccompProfileBaseline1_19(_meta: PodMeta, spec: PodSpec): CheckResult {
  const { badSetters, badValues } = explicitSeccompViolations(spec);
  if (!badSetters.length) return ALLOWED;
  return forbiddenResult('seccompProfile', `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(badValues)}`);
}

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

/** Only the namespaced, isolated ("safe") sysctls. */
const sysctls =
  (allowed: ReadonlySet<string>) =>
  (_meta: PodMeta, spec: PodSpec): CheckResult => {
    const forbidden = (spec.securityContext?.sysctls ?? []).map((s) => s?.name ?? '').filter((n) => !allowed.has(n));
    return forbidden.length ? forbiddenResult('forbidden sysctls', forbidden.join(', ')) : ALLOWED;
  };

function windowsHostProcess(_meta: PodMeta, spec: PodSpec): CheckResult {
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.windowsOptions?.hostProcess === true)
    .map(nameOf);
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  if (bad.length) setters.push(containersPhrase(bad));
  if (!setters.length) return ALLOWED;
  return forbiddenResult('hostProcess', `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`);
}

export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, checkPod: seLinuxOptions(new Set(SELINUX_TYPES_1_0)) },
      { minimumVersion: 31, checkPod: seLinuxOptions(new Set(SELINUX_TYPES_1_31)) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, checkPod: seccompProfileBaseline1_0 },
      { minimumVersion: 19, checkPod: seccompProfileBaseline1_19 },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, checkPod: sysctls(new Set(SYSCTLS_1_0)) },
      { minimumVersion: 27, checkPod: sysctls(new Set(SYSCTLS_1_27)) },
      { minimumVersion: 29, checkPod: sysctls(new Set(SYSCTLS_1_29)) },
      { minimumVersion: 32, checkPod: sysctls(new Set(SYSCTLS_1_32)) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minimumVersion: 0, checkPod: windowsHostProcess }] },
];
