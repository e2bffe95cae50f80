/**
 * A container's security context as the kubelet gives it to the runtime
 * (upstream's DetermineEffectiveSecurityContext and
 * convertToRuntimeSecurityContext): the container's settings over the pod's,
 * the pod's fsGroup and supplementalGroups as supplementary groups (in that
 * order), and the runAsNonRoot check made before a container is created.
 */
import type { LinuxContainerSecurityContext } from '@kubeling/cri';
import type { Container, Pod } from './kinds.js';
import { ConfigError } from './podutil.js';

interface Effective {
  runAsUser?: number | undefined;
  runAsGroup?: number | undefined;
  runAsNonRoot?: boolean | undefined;
  readOnlyRootFilesystem?: boolean | undefined;
  privileged?: boolean | undefined;
  allowPrivilegeEscalation?: boolean | undefined;
  capabilities?: { add?: string[]; drop?: string[] } | undefined;
}

interface PodSecurity extends Effective {
  fsGroup?: number;
  supplementalGroups?: number[];
}

const podSecurity = (pod: Pod) => (pod.spec.securityContext ?? {}) as PodSecurity;

/** The container's security settings over the pod's. */
export function effectiveSecurityContext(pod: Pod, c: Pick<Container, 'securityContext'>): Effective {
  const p = podSecurity(pod);
  const s = (c.securityContext ?? {}) as Effective;
  return {
    runAsUser: s.runAsUser ?? p.runAsUser,
    runAsGroup: s.runAsGroup ?? p.runAsGroup,
    runAsNonRoot: s.runAsNonRoot ?? p.runAsNonRoot,
    readOnlyRootFilesystem: s.readOnlyRootFilesystem,
    privileged: s.privileged,
    allowPrivilegeEscalation: s.allowPrivilegeEscalation,
    capabilities: s.capabilities,
  };
}

/** The CRI security context of a container. */
export function runtimeSecurityContext(pod: Pod, c: Pick<Container, 'securityContext'>): LinuxContainerSecurityContext {
  const e = effectiveSecurityContext(pod, c);
  const p = podSecurity(pod);
  const groups = [...(p.fsGroup !== undefined ? [p.fsGroup] : []), ...(p.supplementalGroups ?? [])];
  return {
    capabilities: { add_capabilities: e.capabilities?.add ?? [], drop_capabilities: e.capabilities?.drop ?? [] },
    privileged: !!e.privileged,
    run_as_user: e.runAsUser !== undefined ? { value: e.runAsUser } : null,
    run_as_group: e.runAsGroup !== undefined ? { value: e.runAsGroup } : null,
    readonly_rootfs: !!e.readOnlyRootFilesystem,
    supplemental_groups: groups,
    no_new_privs: e.allowPrivilegeEscalation === false,
  };
}

/**
 * upstream's verifyRunAsNonRoot: with runAsNonRoot, a container whose user is
 * root (given as 0, or the image's, which is root for every image here) is
 * not created.
 */
export function verifyRunAsNonRoot(pod: Pod, c: Pick<Container, 'securityContext' | 'name'>, imageUid = 0): void {
  const e = effectiveSecurityContext(pod, c);
  if (!e.runAsNonRoot) return;
  const who = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
  if (e.runAsUser !== undefined) {
    if (e.runAsUser === 0) throw new ConfigError(`container's runAsUser breaks non-root policy (pod: "${who}", container: ${c.name})`);
    return;
  }
  if (imageUid === 0) throw new ConfigError(`container has runAsNonRoot and image will run as root (pod: "${who}", container: ${c.name})`);
}
