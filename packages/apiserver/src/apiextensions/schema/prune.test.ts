import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONSchemaProps } from '../types.js';
import { prune } from './prune.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        list: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        nested: { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } },
        raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { x: { type: 'string' } } } } },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } },
        },
      },
    },
  },
};

test('drops unspecified fields and returns their paths sorted', () => {
  const obj = {
    apiVersion: 'example.com/v1',
    kind: 'Foo',
    metadata: { name: 'x', whatever: 1 },
    extra: true,
    spec: {
      replicas: 1,
      foo: 'bar',
      list: [{ name: 'a', bad: 1 }, { bad: 2 }],
      labels: { a: 'b' },
      nested: { k: { a: 'x', b: 'y' } },
      raw: { anything: { deep: true }, known: { x: 'y', z: 1 } },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { image: 'i', cmd: 'c' }, status: {} },
    },
  };
  const removed = prune(obj, schema, { isResourceRoot: true });
  assert.deepEqual(removed, [
    'extra',
    'spec.foo',
    'spec.list[0].bad',
    'spec.list[1].bad',
    'spec.nested.k.b',
    'spec.raw.known.z',
    'spec.template.spec.cmd',
    'spec.template.status',
  ]);
  assert.deepEqual(obj, {
    apiVersion: 'example.com/v1',
    kind: 'Foo',
    metadata: { name: 'x', whatever: 1 },
    spec: {
      replicas: 1,
      list: [{ name: 'a' }, {}],
      labels: { a: 'b' },
      nested: { k: { a: 'x' } },
      raw: { anything: { deep: true }, known: { x: 'y' } },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { image: 'i' } },
    },
  });
});

test('without isResourceRoot the root metadata is pruned like any field', () => {
  const obj = { apiVersion: 'v1', spec: {} };
  assert.deepEqual(prune(obj, { type: 'object', properties: { spec: { type: 'object' } } }, { isResourceRoot: false }), []);
  assert.deepEqual(obj, { spec: {} });
});

test('no schema: everything but the resource root metadata goes', () => {
  const obj = { apiVersion: 'v1', kind: 'X', metadata: {}, spec: { a: 1 } };
  assert.deepEqual(prune(obj, undefined, { isResourceRoot: true }), ['spec']);
  assert.deepEqual(obj, { apiVersion: 'v1', kind: 'X', metadata: {} });
});

test('additionalProperties without a schema keeps scalars but empties nested objects, as upstream', () => {
  const obj = { m: { a: 1, b: { c: 2 } } };
  assert.deepEqual(prune(obj, { type: 'object', properties: { m: { type: 'object', additionalProperties: true } } }, { isResourceRoot: false }), ['m.b.c']);
  assert.deepEqual(obj, { m: { a: 1, b: {} } });
});

test('preserve-unknown-fields at the root keeps everything unknown', () => {
  const obj = { spec: { x: 1 }, other: [1, { a: 2 }] };
  assert.deepEqual(prune(obj, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { isResourceRoot: true }), []);
  assert.deepEqual(obj, { spec: { x: 1 }, other: [1, { a: 2 }] });
});

test('scalars and non-objects are left alone', () => {
  assert.deepEqual(prune('x', schema, { isResourceRoot: true }), []);
  assert.deepEqual(prune(null, schema, { isResourceRoot: true }), []);
});
