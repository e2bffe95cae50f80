/** NodeName: a pod that names a node fits only there. */
import { unresolvable, type FilterPlugin, type NodeInfo, type PodInfo, type Status } from '../../framework/types.js';

export const NAME = 'NodeName';
export const ERR_REASON = "node(s) didn't match the requested node name";

export class NodeName implements FilterPlugin {
  readonly name = NAME;
  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    const want = pod.spec.nodeName;
    return !want || want === node.name ? null : unresolvable(NAME, ERR_REASON);
  }
}
