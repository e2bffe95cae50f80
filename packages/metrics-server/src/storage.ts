/**
 * The metric store (metrics-server pkg/storage): the last two points of every
 * node and every container, and the usage computed from them on read.
 *
 * - CPU is a rate: Δ(cumulative CPU nanoseconds) / Δt between the two points,
 *   in nanocores, truncated to an integer; memory is the newer working set.
 *   The window is Δt and the timestamp the newer point's time (types.go
 *   resourceUsage). A pair whose start time or cumulative CPU went backwards
 *   gives no usage.
 * - Each scrape cycle's batch replaces the store: a node or pod missing from
 *   it is forgotten (node.go / pod.go Store). A new point becomes `last` and
 *   the former `last` becomes `prev` only if the new one is newer and the
 *   container did not restart since (its start time is before the former
 *   point); otherwise an older `prev` is kept if it is still older than the
 *   new point.
 * - A container that started less than one resolution ago (but at least 10 s
 *   before its point) gets a synthetic previous point at its start time with
 *   zero CPU, so a fresh pod has metrics after one scrape (pod.go
 *   freshContainerMinMetricsResolution).
 * - A pod is served only when every container of its newest point has a
 *   previous point; its timestamp and window are those of the container with
 *   the earliest timestamp (pod.go GetMetrics).
 */
import type { Logger } from 'pino';
import type { MetricsBatch, MetricsPoint, PodPoint } from './decode.js';
import { podKey } from './decode.js';

/** A container not started at least this long before its point gets no synthetic previous point. */
const FRESH_CONTAINER_MIN_MS = 10_000;

export interface Usage {
  cpuNanocores: number;
  memoryBytes: number;
}

export interface TimeInfo {
  /** The newer point's time (ms since the epoch). */
  timestampMs: number;
  /** The time between the two points (ms). */
  windowMs: number;
}

export interface NodeUsage extends TimeInfo {
  usage: Usage;
}

export interface PodUsage extends TimeInfo {
  containers: { name: string; usage: Usage }[];
}

/** Usage between two points of one node or container, or why there is none. */
export function resourceUsage(last: MetricsPoint, prev: MetricsPoint): { usage: Usage; time: TimeInfo } | { error: string } {
  if (last.startTimeMs < prev.startTimeMs) return { error: 'unexpected decrease in startTime of node/container' };
  if (last.cpuNanos < prev.cpuNanos) return { error: 'unexpected decrease in cumulative CPU usage value' };
  const windowMs = last.timestampMs - prev.timestampMs;
  if (windowMs <= 0) return { error: 'non-positive window between metric points' };
  const cpuNanocores = Math.floor((last.cpuNanos - prev.cpuNanos) / (windowMs / 1000));
  return { usage: { cpuNanocores, memoryBytes: last.memoryBytes }, time: { timestampMs: last.timestampMs, windowMs } };
}

/** The previous point to keep for `next`, given the stored `last` and `prev` (node.go / pod.go Store). */
function previousFor(next: MetricsPoint, last: MetricsPoint | undefined, prev: MetricsPoint | undefined): MetricsPoint | undefined {
  // A restart since the stored point (start time at or after it) breaks the pair.
  if (!last || !(next.startTimeMs < last.timestampMs)) return undefined;
  if (next.timestampMs > last.timestampMs) return last;
  if (prev && prev.timestampMs < next.timestampMs) return prev;
  return undefined;
}

export class MetricsStorage {
  private nodesLast = new Map<string, MetricsPoint>();
  private nodesPrev = new Map<string, MetricsPoint>();
  private podsLast = new Map<string, PodPoint>();
  private podsPrev = new Map<string, PodPoint>();

  constructor(
    /** The scrape period (ms). */
    private readonly resolutionMs: number,
    private readonly log?: Logger,
  ) {}

  /** Replaces the stored points with a scrape cycle's batch. */
  store(batch: MetricsBatch): void {
    const nodesLast = new Map<string, MetricsPoint>();
    const nodesPrev = new Map<string, MetricsPoint>();
    for (const [name, point] of batch.nodes) {
      nodesLast.set(name, point);
      const p = previousFor(point, this.nodesLast.get(name), this.nodesPrev.get(name));
      if (p) nodesPrev.set(name, p);
    }
    const podsLast = new Map<string, PodPoint>();
    const podsPrev = new Map<string, PodPoint>();
    for (const [key, pod] of batch.pods) {
      const prevContainers: PodPoint = new Map();
      const oldLast = this.podsLast.get(key);
      const oldPrev = this.podsPrev.get(key);
      for (const [name, c] of pod) {
        const age = c.timestampMs - c.startTimeMs;
        if (c.startTimeMs < c.timestampMs && age < this.resolutionMs && age >= FRESH_CONTAINER_MIN_MS) {
          prevContainers.set(name, { ...c, timestampMs: c.startTimeMs, cpuNanos: 0 });
          continue;
        }
        const p = previousFor(c, oldLast?.get(name), oldPrev?.get(name));
        if (p) prevContainers.set(name, p);
      }
      podsLast.set(key, pod);
      if (prevContainers.size) podsPrev.set(key, prevContainers);
    }
    this.nodesLast = nodesLast;
    this.nodesPrev = nodesPrev;
    this.podsLast = podsLast;
    this.podsPrev = podsPrev;
  }

  /** The node's usage, when two usable points are stored. */
  node(name: string): NodeUsage | undefined {
    const last = this.nodesLast.get(name);
    const prev = this.nodesPrev.get(name);
    if (!last || !prev) return undefined;
    const r = resourceUsage(last, prev);
    if ('error' in r) {
      this.log?.warn({ node: name, err: r.error }, 'skipping node usage metric');
      return undefined;
    }
    return { ...r.time, usage: r.usage };
  }

  /** The pod's usage, when every container has two points (a container whose pair is unusable is left out). */
  pod(namespace: string, name: string): PodUsage | undefined {
    const key = podKey(namespace, name);
    const last = this.podsLast.get(key);
    const prev = this.podsPrev.get(key);
    if (!last || !prev) return undefined;
    const containers: PodUsage['containers'] = [];
    let earliest: TimeInfo | undefined;
    for (const [c, point] of last) {
      const before = prev.get(c);
      if (!before) return undefined;
      const r = resourceUsage(point, before);
      if ('error' in r) {
        this.log?.warn({ pod: key, container: c, err: r.error }, 'skipping container usage metric');
        continue;
      }
      containers.push({ name: c, usage: r.usage });
      if (!earliest || r.time.timestampMs < earliest.timestampMs) earliest = r.time;
    }
    if (!earliest) return undefined;
    return { ...earliest, containers };
  }

  /** Whether any node or pod has metrics to serve (storage.go Ready). */
  ready(): boolean {
    return this.nodesPrev.size > 0 || this.podsPrev.size > 0;
  }

  /** Points held, for figures: nodes and containers with a usable pair. */
  get counts(): { nodes: number; containers: number } {
    let containers = 0;
    for (const p of this.podsPrev.values()) containers += p.size;
    return { nodes: this.nodesPrev.size, containers };
  }
}
