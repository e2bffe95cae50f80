import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { applyDefaults, validateDefaults } from './defaults.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      default: {},
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', default: 'auto' },
        nullableWithDefault: { type: 'string', nullable: true, default: 'd' },
        noDefault: { type: 'string' },
        nested: { type: 'object', default: { a: 'x' }, properties: { a: { type: 'string' }, b: { type: 'string', default: 'bee' } } },
        list: { type: 'array', items: { type: 'object', default: { k: 'v' }, properties: { k: { type: 'string' }, n: { type: 'integer', default: 7 } } } },
        map: {
          type: 'object',
          additionalProperties: { type: 'object', default: { z: 1 }, properties: { z: { type: 'integer' }, y: { type: 'integer', default: 2 } } },
        },
      },
    },
  },
};

test('defaults fill missing fields top-down, deep-copied', () => {
  const obj: Record<string, unknown> = {};
  applyDefaults(obj, schema);
  assert.deepEqual(obj, { spec: { replicas: 1, mode: 'auto', nullableWithDefault: 'd', nested: { a: 'x', b: 'bee' } } });
  const again: Record<string, unknown> = {};
  applyDefaults(again, schema);
  (again.spec as Record<string, Record<string, string>>).nested!.a = 'changed';
  assert.equal((schema.properties!.spec!.properties!.nested!.default as Record<string, string>).a, 'x');
});

test('nulls: replaced by a default when not nullable, kept when nullable, dropped without a default', () => {
  const obj = { spec: { replicas: null, nullableWithDefault: null, noDefault: null, mode: 'm' } };
  applyDefaults(obj, schema);
  assert.deepEqual(obj.spec, { replicas: 1, nullableWithDefault: null, mode: 'm', nested: { a: 'x', b: 'bee' } });
});

test('defaults inside items and additionalProperties, including null entries', () => {
  const obj = { spec: { list: [{}, null, { k: 'a', n: 0 }], map: { a: {}, b: null } } };
  applyDefaults(obj, schema);
  assert.deepEqual(obj.spec.list, [{ n: 7 }, { k: 'v', n: 7 }, { k: 'a', n: 0 }]);
  assert.deepEqual(obj.spec.map, { a: { y: 2 }, b: { z: 1, y: 2 } });
});

test('no schema, or a scalar, is left alone', () => {
  const obj = { a: null };
  applyDefaults(obj, undefined);
  assert.deepEqual(obj, { a: null });
  applyDefaults('x', schema);
});

const P = 'spec.validation.openAPIV3Schema';
const dmsgs = (s: JSONSchemaProps): string[] => validateDefaults(s, P, { isResourceRoot: true, requirePrunedDefaults: true }).map(fieldErrorMessage);

test('validateDefaults: a default must validate against its own schema', () => {
  assert.deepEqual(dmsgs(schema), []);
  assert.deepEqual(dmsgs({ type: 'object', properties: { n: { type: 'integer', maximum: 3, default: 'x' } } }), [
    `${P}.properties[n].default: Invalid value: "string":  in body must be of type integer: "string"`,
  ]);
  assert.deepEqual(dmsgs({ type: 'object', properties: { o: { type: 'object', properties: { n: { type: 'integer', maximum: 3 } }, default: { n: 4 } } } }), [
    `${P}.properties[o].default.n: Invalid value: 4: n in body should be less than or equal to 3`,
  ]);
});

test('validateDefaults: defaults must be pruned', () => {
  assert.deepEqual(dmsgs({ type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } } } }), [
    `${P}.properties[o].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields`,
  ]);
  assert.deepEqual(
    validateDefaults({ type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'string' } }, default: { b: 'y' } } } }, P, {
      isResourceRoot: true,
      requirePrunedDefaults: false,
    }),
    [],
  );
});

test('validateDefaults: metadata defaults inside embedded resources must give valid ObjectMeta', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: {
      t: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'a/b' } } } },
      },
    },
  };
  // Embedded names follow the path-segment rules (ValidatePathSegmentName), not DNS-1123.
  assert.deepEqual(dmsgs(s), [
    `${P}.properties[t].properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
  ]);
});
