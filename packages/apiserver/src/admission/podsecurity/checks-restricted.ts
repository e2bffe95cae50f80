/**
 * The restricted Pod Security Standard's own checks (k8s.io/pod-security-admission
 * policy/check_*.go of level Restricted); restricted also runs every baseline
 * check a restricted one does not override.
 *
 * allowPrivilegeEscalation (1.8, 1.25), capabilities_restricted (1.22, 1.25;
 * overrides capabilities_baseline), restrictedVolumes (overrides
 * hostPathVolumes), runAsNonRoot, runAsUser (1.23),
 * seccompProfile_restricted (1.19, 1.25; overrides seccompProfile_baseline).
 * The 1.25 revisions exempt pods whose `spec.os.name` is `windows`.
 */
import { explicitSeccompViolations } from './checks-baseline.js';
import {
  ALLOWED,
  type Check,
  type CheckPodFn,
  type CheckResult,
  type PodMeta,
  type PodSpec,
  type Volume,
  containersOf,
  containersPhrase,
  forbiddenResult,
  joinQuote,
  nameOf,
  pluralize,
  sortedSet,
} from './pod.js';

/** From 1.25 the Linux-only requirements do not apply to pods that declare the Windows OS. */
const exemptWindows =
  (check: CheckPodFn): CheckPodFn =>
  (meta, spec) =>
    spec.os?.name === 'windows' ? ALLOWED : check(meta, spec);

function allowPrivilegeEscalation(_meta: PodMeta, spec: PodSpec): CheckResult {
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map(nameOf);
  if (!bad.length) return ALLOWED;
  return forbiddenResult('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`);
}

/** Containers drop ALL capabilities and add back at most NET_BIND_SERVICE. */
function capabilitiesRestricted(_meta: PodMeta, spec: PodSpec): CheckResult {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  for (const c of containersOf(spec)) {
    const caps = c.securityContext?.capabilities;
    if (!caps) {
      missingDropAll.push(nameOf(c));
      continue;
    }
    if (!(caps.drop ?? []).includes('ALL')) missingDropAll.push(nameOf(c));
    let added = false;
    for (const cap of caps.add ?? []) {
      if (cap === 'NET_BIND_SERVICE') continue;
      added = true;
      forbiddenCaps.push(cap);
    }
    if (added) addingForbidden.push(nameOf(c));
  }
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length)
    details.push(`${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`);
  return details.length ? forbiddenResult('unrestricted capabilities', details.join('; ')) : ALLOWED;
}

/** Volume sources restricted pods may use (ephemeral or defined through PersistentVolumes). */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];

/** The restricted sources upstream names, in the order it tells them apart. */
const NAMED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

const has = (v: Volume, source: string): boolean => v[source] != null;

function restrictedVolumes(_meta: PodMeta, spec: PodSpec): CheckResult {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const v of spec.volumes ?? []) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => has(v, s))) continue;
    badVolumes.push(nameOf(v));
    badTypes.push(NAMED_VOLUME_SOURCES.find((s) => has(v, s)) ?? 'unknown');
  }
  if (!badVolumes.length) return ALLOWED;
  const types = sortedSet(badTypes);
  return forbiddenResult(
    'restricted volume types',
    `${pluralize('volume', 'volumes', badVolumes.length)} ${joinQuote(badVolumes)} ${pluralize('uses', 'use', badVolumes.length)} ${pluralize('restricted volume type', 'restricted volume types', types.length)} ${joinQuote(types)}`,
  );
}

/** runAsNonRoot=true on the pod, or on every container that does not inherit it. */
function runAsNonRoot(_meta: PodMeta, spec: PodSpec): CheckResult {
  const badSetters: string[] = [];
  let podNonRoot = false;
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue != null) {
    if (!podValue) badSetters.push('pod');
    else podNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containersOf(spec)) {
    const v = c.securityContext?.runAsNonRoot;
    if (v != null) {
      if (!v) explicit.push(nameOf(c));
    } else if (!podNonRoot) implicit.push(nameOf(c));
  }
  if (explicit.length) badSetters.push(containersPhrase(explicit));
  if (badSetters.length) return forbiddenResult('runAsNonRoot != true', `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  if (implicit.length) return forbiddenResult('runAsNonRoot != true', `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`);
  return ALLOWED;
}

function runAsUser(_meta: PodMeta, spec: PodSpec): CheckResult {
  const badSetters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) badSetters.push('pod');
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.runAsUser === 0)
    .map(nameOf);
  if (bad.length) badSetters.push(containersPhrase(bad));
  return badSetters.length ? forbiddenResult('runAsUser=0', `${badSetters.join(' and ')} must not set runAsUser=0`) : ALLOWED;
}

/** Seccomp must be RuntimeDefault or Localhost, set on the pod or on every container. */
function seccompProfileRestricted(_meta: PodMeta, spec: PodSpec): CheckResult {
  const { badSetters, badValues, implicit } = explicitSeccompViolations(spec);
  if (badSetters.length)
    return forbiddenResult('seccompProfile', `${badSetters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(badValues)}`);
  if (implicit.length)
    return forbiddenResult(
      'seccompProfile',
      `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    );
  return ALLOWED;
}

export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minimumVersion: 8, checkPod: allowPrivilegeEscalation },
      { minimumVersion: 25, checkPod: exemptWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 22, checkPod: capabilitiesRestricted, overrideCheckIDs: ['capabilities_baseline'] },
      { minimumVersion: 25, checkPod: exemptWindows(capabilitiesRestricted), overrideCheckIDs: ['capabilities_baseline'] },
    ],
  },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minimumVersion: 0, checkPod: restrictedVolumes, overrideCheckIDs: ['hostPathVolumes'] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minimumVersion: 0, checkPod: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minimumVersion: 23, checkPod: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 19, checkPod: seccompProfileRestricted, overrideCheckIDs: ['seccompProfile_baseline'] },
      { minimumVersion: 25, checkPod: exemptWindows(seccompProfileRestricted), overrideCheckIDs: ['seccompProfile_baseline'] },
    ],
  },
];
