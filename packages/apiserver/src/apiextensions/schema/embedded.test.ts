import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { objectMetaDecodeError, validateEmbeddedResources } from './embedded.js';
import { validateListSetsAndMaps } from './listtype.js';

const embedded: JSONSchemaProps = { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true };
const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        templates: { type: 'object', additionalProperties: embedded },
        list: { type: 'array', items: embedded },
      },
    },
  },
};
const msgs = (obj: unknown, isResourceRoot = false): string[] => validateEmbeddedResources(obj, schema, { isResourceRoot }).map(fieldErrorMessage);

test('embedded resources under additionalProperties and items get map-key and index paths', () => {
  assert.deepEqual(msgs({ spec: { templates: { a: { apiVersion: 'v1' } }, list: [{ kind: 'Pod', apiVersion: '' }] } }), [
    'spec.templates[a].kind: Required value',
    'spec.list[0].apiVersion: Required value',
  ]);
  assert.deepEqual(msgs({ spec: { list: [{ apiVersion: 1, kind: null }] } }), [
    'spec.list[0].apiVersion: Invalid value: 1: must be a string',
    'spec.list[0].kind: Invalid value: null: must be a string',
  ]);
});

test('embedded metadata: a missing name is fine, a namespace is validated, bad shapes are decode errors', () => {
  const one = (metadata: unknown): string[] => msgs({ spec: { list: [{ apiVersion: 'v1', kind: 'Pod', metadata }] } });
  assert.deepEqual(one({ labels: { a: 'b' } }), []);
  assert.deepEqual(one({ name: 'x', namespace: 'Bad_NS' }).length, 1);
  assert.deepEqual(one({ generation: 'x' }), [
    'spec.list[0].metadata: Invalid value: map[string]interface {}{"generation":"x"}: json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64',
  ]);
  assert.equal(objectMetaDecodeError({ labels: { a: 1 } }), 'json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string');
  assert.equal(objectMetaDecodeError(null), '');
});

test('the resource root is only checked with isResourceRoot', () => {
  assert.deepEqual(msgs({}), []);
  assert.deepEqual(msgs({}, true), ['apiVersion: Required value', 'kind: Required value']);
});

test('list-type map items must be objects; nested lists under maps are checked', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      m: {
        type: 'object',
        additionalProperties: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: { type: 'object', properties: { k: { type: 'string' } } },
        },
      },
      s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', 'x-kubernetes-map-type': 'atomic' } },
    },
  };
  assert.deepEqual(validateListSetsAndMaps(s, { m: { a: [{ k: 'x' }, 'str'] } }).map(fieldErrorMessage), [
    'm[a][1]: Invalid value: "str": must be an object for an array of list-type map',
  ]);
  assert.deepEqual(validateListSetsAndMaps(s, { m: { a: [{}, {}, null] } }, 'x').map(fieldErrorMessage), [
    'x.m[a][1]: Duplicate value: map[string]interface {}{}',
  ]);
  assert.deepEqual(
    validateListSetsAndMaps(s, {
      s: [
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ],
    }).map(fieldErrorMessage),
    ['s[1]: Duplicate value: map[string]interface {}{"a":1, "b":[]interface {}{2}}'],
  );
});
