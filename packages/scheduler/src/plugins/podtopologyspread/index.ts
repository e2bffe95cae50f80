/**
 * PodTopologySpread: `topologySpreadConstraints` keep the number of matching
 * pods per topology domain (a node label's value) within `maxSkew` of the
 * emptiest domain. DoNotSchedule constraints filter, ScheduleAnyway ones score.
 * Only nodes that carry every constraint's key count, and (nodeAffinityPolicy
 * Honor, the default) only nodes that match the pod's node affinity/selector;
 * nodeTaintsPolicy Honor also leaves out nodes with untolerated taints.
 */
import type { LabelSelector as LabelSelectorSpec } from '@kubeling/api';
import { nothing, selectorFromLabelSelector, type LabelSelector } from '@kubeling/apimachinery';
import { doNotScheduleTaint, findUntoleratedTaint, requiredNodeAffinityMatches } from '@kubeling/component-helpers';
import {
  unresolvable,
  unschedulable,
  MAX_NODE_SCORE,
  type CycleState,
  type FilterPlugin,
  type Node,
  type NodeInfo,
  type PodInfo,
  type PreFilterPlugin,
  type PreScorePlugin,
  type ScorePlugin,
  type Status,
} from '../../framework/types.js';

export const NAME = 'PodTopologySpread';
export const ERR_CONSTRAINTS = "node(s) didn't match pod topology spread constraints";
export const ERR_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)";

/** TopologySpreadConstraint as read here (`@kubeling/api` leaves the list's items undescribed). */
type TopologySpreadConstraint = {
  maxSkew?: number;
  topologyKey: string;
  whenUnsatisfiable?: string;
  labelSelector?: LabelSelectorSpec;
  matchLabelKeys?: string[];
  minDomains?: number;
  nodeAffinityPolicy?: string;
  nodeTaintsPolicy?: string;
};

interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: LabelSelector;
  minDomains: number;
  honorAffinity: boolean;
  honorTaints: boolean;
}

interface FilterState {
  constraints: Constraint[];
  /** Per constraint: matching pods per domain value. */
  counts: Map<string, number>[];
  /** Per constraint: the smallest domain count (0 when fewer domains than minDomains). */
  min: number[];
}

interface ScoreState {
  constraints: Constraint[];
  counts: Map<string, number>[];
  weights: number[];
}

function constraintsOf(pod: PodInfo, when: string): Constraint[] {
  const out: Constraint[] = [];
  for (const c of (pod.spec.topologySpreadConstraints ?? []) as TopologySpreadConstraint[]) {
    if ((c.whenUnsatisfiable ?? 'DoNotSchedule') !== when) continue;
    const ls = structuredClone(c.labelSelector ?? {});
    // matchLabelKeys: the pod's own values for these keys join the selector.
    for (const k of c.matchLabelKeys ?? []) {
      if (pod.labels[k] !== undefined) (ls.matchExpressions ??= []).push({ key: k, operator: 'In', values: [pod.labels[k]] });
    }
    let selector: LabelSelector;
    try {
      // No selector matches no pods (labels.Nothing), as upstream.
      selector = c.labelSelector ? selectorFromLabelSelector(ls) : nothing();
    } catch {
      continue;
    }
    out.push({
      maxSkew: c.maxSkew ?? 1,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      honorAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
      honorTaints: c.nodeTaintsPolicy === 'Honor',
    });
  }
  return out;
}

const hasKeys = (node: Node, cs: Constraint[]) => {
  const labels = node.metadata.labels ?? {};
  return cs.every((c) => Object.hasOwn(labels, c.topologyKey));
};

function nodeCounts(pod: PodInfo, c: Constraint, node: NodeInfo): boolean {
  if (!node.node) return false;
  if (c.honorAffinity && !requiredNodeAffinityMatches(pod.spec, node.node)) return false;
  if (c.honorTaints && findUntoleratedTaint(node.taints, pod.tolerations, doNotScheduleTaint)) return false;
  return true;
}

function matchingPods(pod: PodInfo, c: Constraint, node: NodeInfo): number {
  let n = 0;
  for (const p of node.pods.values()) {
    if (p.pod.metadata.namespace !== pod.pod.metadata.namespace || p.pod.metadata.deletionTimestamp) continue;
    if (c.selector.matches(p.labels)) n++;
  }
  return n;
}

function count(pod: PodInfo, cs: Constraint[], nodes: readonly NodeInfo[]): Map<string, number>[] {
  const counts = cs.map(() => new Map<string, number>());
  for (const node of nodes) {
    if (!node.node || !hasKeys(node.node, cs)) continue;
    cs.forEach((c, i) => {
      if (!nodeCounts(pod, c, node)) return;
      const v = node.node!.metadata.labels![c.topologyKey]!;
      counts[i]!.set(v, (counts[i]!.get(v) ?? 0) + matchingPods(pod, c, node));
    });
  }
  return counts;
}

const FILTER_KEY = `${NAME}/filter`;
const SCORE_KEY = `${NAME}/score`;

export class PodTopologySpread implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;

  preFilter(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | null {
    const constraints = constraintsOf(pod, 'DoNotSchedule');
    if (!constraints.length) return null;
    const counts = count(pod, constraints, nodes);
    const min = constraints.map((c, i) => {
      const m = counts[i]!;
      if (m.size < c.minDomains) return 0;
      return m.size ? Math.min(...m.values()) : 0;
    });
    state.set(FILTER_KEY, { constraints, counts, min } satisfies FilterState);
    return null;
  }

  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const s = state.get(FILTER_KEY) as FilterState | undefined;
    if (!s) return null;
    if (!node.node || !hasKeys(node.node, s.constraints)) return unresolvable(NAME, ERR_MISSING_LABEL);
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const self = c.selector.matches(pod.labels) ? 1 : 0;
      const matchNum = s.counts[i]!.get(node.node.metadata.labels![c.topologyKey]!) ?? 0;
      if (matchNum + self - s.min[i]! > c.maxSkew) return unschedulable(NAME, ERR_CONSTRAINTS);
    }
    return null;
  }

  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): void {
    const constraints = constraintsOf(pod, 'ScheduleAnyway');
    if (!constraints.length) return;
    const counts = count(pod, constraints, nodes);
    state.set(SCORE_KEY, { constraints, counts, weights: counts.map((m) => Math.log(m.size + 2)) } satisfies ScoreState);
  }

  score(state: CycleState, _pod: PodInfo, node: NodeInfo): number {
    const s = state.get(SCORE_KEY) as ScoreState | undefined;
    if (!s || !node.node) return 0;
    if (!hasKeys(node.node, s.constraints)) return -1;
    let score = 0;
    s.constraints.forEach((c, i) => {
      const n = s.counts[i]!.get(node.node!.metadata.labels![c.topologyKey]!) ?? 0;
      score += n * s.weights[i]! + (c.maxSkew - 1);
    });
    return Math.round(score);
  }

  normalize(state: CycleState, _pod: PodInfo, scores: number[]): void {
    if (!state.get(SCORE_KEY)) return;
    const valid = scores.filter((s) => s >= 0);
    if (!valid.length) return scores.fill(0) as unknown as void;
    const min = Math.min(...valid);
    const max = Math.max(...valid);
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i]!;
      if (s < 0) scores[i] = 0;
      else scores[i] = max === 0 ? MAX_NODE_SCORE : Math.floor((MAX_NODE_SCORE * (max + min - s)) / max);
    }
  }
}
