/**
 * The protobuf form of the OpenAPI v2 document, read back with a decoder written
 * here from github.com/google/gnostic-models openapiv2/OpenAPIv2.proto (field
 * numbers and wire types, independently of the encoder's tables): turned back
 * into swagger JSON it must equal the JSON document, field for field; a field
 * the proto does not declare where the encoder put it fails the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { buildOpenAPIv2Document } from './openapi-v2.js';
import { ResourceCatalog } from '../apiextensions/catalog.js';
import { encodeDocument } from './openapi-v2-proto.js';

type Value = number | Buffer;
type Fields = Map<number, Value[]>;

/** Splits one message into its fields (wire types 0, 1, 2, 5). */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  const varint = () => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = buf[pos++]!;
      n += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) return n;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let v: Value;
    if (wire === 0) v = varint();
    else if (wire === 2) {
      const len = varint();
      v = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 1) {
      v = buf.readDoubleLE(pos);
      pos += 8;
    } else throw new Error(`unexpected wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), v]);
  }
  return out;
}

/** Reads a message whose fields must all be declared in `known`. */
function read(buf: Buffer, what: string, known: number[]) {
  const f = fields(buf);
  for (const n of f.keys()) assert.ok(known.includes(n), `${what}: undeclared field ${n}`);
  const bytes = (n: number) => (f.get(n) ?? []).map((v) => v as Buffer);
  return {
    str: (n: number) => (f.has(n) ? bytes(n).at(-1)!.toString('utf8') : undefined),
    strs: (n: number) => bytes(n).map((b) => b.toString('utf8')),
    bool: (n: number) => (f.has(n) ? f.get(n)!.at(-1) === 1 : undefined),
    msg: (n: number) => bytes(n).at(-1),
    msgs: bytes,
  };
}

type J = Record<string, unknown>;
const put = (o: J, k: string, v: unknown) => {
  if (v !== undefined && !(Array.isArray(v) && v.length === 0)) o[k] = v;
  return o;
};

/** NamedAny { name = 1; Any value = 2 }, Any { yaml = 2 }: vendor extensions back to their values. */
function extensions(o: J, list: Buffer[]): J {
  for (const b of list) {
    const m = read(b, 'NamedAny', [1, 2]);
    o[m.str(1)!] = YAML.parse(read(m.msg(2)!, 'Any', [2]).str(2)!);
  }
  return o;
}

function named<T>(list: Buffer[], what: string, value: (b: Buffer) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const b of list) {
    const m = read(b, what, [1, 2]);
    out[m.str(1)!] = value(m.msg(2) ?? Buffer.alloc(0));
  }
  return out;
}

function schema(b: Buffer): J {
  const m = read(b, 'Schema', [1, 2, 4, 19, 20, 21, 22, 23, 24, 25, 31]);
  const o: J = {};
  put(o, '$ref', m.str(1));
  put(o, 'format', m.str(2));
  put(o, 'description', m.str(4));
  put(o, 'required', m.strs(19));
  put(
    o,
    'enum',
    m.msgs(20).map((a) => YAML.parse(read(a, 'Any', [2]).str(2)!)),
  );
  const ap = m.msg(21);
  if (ap) {
    const a = read(ap, 'AdditionalPropertiesItem', [1, 2]);
    o.additionalProperties = a.msg(1) ? schema(a.msg(1)!) : a.bool(2);
  }
  const type = m.msg(22);
  if (type) {
    const t = read(type, 'TypeItem', [1]).strs(1);
    o.type = t.length === 1 ? t[0] : t;
  }
  const items = m.msg(23);
  if (items) {
    const list = read(items, 'ItemsItem', [1]).msgs(1).map(schema);
    o.items = list.length === 1 ? list[0] : list;
  }
  put(o, 'allOf', m.msgs(24).map(schema));
  const props = m.msg(25);
  if (props) o.properties = named(read(props, 'Properties', [1]).msgs(1), 'NamedSchema', schema);
  return extensions(o, m.msgs(31));
}

function parameter(b: Buffer): J {
  const p = read(b, 'Parameter', [1, 2]);
  if (p.msg(1)) {
    const m = read(p.msg(1)!, 'BodyParameter', [1, 2, 3, 4, 5]);
    const o: J = { in: m.str(3), name: m.str(2) };
    put(o, 'description', m.str(1));
    put(o, 'required', m.bool(4));
    return put(o, 'schema', m.msg(5) ? schema(m.msg(5)!) : undefined);
  }
  const nb = read(p.msg(2)!, 'NonBodyParameter', [3, 4]);
  // QueryParameterSubSchema: type = 6, unique_items = 20; PathParameterSubSchema: type = 5, unique_items = 19.
  const [sub, type, unique] = nb.msg(3) ? [nb.msg(3)!, 6, 20] : [nb.msg(4)!, 5, 19];
  const m = read(sub, nb.msg(3) ? 'QueryParameterSubSchema' : 'PathParameterSubSchema', [1, 2, 3, 4, type, unique]);
  const o: J = { in: m.str(2), name: m.str(4), type: m.str(type) };
  put(o, 'description', m.str(3));
  put(o, 'required', m.bool(1));
  return put(o, 'uniqueItems', m.bool(unique));
}

function parametersItem(b: Buffer): J {
  const m = read(b, 'ParametersItem', [1, 2]);
  return m.msg(2) ? { $ref: read(m.msg(2)!, 'JsonReference', [1]).str(1) } : parameter(m.msg(1)!);
}

function operation(b: Buffer): J {
  const m = read(b, 'Operation', [1, 3, 5, 6, 7, 8, 9, 10, 13]);
  const o: J = { description: m.str(3), operationId: m.str(5) };
  put(o, 'tags', m.strs(1));
  put(o, 'produces', m.strs(6));
  put(o, 'consumes', m.strs(7));
  put(o, 'parameters', m.msgs(8).map(parametersItem));
  put(o, 'schemes', m.strs(10));
  const codes = read(m.msg(9)!, 'Responses', [1]).msgs(1);
  o.responses = named(codes, 'NamedResponseValue', (rv) => {
    const r = read(read(rv, 'ResponseValue', [1]).msg(1)!, 'Response', [1, 2]);
    const out: J = { description: r.str(1) };
    return put(out, 'schema', r.msg(2) ? schema(read(r.msg(2)!, 'SchemaItem', [1]).msg(1)!) : undefined);
  });
  return extensions(o, m.msgs(13));
}

function pathItem(b: Buffer): J {
  const m = read(b, 'PathItem', [2, 3, 4, 5, 8, 9]);
  const o: J = {};
  for (const [method, n] of [
    ['get', 2],
    ['put', 3],
    ['post', 4],
    ['delete', 5],
    ['patch', 8],
  ] as const)
    if (m.msg(n)) o[method] = operation(m.msg(n)!);
  return put(o, 'parameters', m.msgs(9).map(parametersItem));
}

function document(b: Buffer): J {
  const m = read(b, 'Document', [1, 2, 8, 9, 10, 12, 13]);
  const info = read(m.msg(2)!, 'Info', [1, 2]);
  const paths = named(read(m.msg(8)!, 'Paths', [2]).msgs(2), 'NamedPathItem', pathItem);
  const definitions = named(read(m.msg(9)!, 'Definitions', [1]).msgs(1), 'NamedSchema', schema);
  const parameters = named(read(m.msg(10)!, 'ParameterDefinitions', [1]).msgs(1), 'NamedParameter', parameter);
  const security = m.msgs(12).map((s) => named(read(s, 'SecurityRequirement', [1]).msgs(1), 'NamedStringArray', (a) => read(a, 'StringArray', [1]).strs(1)));
  const securityDefinitions = named(read(m.msg(13)!, 'SecurityDefinitions', [1]).msgs(1), 'NamedSecurityDefinitionsItem', (item) => {
    const k = read(read(item, 'SecurityDefinitionsItem', [2]).msg(2)!, 'ApiKeySecurity', [1, 2, 3, 4]);
    return { description: k.str(4), in: k.str(3), name: k.str(2), type: k.str(1) };
  });
  return { swagger: m.str(1), info: { title: info.str(1), version: info.str(2) }, paths, definitions, parameters, securityDefinitions, security };
}

test('the protobuf document decodes back to the JSON document', () => {
  const doc = buildOpenAPIv2Document(new ResourceCatalog());
  const pb = encodeDocument(doc);
  assert.deepStrictEqual(document(pb), JSON.parse(JSON.stringify(doc)));
});

test('what kubectl validates with is where gnostic puts it', () => {
  const pb = encodeDocument(buildOpenAPIv2Document(new ResourceCatalog()));
  const defs = read(read(pb, 'Document', [1, 2, 8, 9, 10, 12, 13]).msg(9)!, 'Definitions', [1]).msgs(1);
  const pod = defs.map((d) => read(d, 'NamedSchema', [1, 2])).find((d) => d.str(1) === 'io.k8s.api.core.v1.Pod')!;
  const s = read(pod.msg(2)!, 'Schema', [1, 2, 4, 19, 20, 21, 22, 23, 24, 25, 31]);
  assert.deepEqual(read(s.msg(22)!, 'TypeItem', [1]).strs(1), ['object']);
  // x-kubernetes-group-version-kind: a NamedAny whose Any.yaml is a YAML list of group/kind/version maps.
  const gvk = s
    .msgs(31)
    .map((b) => read(b, 'NamedAny', [1, 2]))
    .find((e) => e.str(1) === 'x-kubernetes-group-version-kind')!;
  const yaml = read(gvk.msg(2)!, 'Any', [2]).str(2)!;
  assert.deepEqual(YAML.parse(yaml), [{ group: '', kind: 'Pod', version: 'v1' }]);
  assert.match(yaml, /^- group: ""\n {2}kind: Pod\n {2}version: v1\n$/);
  // properties.spec is a $ref with its own description and nothing else that would make kubectl reject it.
  const props = named(read(s.msg(25)!, 'Properties', [1]).msgs(1), 'NamedSchema', (b) => read(b, 'Schema', [1, 4, 22, 25]));
  assert.equal(props.spec!.str(1), '#/definitions/io.k8s.api.core.v1.PodSpec');
  assert.equal(props.spec!.msg(22), undefined);
  assert.deepEqual(read(props.kind!.msg(22)!, 'TypeItem', [1]).strs(1), ['string']);
});

test('empty sub-messages are written (an untyped map value), zero scalars are not', () => {
  const pb = encodeDocument({
    swagger: '2.0',
    info: { title: 'T', version: '' },
    definitions: { M: { type: 'object', additionalProperties: {} }, N: { type: 'object', additionalProperties: false, required: [''] } },
  });
  const m = read(pb, 'Document', [1, 2, 9]);
  assert.equal(read(m.msg(2)!, 'Info', [1, 2]).str(2), undefined);
  const defs = named(read(m.msg(9)!, 'Definitions', [1]).msgs(1), 'NamedSchema', schema);
  assert.deepEqual(defs, { M: { type: 'object', additionalProperties: {} }, N: { type: 'object', additionalProperties: false, required: [''] } });
});
