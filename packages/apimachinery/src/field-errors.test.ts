import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Path,
  aggregateMessage,
  duplicate,
  fieldErrorBody,
  fieldErrorCauses,
  fieldErrorMessage,
  fieldErrorReason,
  forbidden,
  GoValue,
  goQuote,
  goStringMap,
  goStringSlice,
  internal,
  invalid,
  notFound,
  notSupported,
  path,
  required,
  tooLong,
  tooMany,
  typeInvalid,
} from './field-errors.js';

test('paths print as upstream field.Path', () => {
  assert.equal(path('spec').child('containers').index(0).child('name').toString(), 'spec.containers[0].name');
  assert.equal(path('metadata').child('annotations').key('foo').toString(), 'metadata.annotations[foo]');
  assert.equal(path('spec', 'template', 'spec').toString(), 'spec.template.spec');
  assert.equal(path('a').child('b', 'c').toString(), 'a.b.c');
  assert.equal(String(new Path('data').key('x.y')), 'data[x.y]');
  assert.equal(fieldErrorMessage(required(path('spec').child('selector'))), 'spec.selector: Required value');
});

test('messages match upstream Error() for every constructor', () => {
  assert.equal(
    fieldErrorMessage(invalid('spec.replicas', -1, 'must be greater than or equal to 0')),
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
  );
  assert.equal(
    fieldErrorMessage(required('metadata.name', 'name or generateName is required')),
    'metadata.name: Required value: name or generateName is required',
  );
  assert.equal(fieldErrorMessage(required('spec.containers')), 'spec.containers: Required value');
  assert.equal(
    fieldErrorMessage(notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never'])),
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  );
  assert.equal(fieldErrorMessage(notSupported('spec.x', 'y', [])), 'spec.x: Unsupported value: "y"');
  assert.equal(fieldErrorMessage(forbidden('metadata.namespace', 'not allowed on this type')), 'metadata.namespace: Forbidden: not allowed on this type');
  assert.equal(fieldErrorMessage(duplicate('spec.containers[1].name', 'web')), 'spec.containers[1].name: Duplicate value: "web"');
  assert.equal(fieldErrorMessage(notFound('spec.containers[0].volumeMounts[0].name', 'data')), 'spec.containers[0].volumeMounts[0].name: Not found: "data"');
  assert.equal(fieldErrorMessage(tooLong('metadata.annotations', 'whatever', 262144)), 'metadata.annotations: Too long: may not be more than 262144 bytes');
  assert.equal(fieldErrorMessage(tooLong('x', '', 1)), 'x: Too long: may not be more than 1 byte');
  assert.equal(fieldErrorMessage(tooLong('x', '', -1)), 'x: Too long: value is too long');
  assert.equal(fieldErrorMessage(tooMany('spec.items', 5, 3)), 'spec.items: Too many: 5: must have at most 3 items');
  assert.equal(fieldErrorMessage(tooMany('spec.items', -1, 1)), 'spec.items: Too many: must have at most 1 item');
  assert.equal(fieldErrorMessage(tooMany('spec.items', 2, -1)), 'spec.items: Too many: 2: has too many items');
  assert.equal(fieldErrorMessage(internal('spec', new Error('boom'))), 'spec: Internal error: boom');
  assert.equal(
    fieldErrorMessage(typeInvalid('spec.replicas', 'three', 'must be of type integer')),
    'spec.replicas: Invalid value: "three": must be of type integer',
  );
  assert.equal(fieldErrorMessage(invalid('', 'x', 'bad')), ': Invalid value: "x": bad');
});

test('bad values render as upstream ErrorBody does', () => {
  const body = (v: unknown) => fieldErrorBody(invalid('f', v, ''));
  assert.equal(body(3), 'Invalid value: 3');
  assert.equal(body(1.5), 'Invalid value: 1.5');
  assert.equal(body(0.00001), 'Invalid value: 1e-05');
  assert.equal(body(1e21), 'Invalid value: 1e+21');
  assert.equal(body(true), 'Invalid value: true');
  assert.equal(body(null), 'Invalid value: null');
  assert.equal(body(undefined), 'Invalid value: null');
  assert.equal(body('a"b'), 'Invalid value: "a\\"b"');
  assert.equal(body(['a', 'b']), 'Invalid value: ["a","b"]');
  assert.equal(body([]), 'Invalid value: []');
  // map[string]string marshals with sorted keys; HTML characters are escaped as encoding/json does
  assert.equal(body({ tier: 'web', app: 'x' }), 'Invalid value: {"app":"x","tier":"web"}');
  assert.equal(body({ matchLabels: { b: '1', a: '2' }, matchExpressions: [] }), 'Invalid value: {"matchLabels":{"a":"2","b":"1"},"matchExpressions":[]}');
  assert.equal(body({ s: '<a&b>' }), 'Invalid value: {"s":"\\u003ca\\u0026b\\u003e"}');
  assert.equal(fieldErrorBody(invalid('f', 'v', 'detail')), 'Invalid value: "v": detail');
  assert.equal(fieldErrorBody(forbidden('f', '')), 'Forbidden');
});

test('goQuote is strconv.Quote', () => {
  assert.equal(goQuote('plain'), '"plain"');
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('\n\t\r\x07\x08\x0c\x0b'), '"\\n\\t\\r\\a\\b\\f\\v"');
  assert.equal(goQuote('\x01\x7f'), '"\\x01\\x7f"');
  assert.equal(goQuote('é ü'), '"é ü"');
  assert.equal(goQuote('\u00a0\u200b'), '"\\u00a0\\u200b"');
  assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  assert.equal(goQuote('😀'), '"😀"');
});

test('reasons, causes and aggregates', () => {
  const a = required('a');
  const b = invalid('b', 1, 'x');
  assert.equal(fieldErrorReason(a), 'FieldValueRequired');
  assert.equal(fieldErrorReason(b), 'FieldValueInvalid');
  assert.deepEqual(fieldErrorCauses([a, b]), [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'a' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: 1: x', field: 'b' },
  ]);
  assert.equal(aggregateMessage([]), '');
  assert.equal(aggregateMessage([b]), 'b: Invalid value: 1: x');
  assert.equal(aggregateMessage([a, a]), 'a: Required value');
  assert.equal(aggregateMessage([a, b, required('a')]), '[a: Required value, b: Invalid value: 1: x]');
});

test('Go-rendered bad values print as kube-apiserver 1.33 prints them (%#v, String())', () => {
  const body = (v: unknown) => fieldErrorBody(invalid('f', v, 'd'));
  assert.equal(body(goStringMap({ tier: 'web', app: 'd' })), 'Invalid value: map[string]string{"app":"d", "tier":"web"}: d');
  assert.equal(body(goStringMap({})), 'Invalid value: map[string]string{}: d');
  assert.equal(body(goStringMap(undefined)), 'Invalid value: map[string]string(nil): d');
  assert.equal(body(goStringSlice(['a', 'b"'])), 'Invalid value: []string{"a", "b\\""}: d');
  assert.equal(body(goStringSlice(null)), 'Invalid value: []string(nil): d');
  assert.equal(body(new GoValue('1500m')), 'Invalid value: 1500m: d');
  assert.equal(
    fieldErrorMessage(invalid('spec.template.metadata.labels', goStringMap({ app: 'd' }), '`selector` does not match template `labels`')),
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"d"}: `selector` does not match template `labels`',
  );
});
