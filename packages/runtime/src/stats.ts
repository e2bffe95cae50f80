/**
 * What the runtime answers to CRI's stats calls (ContainerStats,
 * ListContainerStats, PodSandboxStats, ListPodSandboxStats).
 *
 * - `process` backend: a container is a process group (its process was
 *   spawned detached, so the group id is its pid). Its CPU is the sum over the
 *   group's processes of utime + stime from /proc/<pid>/stat, plus cutime +
 *   cstime (children the group already reaped, which a cgroup's cpuacct counts
 *   too, so a shell running short commands does not lose their time), clock
 *   ticks turned into nanoseconds. Its memory is the sum of the processes'
 *   resident set. There is no cgroup, so no page cache is charged to a
 *   container and nothing to subtract from it: the working set (upstream's
 *   usage - inactive_file, cAdvisor's definition) is the RSS, and so is the
 *   usage. A pod adds its pause process to its containers. /proc is scanned
 *   once per call, whatever the number of containers asked about.
 * - `hollow` backend: SYNTHETIC figures, no process exists. Each container
 *   "uses" a constant CPU rate and a constant working set derived from a hash
 *   of its id (or from its requests, when the CRI config carries
 *   linux.resources): CPU grows linearly from its start, so the numbers are
 *   deterministic for an id and a time, and change over time as real counters
 *   do. Only the benchmarks and scale tests read them.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import type { ContainerStats, CpuUsage, LinuxContainerResources, MemoryUsage, PodSandboxStats } from '@kubeling/cri';
import type { Ctr } from './process.js';

/** Read access to /proc, injected in tests. */
export interface ProcFs {
  /** Names in /proc. */
  list(): string[];
  /** A file's text, or undefined when it is gone (a process that exited meanwhile). */
  read(path: string): string | undefined;
}

/** One buffer for every read: a stat line is a few hundred bytes (readFileSync would allocate 64 KiB for a file of size 0). */
const buf = Buffer.alloc(4096);

export const hostProc: ProcFs = {
  list: () => readdirSync('/proc'),
  read: (p) => {
    // Synchronous on purpose: procfs reads do not block on a disk, and one
    // read per process costs less CPU than a promise per process.
    let fd: number | undefined;
    try {
      fd = openSync(p, 'r');
      return buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  },
};

/** The fields of /proc/<pid>/stat this file uses (proc(5) numbering in comments). */
export interface ProcStat {
  pid: number;
  /** (5) process group. */
  pgid: number;
  /** (10)+(12) minor and major faults; (11)+(13) those of reaped children. */
  minflt: number;
  majflt: number;
  /** (14)+(15)+(16)+(17) utime, stime, cutime, cstime in clock ticks. */
  ticks: number;
  /** (24) resident pages: the same count as statm's second field (both are get_mm_rss), so statm need not be read. */
  rssPages: number;
}

/** The process group of a /proc/<pid>/stat line (field 5), read without splitting the line. */
function pgidOf(text: string, close: number): number {
  let i = close + 2;
  for (let field = 3; field < 5; field++) i = text.indexOf(' ', i) + 1;
  return i > 0 ? Number.parseInt(text.slice(i, text.indexOf(' ', i)), 10) : Number.NaN;
}

/**
 * Parses /proc/<pid>/stat; the command (2) is in parentheses and may hold
 * spaces or parentheses itself. With `groups`, a process of another group is
 * rejected before the rest of its line is parsed (most of a host's processes).
 */
export function parseProcStat(text: string, groups?: ReadonlySet<number>): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  if (groups && !groups.has(pgidOf(text, close))) return undefined;
  const pid = Number.parseInt(text, 10);
  // f[0] is field (3), the state.
  const f = text.slice(close + 2).split(' ');
  if (f.length < 22) return undefined;
  const n = (field: number) => Number(f[field - 3]);
  const st = {
    pid,
    pgid: n(5),
    minflt: n(10) + n(11),
    majflt: n(12) + n(13),
    ticks: n(14) + n(15) + n(16) + n(17),
    rssPages: n(24),
  };
  return Number.isFinite(st.pid + st.pgid + st.minflt + st.majflt + st.ticks + st.rssPages) ? st : undefined;
}

export interface GroupUsage {
  ticks: number;
  /**
   * Nanoseconds on CPU: per process the larger of its ticks (all threads and
   * reaped children, 10 ms granularity) and its main thread's
   * /proc/<pid>/schedstat (nanoseconds). Both only grow, so their maximum
   * does too; a shell that went to sleep after a few milliseconds still
   * shows them, as a cgroup's usage_usec would, where ticks say 0 (and a
   * metrics server drops a container whose counter is 0).
   */
  cpuNanos: number;
  rssPages: number;
  minflt: number;
  majflt: number;
  processes: number;
}

/**
 * One scan of /proc: the usage of each of the wanted process groups (groups
 * without a live process are absent). Processes in `exclude` are not counted
 * (an isolated container's `unshare` and init, which are the runtime's, not
 * the container's: the first has the setup's commands in its children's time).
 */
export function scanGroups(fs: ProcFs, pgids: ReadonlySet<number>, clkTck = 100, exclude: ReadonlySet<number> = new Set()): Map<number, GroupUsage> {
  const out = new Map<number, GroupUsage>();
  if (!pgids.size) return out;
  for (const name of fs.list()) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57 || (exclude.size && exclude.has(Number(name)))) continue;
    const text = fs.read(`/proc/${name}/stat`);
    const st = text && parseProcStat(text, pgids);
    if (!st) continue;
    const g = out.get(st.pgid) ?? { ticks: 0, cpuNanos: 0, rssPages: 0, minflt: 0, majflt: 0, processes: 0 };
    g.ticks += st.ticks;
    const sched = Number.parseInt(fs.read(`/proc/${name}/schedstat`) ?? '', 10);
    g.cpuNanos += Math.max((st.ticks * 1e9) / clkTck, Number.isFinite(sched) ? sched : 0);
    g.rssPages += st.rssPages;
    g.minflt += st.minflt;
    g.majflt += st.majflt;
    g.processes++;
    out.set(st.pgid, g);
  }
  return out;
}

/** CLK_TCK and the page size, asked of getconf once (Linux's USER_HZ is 100 and pages 4 KiB where getconf is missing). */
export interface HostConstants {
  clkTck: number;
  pageSize: number;
}

let constants: HostConstants | undefined;
export function hostConstants(): HostConstants {
  if (constants) return constants;
  const ask = (name: string, fallback: number) => {
    try {
      const v = Number(execFileSync('getconf', [name], { encoding: 'utf8', timeout: 2000 }).trim());
      return v > 0 ? v : fallback;
    } catch {
      return fallback;
    }
  };
  constants = { clkTck: ask('CLK_TCK', 100), pageSize: ask('PAGESIZE', 4096) };
  return constants;
}

/** The sandbox fields the stats need. */
export interface SandboxInfo {
  id: string;
  metadata: PodSandboxStats['attributes']['metadata'];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The pause process (a group of its own), process backend only. */
  pausePid?: number | undefined;
}

interface Usage {
  cpuNanos: bigint;
  rss: number;
  faults: number;
  majorFaults: number;
  processes: number;
}

const ZERO: Usage = { cpuNanos: 0n, rss: 0, faults: 0, majorFaults: 0, processes: 0 };
const add = (a: Usage, b: Usage): Usage => ({
  cpuNanos: a.cpuNanos + b.cpuNanos,
  rss: a.rss + b.rss,
  faults: a.faults + b.faults,
  majorFaults: a.majorFaults + b.majorFaults,
  processes: a.processes + b.processes,
});

/** Two numbers in [0, 1) from an id, stable across runs. */
function idFractions(id: string): [number, number] {
  const h = createHash('sha256').update(id).digest();
  return [h.readUInt32BE(0) / 2 ** 32, h.readUInt32BE(4) / 2 ** 32];
}

const MiB = 1024 * 1024;

/**
 * SYNTHETIC usage of a hollow container at `nowNanos`: a CPU rate of 25–75 %
 * of its request (CFS shares / 1024 cores) or, without one, 10–200 millicores;
 * a working set of 30–70 % of its memory limit or, without one, 16–128 MiB.
 */
export function syntheticUsage(id: string, startedAtNanos: bigint, nowNanos: bigint, resources?: LinuxContainerResources): Usage {
  const [a, b] = idFractions(id);
  const shares = Number(resources?.cpu_shares ?? 0);
  // Shares of 2 are what the kubelet gives a container without a CPU request.
  const milli = shares > 2 ? (shares / 1024) * 1000 * (0.25 + 0.5 * a) : 10 + 190 * a;
  const limit = Number(resources?.memory_limit_in_bytes ?? 0);
  const rss = Math.round(limit > 0 ? limit * (0.3 + 0.4 * b) : (16 + 112 * b) * MiB);
  const elapsed = nowNanos > startedAtNanos ? nowNanos - startedAtNanos : 0n;
  return { cpuNanos: (elapsed * BigInt(Math.round(milli * 1000))) / 1_000_000n, rss, faults: Math.round(rss / 4096), majorFaults: 0, processes: 1 };
}

const u64 = (v: bigint | number) => ({ value: v.toString() });

function cpuOf(u: Usage, ts: string): CpuUsage {
  return { timestamp: ts, usage_core_nano_seconds: u64(u.cpuNanos) };
}

function memoryOf(u: Usage, ts: string): MemoryUsage {
  // No limit is enforced, so available_bytes (limit - working set) is left out, as cAdvisor does for an unlimited cgroup.
  return {
    timestamp: ts,
    working_set_bytes: u64(u.rss),
    usage_bytes: u64(u.rss),
    rss_bytes: u64(u.rss),
    page_faults: u64(u.faults),
    major_page_faults: u64(u.majorFaults),
  };
}

/** Builds the stats answers for one call from a single sample. */
export class StatsCollector {
  constructor(
    private readonly backend: 'process' | 'hollow',
    private readonly fs: ProcFs = hostProc,
    private readonly clock: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  ) {}

  /** Samples the running containers (and pause processes) once; returns each one's usage by its id. */
  private sample(ctrs: Ctr[], pauses: number[], now: bigint): Map<string | number, Usage> {
    const out = new Map<string | number, Usage>();
    const running = ctrs.filter((c) => c.state === 'CONTAINER_RUNNING');
    if (this.backend === 'hollow') {
      for (const c of running) out.set(c.id, syntheticUsage(c.id, BigInt(c.startedAt), now, c.config.linux?.resources));
      return out;
    }
    const groups = new Set<number>(pauses);
    const wrappers = new Set<number>();
    for (const c of running) {
      if (!c.proc?.pid) continue;
      groups.add(c.proc.pid);
      if (c.isolation) {
        wrappers.add(c.proc.pid);
        if (c.isolation.initPid !== undefined) wrappers.add(c.isolation.initPid);
      }
    }
    const { clkTck, pageSize } = hostConstants();
    const scanned = scanGroups(this.fs, groups, clkTck, wrappers);
    const usage = (g: GroupUsage | undefined): Usage =>
      g
        ? {
            cpuNanos: BigInt(Math.round(g.cpuNanos)),
            rss: g.rssPages * pageSize,
            faults: g.minflt + g.majflt,
            majorFaults: g.majflt,
            processes: g.processes,
          }
        : ZERO;
    for (const c of running) out.set(c.id, usage(c.proc?.pid ? scanned.get(c.proc.pid) : undefined));
    for (const p of pauses) out.set(p, usage(scanned.get(p)));
    return out;
  }

  private containerOf(c: Ctr, u: Usage | undefined, ts: string): ContainerStats {
    const attributes = { id: c.id, metadata: c.config.metadata, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} };
    return u ? { attributes, cpu: cpuOf(u, ts), memory: memoryOf(u, ts) } : { attributes };
  }

  /** Stats of these containers; one not running has attributes only. */
  containers(ctrs: Ctr[]): ContainerStats[] {
    const now = this.clock();
    const ts = now.toString();
    const usage = this.sample(ctrs, [], now);
    return ctrs.map((c) => this.containerOf(c, usage.get(c.id), ts));
  }

  /** Stats of these sandboxes: each one's running containers, and their sum with the pause process as the pod's. */
  sandboxes(sandboxes: SandboxInfo[], ctrs: Ctr[]): PodSandboxStats[] {
    const now = this.clock();
    const ts = now.toString();
    const pauses = sandboxes.flatMap((s) => (s.pausePid ? [s.pausePid] : []));
    const usage = this.sample(ctrs, pauses, now);
    return sandboxes.map((sb) => {
      const mine = ctrs.filter((c) => c.sandboxId === sb.id && c.state === 'CONTAINER_RUNNING');
      let total = sb.pausePid ? (usage.get(sb.pausePid) ?? ZERO) : ZERO;
      for (const c of mine) total = add(total, usage.get(c.id) ?? ZERO);
      return {
        attributes: { id: sb.id, metadata: sb.metadata, labels: sb.labels, annotations: sb.annotations },
        linux: {
          cpu: cpuOf(total, ts),
          memory: memoryOf(total, ts),
          process: { timestamp: ts, process_count: u64(total.processes) },
          containers: mine.map((c) => this.containerOf(c, usage.get(c.id), ts)),
        },
      };
    });
  }
}
