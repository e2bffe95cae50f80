/**
 * Ephemeral containers on this kubelet (kubernetes pkg/kubelet/kuberuntime
 * computePodActions and SyncPod step 4, kubelet_pods.go
 * convertToAPIContainerStatuses): each one the pod's spec lists is started
 * once, in the pod's current sandbox, and never restarted — not after it
 * exits, not after the sandbox is recreated. Its status comes from whichever
 * sandbox it ran in.
 *
 * Upstream runs one in the target container's process namespace (CRI
 * NamespaceMode TARGET). kubeling's CRI messages carry no namespace options:
 * with kubeling's runtime every container is a host process group, so the
 * target's processes (and, through /proc/<pid>/cwd, its root directory) are
 * visible to the ephemeral container anyway; on containerd the ephemeral
 * container gets the pod's sandbox like any other container.
 */
import type { ContainerStatus, CriRuntime, PodSandbox } from '@kubeling/cri';
import type { EphemeralContainer, Pod } from './kinds.js';
import { containersOf } from './pod-state.js';

/** The pod's ephemeral containers. */
export const ephemeralContainers = (pod: Pod): EphemeralContainer[] => pod.spec.ephemeralContainers ?? [];

/**
 * Instances of the pod's ephemeral containers in its sandboxes other than the
 * current one, by name (newest attempt first). Asks the runtime only when the
 * pod has ephemeral containers and older sandboxes.
 */
export async function ephemeralHistory(
  runtime: CriRuntime,
  ephemeral: EphemeralContainer[],
  sandboxes: PodSandbox[],
  current: string,
): Promise<Map<string, ContainerStatus[]>> {
  const older = sandboxes.filter((s) => s.id !== current).map((s) => s.id);
  if (!ephemeral.length || !older.length) return new Map();
  const names = new Set(ephemeral.map((c) => c.name));
  const all = await containersOf(runtime, older);
  return new Map([...all].filter(([name]) => names.has(name)));
}
