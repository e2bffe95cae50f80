/**
 * Small pod admission plugins of kubernetes plugin/pkg/admission:
 *
 * - LimitPodHardAntiAffinityTopology (antiaffinity): required pod
 *   anti-affinity terms may only use `kubernetes.io/hostname` as topologyKey.
 * - ExtendedResourceToleration (extendedresourcetoleration): a pod requesting
 *   an extended resource (`example.com/gpu`) tolerates the `Exists`/`NoSchedule`
 *   taint of that name, so nodes tainted for the resource keep other pods off.
 * - SecurityContextDeny (securitycontext/scdeny): refuses pods that set
 *   SupplementalGroups, SELinuxOptions, RunAsUser or FSGroup. Upstream removed
 *   it in 1.30 (PodSecurity replaces it); it is kept as its last upstream
 *   version describes it.
 * - DenyEscalatingExec and DenyExecOnPrivileged (exec): refuse exec and attach
 *   (CONNECT at pods/exec and pods/attach) into pods with a privileged
 *   container, or (DenyEscalatingExec) sharing the host's network, PID or IPC
 *   namespace. Upstream removed them in 1.18; kept as their last upstream
 *   version describes them.
 */
import type { KubeObject } from '@kubeling/api';
import { isExtendedResourceName } from '@kubeling/api';
import { forbidden } from '@kubeling/apimachinery';
import { admissionForbidden } from './attributes.js';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter } from './lookups.js';
import { addOrUpdateToleration, type Toleration } from './tolerations.js';

interface SecurityContext {
  privileged?: boolean | null;
  runAsUser?: number | null;
  seLinuxOptions?: object | null;
}

interface Container {
  resources?: { requests?: Record<string, unknown> };
  securityContext?: SecurityContext | null;
}

interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  tolerations?: Toleration[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: { supplementalGroups?: unknown; seLinuxOptions?: unknown; runAsUser?: unknown; fsGroup?: unknown } | null;
  affinity?: { podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { topologyKey?: string }[] } };
}

const specOf = (pod: KubeObject): PodSpec => ((pod as { spec?: PodSpec }).spec ?? {}) as PodSpec;
const PODS = { group: '', resource: 'pods' };
const isPodWrite = (a: AdmissionAttributes) => (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.resource === '/pods' && !a.subresource;
const set = (v: unknown) => v !== undefined && v !== null;

export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export class LimitPodHardAntiAffinityTopology implements ValidatingAdmission {
  readonly name = 'LimitPodHardAntiAffinityTopology';
  handles = isPodWrite;

  async validate(pod: KubeObject): Promise<void> {
    for (const term of specOf(pod).affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      if (term.topologyKey !== HOSTNAME_LABEL)
        throw forbidden(
          PODS,
          pod.metadata.name ?? '',
          `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${term.topologyKey ?? ''} but only key ${HOSTNAME_LABEL} is allowed`,
        );
    }
  }
}

export class ExtendedResourceToleration implements MutatingAdmission {
  readonly name = 'ExtendedResourceToleration';
  handles = isPodWrite;

  async admit(pod: KubeObject): Promise<void> {
    const spec = ((pod as { spec?: PodSpec }).spec ??= {});
    const names = new Set<string>();
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])])
      for (const r of Object.keys(c.resources?.requests ?? {})) if (isExtendedResourceName(r)) names.add(r);
    // Sorted, as upstream's sets.List(), so the tolerations come in a stable order.
    for (const key of [...names].sort()) {
      const next = addOrUpdateToleration(spec.tolerations ?? [], { key, operator: 'Exists', effect: 'NoSchedule' });
      if (next) spec.tolerations = next;
    }
  }
}

export class SecurityContextDeny implements ValidatingAdmission {
  readonly name = 'SecurityContextDeny';
  handles = isPodWrite;

  async validate(pod: KubeObject): Promise<void> {
    const deny = (why: string) => forbidden(PODS, pod.metadata.name ?? '', why);
    const spec = specOf(pod);
    const psc = spec.securityContext;
    if (psc) {
      if (set(psc.supplementalGroups)) throw deny('pod.Spec.SecurityContext.SupplementalGroups is forbidden');
      if (set(psc.seLinuxOptions)) throw deny('pod.Spec.SecurityContext.SELinuxOptions is forbidden');
      if (set(psc.runAsUser)) throw deny('pod.Spec.SecurityContext.RunAsUser is forbidden');
      if (set(psc.fsGroup)) throw deny('pod.Spec.SecurityContext.FSGroup is forbidden');
    }
    for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
      if (set(c.securityContext?.seLinuxOptions)) throw deny('SecurityContext.SELinuxOptions is forbidden');
      if (set(c.securityContext?.runAsUser)) throw deny('SecurityContext.RunAsUser is forbidden');
    }
  }
}

/** Whether any container (init and ephemeral ones included) is privileged. */
const isPrivileged = (spec: PodSpec) =>
  [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])].some((c) => c.securityContext?.privileged === true);

export class DenyExec implements ValidatingAdmission {
  /** DenyEscalatingExec checks the host namespaces too; DenyExecOnPrivileged only privileged containers. */
  constructor(
    readonly name: 'DenyEscalatingExec' | 'DenyExecOnPrivileged',
    private readonly pods: () => ObjectGetter,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CONNECT' && a.resource === '/pods' && (a.subresource === 'exec' || a.subresource === 'attach');
  }

  async validate(options: KubeObject, a: AdmissionAttributes): Promise<void> {
    let pod: KubeObject;
    try {
      pod = await this.pods().get(a.namespace, a.name ?? '');
    } catch (e) {
      throw admissionForbidden(a, options, e as Error);
    }
    const spec = specOf(pod);
    const deny = (why: string) => admissionForbidden(a, options, why);
    if (this.name === 'DenyEscalatingExec') {
      if (spec.hostNetwork) throw deny('cannot exec into or attach to a container using host network');
      if (spec.hostPID) throw deny('cannot exec into or attach to a container using host pid');
      if (spec.hostIPC) throw deny('cannot exec into or attach to a container using host ipc');
    }
    if (isPrivileged(spec)) throw deny('cannot exec into or attach to a privileged container');
  }
}
