/**
 * CEL declarations of structural schemas (k8s.io/apiserver/pkg/cel/common/
 * schemas.go `SchemaDeclType`, cel/types.go `DeclType`, cel/escaping.go):
 *
 * - objects with properties become struct types whose fields are the
 *   escapable property names (`a-b` → `a__dash__b`, keywords → `__in__`);
 * - objects with additionalProperties become `map(string, V)`; arrays
 *   `list(T)`; int-or-string `dyn`; strings with format byte/duration/
 *   date/date-time become bytes/duration/timestamp;
 * - every type carries MaxElements (maxLength×4, maxItems, maxProperties, or
 *   what fits in a 3 MiB request given the element's minimum serialized size)
 *   for the cost estimator, and MinSerializedSize for the rule cardinality.
 *
 * At the root of a resource (the custom resource, or an embedded resource)
 * `apiVersion`, `kind`, `metadata.name` and `metadata.generateName` are always
 * declared (WithTypeAndObjectMeta).
 */
import type { JSONSchemaProps } from '../types.js';
import type { Estimate } from './cost.js';
import { type CelType, listOf, mapOf, structOf, T } from './types.js';

export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;
const MAX_DURATION_SIZE_JSON = 32;
const MAX_DATETIME_SIZE_JSON = 32;
const MIN_DURATION_SIZE_JSON = 3;
const JSON_DATE_SIZE = 12;
const MIN_DATETIME_SIZE_JSON = 21;
const MIN_STRING_SIZE = 2;
const MIN_BOOL_SIZE = 4;
const MIN_NUMBER_SIZE = 1;

export interface DeclField {
  name: string;
  type: DeclType;
  required: boolean;
}

export interface DeclType {
  cel: CelType;
  maxElements: number;
  minSerializedSize: number;
  fields?: Map<string, DeclField>;
  elem?: DeclType;
  key?: DeclType;
}

/** CEL's reserved words (cel-go parser): not usable as identifiers, escaped in field names. */
export const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** cel.Escape: a property name as a CEL identifier, or undefined when it cannot be one. */
export function escapeName(ident: string): string | undefined {
  if (ident === '' || /^[0-9]/.test(ident)) return undefined;
  if (RESERVED.has(ident)) return `__${ident}__`;
  if (/[^a-zA-Z0-9_./-]/.test(ident)) return undefined;
  return ident.replace(/__|[-./]/g, (m) => ({ __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' })[m]!);
}

/** cel.Unescape: the property name of an escaped identifier, or undefined when it has an invalid escape. */
export function unescapeName(escaped: string): string | undefined {
  let ok = true;
  const out = escaped.replace(/__[^_]+__/g, (s) => {
    const c = s.slice(2, -2);
    const m: Record<string, string> = { underscores: '__', dot: '.', dash: '-', slash: '/' };
    if (m[c] !== undefined) return m[c]!;
    if (RESERVED.has(c)) {
      if (s.length !== escaped.length) ok = false;
      return c;
    }
    ok = false;
    return '';
  });
  return ok ? out : undefined;
}

const simple = (cel: CelType, minSerializedSize: number, maxElements = 0): DeclType => ({ cel, minSerializedSize, maxElements });

function maxStringLengthPerRequest(s: JSONSchemaProps): number {
  if (s['x-kubernetes-int-or-string']) return MAX_REQUEST_SIZE_BYTES - 2;
  switch (s.format) {
    case 'duration':
      return MAX_DURATION_SIZE_JSON;
    case 'date':
      return JSON_DATE_SIZE;
    case 'date-time':
      return MAX_DATETIME_SIZE_JSON;
    default:
      return MAX_REQUEST_SIZE_BYTES - 2;
  }
}

const zeroIfNegative = (n: number) => Math.max(0, n);

/** WithTypeAndObjectMeta: kind, apiVersion, metadata.name and metadata.generateName are always present at a resource root. */
export function withTypeAndObjectMeta(s: JSONSchemaProps): JSONSchemaProps {
  const p = s.properties;
  const isStr = (x: JSONSchemaProps | undefined) => x?.type === 'string';
  if (
    p &&
    isStr(p.kind) &&
    isStr(p.apiVersion) &&
    p.metadata?.type === 'object' &&
    isStr(p.metadata.properties?.name) &&
    isStr(p.metadata.properties?.generateName)
  ) {
    return s;
  }
  const str: JSONSchemaProps = { type: 'string' };
  return {
    ...s,
    properties: {
      ...(p ?? {}),
      kind: str,
      apiVersion: str,
      metadata: { type: 'object', properties: { name: str, generateName: str } },
    },
  };
}

/**
 * SchemaDeclType: the CEL declaration of a structural schema, or undefined
 * when the schema is not exposed to CEL. `name` names object types (upstream
 * names the rule's root `selfType<n>` and nested objects by their path).
 */
export function schemaDeclType(schema: JSONSchemaProps | undefined, isResourceRoot: boolean, name = 'object'): DeclType | undefined {
  if (!schema) return undefined;
  if (schema['x-kubernetes-int-or-string']) {
    const max = schema.maxLength !== undefined ? zeroIfNegative(schema.maxLength) * 4 : maxStringLengthPerRequest(schema);
    return simple(T.dyn, 1, max);
  }
  const s = isResourceRoot ? withTypeAndObjectMeta(schema) : schema;
  switch (s.type) {
    case 'array': {
      const items = Array.isArray(s.items) ? undefined : s.items;
      if (!items) return undefined;
      const elem = schemaDeclType(items, !!items['x-kubernetes-embedded-resource'], `${name}.@idx`);
      if (!elem) return undefined;
      const max = s.maxItems !== undefined ? zeroIfNegative(s.maxItems) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSerializedSize + 1));
      return { cel: listOf(elem.cel), maxElements: max, minSerializedSize: 2, elem };
    }
    case 'object': {
      const ap = s.additionalProperties;
      if (ap && typeof ap === 'object') {
        const elem = schemaDeclType(ap, !!ap['x-kubernetes-embedded-resource'], `${name}.@elem`);
        if (!elem) return undefined;
        const max = s.maxProperties !== undefined ? zeroIfNegative(s.maxProperties) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSerializedSize + 6));
        // upstream's key type is the plain StringType, whose MaxElements is 0
        const key = simple(T.string, MIN_STRING_SIZE);
        return { cel: mapOf(T.string, elem.cel), maxElements: max, minSerializedSize: 2, elem, key };
      }
      const required = new Set(s.required ?? []);
      const fields = new Map<string, DeclField>();
      let minSize = 2;
      for (const [prop, ps] of Object.entries(s.properties ?? {})) {
        const escaped = escapeName(prop);
        const ft = schemaDeclType(ps, !!ps['x-kubernetes-embedded-resource'], `${name}.${escaped ?? prop}`);
        if (!ft) continue;
        if (escaped) fields.set(escaped, { name: escaped, type: ft, required: required.has(prop) });
        if (required.has(prop) && ps.default === undefined) minSize += prop.length + ft.minSerializedSize + 4;
      }
      const celFields = new Map([...fields].map(([k, f]) => [k, f.type.cel]));
      return { cel: structOf(name, celFields), maxElements: 0, minSerializedSize: minSize, fields };
    }
    case 'string': {
      switch (s.format) {
        case 'byte':
          return simple(T.bytes, MIN_STRING_SIZE, s.maxLength !== undefined ? zeroIfNegative(s.maxLength) : maxStringLengthPerRequest(s));
        case 'duration':
          return simple(T.duration, MIN_DURATION_SIZE_JSON, maxStringLengthPerRequest(s));
        case 'date':
          return simple(T.timestamp, JSON_DATE_SIZE, maxStringLengthPerRequest(s));
        case 'date-time':
          return simple(T.timestamp, MIN_DATETIME_SIZE_JSON, maxStringLengthPerRequest(s));
      }
      let max: number;
      if (s.maxLength !== undefined) max = zeroIfNegative(s.maxLength) * 4;
      else if (s.enum?.length) max = Math.max(0, ...s.enum.map((e) => (typeof e === 'string' ? Buffer.byteLength(e) : 0)));
      else max = maxStringLengthPerRequest(s);
      return simple(T.string, MIN_STRING_SIZE, max);
    }
    case 'boolean':
      return simple(T.bool, MIN_BOOL_SIZE);
    case 'number':
      return simple(T.double, MIN_NUMBER_SIZE);
    case 'integer':
      return simple(T.int, MIN_NUMBER_SIZE);
    default:
      return undefined;
  }
}

/**
 * compilation.go's sizeEstimator: the MaxElements of the DeclType at a path
 * (`self`, then field names, `@items`, `@values`, `@keys`); the first element
 * (the variable) is skipped, as upstream skips it.
 */
export function declSizeEstimator(root: DeclType): (path: readonly string[]) => Estimate | undefined {
  return (path) => {
    if (!path.length) return undefined;
    let cur: DeclType | undefined = root;
    for (const name of path.slice(1)) {
      if (!cur) return undefined;
      if (name === '@items' || name === '@values') cur = cur.elem;
      else if (name === '@keys') cur = cur.key;
      else cur = cur.fields?.get(name)?.type;
    }
    return cur ? { min: 0, max: cur.maxElements } : undefined;
  };
}

/** compilation.go maxCardinality: how many times data of this minimum size can repeat in one request. */
export const maxCardinality = (minSerializedSize: number): number => Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize + 1));
