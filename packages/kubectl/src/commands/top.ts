/**
 * `kubectl top node|pod`: resource usage from the metrics API
 * (metrics.k8s.io/v1beta1), as kubectl 1.33 prints it.
 *
 * The flow is upstream's (staging/src/k8s.io/kubectl/pkg/cmd/top/top_node.go,
 * top_pod.go): the group must be in the server's groups (asked afresh, not
 * from the discovery cache, since a metrics server may have registered its
 * APIService a moment ago), then the NodeMetricsList / PodMetricsList, and
 * for nodes the Node objects whose allocatable (or capacity) gives the
 * percentages. The table is pkg/metricsutil/metrics_printer.go's: every
 * cell tab-terminated (so the last column is padded too), cpu in millicores
 * (`%vm` of MilliValue), memory in whole Mi (`%vMi` of Value / 2^20), a
 * percentage as int64(used milli / available milli * 100), nodes without
 * metrics last with `<unknown>` cells. Sums of container usage are exact
 * (nanos), as resource.Quantity adds them.
 */
import {
  type KubeList,
  type KubeObject,
  METRICS_API_VERSION,
  METRICS_GROUP,
  METRICS_VERSION,
  type NodeMetricsList,
  type PodMetrics,
  type PodMetricsList,
  parseExactQuantity,
  wire,
} from '@kubeling/api';
import { parseLabelSelector } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import type { Ctx } from '../ctx.js';
import { pathSegment } from '../discovery.js';
import { asObject, asString, nested } from '../json.js';
import { tabwrite } from '../print/tabwriter.js';

const MEASURED = ['cpu', 'memory'] as const;
type Measured = (typeof MEASURED)[number];
/** Usage in nanos (of a core, of a byte), as resource.Quantity holds it. */
type Usage = Record<Measured, bigint>;

const TOP_HELP = `Display resource (CPU/memory) usage.

 The top command allows you to see the resource consumption for nodes or pods.

 This command requires Metrics Server to be correctly configured and working on the server.

Available Commands:
  node          Display resource (CPU/memory) usage of nodes
  pod           Display resource (CPU/memory) usage of pods

Usage:
  kubectl top [flags] [options]

Use "kubectl top <command> --help" for more information about a given command.
Use "kubectl options" for a list of global command-line options (applies to all commands).
`;

/** A quantity's nanos; what does not parse counts as zero, as a missing resource does. */
function nanos(q: unknown): bigint {
  const p = parseExactQuantity(q);
  return p ? (p.negative ? -p.nanos : p.nanos) : 0n;
}

/** Quantity.MilliValue: rounded up. */
const milli = (n: bigint) => (n > 0n ? (n + 999_999n) / 1_000_000n : n / 1_000_000n);
/** Quantity.Value: rounded up. */
const whole = (n: bigint) => (n > 0n ? (n + 999_999_999n) / 1_000_000_000n : n / 1_000_000_000n);

function usageOf(u: unknown): Usage {
  return { cpu: nanos(nested(u, 'cpu')), memory: nanos(nested(u, 'memory')) };
}

/** printSingleResourceUsage */
function shown(res: Measured, n: bigint): string {
  return res === 'cpu' ? `${milli(n)}m` : `${whole(n) / 1048576n}Mi`;
}

/** One line of cells, each tab-terminated as metrics_printer's printValue writes them. */
const line = (cells: string[]) => cells.map((c) => `${c}\t`).join('');

/** printAllResourceUsages: the usage, then the percentage when the available list has the resource. */
function usageCells(u: Usage, available: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const res of MEASURED) {
    out.push(shown(res, u[res]));
    if (available && res in available) {
      // 1.33 divides without looking at zero: 0/0 and x/0 are NaN and ±Inf, which Go's int64() turns
      // into the smallest int64 on amd64 (what the reference binary prints).
      const fraction = (Number(milli(u[res])) / Number(milli(nanos(available[res])))) * 100;
      out.push(`${Number.isFinite(fraction) && Math.abs(fraction) < 2 ** 63 ? Math.trunc(fraction) : '-9223372036854775808'}%`);
    }
  }
  return out;
}

/** GetNewTabWriter: min width 6, padding 3. */
const table = (lines: string[]) => tabwrite(lines.join('\n'), 6, 3) + '\n';

/** SupportedMetricsAPIVersionAvailable over the server's groups (APIGroupList). */
async function metricsAvailable(ctx: Ctx): Promise<void> {
  const groups = await ctx.client.get<{ groups?: { name?: string; versions?: { version?: string }[] }[] }>('/apis');
  const ok = (groups.groups ?? []).some((g) => g.name === METRICS_GROUP && (g.versions ?? []).some((v) => v.version === METRICS_VERSION));
  if (!ok) throw new UsageError('error: Metrics API not available');
}

function validate(ctx: Ctx, name: string | undefined, selectorFlags: boolean, what: string): void {
  const sortBy = ctx.g.sortBy;
  if (sortBy && sortBy !== 'cpu' && sortBy !== 'memory') throw new UsageError('error: --sort-by accepts only cpu or memory');
  if (name && selectorFlags) throw new UsageError(`error: only one of NAME or ${what} can be provided`);
}

/** The label selector as upstream sends it: parsed, then in its canonical string form. */
function selectorQuery(ctx: Ctx): Record<string, string> {
  const s = ctx.g.selector ? parseLabelSelector(ctx.g.selector).toString() : '';
  return s ? { labelSelector: s } : {};
}

/**
 * The comparison metrics_sorter.go sorts by: usage descending, or names. Ties keep their order
 * here; Go's sort.Sort keeps it too for the short lists it sorts by insertion (up to 12 items).
 */
function sorter<T>(sortBy: string | undefined, usage: (x: T) => Usage, names: (x: T) => string[]): (a: T, b: T) => number {
  if (sortBy === 'cpu' || sortBy === 'memory') {
    const key = (x: T) => (sortBy === 'cpu' ? milli(usage(x).cpu) : whole(usage(x).memory));
    return (a, b) => (key(a) > key(b) ? -1 : key(a) < key(b) ? 1 : 0);
  }
  return (a, b) => {
    const [x, y] = [names(a), names(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
    return 0;
  };
}

async function topNode(ctx: Ctx, args: string[]): Promise<number> {
  if (args.length > 1) throw new UsageError("error: node [NAME | -l label]\nSee 'kubectl top node -h' for help and examples");
  const name = args[0];
  validate(ctx, name, !!ctx.g.selector, '--selector');
  const query = selectorQuery(ctx);
  await metricsAvailable(ctx);
  const base = `/apis/${METRICS_API_VERSION}/nodes`;
  const metrics = name
    ? [await ctx.client.get<NodeMetricsList['items'][number]>(`${base}/${pathSegment(name)}`)]
    : ((await ctx.client.get<NodeMetricsList>(base, query)).items ?? []);
  if (!metrics.length) throw new UsageError('error: metrics not available yet');
  const nodes = name
    ? [await ctx.client.get<KubeObject>(`/api/v1/nodes/${pathSegment(name)}`)]
    : ((await ctx.client.get<KubeList>('/api/v1/nodes', query)).items ?? []);
  const available = new Map<string, Record<string, unknown> | undefined>();
  for (const n of nodes) available.set(n.metadata.name ?? '', asObject(nested(n.status, ctx.g.showCapacity ? 'capacity' : 'allocatable')));
  const rows = metrics.map((m) => ({ name: m.metadata.name ?? '', usage: usageOf(m.usage) }));
  rows.sort(
    sorter(
      ctx.g.sortBy,
      (r) => r.usage,
      (r) => [r.name],
    ),
  );
  const lines: string[] = [];
  if (!ctx.g.noHeaders) lines.push(line(['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']));
  for (const r of rows) {
    lines.push(line([r.name, ...usageCells(r.usage, available.get(r.name))]));
    available.delete(r.name);
  }
  // Nodes without metrics come last (upstream walks a Go map here, so their order is its own).
  for (const n of available.keys()) lines.push(line([n, ...MEASURED.flatMap(() => ['<unknown>', '<unknown>'])]));
  ctx.io.out(table(lines));
  return 0;
}

/** verifyEmptyMetrics: why a namespace's pods have no metrics yet. */
async function verifyEmpty(ctx: Ctx, name: string | undefined, query: Record<string, string>): Promise<boolean> {
  const ns = pathSegment(ctx.ns, 'namespace');
  const pods = name
    ? [await ctx.client.get<KubeObject>(`/api/v1/namespaces/${ns}/pods/${pathSegment(name)}`)]
    : ((await ctx.client.get<KubeList>(`/api/v1/namespaces/${ns}/pods`, query)).items ?? []);
  if (!pods.length) return false;
  for (const p of pods) {
    // checkPodAge: metrics are late for a pod older than two minutes.
    const ageMs = Date.now() - Date.parse(asString(p.metadata.creationTimestamp) ?? '');
    if (ageMs > 120_000)
      throw new UsageError(
        `error: Metrics not available for pod ${p.metadata.namespace}/${p.metadata.name}, age: ${wire.formatDuration(BigInt(ageMs) * 1_000_000n)}`,
      );
  }
  throw new UsageError('error: metrics not available yet');
}

async function topPod(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  if (args.length > 1) throw new UsageError("error: pod [NAME | -l label]\nSee 'kubectl top pod -h' for help and examples");
  const name = args[0];
  validate(ctx, name, !!g.selector || !!g.fieldSelector, 'selector');
  const query = { ...selectorQuery(ctx), ...(g.fieldSelector ? { fieldSelector: g.fieldSelector } : {}) };
  await metricsAvailable(ctx);
  const base = `/apis/${METRICS_API_VERSION}${g.allNamespaces ? '' : `/namespaces/${pathSegment(ctx.ns, 'namespace')}`}/pods`;
  const metrics: PodMetrics[] = name
    ? [await ctx.client.get<PodMetrics>(`${base}/${pathSegment(name)}`)]
    : ((await ctx.client.get<PodMetricsList>(base, query)).items ?? []);
  if (!metrics.length) {
    await verifyEmpty(ctx, name, query);
    ctx.io.err(g.allNamespaces ? 'No resources found\n' : `No resources found in ${ctx.ns} namespace.\n`);
    return 0;
  }
  const withNs = g.allNamespaces;
  const pods = metrics.map((m) => {
    const containers = (m.containers ?? []).map((c) => ({ name: c.name ?? '', usage: usageOf(c.usage) }));
    const usage: Usage = { cpu: 0n, memory: 0n };
    for (const c of containers) for (const r of MEASURED) usage[r] += c.usage[r];
    return { ns: m.metadata.namespace ?? '', name: m.metadata.name ?? '', usage, containers };
  });
  pods.sort(
    sorter(
      g.sortBy,
      (p) => p.usage,
      (p) => (withNs ? [p.ns, p.name] : [p.name]),
    ),
  );
  const lines: string[] = [];
  const head = [...(withNs ? ['NAMESPACE'] : []), ...(g.containers ? ['POD'] : []), 'NAME', 'CPU(cores)', 'MEMORY(bytes)'];
  if (!g.noHeaders) lines.push(line(head));
  const total: Usage = { cpu: 0n, memory: 0n };
  for (const p of pods) {
    for (const r of MEASURED) total[r] += p.usage[r];
    const nsCell = withNs ? [p.ns] : [];
    if (!g.containers) {
      lines.push(line([...nsCell, p.name, ...usageCells(p.usage, undefined)]));
      continue;
    }
    const cs = [...p.containers].sort(
      sorter(
        g.sortBy,
        (c) => c.usage,
        (c) => [c.name],
      ),
    );
    for (const c of cs) lines.push(line([...nsCell, p.name, c.name, ...usageCells(c.usage, undefined)]));
  }
  if (g.sum) {
    // printPodResourcesSum: a rule under the usage columns, then the totals under it.
    // Its column count leaves out NAMESPACE and POD under --no-headers, and so does this.
    const width = g.noHeaders ? 3 : head.length;
    lines.push(line([...Array<string>(width - 2).fill(''), '________', '________']));
    lines.push(line([...Array<string>(width - 3).fill(''), '', ...usageCells(total, undefined)]));
  }
  ctx.io.out(table(lines));
  return 0;
}

export async function top(ctx: Ctx, [sub, ...args]: string[]): Promise<number> {
  switch (sub) {
    case undefined:
      ctx.io.err(TOP_HELP);
      return 1;
    case 'node':
    case 'nodes':
    case 'no':
      return topNode(ctx, args);
    case 'pod':
    case 'pods':
    case 'po':
      return topPod(ctx, args);
    default:
      throw new UsageError(`error: unknown command "${sub}"\nSee 'kubectl top -h' for help and examples`);
  }
}
