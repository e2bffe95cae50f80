/**
 * validateWithRules: x-kubernetes-validations evaluated over custom
 * resources, with the errors Kubernetes 1.33 reports (validation.go).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps, ValidationRule } from '../types.js';
import { compileRules } from './compile.js';
import { validateWithRules, validateWithRulesBudget } from './validate.js';

const str: JSONSchemaProps = { type: 'string', maxLength: 64 };
const int: JSONSchemaProps = { type: 'integer' };
const obj = (properties: Record<string, JSONSchemaProps>, rules: ValidationRule[] = [], extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties,
  ...(rules.length ? { 'x-kubernetes-validations': rules } : {}),
  ...extra,
});
const root = (spec: JSONSchemaProps) => obj({ spec });

function check(schema: JSONSchemaProps, o: unknown, old?: unknown, opts = {}): string[] {
  const { errors, program } = compileRules(schema, 'openAPIV3Schema');
  assert.deepEqual(errors.map(fieldErrorMessage), []);
  return validateWithRules(program, o, old, opts).map(fieldErrorMessage);
}

describe('validateWithRules: messages', () => {
  const s = root(
    obj({ x: int, name: str }, [
      { rule: 'self.x > 0' },
      { rule: 'self.x < 10', message: 'x must be below 10' },
      // (a concatenation with string(int) would be estimated unbounded, as upstream estimates it)
      { rule: 'self.x != 20', messageExpression: "'x is %d'.format([self.x])" },
      { rule: "self.name != 'bad'", reason: 'FieldValueForbidden', fieldPath: '.name', message: 'name is forbidden' },
      { rule: "self.name != 'dup'", reason: 'FieldValueDuplicate' },
      { rule: "self.name != 'req'", reason: 'FieldValueRequired', messageExpression: "''", message: 'name is required' },
    ]),
  );
  it('passes valid objects', () => {
    assert.deepEqual(check(s, { spec: { x: 5, name: 'ok' } }), []);
  });
  it('reports the message, the messageExpression or the rule', () => {
    assert.deepEqual(check(s, { spec: { x: 20, name: 'bad' } }), [
      'spec: Invalid value: "object": x must be below 10',
      'spec: Invalid value: "object": x is 20',
      'spec.name: Forbidden: name is forbidden',
    ]);
    assert.deepEqual(check(s, { spec: { x: -1, name: 'dup' } }), ['spec: Invalid value: "object": failed rule: self.x > 0', 'spec: Duplicate value: "object"']);
    // an empty messageExpression result falls back to message
    assert.deepEqual(check(s, { spec: { x: 1, name: 'req' } }), ['spec: Required value: name is required']);
  });
  it('skips null values and reports the schema type of scalars', () => {
    const t = root(obj({ n: { ...str, nullable: true, 'x-kubernetes-validations': [{ rule: "self != 'x'" }] } }));
    assert.deepEqual(check(t, { spec: { n: null } }), []);
    assert.deepEqual(check(t, { spec: { n: 'x' } }), ['spec.n: Invalid value: "string": failed rule: self != \'x\'']);
  });
});

describe('validateWithRules: nested data', () => {
  it('recurses into list items, map values and nested objects', () => {
    const s = root(
      obj({
        items: { type: 'array', maxItems: 10, items: obj({ v: int }, [{ rule: 'self.v >= 0', message: 'negative' }]) },
        labels: { type: 'object', maxProperties: 10, additionalProperties: { ...str, 'x-kubernetes-validations': [{ rule: "self != ''", message: 'empty' }] } },
        inner: obj({ deep: obj({ z: int }, [{ rule: 'self.z == 1' }]) }),
      }),
    );
    assert.deepEqual(check(s, { spec: { items: [{ v: 1 }, { v: -1 }], labels: { a: 'x', 'b.c': '' }, inner: { deep: { z: 2 } } } }), [
      'spec.items[1]: Invalid value: "object": negative',
      'spec.labels[b.c]: Invalid value: "string": empty',
      'spec.inner.deep: Invalid value: "object": failed rule: self.z == 1',
    ]);
  });
  it('evaluates lists of objects, maps and sets in rules', () => {
    const s = root(
      obj(
        {
          ports: {
            type: 'array',
            maxItems: 8,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: obj({ name: str, port: int }, [], { required: ['name'] }),
          },
          tags: { type: 'array', maxItems: 8, 'x-kubernetes-list-type': 'set', items: str },
          quota: { type: 'object', maxProperties: 8, additionalProperties: { 'x-kubernetes-int-or-string': true } },
        },
        [
          { rule: 'self.ports.all(p, p.port > 0 && p.port < 65536)', message: 'bad port' },
          { rule: "self.tags == ['b', 'a']", message: 'tags' },
          { rule: "self.quota.all(k, isQuantity(string(self.quota[k])) && quantity(string(self.quota[k])).isLessThan(quantity('1Gi')))", message: 'quota' },
        ],
      ),
    );
    assert.deepEqual(check(s, { spec: { ports: [{ name: 'http', port: 80 }], tags: ['a', 'b'], quota: { cpu: '500m', mem: 1024 } } }), []);
    assert.deepEqual(check(s, { spec: { ports: [{ name: 'http', port: 0 }], tags: ['a'], quota: { mem: '2Gi' } } }), [
      'spec: Invalid value: "object": bad port',
      'spec: Invalid value: "object": tags',
      'spec: Invalid value: "object": quota',
    ]);
  });
});

describe('validateWithRules: transition rules', () => {
  const s = root(
    obj({ x: int, name: str }, [
      { rule: 'self.name == oldSelf.name', message: 'name is immutable' },
      { rule: 'self.x >= oldSelf.x', message: 'x may not decrease' },
    ]),
  );
  it('runs only on update', () => {
    assert.deepEqual(check(s, { spec: { x: 1, name: 'a' } }), []);
    assert.deepEqual(check(s, { spec: { x: 1, name: 'b' } }, { spec: { x: 2, name: 'a' } }), [
      'spec: Invalid value: "object": name is immutable',
      'spec: Invalid value: "object": x may not decrease',
    ]);
  });
  it('sees optional.none() on create with optionalOldSelf', () => {
    const t = root(obj({ x: int }, [{ rule: 'oldSelf.hasValue() ? self.x >= oldSelf.value().x : self.x == 0', optionalOldSelf: true, message: 'start at 0' }]));
    assert.deepEqual(check(t, { spec: { x: 3 } }), ['spec: Invalid value: "object": start at 0']);
    assert.deepEqual(check(t, { spec: { x: 3 } }, { spec: { x: 2 } }), []);
  });
  it('correlates map-list items by key and not other list items', () => {
    const item = obj({ name: str, v: int }, [{ rule: 'self.v >= oldSelf.v', message: 'v decreased' }], { required: ['name'] });
    const t = root(obj({ list: { type: 'array', maxItems: 8, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item } }));
    const old = {
      spec: {
        list: [
          { name: 'a', v: 5 },
          { name: 'b', v: 5 },
        ],
      },
    };
    assert.deepEqual(
      check(
        t,
        {
          spec: {
            list: [
              { name: 'b', v: 6 },
              { name: 'a', v: 1 },
              { name: 'c', v: 0 },
            ],
          },
        },
        old,
      ),
      ['spec.list[1]: Invalid value: "object": v decreased'],
    );
  });
  it('does not correlate fields of atomic maps', () => {
    const t = root(obj({ inner: obj({ x: int }, [{ rule: 'self.x == oldSelf.x' }]) }, [], { 'x-kubernetes-map-type': 'atomic' }));
    const { program } = compileRules(t, 'openAPIV3Schema');
    assert.deepEqual(validateWithRules(program, { spec: { inner: { x: 1 } } }, { spec: { inner: { x: 2 } } }).map(fieldErrorMessage), []);
  });
});

describe('validateWithRules: errors and budgets', () => {
  it('reports runtime errors as upstream', () => {
    const s = root(
      obj({ x: int, y: int, v: { 'x-kubernetes-int-or-string': true } }, [{ rule: 'self.x / self.y > 0' }, { rule: 'self.v < 5' }, { rule: 'self.x == 1' }]),
    );
    assert.deepEqual(check(s, { spec: { x: 1, y: 0, v: '7' } }), [
      'spec: Invalid value: "object": division by zero evaluating rule: self.x / self.y > 0',
      'spec: Invalid value: "object": \'no such overload\': call arguments did not match a supported operator, function or macro signature for rule: self.v < 5',
    ]);
    assert.deepEqual(check(s, { spec: { y: 1, v: 1 } }), [
      'spec: Invalid value: "object": no such key: x evaluating rule: self.x / self.y > 0',
      'spec: Invalid value: "object": no such key: x evaluating rule: self.x == 1',
    ]);
  });
  it('stops when the per-call limit is exceeded', () => {
    const s = root(
      obj({ l: { type: 'array', maxItems: 100, items: int } }, [
        { rule: 'self.l.all(a, self.l.all(b, a != b || a == b))', message: 'pairs' },
        { rule: 'false' },
      ]),
    );
    const l = Array.from({ length: 100 }, (_, i) => i);
    assert.deepEqual(check(s, { spec: { l } }, undefined, { perCallLimit: 1000 }), [
      'spec: Invalid value: "object": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: pairs',
    ]);
  });
  it('stops when the budget of the call is spent', () => {
    const item = obj({ v: int }, [{ rule: 'self.v >= 0' }]);
    const s = root(obj({ items: { type: 'array', maxItems: 100, items: item } }));
    const items = Array.from({ length: 50 }, () => ({ v: 1 }));
    const r = validateWithRulesBudget(compileRules(s, 'openAPIV3Schema').program, { spec: { items } }, undefined, { costBudget: 60 });
    assert.deepEqual(r.errors.map(fieldErrorMessage), [
      'spec.items[20]: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    assert.ok(r.remainingBudget < 0);
    assert.deepEqual(validateWithRules(compileRules(s, 'openAPIV3Schema').program, { spec: { items } }, undefined), []);
  });
  it('reports rules that did not compile', () => {
    const s = root(obj({ x: int }, [{ rule: 'self.nope' }]));
    const { program } = compileRules(s, 'openAPIV3Schema');
    assert.match(
      validateWithRules(program, { spec: { x: 1 } }, undefined).map(fieldErrorMessage)[0]!,
      /^spec: Invalid value: "object": rule compile error: compilation failed: ERROR: <input>:1:5: undefined field 'nope'/,
    );
  });
  it('uses the object path given', () => {
    const s = obj({ x: int }, [{ rule: 'self.x == 1' }]);
    const { program } = compileRules(s, 'openAPIV3Schema');
    assert.deepEqual(validateWithRules(program, { x: 2 }, undefined, { fldPath: '<root>' }).map(fieldErrorMessage), [
      '<root>: Invalid value: "object": failed rule: self.x == 1',
    ]);
    assert.deepEqual(validateWithRules(undefined, { x: 2 }, undefined), []);
  });
});
