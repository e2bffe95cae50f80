/** NodePorts: a pod's hostPorts must be free on the node (0.0.0.0 conflicts with every address). */
import { unschedulable, type FilterPlugin, type NodeInfo, type PodInfo, type Status } from '../../framework/types.js';

export const NAME = 'NodePorts';
export const ERR_REASON = "node(s) didn't have free ports for the requested pod ports";

export class NodePorts implements FilterPlugin {
  readonly name = NAME;
  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    for (const p of pod.hostPorts) if (node.portInUse(p.hostIP ?? '', p.protocol ?? 'TCP', p.hostPort!)) return unschedulable(NAME, ERR_REASON);
    return null;
  }
}
