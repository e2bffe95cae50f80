import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDNS1123Label, isQualifiedName, nameIsDNSSubdomain, validateObjectMeta } from './validation.js';
import { aggregateMessage, fieldErrorMessage, invalid, notSupported, required } from './field-errors.js';

test('name rules', () => {
  assert.deepEqual(isDNS1123Label('my-name'), []);
  assert.equal(isDNS1123Label('My_Name').length, 1);
  assert.deepEqual(isQualifiedName('example.com/my-key'), []);
  assert.ok(isQualifiedName('a/b/c').length > 0);
  assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
  assert.ok(nameIsDNSSubdomain('..', false).length > 0);
});

test('field error messages as upstream prints them', () => {
  assert.equal(fieldErrorMessage(invalid('spec.replicas', -1, 'must be greater than or equal to 0')), 'spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  assert.equal(fieldErrorMessage(required('metadata.name', 'name or generateName is required')), 'metadata.name: Required value: name or generateName is required');
  assert.equal(
    fieldErrorMessage(notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never'])),
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  );
  assert.equal(aggregateMessage([required('a'), required('b'), required('a')]), '[a: Required value, b: Required value]');
});

test('object metadata', () => {
  const errs = validateObjectMeta({ name: 'ok', labels: { 'bad key!': 'v' } }, { namespaced: true, nameFn: nameIsDNSSubdomain });
  assert.deepEqual(errs.map((e) => e.field), ['metadata.namespace', 'metadata.labels']);
  assert.equal(validateObjectMeta({ namespace: 'x' }, { namespaced: false, nameFn: nameIsDNSSubdomain }).length, 2);
});
