/**
 * TaintToleration: NoSchedule/NoExecute taints the pod does not tolerate keep it
 * off; untolerated PreferNoSchedule taints lower the score.
 */
import { doNotScheduleTaint, findUntoleratedTaint, taintTolerated, type Toleration } from '@kubeling/component-helpers';
import { defaultNormalize, unresolvable, type FilterPlugin, type NodeInfo, type PodInfo, type ScorePlugin, type Status } from '../../framework/types.js';

export const NAME = 'TaintToleration';

export class TaintToleration implements FilterPlugin, ScorePlugin {
  readonly name = NAME;
  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    const t = findUntoleratedTaint(node.taints, pod.tolerations, doNotScheduleTaint);
    return t ? unresolvable(NAME, `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`) : null;
  }
  score(_s: unknown, pod: PodInfo, node: NodeInfo): number {
    const prefer: Toleration[] = pod.tolerations.filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    let n = 0;
    for (const taint of node.taints) if (taint.effect === 'PreferNoSchedule' && !taintTolerated(taint, prefer)) n++;
    return n;
  }
  normalize(_s: unknown, _p: PodInfo, scores: number[]): void {
    defaultNormalize(scores, true);
  }
}
