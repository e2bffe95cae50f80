/**
 * The scheduling framework (kubernetes pkg/scheduler/framework): pods and nodes as
 * the plugins see them, statuses, and the extension points. A scheduling cycle is
 * synchronous — plugins run against the cache without awaiting — so the node
 * infos they read cannot change under them.
 */
import type { corev1, dsl, KubeObject, policyv1 } from '@kubeling/api';
import { podRequests, resourceValue, type ResourceList, type Taint, type Toleration } from '@kubeling/component-helpers';

/**
 * The kinds scheduling reads, as `@kubeling/api` describes them, with the
 * metadata an informer store's objects always carry (the API types leave it
 * optional, as a request body may).
 */
export type Pod = corev1.Pod & KubeObject;
export type PodSpec = corev1.PodSpec;
export type Node = corev1.Node & KubeObject;
export type PodDisruptionBudget = policyv1.PodDisruptionBudget & KubeObject;
export type ContainerPort = dsl.Static<typeof corev1.ContainerPort>;

/** A pod with what scheduling reads from it computed once. */
export class PodInfo {
  readonly key: string;
  readonly requests: ResourceList;
  readonly nonZero: { cpu: number; memory: number };
  readonly hostPorts: ContainerPort[];
  readonly priority: number;
  readonly tolerations: Toleration[];
  /** Whether it has pod affinity or anti-affinity terms (InterPodAffinity looks only at these). */
  readonly hasPodAffinity: boolean;

  constructor(readonly pod: Pod) {
    this.key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const spec = pod.spec ?? {};
    this.requests = podRequests(spec);
    const nz = podRequests(spec, { nonZero: true });
    this.nonZero = { cpu: nz.cpu ?? 0, memory: nz.memory ?? 0 };
    this.hostPorts = [];
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      for (const p of c.ports ?? []) if (p.hostPort && p.hostPort > 0) this.hostPorts.push(p);
    }
    this.priority = typeof spec.priority === 'number' ? spec.priority : 0;
    this.tolerations = spec.tolerations ?? [];
    this.hasPodAffinity = !!(spec.affinity?.podAffinity || spec.affinity?.podAntiAffinity);
  }

  get spec(): PodSpec {
    return this.pod.spec ?? {};
  }

  get labels(): Record<string, string> {
    return this.pod.metadata.labels ?? {};
  }
}

export const podKey = (pod: KubeObject): string => `${pod.metadata.namespace}/${pod.metadata.name}`;

const portKey = (ip: string, protocol: string, port: number) => `${ip}/${protocol}/${port}`;

/** The part of a NodeStatus scheduling reads (`@kubeling/api` leaves NodeStatus undescribed). */
interface NodeStatusResources {
  allocatable?: Record<string, string | number>;
  capacity?: Record<string, string | number>;
}

/** A node and what is placed on it: bound, assumed and (while preempting) hypothetical pods. */
export class NodeInfo {
  node: Node | undefined;
  readonly pods = new Map<string, PodInfo>();
  /** The pods here with pod affinity or anti-affinity terms. */
  readonly podsWithAffinity = new Map<string, PodInfo>();
  requested: ResourceList = {};
  nonZeroRequested = { cpu: 0, memory: 0 };
  allocatable: ResourceList = {};
  usedPorts = new Map<string, number>();
  taints: Taint[] = [];

  constructor(node?: Node) {
    if (node) this.setNode(node);
  }

  get name(): string {
    return this.node?.metadata.name ?? '';
  }

  setNode(node: Node): void {
    this.node = node;
    const status: NodeStatusResources = node.status ?? {};
    const alloc = status.allocatable ?? status.capacity ?? {};
    const out: ResourceList = {};
    for (const [k, v] of Object.entries(alloc)) {
      try {
        out[k] = resourceValue(k, v);
      } catch {
        // A malformed quantity counts as nothing allocatable.
        out[k] = 0;
      }
    }
    this.allocatable = out;
    this.taints = node.spec?.taints ?? [];
  }

  addPod(pi: PodInfo): void {
    if (this.pods.has(pi.key)) this.removePod(pi.key);
    this.pods.set(pi.key, pi);
    if (pi.hasPodAffinity) this.podsWithAffinity.set(pi.key, pi);
    for (const [k, v] of Object.entries(pi.requests)) this.requested[k] = (this.requested[k] ?? 0) + v;
    this.nonZeroRequested.cpu += pi.nonZero.cpu;
    this.nonZeroRequested.memory += pi.nonZero.memory;
    for (const p of pi.hostPorts) {
      const k = portKey(p.hostIP || '0.0.0.0', p.protocol ?? 'TCP', p.hostPort!);
      this.usedPorts.set(k, (this.usedPorts.get(k) ?? 0) + 1);
    }
  }

  removePod(key: string): PodInfo | undefined {
    const pi = this.pods.get(key);
    if (!pi) return undefined;
    this.pods.delete(key);
    this.podsWithAffinity.delete(key);
    for (const [k, v] of Object.entries(pi.requests)) this.requested[k] = (this.requested[k] ?? 0) - v;
    this.nonZeroRequested.cpu -= pi.nonZero.cpu;
    this.nonZeroRequested.memory -= pi.nonZero.memory;
    for (const p of pi.hostPorts) {
      const k = portKey(p.hostIP || '0.0.0.0', p.protocol ?? 'TCP', p.hostPort!);
      const n = (this.usedPorts.get(k) ?? 1) - 1;
      if (n <= 0) this.usedPorts.delete(k);
      else this.usedPorts.set(k, n);
    }
    return pi;
  }

  /** Whether a host port is taken: 0.0.0.0 conflicts with every address, as upstream's HostPortInfo. */
  portInUse(hostIP: string, protocol: string, port: number): boolean {
    const ip = hostIP || '0.0.0.0';
    if (ip === '0.0.0.0') {
      for (const k of this.usedPorts.keys()) {
        const [, proto, p] = k.split('/');
        if (proto === protocol && Number(p) === port) return true;
      }
      return false;
    }
    return this.usedPorts.has(portKey(ip, protocol, port)) || this.usedPorts.has(portKey('0.0.0.0', protocol, port));
  }

  /** A copy whose pod set can be changed without touching the cache (preemption dry runs). */
  clone(): NodeInfo {
    const c = new NodeInfo();
    c.node = this.node;
    c.allocatable = this.allocatable;
    c.taints = this.taints;
    for (const pi of this.pods.values()) c.addPod(pi);
    return c;
  }
}

// ---- statuses --------------------------------------------------------------------

export type Code = 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Error';

/** A non-success result; success is `null`. */
export interface Status {
  code: Code;
  reasons: string[];
  plugin: string;
}

export const unschedulable = (plugin: string, ...reasons: string[]): Status => ({ code: 'Unschedulable', reasons, plugin });
export const unresolvable = (plugin: string, ...reasons: string[]): Status => ({ code: 'UnschedulableAndUnresolvable', reasons, plugin });
/** An internal error (framework.AsStatus): the attempt fails as a whole, not the node. */
export const asError = (plugin: string, message: string): Status => ({ code: 'Error', reasons: [message], plugin });

/** Per-cycle data that plugins share between their extension points. */
export type CycleState = Map<string, unknown>;

// ---- extension points -----------------------------------------------------------

export interface Plugin {
  readonly name: string;
}

export interface PreFilterPlugin extends Plugin {
  /** Computes what Filter needs from all nodes; a Status rejects the pod on every node. */
  preFilter(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | null;
}

export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null;
}

export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): void;
}

export interface ScorePlugin extends Plugin {
  /** A raw score; after `normalize` every score is in [0, 100]. */
  score(state: CycleState, pod: PodInfo, node: NodeInfo): number;
  normalize?(state: CycleState, pod: PodInfo, scores: number[]): void;
}

/**
 * Reserve runs once a node is chosen and the pod assumed on it, still inside the
 * scheduling cycle (synchronous); a Status fails the attempt. Unreserve undoes
 * it — after a failed Reserve, PreBind or binding — and must be idempotent.
 */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: PodInfo, node: string): Status | null;
  unreserve(state: CycleState, pod: PodInfo, node: string): void;
}

/**
 * PreBind runs in the binding cycle, in the background, before the Binding is
 * posted; it may wait (`signal` aborts it when the scheduler stops). A Status
 * fails the binding: the pod is unreserved, forgotten and retried.
 */
export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: PodInfo, node: string, signal: AbortSignal): Promise<Status | null>;
}

export const MAX_NODE_SCORE = 100;

export const isPreFilter = (p: Plugin): p is PreFilterPlugin => typeof (p as PreFilterPlugin).preFilter === 'function';
export const isFilter = (p: Plugin): p is FilterPlugin => typeof (p as FilterPlugin).filter === 'function';
export const isPreScore = (p: Plugin): p is PreScorePlugin => typeof (p as PreScorePlugin).preScore === 'function';
export const isScore = (p: Plugin): p is ScorePlugin => typeof (p as ScorePlugin).score === 'function';
export const isReserve = (p: Plugin): p is ReservePlugin => typeof (p as ReservePlugin).reserve === 'function';
export const isPreBind = (p: Plugin): p is PreBindPlugin => typeof (p as PreBindPlugin).preBind === 'function';

/** DefaultNormalizeScore: scales to [0, 100] by the maximum, optionally reversed. */
export function defaultNormalize(scores: number[], reverse: boolean): void {
  const max = Math.max(0, ...scores);
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    const s = Math.floor((MAX_NODE_SCORE * scores[i]!) / max);
    scores[i] = reverse ? MAX_NODE_SCORE - s : s;
  }
}
