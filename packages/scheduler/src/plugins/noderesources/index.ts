/**
 * NodeResourcesFit and NodeResourcesBalancedAllocation.
 *
 * Fit filters on the node's allocatable minus what bound and assumed pods
 * request (cpu, memory, ephemeral-storage, extended resources, and the pod
 * count), and scores by LeastAllocated (or MostAllocated) over the weighted
 * resources of its scoring strategy. BalancedAllocation prefers nodes whose cpu
 * and memory fractions stay close (1 − standard deviation). Scores use the
 * non-zero requests (100m / 200 MB for containers that state none).
 */
import { unschedulable, MAX_NODE_SCORE, type FilterPlugin, type NodeInfo, type PodInfo, type ScorePlugin, type Status } from '../../framework/types.js';

export const FIT = 'NodeResourcesFit';
export const BALANCED = 'NodeResourcesBalancedAllocation';

export interface ResourceSpec {
  name: string;
  weight: number;
}

/** NodeResourcesFitArgs as read here. */
export interface FitArgs {
  scoringStrategy?: { type?: string; resources?: { name: string; weight?: number }[] };
}

/** NodeResourcesBalancedAllocationArgs as read here. */
export interface BalancedAllocationArgs {
  resources?: ResourceSpec[];
}

const DEFAULT_RESOURCES: ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** What a node has requested of a resource once the pod is added (non-zero for cpu and memory). */
function requestedWith(pod: PodInfo, node: NodeInfo, resource: string): number {
  if (resource === 'cpu') return node.nonZeroRequested.cpu + pod.nonZero.cpu;
  if (resource === 'memory') return node.nonZeroRequested.memory + pod.nonZero.memory;
  return (node.requested[resource] ?? 0) + (pod.requests[resource] ?? 0);
}

export class NodeResourcesFit implements FilterPlugin, ScorePlugin {
  readonly name = FIT;
  private readonly strategy: 'LeastAllocated' | 'MostAllocated';
  private readonly resources: ResourceSpec[];

  constructor(args: FitArgs = {}) {
    const s = args.scoringStrategy ?? {};
    this.strategy = s.type === 'MostAllocated' ? 'MostAllocated' : 'LeastAllocated';
    this.resources = Array.isArray(s.resources) && s.resources.length ? s.resources.map((r) => ({ name: r.name, weight: r.weight ?? 1 })) : DEFAULT_RESOURCES;
  }

  filter(_s: unknown, pod: PodInfo, node: NodeInfo): Status | null {
    const reasons: string[] = [];
    if (node.pods.size + 1 > (node.allocatable.pods ?? 0)) reasons.push('Too many pods');
    for (const [name, want] of Object.entries(pod.requests)) {
      if (want <= 0 || name === 'pods') continue;
      const free = (node.allocatable[name] ?? 0) - (node.requested[name] ?? 0);
      if (want > free) reasons.push(`Insufficient ${name}`);
    }
    return reasons.length ? unschedulable(FIT, ...reasons) : null;
  }

  score(_s: unknown, pod: PodInfo, node: NodeInfo): number {
    let total = 0;
    let weights = 0;
    for (const r of this.resources) {
      const alloc = node.allocatable[r.name] ?? 0;
      if (alloc === 0) continue;
      const req = requestedWith(pod, node, r.name);
      let s: number;
      if (req > alloc) s = this.strategy === 'LeastAllocated' ? 0 : MAX_NODE_SCORE;
      else s = this.strategy === 'LeastAllocated' ? Math.floor(((alloc - req) * MAX_NODE_SCORE) / alloc) : Math.floor((req * MAX_NODE_SCORE) / alloc);
      total += s * r.weight;
      weights += r.weight;
    }
    return weights ? Math.floor(total / weights) : 0;
  }
}

export class NodeResourcesBalancedAllocation implements ScorePlugin {
  readonly name = BALANCED;
  private readonly resources: ResourceSpec[];

  constructor(args: BalancedAllocationArgs = {}) {
    this.resources = Array.isArray(args.resources) && args.resources.length ? args.resources : DEFAULT_RESOURCES;
  }

  score(_s: unknown, pod: PodInfo, node: NodeInfo): number {
    const fractions: number[] = [];
    for (const r of this.resources) {
      const alloc = node.allocatable[r.name] ?? 0;
      if (alloc === 0) continue;
      fractions.push(Math.min(1, requestedWith(pod, node, r.name) / alloc));
    }
    if (fractions.length < 2) return MAX_NODE_SCORE;
    const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
    const std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) ** 2, 0) / fractions.length);
    return Math.floor((1 - std) * MAX_NODE_SCORE);
  }
}
