/**
 * The static cost estimator against the expectations of upstream's
 * TestCostEstimation (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/
 * compilation_test.go): each schema is estimated once without size limits
 * (sizes derived from the 3 MiB request limit) and once with maxItems /
 * maxProperties / maxLength set.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JSONSchemaProps } from '../types.js';
import { compileRule } from './compile.js';
import { schemaDeclType } from './schema-decl.js';

const COST_LIMIT = 10_000_000;

function ruleType(t: string): JSONSchemaProps {
  if (t === 'duration' || t === 'date' || t === 'date-time') return { type: 'string', format: t };
  if (t === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  return { type: t };
}
const withRule = (s: JSONSchemaProps, rule: string): JSONSchemaProps => ({ ...s, 'x-kubernetes-validations': [{ rule }] });
const opt = <K extends string>(k: K, v: number | undefined) => (v === undefined ? {} : { [k]: v });
const arrayWith = (items: JSONSchemaProps, rule: string) => (max?: number) => withRule({ type: 'array', items, ...opt('maxItems', max) }, rule);
const mapWith = (item: JSONSchemaProps, rule: string) => (max?: number) =>
  withRule({ type: 'object', additionalProperties: item, ...opt('maxProperties', max) }, rule);
const stringWith =
  (rule: string, extra: JSONSchemaProps = {}) =>
  (max?: number) =>
    withRule({ type: 'string', ...extra, ...opt('maxLength', max) }, rule);
const objectItem: JSONSchemaProps = { type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] };
const nested = (all: boolean, rule: string) => (max?: number) =>
  withRule(
    {
      type: 'array',
      ...(all ? opt('maxItems', max) : {}),
      items: { type: 'object', ...opt('maxProperties', max), additionalProperties: { ...objectItem, ...(all ? opt('maxProperties', max) : {}) } },
    },
    rule,
  );
const strMax = (max?: number): JSONSchemaProps => ({ type: 'string', ...opt('maxLength', max) });

function cost(schema: JSONSchemaProps): number {
  const decl = schemaDeclType(schema, false)!;
  const r = compileRule(schema['x-kubernetes-validations']![0]!, schema, decl);
  assert.equal(r.error, undefined, r.error);
  return r.maxCost;
}

interface Case {
  name: string;
  gen: (max?: number) => JSONSchemaProps;
  calc?: number;
  calcExceeds?: number;
  set: number;
  setCost: number;
}

const cases: Case[] = [
  { name: 'number array with all', gen: arrayWith(ruleType('number'), 'self.all(x, true)'), calc: 4718591, set: 10, setCost: 32 },
  { name: 'string array with all', gen: arrayWith(ruleType('string'), 'self.all(x, true)'), calc: 3145727, set: 20, setCost: 62 },
  { name: 'boolean array with all', gen: arrayWith(ruleType('boolean'), 'self.all(x, true)'), calc: 1887437, set: 5, setCost: 17 },
  {
    name: 'array of number arrays with all',
    gen: arrayWith({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'),
    calc: 3145727,
    set: 100,
    setCost: 302,
  },
  { name: 'array of objects with all', gen: arrayWith(objectItem, 'self.all(x, true)'), calc: 555128, set: 50, setCost: 152 },
  { name: 'map of numbers with all', gen: mapWith(ruleType('number'), 'self.all(x, true)'), calc: 1348169, set: 10, setCost: 32 },
  { name: 'map of numbers with has', gen: mapWith(ruleType('number'), 'has(self.x)'), calc: 0, set: 100, setCost: 0 },
  { name: 'map of strings with all', gen: mapWith(ruleType('string'), 'self.all(x, true)'), calc: 1179647, set: 3, setCost: 11 },
  { name: 'map of booleans with all', gen: mapWith(ruleType('boolean'), 'self.all(x, true)'), calc: 943718, set: 100, setCost: 302 },
  { name: 'string with contains', gen: stringWith("self.contains('test')"), calc: 314574, set: 10, setCost: 5 },
  { name: 'string with startsWith', gen: stringWith("self.startsWith('test')"), calc: 2, set: 15, setCost: 2 },
  { name: 'concat string', gen: stringWith('size(self + "hello") > size("hello")'), calc: 314578, set: 4, setCost: 7 },
  { name: 'index of array with numbers', gen: arrayWith(ruleType('number'), 'self[1] == 0.0'), calc: 2, set: 5000, setCost: 2 },
  { name: 'index of array with strings', gen: arrayWith(ruleType('string'), 'self[1] == self[1]'), calc: 314577, set: 8, setCost: 314577 },
  { name: 'O(n^2) loop with numbers', gen: arrayWith(ruleType('number'), 'self.all(x, self.all(y, true))'), calcExceeds: COST_LIMIT, set: 10, setCost: 352 },
  { name: 'O(n^3) loop', gen: arrayWith(ruleType('number'), 'self.all(x, self.all(y, self.all(z, true)))'), calcExceeds: COST_LIMIT, set: 10, setCost: 3552 },
  { name: 'regex matches simple', gen: stringWith('self.matches("x")'), calc: 314574, set: 50, setCost: 22 },
  { name: 'regex matches empty string', gen: stringWith('"".matches("(((((((((())))))))))[0-9]")'), calc: 7, set: 10, setCost: 7 },
  { name: 'regex matches empty regex', gen: stringWith('self.matches("")'), calc: 1, set: 100, setCost: 1 },
  {
    name: 'map of strings with value length',
    gen: (max) => withRule({ type: 'object', additionalProperties: strMax(max), ...opt('maxProperties', max) }, 'self.all(x, x.contains(self[x]))'),
    calc: 2752507,
    set: 10,
    setCost: 72,
  },
  { name: 'set string maxLength to zero', gen: stringWith('self == "x"'), calc: 2, set: 0, setCost: 1 },
  { name: 'set bytes maxLength to zero', gen: stringWith('self == b"x"', { format: 'byte' }), calc: 2, set: 0, setCost: 1 },
  {
    name: 'set maxLength greater than estimated',
    gen: arrayWith(ruleType('number'), 'self.all(x, x == 0.0)'),
    calc: 6291454,
    set: 3 * 1024 * 2048,
    setCost: 25165826,
  },
  { name: 'nested types, all with max', gen: nested(true, 'self.all(x, x["y"].required == "z")'), calc: 7340027, set: 10, setCost: 72 },
  { name: 'nested types, one with max', gen: nested(false, 'self.all(x, x["y"].required == "z")'), calc: 7340027, set: 10, setCost: 7340027 },
  { name: 'int-or-string array with all', gen: arrayWith(ruleType('int-or-string'), 'self.all(x, true)'), calc: 4718591, set: 10, setCost: 32 },
  { name: 'index of array with int-or-strings', gen: arrayWith(ruleType('int-or-string'), 'self[0] == 5'), calc: 3, set: 10, setCost: 3 },
  { name: 'index of array of objects', gen: arrayWith(objectItem, 'self[0] == null'), calc: 2, set: 422, setCost: 2 },
  {
    name: 'array of number maps with all',
    gen: arrayWith({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, x.y == 25.2)'),
    calc: 6291452,
    set: 12,
    setCost: 74,
  },
  { name: 'duration array with all', gen: arrayWith(ruleType('duration'), 'self.all(x, true)'), calc: 2359295, set: 5, setCost: 17 },
  { name: 'index of duration array', gen: arrayWith(ruleType('duration'), 'self[0].getHours() == 2'), calc: 4, set: 525, setCost: 4 },
  { name: 'date array with all', gen: arrayWith(ruleType('date'), 'self.all(x, true)'), calc: 725936, set: 15, setCost: 47 },
  { name: 'date-time array with all', gen: arrayWith(ruleType('date-time'), 'self.all(x, true)'), calc: 428963, set: 25, setCost: 77 },
  { name: 'map of objects with all', gen: mapWith(objectItem, 'self.all(x, true)'), calc: 428963, set: 20, setCost: 62 },
  {
    name: 'map of number maps with all',
    gen: mapWith({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'),
    calc: 1179647,
    set: 10,
    setCost: 32,
  },
  { name: 'map of durations with all', gen: mapWith(ruleType('duration'), 'self.all(x, true)'), calc: 1048577, set: 5, setCost: 17 },
  { name: 'map of date-times with all', gen: mapWith(ruleType('date-time'), 'self.all(x, true)'), calc: 349526, set: 25, setCost: 77 },
  { name: 'regex find', gen: stringWith("self.find('[0-9]+') == ''"), calc: 629147, set: 10, setCost: 11 },
  {
    name: 'join',
    gen: (max) => withRule({ type: 'array', items: strMax(max), ...opt('maxItems', max) }, "self.join(' ') == 'aa bb'"),
    calc: 329853068905,
    set: 10,
    setCost: 43,
  },
  {
    name: 'isSorted',
    gen: (max) => withRule({ type: 'array', items: strMax(max), ...opt('maxItems', max) }, 'self.isSorted() == true'),
    calc: 329854432052,
    set: 10,
    setCost: 52,
  },
  {
    name: 'replace',
    gen: (max) =>
      withRule(
        { type: 'object', properties: { str: strMax(max), before: strMax(2), after: strMax(4) } },
        "self.str.replace(self.before, self.after) == 'does not matter'",
      ),
    calc: 629154,
    set: 4,
    setCost: 12,
  },
  {
    name: 'split',
    gen: (max) => withRule({ type: 'object', properties: { str: strMax(max), separator: strMax(max) } }, 'self.str.split(self.separator) == []'),
    calc: 629160,
    set: 10,
    setCost: 22,
  },
  { name: 'lowerAscii', gen: (max) => withRule(strMax(max), "self.lowerAscii() == 'lower!'"), calc: 314575, set: 10, setCost: 6 },
  { name: 'size calls', gen: mapWith({ type: 'integer' }, 'oldSelf.size() == self.size()'), calc: 5, set: 10, setCost: 5 },
  { name: 'timestamp comparison', gen: mapWith(ruleType('date-time'), 'self["a"] == self["b"]'), calc: 8, set: 7, setCost: 8 },
  { name: 'enum bounds strings', gen: stringWith("self.contains('A')", { enum: ['A', 'B', 'C', 'LongValue'] }), calc: 2, set: 1000, setCost: 401 },
];

describe('estimated rule cost (upstream TestCostEstimation)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const calc = cost(c.gen(undefined));
      if (c.calc !== undefined && c.calc > 0) assert.equal(calc, c.calc, 'without limits');
      if (c.calcExceeds !== undefined) assert.ok(calc >= c.calcExceeds, `without limits ${calc} should exceed ${c.calcExceeds}`);
      if (c.setCost > 0) assert.equal(cost(c.gen(c.set)), c.setCost, 'with limits');
    });
  }
});
