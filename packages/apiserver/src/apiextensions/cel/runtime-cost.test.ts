/**
 * Runtime cost and unstructured-data semantics against upstream's
 * TestCelCostStability (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/
 * cel/celcoststability_test.go): every rule must hold on the object, and the
 * cost charged to the validation budget must be upstream's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { compileRules } from './compile.js';
import { RUNTIME_CEL_COST_BUDGET } from './env.js';
import { validateWithRulesBudget } from './validate.js';

const str: JSONSchemaProps = { type: 'string' };
const int: JSONSchemaProps = { type: 'integer' };
const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'object', properties, ...extra });
const list = (items: JSONSchemaProps, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'array', items, ...extra });
const map = (v: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', additionalProperties: v });
const listMap = (keys: string[], items: JSONSchemaProps) => list(items, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys });
const vals = (...xs: unknown[]) => Object.fromEntries(xs.map((x, i) => [`val${i + 1}`, x]));
const schemas = (...xs: JSONSchemaProps[]) => obj(Object.fromEntries(xs.map((x, i) => [`val${i + 1}`, x])));

interface Case {
  name: string;
  schema: JSONSchemaProps;
  obj: Record<string, unknown>;
  costs: Record<string, number>;
}

const cases: Case[] = [
  {
    name: 'integers',
    schema: schemas(int, int, int, int, int, int),
    obj: vals(9007199254740991, 9007199254740991, 2147483647, 2147483647, 1, 1),
    costs: { 'self.val1 == self.val2': 5, 'type(self.val1) == int': 4, 'self.val3 + 1 == 2147483647 + 1': 5 },
  },
  {
    name: 'numbers',
    schema: schemas({ type: 'number' }, { type: 'number' }, { type: 'number' }),
    obj: vals(1.5, 1.5, 1),
    costs: { 'self.val1 == self.val2': 5, 'type(self.val1) == double': 4, 'type(self.val3) == double': 4, 'self.val3 == 1.0': 3 },
  },
  {
    name: 'numeric comparisons',
    schema: schemas(int, { type: 'number' }),
    obj: vals(5, 10.0),
    costs: { 'double(self.val1) < self.val2': 6, 'self.val1 < int(self.val2)': 6, 'double(5) < 10.0': 1, '5 < int(10.0)': 1, 'double(self.val1) < 10.0': 4 },
  },
  {
    name: 'unicode strings',
    schema: schemas(str, str),
    obj: vals('Rook takes 👑', 'Rook takes 👑'),
    costs: {
      "self.val1.startsWith('Rook')": 4,
      "!self.val1.startsWith('knight')": 5,
      "self.val1.matches('^[^0-9]*$')": 8,
      "!self.val1.matches('^[0-9]*$')": 7,
      'type(self.val1) == string': 4,
      'size(self.val1) == 12': 4,
      "self.val1.charAt(3) == 'k'": 4,
      "self.val1.indexOf('o') == 1": 4,
      "self.val1.indexOf('o', 2) == 2": 4,
      "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'": 7,
      "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'": 7,
      "self.val1.split(' ') == ['Rook', 'takes', '👑']": 6,
      "self.val1.split(' ', 2) == ['Rook', 'takes 👑']": 6,
      "self.val1.substring(5) == 'takes 👑'": 5,
      "self.val1.substring(0, 4) == 'Rook'": 5,
      "self.val1.substring(4, 10).trim() == 'takes'": 6,
      "self.val1.upperAscii() == 'ROOK TAKES 👑'": 6,
      "self.val1.lowerAscii() == 'rook takes 👑'": 6,
    },
  },
  {
    name: 'bytes',
    schema: schemas({ type: 'string', format: 'byte' }, { type: 'string', format: 'byte' }),
    obj: vals('QUI=', 'QUI='),
    costs: { 'self.val1 == self.val2': 5, "self.val1 == b'AB'": 3, 'type(self.val1) == bytes': 4, 'size(self.val1) == 2': 4 },
  },
  {
    name: 'duration, date and date-time formats',
    schema: schemas({ type: 'string', format: 'duration' }, { type: 'string', format: 'date' }, { type: 'string', format: 'date-time' }),
    obj: vals('1h2m3s4ms', '1997-07-16', '2011-08-18T19:03:37.010000000+01:00'),
    costs: {
      "self.val1 == duration('1h2m') + duration('3s4ms')": 4,
      'self.val1.getHours() == 1': 4,
      'type(self.val1) == google.protobuf.Duration': 4,
      'self.val2.getDate() == 16': 4,
      'type(self.val2) == google.protobuf.Timestamp': 4,
      "self.val3 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')": 4,
      "self.val3.getDate('01:00') == 18": 4,
    },
  },
  {
    name: 'enums',
    schema: obj({ enumStr: { type: 'string', enum: ['Pending', 'Available', 'Bound'] } }),
    obj: { enumStr: 'Pending' },
    costs: { "self.enumStr == 'Pending'": 3, "self.enumStr in ['Pending', 'Available']": 2 },
  },
  {
    name: 'conversions',
    schema: schemas(int, { type: 'number' }, { type: 'number' }, { type: 'number' }, str, { type: 'string', format: 'byte' }, str, {
      type: 'string',
      format: 'duration',
    }),
    obj: vals(10, 10.0, 10.49, 10.5, '10', 'MTA=', '3723.004s', '1h2m3s4ms'),
    costs: {
      'int(self.val2) == self.val1': 6,
      'double(self.val1) == self.val2': 6,
      'bytes(self.val5) == self.val6': 6,
      'string(self.val1) == self.val5': 6,
      "string(self.val4) == '10.5'": 4,
      'string(self.val6) == self.val5': 6,
      'duration(self.val7) == self.val8': 6,
    },
  },
  {
    name: 'lists',
    schema: schemas(list(int), list(int)),
    obj: vals([1, 2, 3], [1, 2, 3]),
    costs: {
      '1 in self.val1': 5,
      'self.val2[0] in self.val1': 8,
      '!(0 in self.val1)': 6,
      'self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]': 6,
      'self.val1 + [4, 5] == [1, 2, 3, 4, 5]': 4,
    },
  },
  {
    name: 'list sets',
    schema: schemas(list(str, { 'x-kubernetes-list-type': 'set' }), list(str, { 'x-kubernetes-list-type': 'set' })),
    obj: vals(['a', 'b', 'c'], ['a', 'c', 'b']),
    costs: {
      "self.val1 == ['c', 'b', 'a']": 3,
      'self.val1 == self.val2': 5,
      "'a' in self.val1": 5,
      "self.val1 + self.val2 == ['a', 'b', 'c']": 6,
      "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']": 4,
    },
  },
  {
    name: 'list maps',
    schema: obj({ objs: list(listMap(['k'], obj({ k: str, v: str }))) }),
    obj: {
      objs: [
        [
          { k: 'a', v: '1' },
          { k: 'b', v: '2' },
        ],
        [
          { k: 'b', v: '2' },
          { k: 'a', v: '1' },
        ],
        [
          { k: 'b', v: '3' },
          { k: 'a', v: '1' },
        ],
        [{ k: 'c', v: '4' }],
      ],
    },
    costs: {
      'self.objs[0] == self.objs[1]': 7,
      'self.objs[0] + self.objs[2] == self.objs[2]': 11,
      'self.objs[2] + self.objs[0] == self.objs[0]': 11,
      'self.objs[0] == [self.objs[0][0], self.objs[0][1]]': 22,
      'self.objs[0] == [self.objs[0][1], self.objs[0][0]]': 22,
      'self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]': 26,
      'size(self.objs[0] + [self.objs[3][0]]) == 3': 20,
    },
  },
  {
    name: 'maps',
    schema: schemas(map(str), map(str)),
    obj: vals({ k1: 'a', k2: 'b' }, { k2: 'b', k1: 'a' }),
    costs: { 'self.val1 == self.val2': 5, "'k1' in self.val1": 3, "!('k3' in self.val1)": 4, "self.val1 == {'k1': 'a', 'k2': 'b'}": 3 },
  },
  {
    name: 'object access',
    schema: obj({ a: obj({ b: int, c: int, d: { ...int, nullable: true } }), a1: obj({ b1: obj({ c1: int }), d2: obj({ e2: int }) }) }),
    obj: { a: { b: 1, d: null }, a1: { b1: { c1: 4 } }, a3: {} },
    costs: { 'has(self.a.b)': 2, 'has(self.a1.b1.c1)': 3, '!(has(self.a1.d2) && has(self.a1.d2.e2))': 3, '!has(self.a1.d2)': 3 },
  },
  {
    name: 'map access',
    schema: obj({ val: map(int) }),
    obj: { val: { b: 1, d: 2 } },
    costs: {
      "!('a' in self.val)": 4,
      "'b' in self.val": 3,
      '!has(self.val.a)': 3,
      'has(self.val.b)': 2,
      'self.val.all(k, self.val[k] > 0)': 17,
      'self.val.exists_one(k, self.val[k] == 2)': 14,
      '!self.val.exists_one(k, self.val[k] > 0)': 17,
      'size(self.val) == 2': 4,
      'size(self.val.filter(k, self.val[k] > 1)) == 1': 26,
    },
  },
  {
    name: 'list map access',
    schema: obj({ listMap: listMap(['k'], obj({ k: str, v: str, v2: str })) }),
    obj: {
      listMap: [
        { k: 'a1', v: 'b1' },
        { k: 'a2', v: 'b2' },
        { k: 'a3', v: 'b3', v2: 'z' },
      ],
    },
    costs: {
      'has(self.listMap[0].v)': 3,
      "self.listMap.all(m, m.k.startsWith('a'))": 21,
      "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')": 21,
      "self.listMap.exists(m, m.k.endsWith('1'))": 13,
      "self.listMap.exists_one(m, m.k == 'a3')": 15,
      "!self.listMap.all(m, m.k.endsWith('1'))": 18,
      "!self.listMap.exists(m, m.v == 'x')": 25,
      "size(self.listMap.filter(m, m.k == 'a1')) == 1": 27,
      "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')": 16,
      "self.listMap.map(m, m.v).exists(v, v == 'b1')": 55,
      "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')": 21,
      "!self.listMap.all(m, has(m.v2) && m.v2 != 'z')": 10,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1": 24,
      "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1": 25,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1": 39,
      "self.listMap.exists(m, m.v2 == 'z')": 24,
      "!self.listMap.all(m, m.v2 != 'z')": 22,
    },
  },
  {
    name: 'list access',
    schema: obj({ array: list(int) }),
    obj: { array: [1, 1, 2, 2, 3, 3, 4, 5] },
    costs: {
      '2 in self.array': 10,
      'self.array.all(e, e > 0)': 43,
      'self.array.exists(e, e > 2)': 36,
      'self.array.exists_one(e, e > 4)': 22,
      '!self.array.all(e, e < 2)': 21,
      '!self.array.exists(e, e < 0)': 52,
      '!self.array.exists_one(e, e == 2)': 25,
      'size(self.array.filter(e, e%2 == 0)) == 3': 68,
      'self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)': 194,
      'size(self.array) == 8': 4,
    },
  },
  {
    name: 'type and object meta not in the schema',
    schema: obj({ spec: obj({ field1: str }) }),
    obj: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foo', generateName: 'pickItForMe', namespace: 'xyz' }, spec: { field1: 'a' } },
    costs: { "self.kind == 'Pod'": 3, "self.metadata.name == 'foo'": 4, "self.metadata.generateName == 'pickItForMe'": 5, "self.spec.field1 == 'a'": 4 },
  },
  {
    name: 'embedded object',
    schema: obj({ embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } }),
    obj: { embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foo', generateName: 'pickItForMe' }, spec: { field1: 'a' } } },
    costs: { "self.embedded.kind == 'Pod'": 4, "self.embedded.metadata.generateName == 'pickItForMe'": 6, 'has(self.embedded)': 1 },
  },
  {
    name: 'string in int-or-string',
    schema: obj({ something: { 'x-kubernetes-int-or-string': true } }),
    obj: { something: '25%' },
    costs: {
      "type(self.something) == int ? self.something == 1 : self.something == '25%'": 7,
      "type(self.something) == string && self.something == '25%'": 7,
      "self.something == '25%'": 3,
      'self.something != 1': 3,
      "self.something == 1 || self.something == '25%'": 6,
      "self.something == '25%' || self.something == 1": 3,
      "self.something != ['anything']": 3,
    },
  },
  {
    name: 'percent comparison using int-or-string',
    schema: obj({ min: { 'x-kubernetes-int-or-string': true }, current: int, available: int }),
    obj: { min: '50%', current: 5, available: 10 },
    costs: {
      "type(self.min) == string && self.min.matches(r'(\\d+(\\.\\d+)?%)')": 10,
      "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0": 17,
    },
  },
  {
    name: 'preserve unknown fields',
    schema: obj({
      withUnknownList: list({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
      withUnknownFieldList: list(obj({ fieldOfUnknownType: { 'x-kubernetes-preserve-unknown-fields': true } })),
    }),
    obj: {
      withUnknownList: [{ field1: 'a', field2: 'b' }, { field1: 'x', field2: 'y' }, { field1: 'x', field2: 'y' }, {}, {}],
      withUnknownFieldList: [{ fieldOfUnknownType: 'a' }, { fieldOfUnknownType: 1 }, { fieldOfUnknownType: 1 }],
    },
    costs: {
      'self.withUnknownList.size() == 5': 4,
      'self.withUnknownList[0] != self.withUnknownList[1]': 7,
      'self.withUnknownList[1] == self.withUnknownList[2]': 7,
      'self.withUnknownList[3] == self.withUnknownList[4]': 6,
      'self.withUnknownFieldList[0] != self.withUnknownFieldList[1]': 7,
      'self.withUnknownFieldList[1] == self.withUnknownFieldList[2]': 7,
    },
  },
  {
    name: 'field nullability',
    schema: obj({
      unsetPlainStr: str,
      unsetNullableStr: { ...str, nullable: true },
      setNullableStr: { ...str, nullable: true },
      setToNull: { ...str, nullable: true },
    }),
    obj: { setNullableStr: 'v3', setToNull: null },
    costs: {
      '!has(self.unsetPlainStr)': 2,
      '!has(self.unsetNullableStr)': 2,
      "has(self.setNullableStr) && self.setNullableStr == 'v3'": 4,
      'type(self.setNullableStr) != null_type': 4,
      '!has(self.setToNull)': 2,
    },
  },
  {
    name: 'null values in containers',
    schema: obj({ m: map({ ...str, nullable: true }), l: list({ ...str, nullable: true }) }),
    obj: { m: { a: null, b: 'not-nil' }, l: [null, 'not-nil'] },
    costs: { 'self.m.size() == 2': 4, "'a' in self.m": 3, "type(self.m['a']) == null_type": 5 },
  },
  {
    name: 'escaped property names',
    schema: obj({ objs: list(listMap(['k!', 'k.'], obj({ 'k!': str, 'k.': str }))) }),
    obj: {
      objs: [
        [
          { 'k!': 'a', 'k.': '1' },
          { 'k!': 'b', 'k.': '2' },
        ],
        [
          { 'k!': 'b', 'k.': '2' },
          { 'k!': 'a', 'k.': '1' },
        ],
      ],
    },
    costs: { 'self.objs[0] == self.objs[1]': 7, "self.objs[0][0].k__dot__ == '1'": 6 },
  },
  {
    name: 'container composition',
    schema: obj({ obj: obj({ field: str }), mapOfMap: map(map(str)), mapOfList: map(list(str)), listOfObj: list(obj({ field3: str })) }),
    obj: { obj: { field: 'a' }, mapOfMap: { x: { y: 'b' } }, mapOfList: { l: ['e'] }, listOfObj: [{ field3: 'h' }] },
    costs: { "self.obj.field == 'a'": 4, "self.mapOfMap['x']['y'] == 'b'": 5, "self.mapOfList['l'][0] == 'e'": 5, "self.listOfObj[0].field3 == 'h'": 5 },
  },
];

describe('runtime cost and data semantics (upstream TestCelCostStability)', () => {
  for (const c of cases) {
    describe(c.name, () => {
      for (const [rule, expected] of Object.entries(c.costs)) {
        it(rule, () => {
          const schema = { ...c.schema, 'x-kubernetes-validations': [{ rule }] };
          const { errors, program } = compileRules(schema, 'openAPIV3Schema');
          // these rules sit on unbounded data; upstream's test builds the validator without the CRD cost checks
          assert.deepEqual(errors.filter((e) => e.type !== 'FieldValueForbidden').map(fieldErrorMessage), []);
          const r = validateWithRulesBudget(program, c.obj, undefined, { fldPath: 'root' });
          assert.deepEqual(r.errors.map(fieldErrorMessage), []);
          assert.equal(RUNTIME_CEL_COST_BUDGET - r.remainingBudget, expected);
        });
      }
    });
  }
});
