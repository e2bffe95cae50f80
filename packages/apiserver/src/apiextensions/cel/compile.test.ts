/**
 * compileRules: the errors CRD validation reports for `x-kubernetes-validations`
 * (validation.go and compilation.go), with upstream's texts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps, ValidationRule } from '../types.js';
import { compileRules, costErrorMessage, selfType } from './compile.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const str: JSONSchemaProps = { type: 'string' };
const spec = (props: Record<string, JSONSchemaProps>, rules: ValidationRule[], extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: props, 'x-kubernetes-validations': rules, ...extra } },
});
const errors = (s: JSONSchemaProps, opts = {}) => compileRules(s, P, { typeName: 'selfType1', ...opts }).errors.map(fieldErrorMessage);
const R = `${P}.properties[spec].x-kubernetes-validations[0]`;
const goRule = (rule: string, more = '') =>
  `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:${JSON.stringify(more)}, Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`;

describe('compileRules: rule errors', () => {
  it('reports compilation failures as upstream prints them', () => {
    assert.deepEqual(errors(spec({ x: { type: 'integer' } }, [{ rule: 'self.foo == 1' }])), [
      `${R}.rule: Invalid value: ${goRule('self.foo == 1')}: compilation failed: ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^`,
    ]);
  });
  it('requires a bool rule and a string messageExpression', () => {
    assert.deepEqual(errors(spec({ x: { type: 'integer' } }, [{ rule: 'self.x' }])), [
      `${R}.rule: Invalid value: ${goRule('self.x')}: cel expression must evaluate to a bool`,
    ]);
    assert.deepEqual(errors(spec({ x: { type: 'integer' } }, [{ rule: 'self.x > 0', messageExpression: 'self.x' }])), [
      `${R}.messageExpression: Invalid value: ${goRule('self.x > 0', 'self.x')}: messageExpression must evaluate to a string`,
    ]);
    const bad = errors(spec({ x: { type: 'integer' } }, [{ rule: 'self.x > 0', messageExpression: 'self.y' }]));
    assert.match(bad[0]!, /\.messageExpression: Invalid value: .*: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'y'/);
  });
  it('checks messages, reasons and field paths', () => {
    const rules: ValidationRule[] = [
      { rule: ' ' },
      { rule: 'true', message: ' ' },
      { rule: 'true', message: 'a\nb' },
      { rule: 'true ||\nfalse' },
      { rule: 'true', messageExpression: ' ' },
      { rule: 'true', reason: 'Bogus' as NonNullable<ValidationRule['reason']> },
      { rule: 'true', fieldPath: '.nope' },
      { rule: 'true', fieldPath: 'x' },
    ];
    const p = (i: number) => `${P}.properties[spec].x-kubernetes-validations[${i}]`;
    assert.deepEqual(errors(spec({ x: str }, rules)), [
      `${p(0)}.rule: Required value: rule is not specified`,
      `${p(1)}.message: Invalid value: " ": message must be non-empty if specified`,
      `${p(2)}.message: Invalid value: "a\\nb": message must not contain line breaks`,
      `${p(3)}.message: Required value: message must be specified if rule contains line breaks`,
      `${p(4)}.messageExpression: Required value: messageExpression must be non-empty if specified`,
      `${p(5)}.reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      `${p(6)}.fieldPath: Invalid value: ".nope": fieldPath must be a valid path`,
      `${p(7)}.fieldPath: Invalid value: "x": fieldPath must be a valid path`,
    ]);
  });
  it('accepts field paths into properties and map keys', () => {
    const s = spec({ x: str, m: { type: 'object', additionalProperties: str } }, [
      { rule: 'true', fieldPath: '.x' },
      { rule: 'true', fieldPath: ".m['a.b']" },
      { rule: 'true', fieldPath: '.m.key' },
    ]);
    assert.deepEqual(errors(s), []);
    const { program } = compileRules(s, P);
    assert.deepEqual(
      program!.properties!.get('spec')!.rules.map((r) => r.normalizedFieldPath),
      ['x', 'm[a.b]', 'm[key]'],
    );
  });
  it('forbids oldSelf where old and new values cannot be correlated', () => {
    const short: JSONSchemaProps = { type: 'string', maxLength: 10 };
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        list: {
          type: 'array',
          maxItems: 10,
          items: { type: 'object', properties: { a: short }, 'x-kubernetes-validations': [{ rule: 'self.a == oldSelf.a' }] },
        },
        mapList: {
          type: 'array',
          maxItems: 10,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['a'],
          items: { type: 'object', required: ['a'], properties: { a: short }, 'x-kubernetes-validations': [{ rule: 'self.a == oldSelf.a' }] },
        },
      },
    };
    assert.deepEqual(errors(s), [
      `${P}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self.a == oldSelf.a": oldSelf cannot be used on the uncorrelatable portion of the schema within ${P}.properties[list]`,
    ]);
  });
  it('requires oldSelf for optionalOldSelf', () => {
    assert.deepEqual(errors(spec({ x: str }, [{ rule: 'self.x != ""', optionalOldSelf: true }])), [
      `${R}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    ]);
    assert.deepEqual(errors(spec({ x: str }, [{ rule: '!oldSelf.hasValue() || self.x == oldSelf.value().x', optionalOldSelf: true }])), []);
  });
  it('types self from the schema node', () => {
    assert.equal(selfType({ type: 'object', properties: { a: { type: 'integer' } } }, true, 'T'), 'T');
    assert.equal(selfType({ type: 'array', items: str }, false), 'list(string)');
    assert.equal(selfType({ type: 'object', additionalProperties: { type: 'number' } }, false), 'map(string, double)');
    assert.equal(selfType({ 'x-kubernetes-int-or-string': true }, false), 'dyn');
    assert.equal(selfType({ type: 'string', format: 'date-time' }, false), 'google.protobuf.Timestamp');
    // the resource root always has apiVersion, kind, metadata.name and metadata.generateName
    assert.deepEqual(errors({ type: 'object', 'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('a') && self.kind != ''" }] }), []);
    assert.deepEqual(errors(spec({ 'a-b': str, namespace: str }, [{ rule: "self.a__dash__b == self.__namespace__ && self.namespace == ''" }])), []);
  });
});

describe('compileRules: estimated cost', () => {
  const names = (list: JSONSchemaProps) => ({ type: 'object', properties: { spec: { type: 'object', properties: { names: list } } } }) as JSONSchemaProps;
  it('rejects a rule over an unbounded list of unbounded strings', () => {
    const s: JSONSchemaProps = names({ type: 'array', items: str, 'x-kubernetes-validations': [{ rule: "self.all(x, x.matches('^[a-z0-9-]+$'))" }] });
    const r = `${P}.properties[spec].properties[names].x-kubernetes-validations[0].rule`;
    const more = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
    assert.deepEqual(errors(s), [
      `${r}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${more}`,
      `${r}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${more}`,
    ]);
  });
  it('accepts it with maxItems and maxLength', () => {
    const s = names({
      type: 'array',
      maxItems: 100,
      items: { type: 'string', maxLength: 63 },
      'x-kubernetes-validations': [{ rule: "self.all(x, x.matches('^[a-z0-9-]+$'))" }],
    });
    assert.deepEqual(errors(s), []);
  });
  it('multiplies by the times a rule can run (items of unbounded lists above it)', () => {
    const item: JSONSchemaProps = {
      type: 'object',
      properties: { v: { type: 'string', maxLength: 4096 } },
      'x-kubernetes-validations': [{ rule: "self.v.matches('^[a-z]+[0-9]*[a-z]+$')" }],
    };
    assert.equal(errors(names({ type: 'array', maxItems: 5, items: item })).length, 0);
    const unbounded = errors(names({ type: 'array', items: item }));
    assert.match(unbounded[0]!, /items\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of/);
  });
  it('checks the total of the CRD and names the most expensive rules', () => {
    const rule = { rule: "self.matches('^[a-z]+$')" };
    const props = Object.fromEntries(
      [1, 2, 3].map((i) => [`f${i}`, { type: 'string', maxLength: 100, 'x-kubernetes-validations': [rule] } as JSONSchemaProps]),
    );
    const errs = errors({ type: 'object', properties: props }, { staticEstimatedCRDCostLimit: 200 });
    assert.equal(errs.length, 4);
    assert.match(
      errs[0]!,
      /properties\[f1\]\.x-kubernetes-validations\[0\]\.rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema/,
    );
    assert.match(
      errs[3]!,
      /^spec.versions\[0\].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1\.\d+x/,
    );
  });
  it('formats the exceed factor as upstream', () => {
    assert.match(costErrorMessage('estimated rule cost', 11_000_000, 10_000_000), /factor of 1\.100000x/);
    assert.match(costErrorMessage('estimated rule cost', 25_000_000, 10_000_000), /factor of 2\.5x/);
    assert.match(costErrorMessage('estimated rule cost', 2e9, 10_000_000), /factor of more than 100x/);
  });
  it('can skip the per-expression limit (unchanged schemas on update)', () => {
    const s = names({ type: 'array', items: str, 'x-kubernetes-validations': [{ rule: "self.all(x, x.matches('^a$'))" }] });
    assert.ok(!errors(s, { suppressPerExpressionCost: true }).some((e) => e.includes('estimated rule cost exceeds')));
  });
});
