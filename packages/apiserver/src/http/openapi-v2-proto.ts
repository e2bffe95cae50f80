/**
 * The OpenAPI v2 document as the gnostic `openapi_v2.Document` protobuf message
 * (github.com/google/gnostic-models openapiv2/OpenAPIv2.proto) — what
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` means, and what
 * client-go's `discovery.OpenAPISchema()` unmarshals for kubectl's validation,
 * `explain` and strategic-merge metadata.
 *
 * The JSON document is mapped the way gnostic's compiler reads it
 * (openapiv2/OpenAPIv2.go `NewDocument` and friends): maps become repeated
 * `Named*` pairs in document order, `x-` keys become `NamedAny` vendor
 * extensions whose `Any.yaml` holds the value written as YAML, a parameter is a
 * body parameter or a query/path/header/formData sub-schema according to `in`,
 * `$ref` parameters and responses are `JsonReference`s, `type` is a `TypeItem`
 * list, `items` an `ItemsItem` list, and `additionalProperties` a schema or a
 * boolean. Fields are written in field-number order, proto3 zero values left
 * out (as Go's proto.Marshal does), messages that are present always written,
 * even when empty.
 */
import YAML from 'yaml';
import type { Json } from './openapi.js';

/**
 * A message under construction, written into one growing buffer; a nested
 * message is finished first and copied in after its tag and length.
 */
class Msg {
  private buf = Buffer.allocUnsafe(64);
  private pos = 0;

  /** The encoded message. */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private varint(n: number): void {
    this.room(10);
    let v = n;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  private text(field: number, s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.tag(field, 2);
    this.varint(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A singular string: left out when empty. */
  string(field: number, s: unknown): this {
    if (typeof s === 'string' && s !== '') this.text(field, s);
    return this;
  }

  /** A repeated string: every element written, empty ones too. */
  strings(field: number, list: unknown): this {
    if (Array.isArray(list)) for (const s of list) this.text(field, String(s));
    return this;
  }

  bool(field: number, b: unknown, keepFalse = false): this {
    if (b === true || (keepFalse && b === false)) {
      this.tag(field, 0);
      this.varint(b ? 1 : 0);
    }
    return this;
  }

  int64(field: number, n: unknown): this {
    if (typeof n === 'number' && Number.isInteger(n) && n > 0) {
      this.tag(field, 0);
      this.varint(n);
    }
    return this;
  }

  double(field: number, n: unknown): this {
    if (typeof n === 'number' && n !== 0) {
      this.tag(field, 1);
      this.room(8);
      this.pos = this.buf.writeDoubleLE(n, this.pos);
    }
    return this;
  }

  message(field: number, m: Msg | undefined): this {
    if (!m) return this;
    const b = m.bytes();
    this.tag(field, 2);
    this.varint(b.length);
    this.room(b.length);
    this.pos += b.copy(this.buf, this.pos);
    return this;
  }

  messages(field: number, ms: Msg[]): this {
    for (const m of ms) this.message(field, m);
    return this;
  }
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const entries = (v: unknown): [string, unknown][] => (isObject(v) ? Object.entries(v) : []);

/**
 * `Any`: the value as YAML (field 2), as gnostic's `NewAny` keeps it. The same
 * few values (actions, group-version-kinds, list types) recur thousands of times:
 * each is written as YAML once.
 */
function any(v: unknown): Msg {
  const key = JSON.stringify(v);
  let yaml = yamlCache.get(key);
  if (yaml === undefined) yamlCache.set(key, (yaml = YAML.stringify(v)));
  return new Msg().string(2, yaml);
}
const yamlCache = new Map<string, string>();

/** `NamedAny` pairs for the `x-` keys of an object. */
function vendorExtensions(o: Json): Msg[] {
  const out: Msg[] = [];
  for (const k in o) if (k.startsWith('x-')) out.push(new Msg().string(1, k).message(2, any(o[k])));
  return out;
}

const named = (name: string, value: Msg) => new Msg().string(1, name).message(2, value);

function schema(s: unknown): Msg {
  const o = isObject(s) ? s : {};
  const m = new Msg()
    .string(1, o.$ref)
    .string(2, o.format)
    .string(3, o.title)
    .string(4, o.description)
    .message(5, 'default' in o ? any(o.default) : undefined)
    .double(6, o.multipleOf)
    .double(7, o.maximum)
    .bool(8, o.exclusiveMaximum)
    .double(9, o.minimum)
    .bool(10, o.exclusiveMinimum)
    .int64(11, o.maxLength)
    .int64(12, o.minLength)
    .string(13, o.pattern)
    .int64(14, o.maxItems)
    .int64(15, o.minItems)
    .bool(16, o.uniqueItems)
    .int64(17, o.maxProperties)
    .int64(18, o.minProperties)
    .strings(19, o.required)
    .messages(20, Array.isArray(o.enum) ? o.enum.map(any) : []);
  // AdditionalPropertiesItem: oneof { Schema schema = 1; bool boolean = 2; }
  if (typeof o.additionalProperties === 'boolean') m.message(21, new Msg().bool(2, o.additionalProperties, true));
  else if (isObject(o.additionalProperties)) m.message(21, new Msg().message(1, schema(o.additionalProperties)));
  // TypeItem { repeated string value = 1; }
  if (o.type !== undefined) m.message(22, new Msg().strings(1, Array.isArray(o.type) ? o.type : [o.type]));
  // ItemsItem { repeated Schema schema = 1; }
  if (o.items !== undefined) m.message(23, new Msg().messages(1, (Array.isArray(o.items) ? o.items : [o.items]).map(schema)));
  m.messages(24, Array.isArray(o.allOf) ? o.allOf.map(schema) : []);
  // Properties { repeated NamedSchema additional_properties = 1; }
  if (isObject(o.properties))
    m.message(
      25,
      new Msg().messages(
        1,
        entries(o.properties).map(([k, v]) => named(k, schema(v))),
      ),
    );
  return m
    .string(26, o.discriminator)
    .bool(27, o.readOnly)
    .message(30, 'example' in o ? any(o.example) : undefined)
    .messages(31, vendorExtensions(o));
}

/**
 * Field numbers of the non-body parameter sub-schemas: required, in,
 * description, name, then (query and formData only) allowEmptyValue, then
 * type, format, collectionFormat, uniqueItems and vendor extensions.
 */
const SUB_SCHEMA: Record<string, { field: number; type: number; format: number; collectionFormat: number; uniqueItems: number; ext: number; empty?: number }> =
  {
    header: { field: 1, type: 5, format: 6, collectionFormat: 8, uniqueItems: 19, ext: 22 },
    formData: { field: 2, type: 6, format: 7, collectionFormat: 9, uniqueItems: 20, ext: 23, empty: 5 },
    query: { field: 3, type: 6, format: 7, collectionFormat: 9, uniqueItems: 20, ext: 23, empty: 5 },
    path: { field: 4, type: 5, format: 6, collectionFormat: 8, uniqueItems: 19, ext: 22 },
  };

/** `Parameter`: oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } */
function parameter(p: Json): Msg {
  if (p.in === 'body') {
    const body = new Msg()
      .string(1, p.description)
      .string(2, p.name)
      .string(3, p.in)
      .bool(4, p.required)
      .message(5, p.schema !== undefined ? schema(p.schema) : undefined)
      .messages(6, vendorExtensions(p));
    return new Msg().message(1, body);
  }
  const f = SUB_SCHEMA[String(p.in)] ?? SUB_SCHEMA.query!;
  const sub = new Msg().bool(1, p.required).string(2, p.in).string(3, p.description).string(4, p.name);
  if (f.empty) sub.bool(f.empty, p.allowEmptyValue);
  sub
    .string(f.type, p.type)
    .string(f.format, p.format)
    .string(f.collectionFormat, p.collectionFormat)
    .bool(f.uniqueItems, p.uniqueItems)
    .messages(f.ext, vendorExtensions(p));
  return new Msg().message(2, new Msg().message(f.field, sub));
}

/** `ParametersItem`: oneof { Parameter parameter = 1; JsonReference json_reference = 2; } */
const parametersItem = (p: unknown): Msg => {
  const o = isObject(p) ? p : {};
  return typeof o.$ref === 'string' ? new Msg().message(2, new Msg().string(1, o.$ref).string(2, o.description)) : new Msg().message(1, parameter(o));
};

const parameters = (list: unknown) => (Array.isArray(list) ? list.map(parametersItem) : []);

/** `Responses { repeated NamedResponseValue response_code = 1; }`, each `ResponseValue { Response response = 1; JsonReference json_reference = 2; }`. */
function responses(r: unknown): Msg {
  const codes = entries(r)
    .filter(([k]) => !k.startsWith('x-'))
    .map(([code, v]) => {
      const o = isObject(v) ? v : {};
      if (typeof o.$ref === 'string') return named(code, new Msg().message(2, new Msg().string(1, o.$ref)));
      // Response { description = 1; SchemaItem schema = 2 (oneof { Schema schema = 1 }); vendor_extension = 5 }
      const response = new Msg()
        .string(1, o.description)
        .message(2, o.schema !== undefined ? new Msg().message(1, schema(o.schema)) : undefined)
        .messages(5, vendorExtensions(o));
      return named(code, new Msg().message(1, response));
    });
  return new Msg().messages(1, codes).messages(2, isObject(r) ? vendorExtensions(r) : []);
}

function operation(o: Json): Msg {
  return new Msg()
    .strings(1, o.tags)
    .string(2, o.summary)
    .string(3, o.description)
    .string(5, o.operationId)
    .strings(6, o.produces)
    .strings(7, o.consumes)
    .messages(8, parameters(o.parameters))
    .message(9, o.responses !== undefined ? responses(o.responses) : undefined)
    .strings(10, o.schemes)
    .bool(11, o.deprecated)
    .messages(13, vendorExtensions(o));
}

const METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function pathItem(p: Json): Msg {
  const m = new Msg().string(1, p.$ref);
  for (const [method, field] of METHODS) if (isObject(p[method])) m.message(field, operation(p[method]));
  return m.messages(9, parameters(p.parameters)).messages(10, vendorExtensions(p));
}

/** `SecurityDefinitionsItem`: only `apiKey` (field 2) and `basic` (field 1) are written; kube-apiserver declares BearerToken as apiKey. */
function securityDefinition(d: Json): Msg | undefined {
  if (d.type === 'apiKey') return new Msg().message(2, new Msg().string(1, d.type).string(2, d.name).string(3, d.in).string(4, d.description));
  if (d.type === 'basic') return new Msg().message(1, new Msg().string(1, d.type).string(2, d.description));
  return undefined;
}

/** Encodes an OpenAPI v2 (swagger 2.0) JSON document as `openapi_v2.Document`. */
export function encodeDocument(doc: Json): Buffer {
  const info = isObject(doc.info) ? doc.info : {};
  const m = new Msg()
    .string(1, doc.swagger)
    .message(2, new Msg().string(1, info.title).string(2, info.version).string(3, info.description).messages(7, vendorExtensions(info)))
    .string(3, doc.host)
    .string(4, doc.basePath)
    .strings(5, doc.schemes)
    .strings(6, doc.consumes)
    .strings(7, doc.produces);
  if (isObject(doc.paths))
    m.message(
      8,
      new Msg().messages(1, vendorExtensions(doc.paths)).messages(
        2,
        entries(doc.paths)
          .filter(([k]) => k.startsWith('/'))
          .map(([k, v]) => named(k, pathItem(isObject(v) ? v : {}))),
      ),
    );
  if (isObject(doc.definitions))
    m.message(
      9,
      new Msg().messages(
        1,
        entries(doc.definitions).map(([k, v]) => named(k, schema(v))),
      ),
    );
  if (isObject(doc.parameters))
    m.message(
      10,
      new Msg().messages(
        1,
        entries(doc.parameters).map(([k, v]) => named(k, parameter(isObject(v) ? v : {}))),
      ),
    );
  if (Array.isArray(doc.security))
    m.messages(
      12,
      doc.security.map((req) =>
        new Msg().messages(
          1,
          entries(req).map(([k, v]) => named(k, new Msg().strings(1, v))),
        ),
      ),
    );
  if (isObject(doc.securityDefinitions)) {
    const items = entries(doc.securityDefinitions).flatMap(([k, v]) => {
      const d = securityDefinition(isObject(v) ? v : {});
      return d ? [named(k, d)] : [];
    });
    m.message(13, new Msg().messages(1, items));
  }
  m.messages(16, vendorExtensions(doc));
  return Buffer.from(m.bytes());
}
