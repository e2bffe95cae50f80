/**
 * InterPodAffinity (kubernetes pkg/scheduler/framework/plugins/interpodaffinity):
 * required pod affinity and anti-affinity of the incoming pod, and the required
 * anti-affinity of pods already placed, filter nodes by topology domain (the
 * value of a node label, `topologyKey`); preferred terms — the incoming pod's
 * and those of placed pods that name it — score them. A term's pods are those
 * its label selector matches in its namespaces (the pod's own by default,
 * `namespaceSelector: {}` for all; other namespace selectors need namespace
 * labels the scheduler does not watch, and match no namespace here).
 */
import type { LabelSelector as LabelSelectorSpec } from '@kubeling/api';
import { selectorFromLabelSelector, type LabelSelector } from '@kubeling/apimachinery';
import {
  unresolvable,
  unschedulable,
  MAX_NODE_SCORE,
  type CycleState,
  type FilterPlugin,
  type NodeInfo,
  type Pod,
  type PodInfo,
  type PreFilterPlugin,
  type PreScorePlugin,
  type ScorePlugin,
  type Status,
} from '../../framework/types.js';

export const NAME = 'InterPodAffinity';
export const ERR_AFFINITY = "node(s) didn't match pod affinity rules";
export const ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";
export const ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
/** Upstream's hardPodAffinityWeight default: what a placed pod's required affinity adds to the score. */
const HARD_POD_AFFINITY_WEIGHT = 1;

interface Term {
  topologyKey: string;
  selector: LabelSelector;
  /** undefined: every namespace. */
  namespaces: Set<string> | undefined;
  weight: number;
}

/** PodAffinityTerm as read here (`@kubeling/api` leaves a pod's `affinity` undescribed). */
interface PodAffinityTerm {
  labelSelector?: LabelSelectorSpec;
  namespaceSelector?: LabelSelectorSpec;
  namespaces?: string[];
  topologyKey?: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

/** PodAffinity and PodAntiAffinity share this shape. */
interface PodAffinityRules {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: { weight?: number; podAffinityTerm?: PodAffinityTerm }[];
}

interface Affinity {
  podAffinity?: PodAffinityRules;
  podAntiAffinity?: PodAffinityRules;
}

const affinityOf = (pod: Pod): Affinity => pod.spec?.affinity ?? {};

/** Parsed terms per pod object (pods in the cache are not changed in place, so the object is the key). */
const parsed = new WeakMap<Pod, Map<string, Term[]>>();

function termsOf(pod: Pod, kind: 'podAffinity' | 'podAntiAffinity', which: 'required' | 'preferred'): Term[] {
  if (!affinityOf(pod)[kind]) return [];
  let m = parsed.get(pod);
  if (!m) parsed.set(pod, (m = new Map()));
  const k = `${kind}/${which}`;
  let terms = m.get(k);
  if (!terms) m.set(k, (terms = parseTerms(pod, kind, which)));
  return terms;
}

function parseTerms(pod: Pod, kind: 'podAffinity' | 'podAntiAffinity', which: 'required' | 'preferred'): Term[] {
  const block = affinityOf(pod)[kind];
  if (!block) return [];
  const raw: { term: PodAffinityTerm; weight: number }[] =
    which === 'required'
      ? (block.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t) => ({ term: t, weight: 1 }))
      : (block.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((w) => ({ term: w.podAffinityTerm ?? {}, weight: Number(w.weight ?? 0) }));
  const out: Term[] = [];
  for (const { term, weight } of raw) {
    if (!term.topologyKey) continue;
    const ls = structuredClone(term.labelSelector ?? {});
    const labels = pod.metadata.labels ?? {};
    // matchLabelKeys / mismatchLabelKeys: the pod's own values join the selector.
    for (const k of term.matchLabelKeys ?? []) if (labels[k] !== undefined) (ls.matchExpressions ??= []).push({ key: k, operator: 'In', values: [labels[k]] });
    for (const k of term.mismatchLabelKeys ?? [])
      if (labels[k] !== undefined) (ls.matchExpressions ??= []).push({ key: k, operator: 'NotIn', values: [labels[k]] });
    let selector: LabelSelector;
    try {
      if (!term.labelSelector) continue; // a nil selector matches nothing
      selector = selectorFromLabelSelector(ls);
    } catch {
      continue;
    }
    const nsSel = term.namespaceSelector;
    const listed = term.namespaces ?? [];
    let namespaces: Set<string> | undefined;
    if (nsSel && !Object.keys(nsSel.matchLabels ?? {}).length && !(nsSel.matchExpressions ?? []).length) namespaces = undefined;
    else namespaces = new Set(listed.length || nsSel ? listed : [pod.metadata.namespace ?? 'default']);
    out.push({ topologyKey: term.topologyKey, selector, namespaces, weight });
  }
  return out;
}

const matches = (t: Term, pod: Pod) => (!t.namespaces || t.namespaces.has(pod.metadata.namespace ?? '')) && t.selector.matches(pod.metadata.labels ?? {});
const labelOf = (node: NodeInfo, key: string) => node.node?.metadata.labels?.[key];
const pairKey = (k: string, v: string) => `${k}\u0000${v}`;

interface FilterState {
  /** Domains where a placed pod's required anti-affinity excludes the incoming pod. */
  existingAnti: Map<string, number>;
  affinity: Term[];
  /** Per affinity term: domains holding a pod it matches. */
  affinityCounts: Map<string, number>[];
  anyAffinityMatch: boolean;
  /** The incoming pod matches its own affinity terms (the first of a group may go anywhere with the keys). */
  selfMatch: boolean;
  anti: Term[];
  antiCounts: Map<string, number>[];
}

const FILTER_KEY = `${NAME}/filter`;
const SCORE_KEY = `${NAME}/score`;

export class InterPodAffinity implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = NAME;

  preFilter(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | null {
    const affinity = termsOf(pod.pod, 'podAffinity', 'required');
    const anti = termsOf(pod.pod, 'podAntiAffinity', 'required');
    // The common case costs one pass over the nodes' counts: no terms here, none placed.
    if (!affinity.length && !anti.length && !nodes.some((n) => n.podsWithAffinity.size > 0)) return null;
    const s: FilterState = {
      existingAnti: new Map(),
      affinity,
      affinityCounts: affinity.map(() => new Map()),
      anyAffinityMatch: false,
      selfMatch: affinity.every((t) => matches(t, pod.pod)),
      anti,
      antiCounts: anti.map(() => new Map()),
    };
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    const own = affinity.length > 0 || anti.length > 0;
    for (const node of nodes) {
      if (!node.node) continue;
      // Placed pods' required anti-affinity: only pods with terms need a look.
      for (const e of node.podsWithAffinity.values()) {
        if (e.key === pod.key) continue;
        for (const t of termsOf(e.pod, 'podAntiAffinity', 'required')) {
          const v = labelOf(node, t.topologyKey);
          if (v !== undefined && matches(t, pod.pod)) bump(s.existingAnti, pairKey(t.topologyKey, v));
        }
      }
      if (!own) continue;
      for (const e of node.pods.values()) {
        if (e.key === pod.key) continue;
        affinity.forEach((t, i) => {
          const v = labelOf(node, t.topologyKey);
          if (v !== undefined && matches(t, e.pod)) {
            bump(s.affinityCounts[i]!, pairKey(t.topologyKey, v));
            s.anyAffinityMatch = true;
          }
        });
        anti.forEach((t, i) => {
          const v = labelOf(node, t.topologyKey);
          if (v !== undefined && matches(t, e.pod)) bump(s.antiCounts[i]!, pairKey(t.topologyKey, v));
        });
      }
    }
    if (!s.existingAnti.size && !affinity.length && !anti.length) return null;
    state.set(FILTER_KEY, s);
    return null;
  }

  filter(state: CycleState, _pod: PodInfo, node: NodeInfo): Status | null {
    const s = state.get(FILTER_KEY) as FilterState | undefined;
    if (!s || !node.node) return null;
    if (s.affinity.length) {
      const ok = s.affinity.every((t, i) => {
        const v = labelOf(node, t.topologyKey);
        return v !== undefined && (s.affinityCounts[i]!.get(pairKey(t.topologyKey, v)) ?? 0) > 0;
      });
      // No pod anywhere matches: the pod may start its group, on a node with every key.
      const first = !s.anyAffinityMatch && s.selfMatch && s.affinity.every((t) => labelOf(node, t.topologyKey) !== undefined);
      if (!ok && !first) return unresolvable(NAME, ERR_AFFINITY);
    }
    for (const [i, t] of s.anti.entries()) {
      const v = labelOf(node, t.topologyKey);
      if (v !== undefined && (s.antiCounts[i]!.get(pairKey(t.topologyKey, v)) ?? 0) > 0) return unschedulable(NAME, ERR_ANTI_AFFINITY);
    }
    // Upstream's order: the pod's affinity, its anti-affinity, then placed pods' anti-affinity.
    for (const [k, v] of Object.entries(node.node.metadata.labels ?? {})) {
      if (s.existingAnti.get(pairKey(k, v))) return unschedulable(NAME, ERR_EXISTING_ANTI_AFFINITY);
    }
    return null;
  }

  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): void {
    const pref = termsOf(pod.pod, 'podAffinity', 'preferred');
    const prefAnti = termsOf(pod.pod, 'podAntiAffinity', 'preferred');
    const scores = new Map<string, number>();
    const add = (k: string, v: string, w: number) => scores.set(pairKey(k, v), (scores.get(pairKey(k, v)) ?? 0) + w);
    const own = pref.length > 0 || prefAnti.length > 0;
    if (!own && !nodes.some((n) => n.podsWithAffinity.size > 0)) return;
    for (const node of nodes) {
      if (!node.node) continue;
      if (own) {
        for (const e of node.pods.values()) {
          if (e.key === pod.key) continue;
          for (const t of pref)
            if (matches(t, e.pod) && labelOf(node, t.topologyKey) !== undefined) add(t.topologyKey, labelOf(node, t.topologyKey)!, t.weight);
          for (const t of prefAnti)
            if (matches(t, e.pod) && labelOf(node, t.topologyKey) !== undefined) add(t.topologyKey, labelOf(node, t.topologyKey)!, -t.weight);
        }
      }
      for (const e of node.podsWithAffinity.values()) {
        if (e.key === pod.key) continue;
        // Placed pods' own terms that name the incoming pod count too.
        for (const t of termsOf(e.pod, 'podAffinity', 'required'))
          if (matches(t, pod.pod) && labelOf(node, t.topologyKey) !== undefined) add(t.topologyKey, labelOf(node, t.topologyKey)!, HARD_POD_AFFINITY_WEIGHT);
        for (const t of termsOf(e.pod, 'podAffinity', 'preferred'))
          if (matches(t, pod.pod) && labelOf(node, t.topologyKey) !== undefined) add(t.topologyKey, labelOf(node, t.topologyKey)!, t.weight);
        for (const t of termsOf(e.pod, 'podAntiAffinity', 'preferred'))
          if (matches(t, pod.pod) && labelOf(node, t.topologyKey) !== undefined) add(t.topologyKey, labelOf(node, t.topologyKey)!, -t.weight);
      }
    }
    if (scores.size) state.set(SCORE_KEY, scores);
  }

  score(state: CycleState, _pod: PodInfo, node: NodeInfo): number {
    const scores = state.get(SCORE_KEY) as Map<string, number> | undefined;
    if (!scores || !node.node) return 0;
    let total = 0;
    for (const [k, v] of Object.entries(node.node.metadata.labels ?? {})) total += scores.get(pairKey(k, v)) ?? 0;
    return total;
  }

  normalize(state: CycleState, _pod: PodInfo, scores: number[]): void {
    if (!state.get(SCORE_KEY) || !scores.length) return;
    const min = Math.min(...scores);
    const max = Math.max(...scores);
    for (let i = 0; i < scores.length; i++) scores[i] = max - min > 0 ? Math.floor((MAX_NODE_SCORE * (scores[i]! - min)) / (max - min)) : 0;
  }
}
