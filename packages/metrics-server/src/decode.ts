/**
 * One kubelet's /metrics/resource as metric points (metrics-server
 * pkg/scraper/client/resource/decode.go): the node's cumulative CPU and
 * working set, and per container its cumulative CPU, working set and start
 * time, each at the sample's own millisecond timestamp (the scrape's start
 * when a sample has none).
 *
 * As upstream, a node point without a timestamp, CPU or memory is dropped,
 * and a pod any of whose containers lacks CPU or memory is dropped whole.
 * Other families (pod_*, scrape_error) are ignored.
 */
import { parsePrometheusText } from './prometheus.js';

export interface MetricsPoint {
  /** When the container started (ms since the epoch); 0 when unknown (nodes). */
  startTimeMs: number;
  /** When the point was measured (ms since the epoch). */
  timestampMs: number;
  /** Cumulative CPU time since start, in nanocore-seconds (CPU nanoseconds). */
  cpuNanos: number;
  /** Working set, in bytes. */
  memoryBytes: number;
}

/** A pod's containers by name, in the order the kubelet listed them. */
export type PodPoint = Map<string, MetricsPoint>;

/** The points of one scrape cycle: nodes by name, pods by "namespace/name". */
export interface MetricsBatch {
  nodes: Map<string, MetricsPoint>;
  pods: Map<string, PodPoint>;
}

export const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

const emptyPoint = (): MetricsPoint => ({ startTimeMs: 0, timestampMs: 0, cpuNanos: 0, memoryBytes: 0 });

/**
 * Decodes one exposition into `into` (node `nodeName`, its pods). A parse
 * error throws and adds nothing.
 */
export function decodeResourceMetrics(text: string, defaultTimeMs: number, nodeName: string, into: MetricsBatch): void {
  const { samples } = parsePrometheusText(text);
  const node = emptyPoint();
  let nodeCpuTime = 0;
  const pods = new Map<string, PodPoint>();
  const container = (labels: Record<string, string>): MetricsPoint => {
    const key = podKey(labels.namespace ?? '', labels.pod ?? '');
    let pod = pods.get(key);
    if (!pod) pods.set(key, (pod = new Map()));
    const name = labels.container ?? '';
    let c = pod.get(name);
    if (!c) pod.set(name, (c = emptyPoint()));
    return c;
  };
  // CPU's timestamp is the point's time: it is the one the rate is computed
  // over (storage/types.go MetricsPoint.Timestamp); memory only fills in a
  // point that has no CPU sample, which is then dropped anyway.
  const stamp = (p: MetricsPoint, t: number, cpu: boolean) => {
    if (cpu || p.timestampMs === 0) p.timestampMs = t;
  };
  for (const s of samples) {
    const t = s.timestampMs ?? defaultTimeMs;
    switch (s.name) {
      case 'node_cpu_usage_seconds_total':
        node.cpuNanos = s.value * 1e9;
        node.timestampMs = t;
        nodeCpuTime = t;
        break;
      case 'node_memory_working_set_bytes':
        node.memoryBytes = s.value;
        if (!nodeCpuTime) node.timestampMs = t;
        break;
      case 'container_cpu_usage_seconds_total': {
        const c = container(s.labels);
        c.cpuNanos = s.value * 1e9;
        stamp(c, t, true);
        break;
      }
      case 'container_memory_working_set_bytes': {
        const c = container(s.labels);
        c.memoryBytes = s.value;
        stamp(c, t, false);
        break;
      }
      case 'container_start_time_seconds':
        container(s.labels).startTimeMs = s.value * 1000;
        break;
    }
  }
  if (node.timestampMs && node.cpuNanos > 0 && node.memoryBytes > 0) into.nodes.set(nodeName, node);
  for (const [key, pod] of pods) {
    // A pod two kubelets report keeps the first report, as storage's Store does with duplicates.
    if (into.pods.has(key)) continue;
    let complete = true;
    const kept: PodPoint = new Map();
    for (const [name, c] of pod) {
      // A container with no sample at all is skipped; one with only part of them drops its pod (checkContainerMetrics).
      if (!c.timestampMs && !c.cpuNanos && !c.memoryBytes && !c.startTimeMs) continue;
      if (!(c.cpuNanos > 0) || !(c.memoryBytes > 0) || !c.timestampMs) {
        complete = false;
        break;
      }
      kept.set(name, c);
    }
    if (complete && kept.size) into.pods.set(key, kept);
  }
}
