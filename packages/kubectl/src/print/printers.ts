/**
 * Output as kubectl prints it: `-o json|yaml|name|jsonpath=|jsonpath-file=|
 * custom-columns=|custom-columns-file=|go-template=|go-template-file=|template=`
 * and the tab-writer columns of its tables.
 */
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { UsageError } from '../flags.js';
import { jsonpath } from '@kubeling/apimachinery';

const { evaluate, relaxed, select } = jsonpath;
import { executeTemplate, goValue } from './gotemplate.js';
import { isObject, type JsonObject } from '../json.js';

export type Output =
  | { t: 'table'; wide: boolean }
  | { t: 'json' }
  | { t: 'yaml' }
  | { t: 'name' }
  | { t: 'jsonpath'; template: string }
  | { t: 'custom-columns'; spec: string }
  | { t: 'go-template'; template: string };

const FORMATS =
  'custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml';

export function parseOutput(o: string | undefined, template?: string): Output {
  if (!o) return template ? { t: 'go-template', template } : { t: 'table', wide: false };
  const eq = o.indexOf('=');
  const kind = eq >= 0 ? o.slice(0, eq) : o;
  const arg = eq >= 0 ? o.slice(eq + 1) : template;
  const need = () => {
    if (!arg) throw new UsageError(`error: ${kind} template format specified but no template given`);
    return arg;
  };
  switch (kind) {
    case 'wide':
      return { t: 'table', wide: true };
    case 'json':
    case 'yaml':
    case 'name':
      return { t: kind };
    case 'jsonpath':
      return { t: 'jsonpath', template: need() };
    case 'jsonpath-file':
      return { t: 'jsonpath', template: readFileSync(need(), 'utf8') };
    case 'custom-columns':
      return { t: 'custom-columns', spec: need() };
    case 'custom-columns-file':
      return { t: 'custom-columns', spec: customColumnsFile(readFileSync(need(), 'utf8')) };
    case 'go-template':
    case 'template':
      return { t: 'go-template', template: need() };
    case 'go-template-file':
    case 'templatefile':
      return { t: 'go-template', template: readFileSync(need(), 'utf8') };
    default:
      throw new UsageError(`error: unable to match a printer suitable for the output format "${o}", allowed formats are: ${FORMATS}`);
  }
}

/** A custom-columns file: a header line of names and a line of JSONPath expressions. */
function customColumnsFile(text: string): string {
  const [names, paths] = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => l.trim().split(/\s+/));
  if (!names || !paths || names.length !== paths.length) throw new UsageError('error: expected a header line and a line of paths of the same length');
  return names.map((n, i) => `${n}:${paths[i]}`).join(',');
}

/** Column layout of kubectl's tabwriter: min width 6, three spaces of padding, the last column unpadded. */
export function columns(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(Math.max(widths[i]! + 3, 6))))
          .join('')
          .trimEnd(),
      )
      .join('\n') + (rows.length ? '\n' : '')
  );
}

/** Objects as kubectl prints them: keys sorted (Go maps), managedFields hidden unless asked. */
export function printable(o: JsonObject, showManaged: boolean): JsonObject;
export function printable(o: unknown, showManaged: boolean): unknown;
export function printable(o: unknown, showManaged: boolean): unknown {
  if (Array.isArray(o)) return o.map((x) => printable(x, showManaged));
  if (isObject(o)) {
    const out: JsonObject = {};
    for (const k of Object.keys(o).sort()) {
      if (!showManaged && k === 'managedFields') continue;
      out[k] = printable(o[k], showManaged);
    }
    return out;
  }
  return o;
}

/** YAML as kubectl writes it (go-yaml's YAML 1.1 rules: timestamps, yes/no/on/off and the like stay quoted strings). */
export const toYaml = (o: unknown): string => stringify(o, { indentSeq: false, lineWidth: 0, version: '1.1' });

export function listOf(items: JsonObject[]): JsonObject {
  return { apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } };
}

/**
 * Prints objects in a non-table format. `single` prints the one object bare
 * (kubectl does so for a get by one name); otherwise a `List`.
 */
export function printObjects<T extends JsonObject>(
  out: Output,
  objs: T[],
  single: boolean,
  opts: { showManagedFields?: boolean; noHeaders?: boolean; nameOf: (o: T) => string },
): string {
  const data = single && objs.length === 1 ? objs[0]! : listOf(objs);
  switch (out.t) {
    case 'json':
      return JSON.stringify(printable(data, !!opts.showManagedFields), null, 4) + '\n';
    case 'yaml':
      return toYaml(printable(data, !!opts.showManagedFields));
    case 'name':
      return objs.map((o) => `${opts.nameOf(o)}\n`).join('');
    case 'jsonpath':
      return evaluate(out.template, data);
    case 'go-template':
      return executeTemplate(out.template, JSON.parse(JSON.stringify(data)));
    case 'custom-columns': {
      const cols = out.spec.split(',').map((c) => {
        const i = c.indexOf(':');
        if (i <= 0) throw new UsageError(`error: unexpected custom-columns spec: ${c}, expected <header>:<json-path-expr>`);
        return { header: c.slice(0, i), path: relaxed(c.slice(i + 1)) };
      });
      const rows = objs.map((o) =>
        cols.map((c) => {
          const vals = select(c.path, o);
          // Each value as Go's %v prints it (maps as map[k:v]).
          return vals.length ? vals.map((v) => goValue(v)).join(',') : '<none>';
        }),
      );
      return columns(opts.noHeaders ? rows : [cols.map((c) => c.header), ...rows]);
    }
    case 'table':
      throw new Error('tables print from the server');
  }
}
