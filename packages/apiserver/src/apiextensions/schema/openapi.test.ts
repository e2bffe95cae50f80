import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { type OpenAPISchemaOptions, openAPISchemaErrors } from './openapi.js';

const P = 'spec.validation.openAPIV3Schema';
const OPTS: OpenAPISchemaOptions = {
  allowDefaults: true,
  requireValidPropertyType: true,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
};
const msgs = (s: JSONSchemaProps, o: Partial<OpenAPISchemaOptions> = {}): string[] => openAPISchemaErrors(s, P, { ...OPTS, ...o }).map(fieldErrorMessage);

test('unsupported keywords and bad types', () => {
  assert.deepEqual(
    msgs({
      type: 'object',
      properties: {
        a: { type: 'foo' },
        b: { type: 'null' },
        c: { type: 'array', items: [{ type: 'string' }] },
        d: { type: 'object', id: 'x', $ref: '#/y', patternProperties: { '^x': { type: 'string' } }, definitions: { z: { type: 'string' } }, dependencies: {} },
        e: { type: 'array', uniqueItems: true, items: { type: 'string' } },
        f: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false },
        g: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
      },
    }),
    [
      `${P}.properties[a].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[b].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${P}.properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      `${P}.properties[c].items: Forbidden: items must be a schema object and not an array`,
      `${P}.properties[d].id: Forbidden: id is not supported`,
      `${P}.properties[d].patternProperties: Forbidden: patternProperties is not supported`,
      `${P}.properties[d].definitions: Forbidden: definitions is not supported`,
      `${P}.properties[d].dependencies: Forbidden: dependencies is not supported`,
      `${P}.properties[d].$ref: Forbidden: $ref is not supported`,
      `${P}.properties[e].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${P}.properties[f].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      `${P}.properties[g].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
    ],
  );
});

test('defaults are forbidden in top-level metadata and inside additionalProperties of resource meta', () => {
  assert.deepEqual(
    msgs({
      type: 'object',
      properties: {
        metadata: { type: 'object', properties: { name: { type: 'string', default: 'x' } } },
        kind: { type: 'string', default: 'Foo' },
        spec: {
          type: 'object',
          properties: {
            e: {
              type: 'object',
              'x-kubernetes-embedded-resource': true,
              properties: { metadata: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string', default: 'v' } } } } },
            },
          },
        },
      },
    }),
    [
      `${P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`,
      `${P}.properties[kind].default: Forbidden: must not be set in top-level kind`,
      `${P}.properties[spec].properties[e].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
    ],
  );
});

test('list and map type extensions', () => {
  const item = (props: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'object', properties: props, ...extra });
  assert.deepEqual(
    msgs({
      type: 'object',
      properties: {
        a: { type: 'object', 'x-kubernetes-list-type': 'set' },
        b: { type: 'array', 'x-kubernetes-list-type': 'bag' as 'set', items: { type: 'string' } },
        c: { type: 'array', 'x-kubernetes-list-map-keys': ['k'], items: item({ k: { type: 'string' } }) },
        d: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'string' } },
        e: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k', 'o', 'z', 'k'],
          items: item({ k: { type: 'string' }, o: { type: 'object' } }, { required: ['k', 'o'] }),
        },
        f: { type: 'array', 'x-kubernetes-list-type': 'set', items: item({ x: { type: 'string' } }) },
        g: { type: 'string', 'x-kubernetes-map-type': 'atomic' },
        h: { type: 'object', 'x-kubernetes-map-type': 'other' as 'atomic' },
        i: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: item({ k: { type: 'string', nullable: true } }, { nullable: true }),
        },
      },
    }),
    [
      `${P}.properties[a].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
      `${P}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
      `${P}.properties[c].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      `${P}.properties[d].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      `${P}.properties[d].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
      `${P}.properties[e].items.properties[o].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
      `${P}.properties[e].x-kubernetes-list-map-keys: Invalid value: []string{"k", "o", "z", "k"}: entries must all be names of item properties`,
      `${P}.properties[e].x-kubernetes-list-map-keys: Invalid value: []string{"k", "o", "z", "k"}: must not contain duplicate entries`,
      `${P}.properties[f].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set`,
      `${P}.properties[g].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
      `${P}.properties[h].x-kubernetes-map-type: Unsupported value: "other": supported values: "atomic", "granular"`,
      `${P}.properties[i].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
      `${P}.properties[i].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${P}.properties[i].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
    ],
  );
  // Relaxed on update when the stored CRD already broke the rule.
  const set: JSONSchemaProps = { type: 'object', properties: { f: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object' } } } };
  assert.deepEqual(msgs(set, { requireAtomicSetType: false }), []);
});

test('x-kubernetes-validations: static checks, then the CEL hook on clean nodes only', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          a: { type: 'string' },
          l: { type: 'array', items: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.x == 1' }], properties: { x: { type: 'integer' } } } },
        },
        'x-kubernetes-validations': [
          { rule: ' ' },
          { rule: 'a\nb' },
          { rule: 'true', message: ' ' },
          { rule: 'true', message: 'a\nb', messageExpression: ' ' },
          { rule: 'true', reason: 'FieldValueTooLong' as 'FieldValueInvalid', fieldPath: '.nope' },
          { rule: 'true', fieldPath: '.a' },
        ],
      },
    },
  };
  const calls: string[] = [];
  const got = openAPISchemaErrors(s, P, {
    ...OPTS,
    celErrors: (node, path, ctx) => {
      calls.push(`${path} ${ctx.oldSelfForbiddenPath ?? '-'} ${node['x-kubernetes-validations']!.length}`);
      return [];
    },
  }).map(fieldErrorMessage);
  const V = `${P}.properties[spec].x-kubernetes-validations`;
  assert.deepEqual(got, [
    `${V}[0].rule: Required value: rule is not specified`,
    `${V}[1].message: Required value: message must be specified if rule contains line breaks`,
    `${V}[2].message: Invalid value: " ": message must be non-empty if specified`,
    `${V}[3].message: Invalid value: "a\\nb": message must not contain line breaks`,
    `${V}[3].messageExpression: Required value: messageExpression must be non-empty if specified`,
    `${V}[4].reason: Unsupported value: "FieldValueTooLong": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    `${V}[4].fieldPath: Invalid value: ".nope": fieldPath must be a valid path`,
  ]);
  // The items node is clean: its rules go to the CEL hook, with the list as the uncorrelatable ancestor.
  assert.deepEqual(calls, [`${P}.properties[spec].properties[l].items ${P}.properties[spec].properties[l] 1`]);
});
