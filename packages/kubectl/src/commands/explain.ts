/**
 * `explain TYPE[.field.path]` (`--recursive`, `--api-version`) from the
 * server's OpenAPI v3 documents, in kubectl's plaintext layout.
 */
import { UsageError } from '../flags.js';
import type { Ctx } from '../ctx.js';

/** An OpenAPI v3 schema, as far as explain reads it. */
interface Schema {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-group-version-kind'?: { group?: string; version: string; kind: string }[];
}

interface Doc {
  components?: { schemas?: Record<string, Schema> };
}

/** The OpenAPI v3 index: where each group-version's document is. */
interface Index {
  paths?: Record<string, { serverRelativeURL?: string }>;
}

function resolve(doc: Doc, s: Schema | undefined): { schema: Schema; name?: string } {
  let cur = s ?? {};
  let name: string | undefined;
  for (let i = 0; i < 10; i++) {
    const ref = cur.$ref ?? (Array.isArray(cur.allOf) && cur.allOf.length === 1 ? cur.allOf[0]!.$ref : undefined);
    if (!ref) break;
    name = String(ref).split('/').pop()!;
    const target = doc.components?.schemas?.[name] ?? {};
    cur = { ...target, ...(cur.description && !target.description ? { description: cur.description } : {}) };
  }
  return { schema: cur, ...(name ? { name } : {}) };
}

/** `<string>`, `<[]Container>`, `<map[string]string>`, `<ObjectMeta>` as kubectl names types. */
function typeName(doc: Doc, s: Schema): string {
  const { schema, name } = resolve(doc, s);
  const short = name?.split('.').pop();
  if (schema.type === 'array') return `[]${typeName(doc, schema.items ?? {})}`;
  if (schema.type === 'object' && schema.additionalProperties && !schema.properties)
    return `map[string]${typeName(doc, schema.additionalProperties === true ? {} : schema.additionalProperties)}`;
  if (short && (schema.type === 'object' || schema.properties)) return short;
  if (schema['x-kubernetes-int-or-string']) return 'IntOrString';
  if (schema.type === 'object' || schema.properties) return 'Object';
  return schema.type ?? short ?? 'Object';
}

const indent = (text: string, n: number) =>
  text
    .trim()
    .split('\n')
    .map((l) => (l ? ' '.repeat(n) + l : l))
    .join('\n');

export async function explain(ctx: Ctx, args: string[]): Promise<number> {
  const [spec] = args;
  if (!spec)
    throw new UsageError('error: You must specify the type of resource to explain. Use "kubectl api-resources" for a complete list of supported resources.');
  const [type, ...path] = spec.split('.');
  const m = await ctx.mapping(type!);
  const gv = m.group ? `apis/${m.group}/${m.version}` : `api/${m.version}`;
  const index = await ctx.client.get<Index>('/openapi/v3');
  const url = index.paths?.[gv]?.serverRelativeURL ?? `/openapi/v3/${gv}`;
  const doc = await ctx.client.get<Doc>(url);
  const root = Object.entries(doc.components?.schemas ?? {}).find(([, s]) =>
    (s['x-kubernetes-group-version-kind'] ?? []).some((g) => (g.group ?? '') === m.group && g.version === m.version && g.kind === m.kind),
  );
  if (!root) throw new UsageError(`error: couldn't find resource for "${spec}"`);
  let cur: Schema = root[1];
  let fieldName: string | undefined;
  let fieldSchema: Schema | undefined;
  for (const p of path) {
    let { schema } = resolve(doc, cur);
    if (schema.type === 'array') schema = resolve(doc, schema.items).schema;
    const next = schema.properties?.[p];
    if (!next) throw new UsageError(`error: field "${p}" does not exist`);
    fieldName = p;
    fieldSchema = next;
    cur = next;
  }
  const lines: string[] = [];
  if (m.group) lines.push(`GROUP:      ${m.group}`);
  lines.push(`KIND:       ${m.kind}`, `VERSION:    ${m.version}`, '');
  if (fieldName) lines.push(`FIELD: ${fieldName} <${typeName(doc, fieldSchema!)}>`, '', '');
  let { schema } = resolve(doc, cur);
  if (schema.type === 'array') schema = resolve(doc, schema.items).schema;
  const desc = fieldSchema?.description ?? schema.description ?? '<empty>';
  lines.push('DESCRIPTION:', indent(desc, 4), '    ');
  const props = schema.properties;
  if (props) {
    lines.push('FIELDS:');
    const required = new Set(schema.required ?? []);
    const fields = (s: Schema, level: number, seen: Set<string>) => {
      const { schema: r } = resolve(doc, s);
      const inner = r.type === 'array' ? resolve(doc, r.items).schema : r;
      for (const [k, v] of Object.entries(inner.properties ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
        const req = level === 1 && required.has(k) ? ' -required-' : '';
        if (ctx.g.recursive) {
          lines.push(`${'  '.repeat(level)}${k}\t<${typeName(doc, v)}>${req}`);
          const { name } = resolve(doc, v.type === 'array' ? (v.items ?? {}) : v);
          if (name && !seen.has(name)) fields(v, level + 1, new Set([...seen, name]));
        } else {
          lines.push(`  ${k}\t<${typeName(doc, v)}>${req}`, indent(v.description ?? resolve(doc, v).schema.description ?? '<no description>', 4), '');
        }
      }
    };
    fields(schema, 1, new Set());
  }
  ctx.io.out(lines.join('\n').replace(/\n+$/, '\n') + '\n');
  return 0;
}
