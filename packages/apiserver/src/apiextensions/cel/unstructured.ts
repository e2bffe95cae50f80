/**
 * JSON data of a custom resource as CEL values, typed by its structural
 * schema (k8s.io/apiserver/pkg/cel/common/values.go `UnstructuredToVal`):
 *
 * - `integer` data is a CEL int, `number` a double (also when written as 1),
 *   `x-kubernetes-int-or-string` an int or a string;
 * - strings of format byte/duration/date/date-time are bytes/duration/
 *   timestamp (a malformed one is an error value, raised only when used);
 * - objects with properties answer field selection by escaped property name,
 *   treat null fields as absent and ignore undeclared fields; objects with
 *   additionalProperties are maps; embedded resources gain apiVersion, kind
 *   and metadata;
 * - lists keep x-kubernetes-list-type: set lists compare without order,
 *   map lists by their keys (and merge on `+`).
 *
 * Conversion is lazy: nested values are converted when a rule reaches them.
 */
import type { JSONSchemaProps } from '../types.js';
import { parseDate, parseDateTime, parseDuration } from './lib-time.js';
import { escapeName, unescapeName, withTypeAndObjectMeta } from './schema-decl.js';
import { ArrayList, CelError, celEquals, ListV, MapV, NativeMap, OpaqueV, type Val } from './values.js';

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep equality of JSON data (Go's equality.Semantic.DeepEqual on unstructured values). */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** A schema's items schema (structural schemas have one). */
const itemsOf = (s: JSONSchemaProps) => (Array.isArray(s.items) ? undefined : s.items);

/** Converts JSON data to a CEL value as upstream's UnstructuredToVal; an invalid datum is a CelError. */
export function unstructuredToVal(v: Json, s: JSONSchemaProps): Val | CelError {
  if (v === null || v === undefined) return s.nullable ? null : new CelError('invalid data, got null for schema with nullable=false');
  if (s['x-kubernetes-int-or-string']) {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    return new CelError('invalid data, expected XIntOrString value to be either a string or integer');
  }
  switch (s.type) {
    case 'object': {
      if (!isObj(v)) return new CelError('invalid data, expected a map for the provided schema with type=object');
      if (s['x-kubernetes-embedded-resource'] || s.properties) {
        return new JsonObject(v, s['x-kubernetes-embedded-resource'] ? withTypeAndObjectMeta(s) : s);
      }
      if (s.additionalProperties && typeof s.additionalProperties === 'object') return new JsonMap(v, s.additionalProperties);
      if (s['x-kubernetes-preserve-unknown-fields']) return new JsonObject(v, { ...s, properties: {} });
      return new CelError('invalid object type, expected either Properties or AdditionalProperties with Allows=true and non-empty Schema');
    }
    case 'array': {
      if (!Array.isArray(v)) return new CelError('invalid data, expected an array for the provided schema with type=array');
      const items = itemsOf(s);
      if (!items) return new CelError('invalid array type, expected Items with a non-empty Schema');
      return new JsonList(v, items, s['x-kubernetes-list-type'] ?? 'atomic', s['x-kubernetes-list-map-keys']);
    }
    case 'string': {
      if (typeof v !== 'string') return new CelError(`invalid data, expected string, got ${goType(v)}`);
      try {
        switch (s.format) {
          case 'duration':
            return parseDuration(v);
          case 'date':
            return parseDate(v);
          case 'date-time':
            return parseDateTime(v);
          case 'byte':
            if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw new CelError('illegal base64 data');
            return new Uint8Array(Buffer.from(v, 'base64'));
        }
      } catch (e) {
        const label =
          s.format === 'date-time'
            ? 'date-time formatted string'
            : s.format === 'date'
              ? 'date formatted string'
              : s.format === 'byte'
                ? 'byte formatted string'
                : 'duration';
        return new CelError(`Invalid ${label} ${v}: ${(e as CelError).message}`);
      }
      return v;
    }
    case 'number':
      return typeof v === 'number' ? v : new CelError(`invalid data, expected float, got ${goType(v)}`);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : new CelError(`invalid data, expected int, got ${goType(v)}`);
    case 'boolean':
      return typeof v === 'boolean' ? v : new CelError(`invalid data, expected bool, got ${goType(v)}`);
  }
  if (s['x-kubernetes-preserve-unknown-fields']) return new PreservedV(v);
  return new CelError(
    `invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got ${s.type ?? ''}`,
  );
}

const goType = (v: Json) =>
  typeof v === 'number'
    ? 'float64'
    : typeof v === 'string'
      ? 'string'
      : typeof v === 'boolean'
        ? 'bool'
        : Array.isArray(v)
          ? '[]interface {}'
          : 'map[string]interface {}';

/** Converts, turning an invalid datum into a thrown error (raised where the interpreter reads it). */
function convert(v: Json, s: JSONSchemaProps): Val {
  const r = unstructuredToVal(v, s);
  if (r instanceof CelError) throw r;
  return r;
}

export class JsonList extends ListV {
  /** index errors read `index out of bounds: N` as upstream's unstructuredList. */
  readonly unstructured = true;
  private cache: Val[] | undefined;
  constructor(
    private readonly raw: readonly Json[],
    private readonly itemSchema: JSONSchemaProps,
    listType: 'atomic' | 'set' | 'map',
    mapKeys: readonly string[] | undefined,
  ) {
    super();
    this.listType = listType;
    this.mapKeys = mapKeys?.map((k) => escapeName(k) ?? k);
  }
  get size(): number {
    return this.raw.length;
  }
  get(i: number): Val {
    return this.cache ? this.cache[i]! : convert(this.raw[i], this.itemSchema);
  }
  items(): Val[] {
    this.cache ??= this.raw.map((x) => convert(x, this.itemSchema));
    return this.cache;
  }
}

/** An object with properties: field access by escaped name, null fields absent, undeclared fields hidden. */
export class JsonObject extends MapV {
  private readonly cache = new Map<string, Val>();
  constructor(
    readonly raw: Readonly<Record<string, Json>>,
    private readonly schema: JSONSchemaProps,
  ) {
    super();
    this.isObject = true;
  }
  get size(): number {
    return Object.keys(this.raw).length;
  }
  find(key: Val): Val | undefined {
    if (typeof key !== 'string') return undefined;
    const k = unescapeName(key);
    if (k === undefined || !Object.hasOwn(this.raw, k)) return undefined;
    const v = this.raw[k];
    if (v === null || v === undefined) return undefined;
    const ps = this.schema.properties?.[k];
    if (!ps) return undefined;
    let c = this.cache.get(k);
    if (c === undefined) {
      c = convert(v, ps);
      this.cache.set(k, c);
    }
    return c;
  }
  keys(): Val[] {
    return Object.keys(this.raw)
      .filter((k) => this.schema.properties?.[k])
      .map((k) => escapeName(k) ?? k);
  }
  /** Upstream's Equal on objects: declared fields compared as CEL values, undeclared ones as JSON. */
  override customEquals(o: MapV): boolean {
    if (this.size !== o.size) return false;
    for (const [k, v] of Object.entries(this.raw)) {
      const ps = this.schema.properties?.[k];
      if (ps) {
        const ov = o.find(escapeName(k) ?? k);
        const tv = v === null ? undefined : this.find(escapeName(k) ?? k);
        if (ov === undefined || tv === undefined) {
          if (ov !== tv) return false;
        } else if (!celEquals(tv, ov)) return false;
      } else if (o instanceof JsonObject && Object.hasOwn(o.raw, k) && !jsonEqual(o.raw[k], v)) return false;
    }
    return true;
  }
}

/** An object with additionalProperties: a map with string keys. */
export class JsonMap extends MapV {
  private readonly cache = new Map<string, Val>();
  constructor(
    private readonly raw: Readonly<Record<string, Json>>,
    private readonly valueSchema: JSONSchemaProps,
  ) {
    super();
  }
  get size(): number {
    return Object.keys(this.raw).length;
  }
  find(key: Val): Val | undefined {
    if (typeof key !== 'string' || !Object.hasOwn(this.raw, key)) return undefined;
    let c = this.cache.get(key);
    if (c === undefined) {
      c = convert(this.raw[key], this.valueSchema);
      this.cache.set(key, c);
    }
    return c;
  }
  keys(): Val[] {
    return Object.keys(this.raw);
  }
}

/** Data kept by x-kubernetes-preserve-unknown-fields without a type (upstream unknownPreserved): only equality is defined. */
export class PreservedV extends OpaqueV {
  readonly typeName = 'unknown';
  constructor(readonly raw: Json) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof PreservedV && jsonEqual(o.raw, this.raw);
  }
}

/**
 * JSON data without a schema as CEL values (cel-go's NativeToValue over a
 * decoded object, as admission policies see objects): integral numbers are
 * ints, other numbers doubles, objects maps, arrays lists.
 */
export function jsonToVal(v: Json): Val {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return new ArrayList(v.map(jsonToVal));
  if (isObj(v)) return new NativeMap(Object.entries(v).map(([k, x]) => [k, jsonToVal(x)] as [Val, Val]));
  return null;
}
