/**
 * The CEL language as cel-go and Kubernetes define it: parsing and checking
 * issues with cel-go's texts and positions, standard operators and
 * conversions with cel-go's runtime errors, macros (including the
 * two-variable ones), error absorption, optional types, literal validators,
 * constant folding and the per-call cost limit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { celEnv, compileExpression, evaluate } from './env.js';
import { COST_LIMIT_EXCEEDED } from './interpreter.js';
import { type CelType, listOf, mapOf, structOf, T } from './types.js';
import { jsonToVal } from './unstructured.js';
import { CelError, ListV, list, type MapV, mapFromRecord, OptionalV, type Val } from './values.js';

const DECLS: Record<string, CelType> = {
  i: T.int,
  s: T.string,
  l: listOf(T.int),
  m: mapOf(T.string, T.int),
  d: T.dyn,
  o: structOf('Obj', new Map<string, CelType>([['a', T.int]])),
};
const VARS: Record<string, Val> = { i: 5n, s: 'hello', l: list([1n, 2n, 3n]), m: mapFromRecord({ a: 1n, b: 2n }), d: 'str', o: mapFromRecord({ a: 7n }) };

/** Compiles and runs; returns the value, or the error message. */
function run(expr: string, vars: Record<string, Val> = VARS): Val | string {
  const c = compileExpression(expr, DECLS);
  assert.ok(c.program, `${expr}: ${c.issues}`);
  assert.equal(c.programError, undefined);
  const r = evaluate(c.program, vars);
  return r.value instanceof CelError ? `error: ${r.value.message}` : r.value;
}
const issues = (expr: string) => compileExpression(expr, DECLS).issues;
const items = (v: Val | string) => (v as ListV).items();

describe('parse and check issues', () => {
  it('reports undeclared references with cel-go text and caret', () => {
    assert.equal(issues('y + 1'), "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')\n | y + 1\n | ^");
  });
  it('reports undefined fields at the dot', () => {
    assert.equal(issues('o.b == 1'), "ERROR: <input>:1:2: undefined field 'b'\n | o.b == 1\n | .^");
  });
  it('reports overload mismatches at the operator', () => {
    assert.equal(issues('i + "a"'), "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | i + \"a\"\n | ..^");
    assert.match(issues('s.startsWith(1)')!, /found no matching overload for 'startsWith' applied to 'string\.\(int\)'/);
    assert.match(issues('1 == 1.0')!, /found no matching overload for '_==_' applied to '\(int, double\)'/);
  });
  it('reports heterogeneous literals and field selection on scalars', () => {
    assert.match(issues('[1, "a"]')!, /expected type 'int' but found 'string'/);
    assert.match(issues('s.x')!, /type 'string' does not support field selection/);
    assert.match(issues('i.all(x, x > 0)')!, /expression of type 'int' cannot be range of a comprehension/);
  });
  it('reports syntax errors and multiple issues, in order', () => {
    assert.match(issues('self.')!, /^ERROR: <input>:1:\d+: Syntax error: /);
    const many = issues('y + z')!;
    assert.ok(many.indexOf("'y'") < many.indexOf("'z'"));
    assert.match(issues('9223372036854775808')!, /invalid int literal/);
  });
  it('validates duration, timestamp and regex literals', () => {
    assert.match(issues("duration('1x')")!, /invalid duration argument/);
    assert.match(issues("timestamp('yesterday')")!, /invalid timestamp argument/);
    assert.match(issues("s.matches('(')")!, /invalid matches argument/);
  });
  it('fails program creation for a constant conversion that fails', () => {
    assert.equal(compileExpression("int('x') == 1", DECLS).programError, 'strconv.ParseInt: parsing "x": invalid syntax');
  });
  it('allows cross-type numeric comparisons', () => {
    assert.equal(run('1 < 1.5 && 2u > 1 && 1.0 <= 1'), true);
  });
});

describe('operators and conversions', () => {
  it('evaluates arithmetic with cel-go overflow errors', () => {
    assert.equal(run('i * 2 - 3 % 2'), 9n);
    assert.equal(run('9223372036854775807 + 1'), 'error: integer overflow');
    assert.equal(run('i / 0'), 'error: division by zero');
    assert.equal(run('i % 0'), 'error: modulus by zero');
    assert.equal(run('1u - 2u'), 'error: unsigned integer overflow');
    assert.equal(run('-9223372036854775808 / -1'), 'error: integer overflow');
    assert.equal(run('7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1'), true);
  });
  it('converts between scalars', () => {
    assert.equal(run("int('42') + int(2.9) + int(-2.9)"), 42n);
    assert.equal(run('int(double(i) * 1e20)'), 'error: integer overflow');
    assert.equal(compileExpression('int(1e20) > 0', DECLS).programError, 'integer overflow');
    assert.equal(run('uint(d)', { ...VARS, d: '-1' }), 'error: strconv.ParseUint: parsing "-1": invalid syntax');
    assert.equal(run("double('1.5') + double(1)"), 2.5);
    assert.equal(run("string(1.5) + ' ' + string(1e6) + ' ' + string(123456.0) + ' ' + string(0.00001)"), '1.5 1e+06 123456 1e-05');
    assert.equal(run("string(b'abc') + string(true) + string(3u)"), 'abctrue3');
    assert.equal(run("bool('true') && !bool('0')"), true);
    assert.equal(run('bool(d)', { ...VARS, d: 'yes' }), 'error: strconv.ParseBool: parsing "yes": invalid syntax');
    assert.equal(run("size(bytes('é'))"), 2n);
  });
  it('compares with heterogeneous equality for dyn values', () => {
    assert.equal(run('d == 1'), false);
    assert.equal(run("d == 'str'"), true);
    assert.equal(run('d < 1'), 'error: no such overload');
    assert.equal(run('dyn(1) == 1.0 && dyn(2u) == 2'), true);
  });
  it('has types as values', () => {
    assert.equal(run("type(1) == int && type('a') == string && type([1]) == list && type({}) == map && type(null) == null_type"), true);
    assert.equal(run("type(duration('1s')) == google.protobuf.Duration && type(type(1)) == type"), true);
  });
  it('indexes lists and maps', () => {
    assert.equal(run('l[2] + m["b"]'), 5n);
    assert.equal(run('l[3]'), "error: index '3' out of range in list size '3'");
    assert.equal(run('m["z"]'), 'error: no such key: z');
    assert.equal(run('"a" in m && !("z" in m) && 2 in l'), true);
    assert.equal(run('{1: "x"}[dyn(1u)] == "x" && {1: "x"}[dyn(1.0)] == "x"'), true);
    assert.match(issues('{1: "x"}[1u]')!, /found no matching overload for '_\[_\]' applied to '\(map\(int, string\), uint\)'/);
  });
  it('concatenates strings, bytes and lists', () => {
    assert.equal(run('s + "!"'), 'hello!');
    assert.deepEqual(items(run('l + [4]')), [1n, 2n, 3n, 4n]);
    assert.equal(run("b'a' + b'b' == b'ab'"), true);
  });
  it('matches RE2 regular expressions', () => {
    assert.equal(run("s.matches('^h.*o$') && matches(s, 'ell') && !s.matches('^ell')"), true);
    assert.equal(run("'x'.matches(s)", { ...VARS, s: '(' }), 'error: error parsing regexp: missing closing ): `(`');
  });
  it('does timestamps and durations', () => {
    assert.equal(run("timestamp('2024-02-29T23:30:00Z') + duration('1h') == timestamp('2024-03-01T00:30:00Z')"), true);
    assert.equal(run("string(timestamp('2024-01-02T03:04:05.120+01:00'))"), '2024-01-02T02:04:05.12Z');
    assert.equal(run("timestamp('2024-01-01T00:00:00Z') - timestamp('2023-12-31T23:00:00Z') == duration('1h')"), true);
    assert.equal(run("string(duration('1h1m1.5s')) + ' ' + string(duration('-1.5ms'))"), '3661.5s -0.0015s');
    assert.equal(run("duration('90m').getHours() + duration('90m').getMinutes()"), 91n);
    const t = "timestamp('2024-03-10T10:30:45.678Z')";
    assert.equal(
      run(`[${t}.getFullYear(), ${t}.getMonth(), ${t}.getDate(), ${t}.getDayOfMonth(), ${t}.getDayOfWeek(), ${t}.getDayOfYear()]`) instanceof ListV,
      true,
    );
    assert.deepEqual(items(run(`[${t}.getFullYear(), ${t}.getMonth(), ${t}.getDate(), ${t}.getDayOfMonth(), ${t}.getDayOfWeek(), ${t}.getDayOfYear()]`)), [
      2024n,
      2n,
      10n,
      9n,
      0n,
      69n,
    ]);
    assert.deepEqual(items(run(`[${t}.getHours('America/Los_Angeles'), ${t}.getHours('+05:30'), ${t}.getMinutes('-01:15'), ${t}.getMilliseconds()]`)), [
      3n,
      16n,
      15n,
      678n,
    ]);
    assert.equal(run(`${t}.getHours('Mars/Base')`), 'error: unknown time zone Mars/Base');
    assert.equal(run("timestamp('9999-12-31T23:00:00Z') + duration('2h')"), 'error: timestamp out of range');
    assert.match(issues("duration('87600000h')")!, /invalid duration argument/);
    assert.equal(run("int(timestamp('1970-01-02T00:00:00Z')) == 86400 && timestamp(86400) == timestamp('1970-01-02T00:00:00Z')"), true);
  });
});

describe('macros and error absorption', () => {
  it('expands all, exists, exists_one, map and filter', () => {
    assert.equal(run('l.all(x, x > 0) && l.exists(x, x == 2) && l.exists_one(x, x > 2) && !l.exists_one(x, x > 1)'), true);
    assert.deepEqual(items(run('l.map(x, x * 10)')), [10n, 20n, 30n]);
    assert.deepEqual(items(run('l.filter(x, x % 2 == 1)')), [1n, 3n]);
    assert.deepEqual(items(run('l.map(x, x > 1, x * 2)')), [4n, 6n]);
    assert.equal(run("m.all(k, k in ['a', 'b']) && has(m.a) && !has(m.c) && has(o.a)"), true);
  });
  it('expands the two-variable comprehensions', () => {
    assert.equal(run('l.all(i, v, v == i + 1) && m.exists(k, v, k == "b" && v == 2) && l.existsOne(i, v, v == 3)'), true);
    assert.deepEqual(items(run('l.transformList(i, v, i * v)')), [0n, 2n, 6n]);
    assert.deepEqual(items(run('l.transformList(i, v, v > 1, v)')), [2n, 3n]);
    const tm = run('m.transformMap(k, v, v * 10)') as MapV;
    assert.equal(tm.find('b'), 20n);
  });
  it('absorbs errors that the other side decides', () => {
    assert.equal(run('false && 1 / 0 == 1'), false);
    assert.equal(run('1 / 0 == 1 || true'), true);
    assert.equal(run('l.exists(x, 6 / (x - 1) == 3)'), true);
    assert.equal(run('l.all(x, 6 / (x - 1) > 0)'), 'error: division by zero');
    assert.equal(run('true ? 1 : 1 / 0'), 1n);
  });
});

describe('optional types', () => {
  it('selects and indexes optionally', () => {
    assert.equal(run('m.?z.orValue(9) + m.?a.orValue(9)'), 10n);
    assert.equal(run("m[?'a'].hasValue() && !m[?'z'].hasValue() && l[?7].orValue(0) == 0"), true);
    assert.equal(run('o.?a.value()'), 7n);
  });
  it('builds lists and maps with optional entries', () => {
    assert.deepEqual(items(run('[?optional.none(), 1, ?optional.of(2), ?m.?a]')), [1n, 2n, 1n]);
    const mm = run("{?'x': optional.none(), 'y': 1, ?'z': optional.of(3)}") as MapV;
    assert.deepEqual(mm.keys(), ['y', 'z']);
  });
  it('has the optional functions and macros', () => {
    assert.equal(run('optional.none().value()'), 'error: optional.none() dereference');
    assert.equal(run('optional.none().or(optional.of(2)).value()'), 2n);
    assert.equal(run("optional.ofNonZeroValue('').hasValue() || optional.ofNonZeroValue(0).hasValue()"), false);
    assert.equal(run('optional.of(2).optMap(x, x * 3).value()'), 6n);
    assert.equal(run('optional.of(2).optFlatMap(x, x > 5 ? optional.of(x) : optional.none()).hasValue()'), false);
    assert.ok(run('optional.of(1)') instanceof OptionalV);
  });
});

describe('cost', () => {
  it('stops at the per-call cost limit', () => {
    const c = compileExpression('l.all(x, l.all(y, x + y > 0))', DECLS);
    const r = evaluate(c.program!, VARS, { costLimit: 20 });
    assert.ok(r.value instanceof CelError);
    assert.equal(r.value.message, COST_LIMIT_EXCEEDED);
    assert.ok(r.cost > 20);
    assert.equal(evaluate(c.program!, VARS).value, true);
  });
  it('charges nothing for constants folded at plan time', () => {
    const c = compileExpression("s in ['a', 'b'] || duration('1s') > duration('0s')", DECLS);
    // s (1), the set membership test (0), and one comparison of two constants (1)
    assert.equal(evaluate(c.program!, VARS).cost, 2);
  });
  it('reuses an environment with declared variables', () => {
    const env = celEnv({ x: T.int }).extend({ y: T.string });
    const c = compileExpression('size(y) == x', env);
    assert.equal(evaluate(c.program!, { x: 2n, y: 'ab' }).value, true);
    assert.match(compileExpression('s', env).issues!, /undeclared reference to 's'/);
  });
  it('reports unbound variables at runtime', () => {
    const c = compileExpression('i + 1', DECLS);
    assert.deepEqual(evaluate(c.program!, {}).value, new CelError('no such attribute(s): i'));
  });
  it('converts schemaless JSON (integers as int, other numbers as double)', () => {
    const c = compileExpression("v.a == 1 && type(v.a) == int && v.b == 1.5 && v.c[0] && v.d == null && v.e.f == 'x'", { v: T.dyn });
    assert.equal(evaluate(c.program!, { v: jsonToVal({ a: 1, b: 1.5, c: [true], d: null, e: { f: 'x' } }) }).value, true);
  });
  it('lists values of any kind', () => {
    assert.ok(run('[dyn([1]), dyn({"a": [2u]}), dyn(b"x"), dyn(null)]') instanceof ListV);
    assert.match(issues('[[1], {"a": [2u]}]')!, /expected type 'list\(int\)' but found 'map\(string, list\(uint\)\)'/);
  });
});
