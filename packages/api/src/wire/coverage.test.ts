/**
 * Every field kubeling's schemas declare has a row in the wire tables, so that
 * protobuf carries it and JSON output orders it: a field missing here is added
 * to overlay.ts with its upstream number.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resources } from '../resources.js';
import type { WireField, WireType } from './model.js';
import { kindStruct, wireStruct } from './registry.js';

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  $id?: string;
}

function jsonFields(name: string, out = new Map<string, WireField>()): Map<string, WireField> {
  for (const f of wireStruct(name)?.fields ?? []) {
    if (f.inline && f.type.k === 'struct') jsonFields(f.type.name, out);
    else if (!f.noJson) out.set(f.json, f);
  }
  return out;
}

function walk(schema: Schema, type: WireType, path: string, missing: Set<string>, seen: Set<string>): void {
  if (type.k === 'struct') {
    if (!wireStruct(type.name)) return void missing.add(`${path}: no struct ${type.name}`);
    const mark = `${schema.$id ?? path}|${type.name}`;
    if (seen.has(mark)) return;
    seen.add(mark);
    const fields = jsonFields(type.name);
    for (const [k, sub] of Object.entries(schema.properties ?? {})) {
      const f = fields.get(k);
      if (!f) missing.add(`${type.name}.${k} (${path}.${k})`);
      else walk(sub, f.type, `${path}.${k}`, missing, seen);
    }
  } else if (type.k === 'slice' || type.k === 'wrapper') {
    if (schema.items) walk(schema.items, type.of, `${path}[]`, missing, seen);
  } else if (type.k === 'map') {
    const v = Object.values(schema.patternProperties ?? {})[0] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (v) walk(v, type.of, `${path}{}`, missing, seen);
  }
}

test('every field of every served kind has a wire row', () => {
  const missing = new Set<string>();
  const seen = new Set<string>();
  for (const r of resources) {
    if (r.protobuf === false) continue; // served as JSON only
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    const st = kindStruct(apiVersion, r.kind);
    if (!st) {
      missing.add(`${apiVersion} ${r.kind}: no kind`);
      continue;
    }
    walk(r.schema as Schema, { k: 'struct', name: st.key }, `${apiVersion}.${r.kind}`, missing, seen);
  }
  if (process.env.WIRE_MISSING) console.log([...missing].sort().join('\n'));
  assert.deepEqual([...missing].sort(), []);
});
