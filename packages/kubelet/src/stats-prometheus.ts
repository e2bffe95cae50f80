/**
 * /metrics/resource in the Prometheus text format (0.0.4), as upstream's
 * resource metrics collector writes it (kubernetes
 * pkg/kubelet/metrics/collectors/resource_metrics.go through client_golang's
 * expfmt): families sorted by name, samples by their label values, labels by
 * name; HELP carrying the stability level; CPU, memory and pod samples with
 * the millisecond timestamp of their measurement, start times and the scrape
 * errors without one; values as Go's strconv.FormatFloat(v, 'g', -1, 64).
 * A family without samples is not written. scrape_error is the ALPHA gauge
 * upstream deprecated in 1.29 for resource_scrape_error; both are written,
 * as a 1.29 kubelet does, for scrapers of either name.
 */
import type { Summary, Time } from './stats.js';

export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Go's shortest 'g' formatting of a float64 (exponent form from 1e+06 and below 1e-04, two exponent digits at least). */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, e] = v.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  // Within that range JavaScript writes the same shortest digits without an exponent.
  return String(v);
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

interface Sample {
  /** Label pairs, sorted by name. */
  labels: [string, string][];
  value: number;
  /** Milliseconds since the epoch (Go's Time.UnixMilli truncation), or none. */
  ms?: bigint;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: Sample[];
}

const FAMILIES: [name: string, type: 'counter' | 'gauge', help: string][] = [
  ['node_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the node in core-seconds'],
  ['node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes'],
  ['container_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the container in core-seconds'],
  ['container_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the container in bytes'],
  ['container_start_time_seconds', 'gauge', '[STABLE] Start time of the container since unix epoch in seconds'],
  ['pod_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the pod in core-seconds'],
  ['pod_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the pod in bytes'],
  ['scrape_error', 'gauge', '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise'],
  ['resource_scrape_error', 'gauge', '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise'],
];

const ms = (t: Time) => t / 1_000_000n;
const seconds = (ns: number) => ns / 1e9;

function compareSamples(a: Sample, b: Sample): number {
  for (let i = 0; i < a.labels.length && i < b.labels.length; i++) {
    const x = a.labels[i]![1];
    const y = b.labels[i]![1];
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.labels.length - b.labels.length;
}

/** The exposition of a Summary, or of the error that prevented one (the scrape errors alone, at 1). */
export function resourceMetricsText(s: Summary | Error): string {
  const fam = new Map<string, Family>(FAMILIES.map(([name, type, help]) => [name, { name, type, help, samples: [] }]));
  const add = (name: string, labels: [string, string][], value: number, t?: Time) => {
    fam.get(name)!.samples.push(t === undefined ? { labels, value } : { labels, value, ms: ms(t) });
  };
  const failed = s instanceof Error;
  if (!failed) {
    const n = s.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined) add('node_cpu_usage_seconds_total', [], seconds(n.cpu.usageCoreNanoSeconds), n.cpu.time);
    if (n.memory?.workingSetBytes !== undefined) add('node_memory_working_set_bytes', [], n.memory.workingSetBytes, n.memory.time);
    for (const p of s.pods) {
      const { name: pod, namespace } = p.podRef;
      for (const c of p.containers) {
        const labels: [string, string][] = [
          ['container', c.name],
          ['namespace', namespace],
          ['pod', pod],
        ];
        // Upstream skips a start time at or before the epoch.
        if (c.startTime >= 1_000_000_000n) add('container_start_time_seconds', labels, Number(c.startTime) / 1e9);
        if (c.cpu?.usageCoreNanoSeconds !== undefined) add('container_cpu_usage_seconds_total', labels, seconds(c.cpu.usageCoreNanoSeconds), c.cpu.time);
        if (c.memory?.workingSetBytes !== undefined) add('container_memory_working_set_bytes', labels, c.memory.workingSetBytes, c.memory.time);
      }
      const labels: [string, string][] = [
        ['namespace', namespace],
        ['pod', pod],
      ];
      if (p.cpu?.usageCoreNanoSeconds !== undefined) add('pod_cpu_usage_seconds_total', labels, seconds(p.cpu.usageCoreNanoSeconds), p.cpu.time);
      if (p.memory?.workingSetBytes !== undefined) add('pod_memory_working_set_bytes', labels, p.memory.workingSetBytes, p.memory.time);
    }
  }
  add('scrape_error', [], failed ? 1 : 0);
  add('resource_scrape_error', [], failed ? 1 : 0);
  const out: string[] = [];
  for (const f of [...fam.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!f.samples.length) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const x of f.samples.sort(compareSamples)) {
      const labels = x.labels.length ? `{${x.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
      out.push(`${f.name}${labels} ${goFloat(x.value)}${x.ms === undefined ? '' : ` ${x.ms}`}`);
    }
  }
  return `${out.join('\n')}\n`;
}
