/**
 * NodeAffinity: nodeSelector and required node affinity filter; the weights of
 * the preferred terms a node matches score it (normalized to 0..100).
 */
import { preferredNodeAffinityScore, requiredNodeAffinityMatches } from '@kubeling/component-helpers';
import { defaultNormalize, unresolvable, type FilterPlugin, type NodeInfo, type PodInfo, type ScorePlugin, type Status } from '../../framework/types.js';

export const NAME = 'NodeAffinity';
export const ERR_REASON = "node(s) didn't match Pod's node affinity/selector";

export class NodeAffinity implements FilterPlugin, ScorePlugin {
  readonly name = NAME;
  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    return node.node && requiredNodeAffinityMatches(pod.spec, node.node) ? null : unresolvable(NAME, ERR_REASON);
  }
  score(_s: unknown, pod: PodInfo, node: NodeInfo): number {
    return node.node ? preferredNodeAffinityScore(pod.spec, node.node) : 0;
  }
  normalize(_s: unknown, _p: PodInfo, scores: number[]): void {
    defaultNormalize(scores, false);
  }
}
