/** NodeUnschedulable: cordoned nodes take only pods that tolerate the unschedulable taint. */
import { taintTolerated } from '@kubeling/component-helpers';
import { unresolvable, type FilterPlugin, type NodeInfo, type PodInfo, type Status } from '../../framework/types.js';

export const NAME = 'NodeUnschedulable';
export const ERR_REASON = 'node(s) were unschedulable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

export class NodeUnschedulable implements FilterPlugin {
  readonly name = NAME;
  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    if (!node.node?.spec?.unschedulable) return null;
    return taintTolerated({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' }, pod.tolerations) ? null : unresolvable(NAME, ERR_REASON);
  }
}
