/**
 * `kubectl autoscale (TYPE NAME | TYPE/NAME | -f FILE) --max=N [--min=N]
 * [--cpu-percent=P] [--name=NAME]`: a HorizontalPodAutoscaler for a workload
 * that has a scale subresource, as kubectl 1.33 makes it
 * (staging/src/k8s.io/kubectl/pkg/cmd/autoscale/autoscale.go): an
 * autoscaling/v2 object (a cpu Utilization metric when --cpu-percent is 0
 * or more; minReplicas only when --min is above 0; no namespace in the body),
 * and when the server refuses the v2 create, the same as autoscaling/v1.
 * Each named object is read first; an error on one does not stop the others,
 * and all are reported at the end.
 */
import type { KubeObject } from '@kubeling/api';
import { isStatusError } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, pathOf, type Target } from '../ctx.js';
import { pathSegment } from '../discovery.js';
import type { JsonObject } from '../json.js';
import { parseOutput, printObjects } from '../print/printers.js';

const INT32 = 2 ** 31;

/** pflag's Int32 (strconv.ParseInt with base 0 and 32 bits), with its messages. */
function int32Flag(flag: string, v: string | undefined): number {
  if (v === undefined) return -1;
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]+|[1-9][0-9_]*|0)$/.exec(v);
  const fail = (why: string) =>
    new UsageError(`error: invalid argument "${v}" for "--${flag}" flag: strconv.ParseInt: parsing "${v}": ${why}\nSee 'kubectl autoscale --help' for usage.`);
  if (!m) throw fail('invalid syntax');
  const digits = m[2]!.replace(/_/g, '');
  const n = (m[1] === '-' ? -1 : 1) * Number(/^0[0-7]/.test(digits) ? `0o${digits.slice(1)}` : digits);
  if (!Number.isFinite(n)) throw fail('invalid syntax');
  if (n < -INT32 || n >= INT32) throw fail('value out of range');
  return n;
}

const HPA_REF = 'horizontalpodautoscaler.autoscaling';

/** How kubectl words an error among several: the server's Status, or its own `error:`. */
function errorLine(e: unknown): string {
  if (isStatusError(e)) return `Error from server${e.status.reason ? ` (${e.status.reason})` : ''}: ${e.status.message}`;
  const msg = (e as Error).message ?? String(e);
  return /^error/i.test(msg) ? msg : `error: ${msg}`;
}

export async function autoscale(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const min = int32Flag('min', g.min);
  const max = int32Flag('max', g.max);
  const cpuPercent = int32Flag('cpu-percent', g.cpuPercent);
  if (g.max === undefined) throw new UsageError('error: required flag(s) "max" not set');
  const dry = ctx.dryRun;
  const out = parseOutput(g.output, g.template);
  if (max < 1) throw new UsageError(`error: --max=MAXPODS is required and must be at least 1, max: ${max}`);
  if (max < min) throw new UsageError(`error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: ${max}, min: ${min}`);
  const targets = await ctx.targets(args);
  const ns = pathSegment(ctx.ns, 'namespace');
  const errors: unknown[] = [];
  let count = 0;
  for (const t of targets) {
    try {
      await autoscaleOne(ctx, t, { min, max, cpuPercent, ns, out, dry });
      count++;
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length) {
    for (const e of errors) ctx.io.err(`${errorLine(e)}\n`);
    return 1;
  }
  if (!count) throw new UsageError('error: no objects passed to autoscale');
  return 0;
}

interface Limits {
  min: number;
  max: number;
  cpuPercent: number;
  ns: string;
  out: ReturnType<typeof parseOutput>;
  dry: Ctx['dryRun'];
}

async function autoscaleOne(ctx: Ctx, t: Target, o: Limits): Promise<void> {
  const refName = t.name ?? '';
  // Named objects are read as the builder reads them; one that is not there is that object's error.
  if (!ctx.g.filenames.length) await ctx.client.get<KubeObject>(pathOf(t));
  const m = t.mapping;
  const scale = (await ctx.discovery.all()).some((x) => x.group === m.group && x.version === m.version && x.resource === `${m.resource}/scale`);
  if (!scale)
    throw new UsageError(
      `error: cannot autoscale a ${m.kind}: could not find scale subresource for ${m.group}/${m.version}, Resource=${m.resource} in discovery information`,
    );
  const name = ctx.g.name || refName;
  const scaleTargetRef = { kind: m.kind, name: refName, apiVersion: apiVersionOf(m) };
  const min = o.min > 0 ? { minReplicas: o.min } : {};
  // Members in the Go types' order, which a client dry run's `-o json` shows.
  const v2: JsonObject = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v2',
    metadata: { name },
    spec: {
      scaleTargetRef,
      ...min,
      maxReplicas: o.max,
      ...(o.cpuPercent >= 0
        ? { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: o.cpuPercent } } }] }
        : {}),
    },
  };
  const dry = o.dry;
  if (dry === 'client') {
    // What the client prints is the object as Go leaves it: an unset time, the status's zero values.
    const shown = { ...v2, metadata: { name, creationTimestamp: null }, status: { desiredReplicas: 0, currentMetrics: null } };
    if (o.out.t === 'json') ctx.io.out(`${JSON.stringify(shown, null, 4)}\n`);
    else print(ctx, o.out, shown, 'created (dry run)');
    return;
  }
  const query = ctx.writeQuery('kubectl-autoscale');
  const verb = `autoscaled${dry === 'server' ? ' (server dry run)' : ''}`;
  try {
    print(ctx, o.out, await ctx.client.post<JsonObject>(`/apis/autoscaling/v2/namespaces/${o.ns}/horizontalpodautoscalers`, v2, query), verb);
  } catch {
    // A server without autoscaling/v2 (or refusing the v2 object) is asked for the v1 form, as kubectl falls back.
    // The v2 error is dropped (upstream logs it at -v=1); the v1 one is the command's.
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef, ...min, maxReplicas: o.max, ...(o.cpuPercent >= 0 ? { targetCPUUtilizationPercentage: o.cpuPercent } : {}) },
    };
    print(ctx, o.out, await ctx.client.post<JsonObject>(`/apis/autoscaling/v1/namespaces/${o.ns}/horizontalpodautoscalers`, v1, query), verb);
  }
}

/**
 * Prints one result. An output format autoscale has no printer for fails only here, after the
 * create — and, as upstream's handleHPA counts it a failure of the v2 object, after the v1 one too.
 */
function print(ctx: Ctx, out: Limits['out'], obj: JsonObject, verb: string): void {
  if (out.t === 'table' && ctx.g.output)
    throw new UsageError(
      `error: unable to match a printer suitable for the output format "${ctx.g.output}", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml`,
    );
  const meta = obj.metadata as { name?: string } | undefined;
  if (out.t === 'table') ctx.io.out(`${HPA_REF}/${meta?.name ?? ''} ${verb}\n`);
  else ctx.io.out(printObjects(out, [obj], true, { showManagedFields: ctx.g.showManagedFields, nameOf: () => `${HPA_REF}/${meta?.name ?? ''}` }));
}
