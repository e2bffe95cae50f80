/**
 * `get`: server-side Tables (`-o wide`, `--show-labels`, `-L`, `--no-headers`,
 * `-A`), the other printers, several kinds at once and `all`, and `-w` /
 * `--watch-only`, which keep printing rows as the watch delivers them.
 */
import type { KubeList, KubeObject, ObjectMeta } from '@kubeling/api';
import type { Status } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, kindRef, pathOf, type Target } from '../ctx.js';
import { columns, parseOutput, printObjects, type Output } from '../print/printers.js';
import { jsonpath } from '@kubeling/apimachinery';

const { relaxed, select } = jsonpath;

const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** meta.k8s.io/v1 Table, as kubectl reads it; each row carries its object (its metadata at least). */
interface Table {
  columnDefinitions?: { name: string; priority?: number }[];
  rows?: { cells: unknown[]; object?: KubeObject }[];
  metadata?: { resourceVersion?: string };
}

interface TableData {
  header: string[];
  rows: string[][];
  resourceVersion?: string | undefined;
}

function tableQuery(ctx: Ctx): Record<string, string> {
  const g = ctx.g;
  return { includeObject: 'Metadata', ...(g.selector ? { labelSelector: g.selector } : {}), ...(g.fieldSelector ? { fieldSelector: g.fieldSelector } : {}) };
}

/** Turns a server Table into kubectl's rows for the flags in effect. */
function rowsOf(ctx: Ctx, t: Target, table: Table, wide: boolean, prefixKind: boolean): TableData {
  const g = ctx.g;
  const defs = table.columnDefinitions ?? [];
  const show = defs.map((d, i) => ({ d, i })).filter(({ d }) => wide || (d.priority ?? 0) === 0);
  const withNs = g.allNamespaces && t.mapping.namespaced;
  const header = [
    ...(withNs ? ['NAMESPACE'] : []),
    ...show.map(({ d }) => String(d.name).toUpperCase()),
    ...g.labelColumns.flatMap((l) => l.split(',')).map((l) => l.split('/').pop()!.toUpperCase()),
    ...(g.showLabels ? ['LABELS'] : []),
  ];
  const nameCol = show.findIndex(({ d }) => String(d.name).toUpperCase() === 'NAME');
  const rows = (table.rows ?? []).map((r) => {
    const meta: ObjectMeta = r.object?.metadata ?? {};
    const labels = meta.labels ?? {};
    const cells = show.map(({ i }) => String(r.cells[i] ?? ''));
    if ((prefixKind || g.showKind) && nameCol >= 0) cells[nameCol] = `${kindRef(t.mapping)}/${cells[nameCol]}`;
    return [
      ...(withNs ? [meta.namespace ?? ''] : []),
      ...cells,
      ...g.labelColumns.flatMap((l) => l.split(',')).map((l) => labels[l] ?? ''),
      ...(g.showLabels
        ? [
            Object.entries(labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '<none>',
          ]
        : []),
    ];
  });
  return { header, rows, resourceVersion: table.metadata?.resourceVersion };
}

async function fetchTable(ctx: Ctx, t: Target, wide: boolean, prefixKind: boolean): Promise<TableData> {
  const sortBy = ctx.g.sortBy;
  const query = { ...(t.name ? {} : tableQuery(ctx)), includeObject: sortBy ? 'Object' : 'Metadata' };
  const table = await ctx.client.request<Table>({ path: pathOf(t), query, accept: TABLE_ACCEPT });
  if (sortBy && Array.isArray(table.rows)) sortItems(table.rows, sortBy, (r) => r.object);
  return rowsOf(ctx, t, table, wide, prefixKind);
}

/** `--sort-by=<jsonpath>` over items (objects, or table rows through `objectOf`): numbers by value, the rest as text, those without the field first. */
function sortItems<T>(items: T[], expr: string, objectOf: (x: T) => unknown): void {
  const path = relaxed(expr);
  const cmp = (a: unknown, b: unknown) => {
    if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  };
  const keyed = items.map((x) => ({ x, k: select(path, objectOf(x))[0] }));
  keyed.sort((a, b) => cmp(a.k, b.k));
  keyed.forEach((e, i) => (items[i] = e.x));
}

export async function get(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  if (!args.length && !g.filenames.length)
    throw new UsageError(
      'You must specify the type of resource to get. Use "kubectl api-resources" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse "kubectl explain <resource>" for a detailed description of that resource (e.g. kubectl explain pods).\nSee \'kubectl get -h\' for help and examples.',
    );
  const out = parseOutput(g.output, g.template);
  const targets = await ctx.targets(args, { allowList: true });
  const multiKind =
    new Set(targets.map((t) => t.mapping.resource)).size > 1 ||
    args[0] === 'all' ||
    (args.length > 0 && args.every((a) => a.includes('/')) && new Set(targets.map((t) => t.mapping.resource)).size > 1);
  if (g.watch || g.watchOnly) {
    if (targets.length !== 1 && new Set(targets.map((t) => t.mapping.resource)).size !== 1)
      throw new UsageError('error: you may only specify a single resource type');
    return watch(ctx, targets, out);
  }
  if (out.t !== 'table') {
    const objs: KubeObject[] = [];
    for (const t of targets) {
      if (t.name) {
        const o = g.ignoreNotFound ? await ctx.getOrNull(pathOf(t)) : await ctx.client.get<KubeObject>(pathOf(t));
        if (o) objs.push({ apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...o });
      } else objs.push(...(await ctx.list(t)));
    }
    const single = targets.length === 1 && !!targets[0]!.name;
    if (single && !objs.length) return 0;
    if (g.sortBy) sortItems(objs, g.sortBy, (o) => o);
    // As kubectl: the printers other than tables print an empty List rather than "No resources found".
    ctx.io.out(
      printObjects(out, objs, single, {
        showManagedFields: g.showManagedFields,
        noHeaders: g.noHeaders,
        nameOf: (o) => `${kindRef(targets.find((t) => t.mapping.kind === o.kind)!.mapping)}/${o.metadata.name}`,
      }),
    );
    return 0;
  }
  // Tables: one per kind; names of one kind merge into one table.
  const groups = new Map<string, Target[]>();
  for (const t of targets) groups.set(t.mapping.resource + '.' + t.mapping.group, [...(groups.get(t.mapping.resource + '.' + t.mapping.group) ?? []), t]);
  let printed = false;
  let errors = 0;
  for (const ts of groups.values()) {
    let data: TableData | undefined;
    for (const t of ts) {
      let d: TableData;
      try {
        d = await fetchTable(ctx, t, out.wide, multiKind);
      } catch (e) {
        if (g.ignoreNotFound && (e as { status?: Partial<Status> }).status?.reason === 'NotFound') continue;
        if (ts.length > 1 || targets.length > 1) {
          errors++;
          ctx.io.err(errorLine(e));
          continue;
        }
        throw e;
      }
      if (!data) data = d;
      else data.rows.push(...d.rows);
    }
    if (!data?.rows.length) continue;
    if (printed) ctx.io.out('\n');
    ctx.io.out(columns(g.noHeaders ? data.rows : [data.header, ...data.rows]));
    printed = true;
  }
  if (!printed && !errors && !(g.ignoreNotFound && targets.every((t) => t.name))) noResources(ctx, targets[0]);
  return errors ? 1 : 0;
}

function errorLine(e: unknown): string {
  const s = (e as { status?: Partial<Status> }).status;
  return s ? `Error from server (${s.reason}): ${s.message}\n` : `error: ${(e as Error).message}\n`;
}

function noResources(ctx: Ctx, t: Target | undefined): void {
  ctx.io.err(
    t?.namespace && (t.mapping.namespaced || ctx.g.allNamespaces === false) && !ctx.g.allNamespaces
      ? `No resources found in ${t.namespace} namespace.\n`
      : 'No resources found\n',
  );
}

/** `get -w`: the current rows (unless `--watch-only`), then a row per event until the signal or the server ends the watch. */
async function watch(ctx: Ctx, targets: Target[], out: Output): Promise<number> {
  const t = targets[0]!;
  const g = ctx.g;
  const single = targets.length === 1 && t.name;
  const fieldSelector = single ? `metadata.name=${t.name}` : g.fieldSelector;
  const query = { ...(g.selector ? { labelSelector: g.selector } : {}), ...(fieldSelector ? { fieldSelector } : {}) };
  const collection = pathOf({ ...t, name: undefined });
  let headerDone = g.noHeaders;
  const widths: number[] = [];
  // Rows after the first print keep its column widths, so a watch stays aligned.
  const printRows = (d: TableData) => {
    const rows = headerDone ? d.rows : [d.header, ...d.rows];
    for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
    ctx.io.out(
      rows
        .map(
          (r) =>
            r
              .map((c, i) => (i === r.length - 1 ? c : c.padEnd(Math.max(widths[i]! + 3, 6))))
              .join('')
              .trimEnd() + '\n',
        )
        .join(''),
    );
    headerDone = true;
  };
  let rv: string | undefined;
  if (out.t === 'table') {
    const table = await ctx.client.request<Table>({ path: collection, query: { ...query, includeObject: 'Metadata' }, accept: TABLE_ACCEPT });
    const d = rowsOf(ctx, t, table, out.wide, false);
    rv = d.resourceVersion;
    if (!g.watchOnly) {
      if (!d.rows.length) noResources(ctx, t);
      else printRows(d);
    }
  } else {
    const list = await ctx.client.get<KubeList>(collection, query);
    rv = list.metadata?.resourceVersion;
    if (!g.watchOnly) for (const o of list.items ?? []) printOne(ctx, out, { apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...o }, t);
  }
  const accept = out.t === 'table' ? TABLE_ACCEPT : undefined;
  // With the Table Accept header each event carries a Table of its object; without it, the object.
  await ctx.client.watch<Table | KubeObject>(
    collection,
    { ...query, ...(rv ? { resourceVersion: rv } : {}), ...(out.t === 'table' ? { includeObject: 'Metadata' } : {}) },
    (ev) => {
      if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') return;
      if (out.t === 'table') printRows(rowsOf(ctx, t, ev.object as Table, out.wide, false));
      else printOne(ctx, out, ev.object as KubeObject, t);
    },
    ctx.io.signal,
    accept,
  );
  return 0;
}

function printOne(ctx: Ctx, out: Output, o: KubeObject, t: Target): void {
  const text = printObjects(out, [o], true, { showManagedFields: ctx.g.showManagedFields, nameOf: (x) => `${kindRef(t.mapping)}/${x.metadata.name}` });
  ctx.io.out(out.t === 'yaml' ? `---\n${text}` : text);
}
