/**
 * Node selection (k8s.io/component-helpers/scheduling/corev1/nodeaffinity): a
 * pod's nodeSelector and required node affinity against a node's labels and
 * fields, and the weight of the preferred terms a node matches.
 */
import type { KubeObject } from '@kubeling/api';

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

interface PodSpecLike {
  nodeSelector?: Record<string, string>;
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
      preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
    };
  };
}

function integer(v: string | undefined): number | undefined {
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  return Number(v);
}

/** One requirement against a value (a label or a field); a missing value is undefined. */
export function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const have = integer(value);
      const want = integer(values[0]);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** A term matches when all its requirements do; a term with none matches nothing. */
export function termMatches(term: NodeSelectorTerm, node: KubeObject): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  return (
    exprs.every((r) => requirementMatches(r, Object.hasOwn(labels, r.key) ? labels[r.key] : undefined)) &&
    fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? node.metadata.name : undefined))
  );
}

/** Terms are ORed. */
export function anyTermMatches(terms: readonly NodeSelectorTerm[], node: KubeObject): boolean {
  return terms.some((t) => termMatches(t, node));
}

/** GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND the required terms. */
export function requiredNodeAffinityMatches(spec: PodSpecLike, node: KubeObject): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !anyTermMatches(terms, node)) return false;
  return true;
}

/** Sum of the weights of the preferred terms the node matches. */
export function preferredNodeAffinityScore(spec: PodSpecLike, node: KubeObject): number {
  let score = 0;
  for (const p of spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (p.weight !== 0 && termMatches(p.preference, node)) score += p.weight;
  }
  return score;
}
