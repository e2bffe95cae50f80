import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { validateSelectableFields, validFieldPath } from './fieldpath.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        color: { type: 'string', enum: ['red', 'blue'] },
        size: { type: 'integer' },
        ready: { type: 'boolean' },
        ratio: { type: 'number' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        list: { type: 'array', items: { type: 'string' } },
      },
    },
  },
};

test('validFieldPath resolves dotted and bracketed paths', () => {
  assert.deepEqual(validFieldPath('.spec.color', schema), { path: 'spec.color', root: 'spec', schema: { type: 'string', enum: ['red', 'blue'] } });
  assert.equal(validFieldPath(".spec.labels['a.b']", schema).path, 'spec.labels[a.b]');
  assert.equal(validFieldPath(".spec['size']", schema).path, 'spec.size');
  assert.throws(() => validFieldPath('.spec.nope', schema), /^Error: does not refer to a valid field$/);
  assert.throws(() => validFieldPath('spec', schema), /expected \[ or \. but got: spec/);
  assert.throws(() => validFieldPath(".spec['size']", schema, false), /array notation is not allowed/);
  assert.throws(() => validFieldPath('.spec.', schema), /unexpected end of JSON path/);
  assert.throws(() => validFieldPath('.spec[size]', schema), /expected single quoted string but got size/);
});

test('selectableFields: scalar, non-metadata, distinct, at most 8', () => {
  const P = 'spec.versions[0].selectableFields';
  const errs = (fields: string[]): string[] =>
    validateSelectableFields(
      fields.map((jsonPath) => ({ jsonPath })),
      schema,
      P,
    ).map(fieldErrorMessage);
  assert.deepEqual(errs(['.spec.color', '.spec.size', '.spec.ready']), []);
  assert.deepEqual(errs(['', '.spec.ratio', '.metadata.name', '.spec.color', '.spec.color', '.spec.x']), [
    `${P}[0].jsonPath: Required value`,
    `${P}[1].jsonPath: Invalid value: ".spec.ratio": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
    `${P}[2].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field`,
    `${P}[4].jsonPath: Duplicate value: ".spec.color"`,
    `${P}[5].jsonPath: Invalid value: ".spec.x": is an invalid path: does not refer to a valid field`,
  ]);
  const many: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: Object.fromEntries([...Array(9)].map((_, i) => [`f${i}`, { type: 'string' }])) } },
  };
  assert.deepEqual(
    validateSelectableFields(
      [...Array(9)].map((_, i) => ({ jsonPath: `.spec.f${i}` })),
      many,
      P,
    ).map(fieldErrorMessage),
    [`${P}: Too many: 9: must have at most 8 items`],
  );
  const meta: JSONSchemaProps = { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string' } } } } };
  assert.deepEqual(validateSelectableFields([{ jsonPath: '.metadata.name' }], meta, P).map(fieldErrorMessage), [
    `${P}[0].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata`,
  ]);
});
