import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { isStructural, structuralErrors } from './structural.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const msgs = (s: JSONSchemaProps): string[] => structuralErrors(s, P).map(fieldErrorMessage);

test('a typical structural schema passes', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    description: 'Foo',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', minimum: 0, default: 1 },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          size: { allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^\\d' }], 'x-kubernetes-int-or-string': true },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          any: { 'x-kubernetes-preserve-unknown-fields': true },
          list: { type: 'array', items: { type: 'string' } },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        },
        oneOf: [{ required: ['replicas'] }, { required: ['size'] }],
      },
    },
  };
  assert.deepEqual(msgs(s), []);
  assert.equal(isStructural(s), true);
});

test('types must be specified, as upstream words it at each level', () => {
  assert.deepEqual(msgs({}), [`${P}.type: Required value: must not be empty at the root`]);
  assert.deepEqual(msgs({ type: 'object', properties: { foo: {} } }), [
    `${P}.properties[foo].type: Required value: must not be empty for specified object fields`,
  ]);
  assert.deepEqual(msgs({ type: 'object', properties: { l: { type: 'array', items: {} } } }), [
    `${P}.properties[l].items.type: Required value: must not be empty for specified array items`,
  ]);
  assert.deepEqual(msgs({ type: 'object', properties: { l: { type: 'array' } } }), [`${P}.properties[l].items: Required value: must be specified`]);
  assert.deepEqual(msgs({ type: 'string' }), [`${P}.type: Invalid value: "string": must be object at the root`]);
  assert.deepEqual(msgs({ type: 'object', additionalProperties: { type: 'string' } }), [`${P}.additionalProperties: Forbidden: must not be used at the root`]);
});

test('junctors may only hold value validations (errors sorted by message)', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { a: { type: 'string' } },
    anyOf: [{ type: 'object', description: 'x', default: {}, nullable: true, properties: { a: { title: 't' }, metadata: {} } }],
    not: { 'x-kubernetes-list-type': 'set', 'x-kubernetes-validations': [{ rule: 'true' }] },
  };
  assert.deepEqual(msgs(s), [
    `${P}.anyOf[0].default: Forbidden: must be undefined to be structural`,
    `${P}.anyOf[0].description: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].nullable: Forbidden: must be false to be structural`,
    `${P}.anyOf[0].properties[a].title: Forbidden: must be empty to be structural`,
    `${P}.anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
    `${P}.anyOf[0].type: Forbidden: must be empty to be structural`,
    `${P}.not.x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
    `${P}.not.x-kubernetes-validations: Forbidden: must be empty to be structural`,
    `${P}.properties[metadata]: Required value: because it is defined in ${P}.anyOf[0].properties[metadata]`,
  ]);
});

test('int-or-string: only the anyOf/allOf patterns may carry types', () => {
  const ok: JSONSchemaProps = { type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } };
  assert.deepEqual(msgs(ok), []);
  const bad: JSONSchemaProps = { type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'number' }] } } };
  assert.deepEqual(msgs(bad), [
    `${P}.properties[p].anyOf[0].type: Forbidden: must be empty to be structural`,
    `${P}.properties[p].anyOf[1].type: Forbidden: must be empty to be structural`,
  ]);
  assert.deepEqual(msgs({ type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
    `${P}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
  ]);
});

test('metadata at the root may only restrict name and generateName', () => {
  const root = (metadata: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { metadata } });
  assert.deepEqual(msgs(root({ type: 'object', properties: { name: { type: 'string', pattern: '^a' }, generateName: { type: 'string' } } })), []);
  assert.deepEqual(msgs(root({ type: 'object', properties: { labels: { type: 'object' } } })), [
    `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
  ]);
  assert.deepEqual(msgs(root({ type: 'object', required: ['name'] })), [
    `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
  ]);
  assert.deepEqual(msgs(root({ type: 'string' })), [`${P}.properties[metadata].type: Invalid value: "string": must be object`]);
  assert.deepEqual(msgs({ type: 'object', properties: { kind: { type: 'integer' }, apiVersion: { type: 'string' } } }), [
    `${P}.properties[kind].type: Invalid value: "integer": must be string`,
  ]);
  // nested metadata is an ordinary field
  assert.deepEqual(
    msgs({
      type: 'object',
      properties: { spec: { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } } },
    }),
    [],
  );
});

test('embedded resources', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      a: { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      b: { type: 'object', 'x-kubernetes-embedded-resource': true },
      c: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, additionalProperties: { type: 'string' } },
      d: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: { type: 'integer' }, spec: { type: 'object' } } },
    },
  };
  assert.deepEqual(msgs(s), [
    `${P}.properties[a].type: Required value: must be object if x-kubernetes-embedded-resource is true`,
    `${P}.properties[b].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    `${P}.properties[c].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set`,
    `${P}.properties[d].properties[kind].type: Invalid value: "integer": must be string`,
  ]);
});

test('value validations must be complete: junctor fields need a structural counterpart', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
    allOf: [{ properties: { spec: { properties: { a: { minLength: 1 }, b: { maxLength: 2 } } } }, items: {} }],
  };
  assert.deepEqual(msgs(s), [
    `${P}.items: Required value: because it is defined in ${P}.allOf[0].items`,
    `${P}.properties[spec].properties[b]: Required value: because it is defined in ${P}.allOf[0].properties[spec].properties[b]`,
  ]);
});

test("an invalid pattern is reported with Go's error", () => {
  assert.deepEqual(msgs({ type: 'object', properties: { a: { type: 'string', pattern: '(a' } } }), [
    `${P}.properties[a].pattern: Invalid value: "(a": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): \`(a\``,
  ]);
});

test('schemas NewStructural refuses give one conversion error', () => {
  assert.deepEqual(msgs({ type: 'object', properties: { l: { type: 'array', items: [{ type: 'string' }] } } }), [
    `${P}: Invalid value: "": OpenAPIV3Schema 'items' must be a schema, but is an array`,
  ]);
  assert.deepEqual(msgs({ type: 'object', properties: { r: { $ref: '#/x' } } }), [`${P}: Invalid value: "": OpenAPIV3Schema '$ref' is not supported`]);
  assert.deepEqual(msgs({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }), [
    `${P}: Invalid value: "": internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined`,
  ]);
  assert.equal(isStructural({ type: 'object', id: 'x' }), false);
});
