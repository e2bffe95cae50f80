/**
 * The kubelet's resource measurements, as upstream's CRI stats provider
 * (kubernetes pkg/kubelet/stats/cri_stats_provider.go) builds them: pods and
 * containers from the runtime's CRI stats (ListPodSandboxStats, or
 * ListContainerStats summed per pod where the runtime lacks the former), the
 * node from /proc as cAdvisor's root cgroup approximately. It serves
 *
 * - GET /stats/summary: the Summary API (k8s.io/kubelet
 *   pkg/apis/stats/v1alpha1, JSON), usageNanoCores computed from the previous
 *   sample of the same container, pod or node, as upstream's
 *   getAndUpdateContainerUsageNanoCores; `?only_cpu_and_memory=true` leaves the
 *   rest out and, like upstream's GetCPUAndMemoryStats, reads the rates
 *   without advancing them;
 * - GET /metrics/resource: the same figures in Prometheus text
 *   (stats-prometheus.ts), what metrics-server scrapes.
 *
 * Counters are JavaScript numbers: exact up to 2^53 ns (104 days of one
 * core), then rounded as Go's float64 conversion rounds them for Prometheus.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import {
  GRPC_UNIMPLEMENTED,
  type Container,
  type ContainerStats as CriContainerStats,
  type CpuUsage,
  type CriRuntime,
  type Int64,
  type MemoryUsage,
  type NetworkInterfaceUsage,
  type NetworkUsage,
  type PodSandbox,
  type PodSandboxStats as CriPodSandboxStats,
  type UInt64Value,
} from '@kubeling/cri';
import { resourceMetricsText, RESOURCE_METRICS_CONTENT_TYPE } from './stats-prometheus.js';

/** Times are nanoseconds since the epoch here; they serialize as metav1.Time (RFC 3339, seconds) in JSON. */
export type Time = bigint;

export interface CPUStats {
  time: Time;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

export interface MemoryStats {
  time: Time;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

export interface NetworkStats extends InterfaceStats {
  time: Time;
  interfaces?: InterfaceStats[];
}

export interface ContainerStats {
  name: string;
  /** The container's creation time, as upstream's summary gives it. */
  startTime: Time;
  cpu?: CPUStats;
  memory?: MemoryStats;
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime: Time;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  network?: NetworkStats;
  process_stats?: { process_count?: number };
}

export interface NodeStats {
  nodeName: string;
  startTime: Time;
  cpu?: CPUStats;
  memory?: MemoryStats;
}

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

// ---- the node, from /proc ---------------------------------------------------------

/**
 * /proc/stat's aggregate line in clock ticks, as the time the root cgroup
 * counts (kernel/cgroup/rstat.c root_cgroup_cputime: user + nice + system +
 * irq + softirq + steal; guest time is inside user already), and the boot time.
 */
export function parseProcStatCpu(text: string): { ticks: number; bootTimeSeconds: number } | undefined {
  const line = /^cpu\s+([\d ]+)$/m.exec(text);
  const btime = /^btime\s+(\d+)$/m.exec(text);
  if (!line) return undefined;
  const [user, nice, system, , , irq, softirq, steal] = line[1]!.trim().split(/\s+/).map(Number) as number[];
  const ticks = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return Number.isFinite(ticks) ? { ticks, bootTimeSeconds: btime ? Number(btime[1]) : 0 } : undefined;
}

/** /proc/meminfo in bytes (it counts kB). */
export function parseMeminfo(text: string): { total: number; free: number; available: number; anon: number } | undefined {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kb('MemTotal');
  const free = kb('MemFree');
  const available = kb('MemAvailable');
  if (total === undefined || free === undefined || available === undefined) return undefined;
  return { total, free, available, anon: kb('AnonPages') ?? 0 };
}

let clkTck: number | undefined;
/** USER_HZ, asked of getconf once (100 on Linux where getconf is missing). */
function hostClkTck(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

const readHostFile = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
};

// ---- from CRI ---------------------------------------------------------------------

const num = (v: UInt64Value | null | undefined): number | undefined => (v ? Number(v.value) : undefined);
const big = (v: Int64 | undefined): bigint => {
  try {
    return BigInt(v ?? 0);
  } catch {
    return 0n;
  }
};

/** Keeps only the fields that have a value (upstream's omitempty pointers). */
function defined<T extends object>(o: { [K in keyof T]-?: T[K] | undefined }): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o as T;
}

function memoryOf(m: MemoryUsage): MemoryStats {
  return defined<MemoryStats>({
    time: big(m.timestamp),
    availableBytes: num(m.available_bytes),
    usageBytes: num(m.usage_bytes),
    workingSetBytes: num(m.working_set_bytes),
    rssBytes: num(m.rss_bytes),
    pageFaults: num(m.page_faults),
    majorPageFaults: num(m.major_page_faults),
  });
}

function interfaceOf(i: NetworkInterfaceUsage): InterfaceStats {
  return defined<InterfaceStats>({ name: i.name, rxBytes: num(i.rx_bytes), rxErrors: num(i.rx_errors), txBytes: num(i.tx_bytes), txErrors: num(i.tx_errors) });
}

function networkOf(n: NetworkUsage): NetworkStats | undefined {
  if (!n.default_interface) return undefined;
  return { time: big(n.timestamp), ...interfaceOf(n.default_interface), interfaces: (n.interfaces ?? []).map(interfaceOf) };
}

const isUnimplemented = (e: unknown) => (e as { code?: number }).code === GRPC_UNIMPLEMENTED;

/** A cached cumulative sample, to turn the next one into a rate. */
interface CpuSample {
  usage: number;
  time: Time;
  nanoCores?: number;
}

const POD_STATS_RETRY_NS = 60n * 1_000_000_000n;

/** Upstream's defaultCachePeriod: samples older than this are forgotten. */
const CACHE_PERIOD_NS = 10n * 60n * 1_000_000_000n;

interface CriAnswers {
  pods: Map<string, CriPodSandboxStats>;
  containers: Map<string, CriContainerStats>;
  /** The runtime answers neither stats call. */
  none: boolean;
}

/** What ListPodSandbox and ListContainers answered (any states). */
export interface RuntimeLists {
  sandboxes: PodSandbox[];
  containers: Container[];
}

export interface StatsProviderOptions {
  nodeName: string;
  runtime: CriRuntime;
  /**
   * The runtime's lists as the kubelet's relist last saw them (the PLEG asks
   * every second anyway): used when they hold every sandbox and container
   * the stats name, saving two calls a scrape.
   */
  lists?: () => RuntimeLists | undefined;
  /** Reads /proc files (injected in tests); undefined when unreadable. */
  readFile?: (path: string) => string | undefined;
  /** Now, in nanoseconds since the epoch. */
  now?: () => bigint;
  /** Clock ticks a second of /proc/stat (getconf CLK_TCK by default). */
  clkTck?: number;
}

export class StatsProvider {
  private readonly cpuCache = new Map<string, CpuSample>();
  /** Set once the runtime answered UNIMPLEMENTED, so it is not asked again. */
  private noPodStats = false;
  private noContainerStats = false;
  /** After another error of ListPodSandboxStats, ListContainerStats alone until then (ns). */
  private podStatsRetryAt = 0n;

  constructor(private readonly o: StatsProviderOptions) {}

  private now(): bigint {
    return this.o.now ? this.o.now() : BigInt(Date.now()) * 1_000_000n;
  }

  /**
   * The rate since the previous sample of `key` (upstream's
   * getAndUpdateContainerUsageNanoCores); without `update`, the last rate
   * computed (getContainerUsageNanoCores). A counter that went back (a
   * restart) starts over.
   */
  private nanoCores(key: string, usage: number | undefined, time: Time, update: boolean): number | undefined {
    if (usage === undefined) return undefined;
    const cached = this.cpuCache.get(key);
    if (!update) return cached?.nanoCores;
    if (!cached || usage < cached.usage) {
      this.cpuCache.set(key, { usage, time });
      return undefined;
    }
    const dt = time - cached.time;
    if (dt <= 0n) return cached.nanoCores;
    const nanoCores = Math.floor(((usage - cached.usage) / Number(dt)) * 1e9);
    this.cpuCache.set(key, { usage, time, nanoCores });
    return nanoCores;
  }

  private cpuOf(key: string, c: CpuUsage, update: boolean): CPUStats {
    const time = big(c.timestamp);
    const usageCoreNanoSeconds = num(c.usage_core_nano_seconds);
    // The runtime's own usage_nano_cores is not used, as upstream's CRI provider computes its own: containerd's
    // is a rate since whoever asked it last, and 0 at its first answer.
    const usageNanoCores = this.nanoCores(key, usageCoreNanoSeconds, time, update);
    return defined<CPUStats>({ time, usageNanoCores, usageCoreNanoSeconds });
  }

  private node(update: boolean): NodeStats {
    const read = this.o.readFile ?? readHostFile;
    const now = this.now();
    const stat = read('/proc/stat');
    const cpu = stat ? parseProcStatCpu(stat) : undefined;
    const mem = read('/proc/meminfo');
    const mi = mem ? parseMeminfo(mem) : undefined;
    const node: NodeStats = { nodeName: this.o.nodeName, startTime: BigInt(cpu?.bootTimeSeconds ?? 0) * 1_000_000_000n };
    if (cpu) {
      const usage = Number((BigInt(cpu.ticks) * 1_000_000_000n) / BigInt(this.o.clkTck ?? hostClkTck()));
      node.cpu = defined<CPUStats>({ time: now, usageNanoCores: this.nanoCores('node', usage, now, update), usageCoreNanoSeconds: usage });
    }
    if (mi) {
      // cAdvisor's root cgroup: usage is what is not free, the working set what the kernel could not reclaim.
      node.memory = { time: now, availableBytes: mi.available, usageBytes: mi.total - mi.free, workingSetBytes: mi.total - mi.available, rssBytes: mi.anon };
    }
    return node;
  }

  /**
   * Per-sandbox CRI stats: ListPodSandboxStats (upstream's
   * PodAndContainerStatsFromCRI path), else ListContainerStats, upstream's
   * default (pods then sum their containers), else none. A runtime that
   * fails the former otherwise (containerd 1.6 does for a sandbox without a
   * cgroup parent: "cgroupPath is empty") is asked the latter for a minute.
   */
  private async criStats(): Promise<CriAnswers> {
    const pods = new Map<string, CriPodSandboxStats>();
    const containers = new Map<string, CriContainerStats>();
    if (!this.noPodStats && this.now() >= this.podStatsRetryAt) {
      try {
        for (const p of await this.o.runtime.listPodSandboxStats()) {
          pods.set(p.attributes.id, p);
          for (const c of p.linux?.containers ?? []) containers.set(c.attributes.id, c);
        }
        return { pods, containers, none: false };
      } catch (e) {
        if (isUnimplemented(e)) this.noPodStats = true;
        else this.podStatsRetryAt = this.now() + POD_STATS_RETRY_NS;
      }
    }
    if (!this.noContainerStats) {
      try {
        for (const c of await this.o.runtime.listContainerStats()) containers.set(c.attributes.id, c);
        return { pods, containers, none: false };
      } catch (e) {
        if (!isUnimplemented(e)) throw e;
        this.noContainerStats = true;
      }
    }
    return { pods, containers, none: true };
  }

  /**
   * The sandboxes and containers the stats belong to (their start times):
   * the kubelet's own relist of the last seconds when it knows every one the
   * runtime measured, else asked afresh.
   */
  private async lists(cri: CriAnswers): Promise<RuntimeLists> {
    const cached = this.o.lists?.();
    if (cached) {
      const sandboxes = new Set(cached.sandboxes.map((s) => s.id));
      const containers = new Set(cached.containers.map((c) => c.id));
      if ([...cri.pods.keys()].every((id) => sandboxes.has(id)) && [...cri.containers.keys()].every((id) => containers.has(id))) return cached;
    }
    const [sandboxes, containers] = await Promise.all([
      this.o.runtime.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
      this.o.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
    ]);
    return { sandboxes, containers };
  }

  /** The Summary; `update` advances the CPU rates (the /stats/summary endpoint does, /metrics/resource does not). */
  async summary(update = true): Promise<Summary> {
    const cri = await this.criStats();
    const { sandboxes, containers: all } = await this.lists(cri);
    // Upstream lists the pods and containers the runtime measured; a runtime that measures nothing gets them all, bare.
    const measured = (id: string, inStats: Map<string, unknown>) => cri.none || inStats.has(id);
    const bySandbox = new Map<string, Container[]>();
    for (const c of all) {
      if (c.state !== 'CONTAINER_RUNNING' || !measured(c.id, cri.containers)) continue;
      bySandbox.set(c.pod_sandbox_id, [...(bySandbox.get(c.pod_sandbox_id) ?? []), c]);
    }
    const pods: PodStats[] = [];
    for (const sb of sandboxes) {
      if (sb.state !== 'SANDBOX_READY' || (!measured(sb.id, cri.pods) && !bySandbox.has(sb.id))) continue;
      const containers: ContainerStats[] = (bySandbox.get(sb.id) ?? []).map((c) => {
        const s = cri.containers.get(c.id);
        const out: ContainerStats = { name: c.metadata.name, startTime: big(c.created_at) };
        if (s?.cpu) out.cpu = this.cpuOf(c.id, s.cpu, update);
        if (s?.memory) out.memory = memoryOf(s.memory);
        return out;
      });
      containers.sort((a, b) => cmp(a.name, b.name));
      const pod: PodStats = {
        podRef: { name: sb.metadata.name, namespace: sb.metadata.namespace, uid: sb.metadata.uid },
        startTime: big(sb.created_at),
        containers,
      };
      const ps = cri.pods.get(sb.id)?.linux;
      if (ps) {
        if (ps.cpu) pod.cpu = this.cpuOf(`pod/${sb.id}`, ps.cpu, update);
        if (ps.memory) pod.memory = memoryOf(ps.memory);
        const net = ps.network && networkOf(ps.network);
        if (net) pod.network = net;
        if (ps.process) pod.process_stats = defined<{ process_count?: number }>({ process_count: num(ps.process.process_count) });
      } else sumContainers(pod);
      pods.push(pod);
    }
    pods.sort((a, b) => cmp(a.podRef.namespace, b.podRef.namespace) || cmp(a.podRef.name, b.podRef.name));
    const now = this.now();
    if (update) for (const [k, v] of this.cpuCache) if (now - v.time > CACHE_PERIOD_NS) this.cpuCache.delete(k);
    return { node: this.node(update), pods };
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The latest of some times (Math.max takes no bigint). */
function latest(times: Time[]): Time {
  let t = 0n;
  for (const x of times) if (x > t) t = x;
  return t;
}

/** A pod whose runtime gives no pod-level stats: its containers' sum (what its cgroup would count, but for the sandbox). */
function sumContainers(pod: PodStats): void {
  const withCpu = pod.containers.filter((c) => c.cpu?.usageCoreNanoSeconds !== undefined);
  if (withCpu.length) {
    const rates = withCpu.map((c) => c.cpu!.usageNanoCores);
    pod.cpu = defined<CPUStats>({
      time: latest(withCpu.map((c) => c.cpu!.time)),
      usageNanoCores: rates.every((r) => r !== undefined) ? rates.reduce((a, r) => a + r!, 0) : undefined,
      usageCoreNanoSeconds: withCpu.reduce((a, c) => a + c.cpu!.usageCoreNanoSeconds!, 0),
    });
  }
  const withMem = pod.containers.filter((c) => c.memory?.workingSetBytes !== undefined);
  if (withMem.length) {
    // A figure some container lacks is left out rather than summed as zero.
    const sum = (k: 'usageBytes' | 'workingSetBytes' | 'rssBytes') =>
      withMem.every((c) => c.memory![k] !== undefined) ? withMem.reduce((a, c) => a + c.memory![k]!, 0) : undefined;
    pod.memory = defined<MemoryStats>({
      time: latest(withMem.map((c) => c.memory!.time)),
      usageBytes: sum('usageBytes'),
      workingSetBytes: sum('workingSetBytes'),
      rssBytes: sum('rssBytes'),
      availableBytes: undefined,
      pageFaults: undefined,
      majorPageFaults: undefined,
    });
  }
}

/** metav1.Time's JSON: RFC 3339 in UTC to the second; the zero time is null. */
export function rfc3339(t: Time): string | null {
  if (t <= 0n) return null;
  return `${new Date(Number(t / 1_000_000_000n) * 1000).toISOString().slice(0, 19)}Z`;
}

/** The Summary as the kubelet serves it. */
export function summaryJSON(s: Summary): string {
  return JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? rfc3339(v) : v));
}

/** Drops what `only_cpu_and_memory` leaves out. */
function cpuAndMemoryOnly(s: Summary): Summary {
  return { node: s.node, pods: s.pods.map(({ network: _n, process_stats: _p, ...rest }) => rest) };
}

/** Serves GET /stats/summary and /metrics/resource; an error of the runtime is upstream's 500 "Internal Error: …" (or scrape_error 1). */
export async function serveStats(provider: StatsProvider, url: URL, res: ServerResponse): Promise<void> {
  if (url.pathname === '/metrics/resource') {
    const summary = await provider.summary(false).catch((e: Error) => e);
    res.writeHead(200, { 'content-type': RESOURCE_METRICS_CONTENT_TYPE }).end(resourceMetricsText(summary));
    return;
  }
  const only = url.searchParams.get('only_cpu_and_memory') === 'true';
  let summary: Summary;
  try {
    summary = await provider.summary(!only);
  } catch (e) {
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`Internal Error: failed to get summary stats: ${(e as Error).message}`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(summaryJSON(only ? cpuAndMemoryOnly(summary) : summary));
}
