import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage, fieldErrorReason } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { openAPIValidate, validateCustomResource } from './validate.js';

const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'object', properties, ...extra });
const msgs = (schema: JSONSchemaProps, value: unknown, fldPath = ''): string[] => validateCustomResource(schema, value, fldPath).map(fieldErrorMessage);
const sorted = (a: string[]): string[] => [...a].sort();

// Expectations below are the ones in apiextensions-apiserver pkg/apiserver/validation/validation_test.go (TestValidateCustomResource).

test('a non-nullable field reports the JSON type it got, null included', () => {
  const s = obj({ field: { type: 'object' } });
  assert.deepEqual(msgs(s, {}), []);
  assert.deepEqual(msgs(s, { field: {} }), []);
  for (const [v, t] of [
    ['foo', 'string'],
    [42, 'integer'],
    [true, 'boolean'],
    [1.2, 'number'],
    [[], 'array'],
    [null, 'null'],
  ] as const)
    assert.deepEqual(msgs(s, { field: v }), [`field: Invalid value: "${t}": field in body must be of type object: "${t}"`]);
  assert.equal(fieldErrorReason(validateCustomResource(s, { field: 1 })[0]!), 'FieldValueTypeInvalid');
});

test('nullable accepts null; no type accepts anything', () => {
  assert.deepEqual(msgs(obj({ field: { type: 'object', nullable: true } }), { field: null }), []);
  const any = obj({ field: { nullable: true } });
  for (const v of [{}, null, 'foo', 42, true, 1.2, []]) assert.deepEqual(msgs(any, { field: v }), []);
});

test('x-kubernetes-int-or-string is type integer,string', () => {
  const s = obj({ field: { 'x-kubernetes-int-or-string': true } });
  assert.deepEqual(msgs(s, { field: 42 }), []);
  assert.deepEqual(msgs(s, { field: 'foo' }), []);
  assert.deepEqual(msgs(s, { field: null }), ['field: Invalid value: "null": field in body must be of type integer,string: "null"']);
  assert.deepEqual(msgs(s, { field: 1.2 }), ['field: Invalid value: "number": field in body must be of type integer,string: "number"']);
  assert.deepEqual(msgs(obj({ field: { 'x-kubernetes-int-or-string': true, nullable: true } }), { field: null }), []);
});

test('anyOf reports the summary at the nil root path and the first best alternative', () => {
  const s = obj({ field: { nullable: true, 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } });
  assert.deepEqual(msgs(s, { field: 42 }), []);
  assert.deepEqual(msgs(s, { field: null }), []);
  assert.deepEqual(sorted(msgs(s, { field: true })), [
    '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
    'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
    'field: Invalid value: "boolean": field in body must be of type integer: "boolean"',
  ]);
});

test('allOf with a failing anyOf reports both summaries', () => {
  const s = obj({ field: { nullable: true, 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }] } });
  assert.deepEqual(sorted(msgs(s, { field: [] })), [
    '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated',
    '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
    'field: Invalid value: "array": field in body must be of type integer,string: "array"',
    'field: Invalid value: "array": field in body must be of type integer: "array"',
  ]);
});

test('oneOf and not', () => {
  const s = obj({ n: { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }], not: { enum: [5] } } });
  assert.deepEqual(msgs(s, { n: 20 }), []);
  assert.deepEqual(sorted(msgs(s, { n: 5 })), [
    '<nil>: Invalid value: "": "n" must not validate the schema (not)',
    '<nil>: Invalid value: "": "n" must validate one and only one schema (oneOf). Found 2 valid alternatives',
  ]);
  assert.deepEqual(msgs(s, { n: 20 }, 'spec'), []);
  assert.deepEqual(sorted(msgs(s, { n: 5 }, 'x')), [
    'x: Invalid value: "": "n" must not validate the schema (not)',
    'x: Invalid value: "": "n" must validate one and only one schema (oneOf). Found 2 valid alternatives',
  ]);
});

test("an invalid pattern reports Go's compile error instead of throwing", () => {
  assert.deepEqual(msgs(obj({ field: { type: 'string', pattern: '+' } }), { field: 'foo' }), [
    'field: Invalid value: "foo": field in body should match \'+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`\'',
  ]);
});

test('required fields, nested', () => {
  const s = obj({ field: { type: 'object', required: ['nested'], properties: { nested: {} } } }, { required: ['field'] });
  assert.deepEqual(msgs(s, { test: 'a' }), ['field: Required value']);
  assert.deepEqual(msgs(s, { field: {} }), ['field.nested: Required value']);
  assert.deepEqual(msgs(obj({ spec: obj({ name: { type: 'string' } }, { required: ['name'] }) }), { spec: {} }), ['spec.name: Required value']);
});

test('enum: type and membership are both reported; non-strings are listed as JSON', () => {
  const s = obj({
    field: {
      type: 'object',
      required: ['nestedint', 'nestedstring'],
      properties: { nestedint: { type: 'integer', enum: [1, 2] }, nestedstring: { type: 'string', enum: ['a', 'b'] } },
    },
  });
  assert.deepEqual(sorted(msgs(s, { field: {} })), ['field.nestedint: Required value', 'field.nestedstring: Required value']);
  assert.deepEqual(sorted(msgs(s, { field: { nestedint: 'x', nestedstring: true } })), [
    'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
    'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
    'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
    'field.nestedstring: Unsupported value: true: supported values: "a", "b"',
  ]);
  assert.deepEqual(msgs(obj({ spec: obj({ foo: { type: 'string', enum: ['a', 'b'] } }) }), { spec: { foo: 'x' } }), [
    'spec.foo: Unsupported value: "x": supported values: "a", "b"',
  ]);
  // Go converts the value to the enum entry's type: 2.0 is the integer 2, and a float 1.5 truncates to 1.
  assert.deepEqual(msgs(obj({ n: { type: 'number', enum: [1, 2] } }), { n: 1.5 }), []);
});

test('numbers: bounds, exclusive bounds, multipleOf', () => {
  const s = obj({
    spec: obj({ size: { type: 'integer', maximum: 10, minimum: 1 }, ratio: { type: 'number', maximum: 1.5, exclusiveMaximum: true, multipleOf: 0.5 } }),
  });
  assert.deepEqual(msgs(s, { spec: { size: 11 } }), ['spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10']);
  assert.deepEqual(msgs(s, { spec: { size: 0 } }), ['spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1']);
  assert.deepEqual(msgs(s, { spec: { ratio: 1.5 } }), ['spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5']);
  assert.deepEqual(msgs(s, { spec: { ratio: 0.7 } }), ['spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5']);
  assert.deepEqual(msgs(s, { spec: { ratio: 0.5 } }), []);
  // JSON 1 decodes as int64, and MaximumNativeType compares it with int64(1.5) = 1: upstream rejects it too.
  assert.deepEqual(msgs(s, { spec: { ratio: 1 } }), ['spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1']);
  assert.deepEqual(msgs(obj({ n: { type: 'integer', multipleOf: 3, minimum: 2, exclusiveMinimum: true } }), { n: 2 }), [
    'n: Invalid value: 2: n in body should be a multiple of 3',
    'n: Invalid value: 2: n in body should be greater than 2',
  ]);
  // An integral value checks against the bound converted to int64, as MaximumNativeType does.
  assert.deepEqual(msgs(obj({ n: { type: 'integer', maximum: 10.5 } }), { n: 11 }), ['n: Invalid value: 11: n in body should be less than or equal to 10']);
  assert.deepEqual(msgs(obj({ n: { type: 'integer' } }), { n: 1.5 }), ['n: Invalid value: "number": n in body must be of type integer: "number"']);
  assert.deepEqual(msgs(obj({ n: { type: 'number' } }), { n: 3 }), []);
});

test('strings: lengths count runes; too long is TooLong', () => {
  const s = obj({ s: { type: 'string', maxLength: 2, minLength: 2 } });
  assert.deepEqual(msgs(s, { s: 'éé' }), []);
  assert.deepEqual(msgs(s, { s: 'abc' }), ['s: Too long: may not be more than 2 bytes']);
  assert.deepEqual(msgs(s, { s: 'a' }), ['s: Invalid value: "a": s in body should be at least 2 chars long']);
  assert.deepEqual(msgs(obj({ s: { type: 'string', pattern: '^[a-z]+$' } }), { s: 'A1' }), ['s: Invalid value: "A1": s in body should match \'^[a-z]+$\'']);
});

test('arrays: items paths, min/maxItems, uniqueItems', () => {
  const s = obj({ l: { type: 'array', maxItems: 2, minItems: 1, items: { type: 'string' } } });
  assert.deepEqual(msgs(s, { l: ['a', 'b', 'c'] }), ['l: Too many: 3: must have at most 2 items']);
  assert.deepEqual(msgs(s, { l: [] }), ['l: Invalid value: 0: l in body should have at least 1 items']);
  assert.deepEqual(msgs(s, { l: ['a', 1] }), ['l[1]: Invalid value: "integer": l[1] in body must be of type string: "integer"']);
  const nested = obj({ field: { type: 'array', items: obj({ x: { type: 'string' } }) } });
  assert.deepEqual(msgs(nested, { field: [{ x: 'x' }, { x: 1 }] }), [
    'field[1].x: Invalid value: "integer": field[1].x in body must be of type string: "integer"',
  ]);
  assert.deepEqual(msgs(obj({ u: { type: 'array', uniqueItems: true, items: { type: 'integer' } } }), { u: [1, 2, 1] }), [
    'u: Invalid value: "": u in body shouldn\'t contain duplicates',
  ]);
});

test('objects: min/maxProperties stop the object, additionalProperties schema and false', () => {
  assert.deepEqual(msgs(obj({ fieldX: { type: 'object', maxProperties: 2 } }), { fieldX: { a: true, b: true, c: true } }), [
    'fieldX: Too many: 3: must have at most 2 items',
  ]);
  assert.deepEqual(msgs(obj({ m: { type: 'object', minProperties: 2, additionalProperties: { type: 'string' } } }), { m: { a: 1 } }), [
    'm: Invalid value: 1: m in body should have at least 2 properties',
  ]);
  assert.deepEqual(msgs(obj({ m: { type: 'object', additionalProperties: { type: 'string' } } }), { m: { a: 1 } }), [
    'm.a: Invalid value: "integer": m.a in body must be of type string: "integer"',
  ]);
  assert.deepEqual(msgs(obj({ m: { type: 'object', additionalProperties: false } }), { m: { a: 1 } }), [
    'm: Invalid value: "a": m.a in body is a forbidden property',
  ]);
});

test('formats: known ones are checked, unknown (int32, …) ignored', () => {
  const s = obj({
    t: { type: 'string', format: 'date-time' },
    u: { type: 'string', format: 'uuid' },
    i: { type: 'string', format: 'int32' },
    n: { type: 'integer', format: 'int32' },
  });
  assert.deepEqual(msgs(s, { t: '2024-01-02T03:04:05Z', u: '123e4567-e89b-12d3-a456-426614174000', i: 'x', n: 3 }), []);
  assert.deepEqual(msgs(s, { t: 'yesterday' }), ['t: Invalid value: "yesterday": t in body must be of type date-time: "yesterday"']);
  assert.deepEqual(msgs(s, { u: 'nope' }), ['u: Invalid value: "nope": u in body must be of type uuid: "nope"']);
});

test('embedded resources need apiVersion and kind; metadata is validated', () => {
  const s = obj({ template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } });
  assert.deepEqual(msgs(s, { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } } }), []);
  assert.deepEqual(msgs(s, { template: {} }), ['template.apiVersion: Required value', 'template.kind: Required value']);
  assert.deepEqual(msgs(s, { template: { apiVersion: 'a/b/c', kind: 'Pod_X', metadata: { name: 'a/b', labels: { 'a b': 'x' } } } }), [
    'template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    "template.kind: Invalid value: \"Pod_X\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    'template.metadata.name: Invalid value: "a/b": may not contain \'/\'',
    "template.metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  assert.deepEqual(msgs(s, { template: { apiVersion: 'v1', kind: 'Pod', metadata: 'x' } }), [
    'template.metadata: Invalid value: "x": json: cannot unmarshal string into Go value of type v1.ObjectMeta',
  ]);
});

test('list-type set and map duplicates', () => {
  const s = obj({
    set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: obj({ name: { type: 'string' }, port: { type: 'integer' } }, { required: ['name'] }),
    },
  });
  assert.deepEqual(msgs(s, { set: ['a', 'b', 'a', 'a'], ports: [{ name: 'a' }, { name: 'b' }] }), ['set[2]: Duplicate value: "a"']);
  assert.deepEqual(
    msgs(s, {
      ports: [
        { name: 'a', port: 1 },
        { name: 'a', port: 2 },
      ],
    }),
    ['ports[1]: Duplicate value: map[string]interface {}{"name":"a"}'],
  );
  const multi = obj({
    l: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['a', 'b'],
      items: obj({ a: { type: 'string' }, b: { type: 'integer' } }),
    },
  });
  assert.deepEqual(
    msgs(multi, {
      l: [
        { a: 'x', b: 1 },
        { b: 1, a: 'x' },
        { a: 'x', b: 2 },
      ],
    }),
    ['l[1]: Duplicate value: map[string]interface {}{"a":"x", "b":1}'],
  );
});

test('fldPath prefixes every path', () => {
  const s = obj({ spec: obj({ replicas: { type: 'integer' } }, { required: ['name'] }) });
  assert.deepEqual(openAPIValidate(s, { spec: { replicas: 'string' } }, 'x').map(fieldErrorMessage), [
    'x.spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    'x.spec.name: Required value',
  ]);
});

test('identical messages are reported once', () => {
  const s = obj({ a: { type: 'integer', allOf: [{ minimum: 5 }, { minimum: 5 }] } });
  assert.deepEqual(sorted(msgs(s, { a: 1 })), [
    '<nil>: Invalid value: "": "a" must validate all the schemas (allOf). None validated',
    'a: Invalid value: 1: a in body should be greater than or equal to 5',
  ]);
});
