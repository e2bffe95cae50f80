import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SelectorParseError,
  everything,
  formatLabelSelector,
  labelSelectorToString,
  matchesNothing,
  newRequirement,
  nothing,
  parseLabelSelector,
  selectorFromLabelSelector,
  selectorFromSet,
  validatedSelectorFromSet,
} from './labels/index.js';

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

test('syntax and matching', () => {
  const s = parseLabelSelector('env in (prod, dev),tier!=front,app,!legacy,version>2');
  assert.equal(s.matches({ env: 'prod', app: 'x', version: '3' }), true);
  assert.equal(s.matches({ env: 'prod', app: 'x', tier: 'front', version: '3' }), false);
  assert.equal(s.matches({ env: 'qa', app: 'x', version: '3' }), false);
  assert.equal(s.matches({ env: 'prod', version: '3' }), false);
  assert.equal(s.matches({ env: 'prod', app: 'x', legacy: '', version: '3' }), false);
  assert.equal(s.matches({ env: 'prod', app: 'x', version: '2' }), false);
  assert.equal(s.matches({ env: 'prod', app: 'x', version: 'two' }), false);
  assert.equal(s.toString(), 'app,env in (dev,prod),!legacy,tier!=front,version>2');
  assert.deepEqual(
    s.requirements.map((r) => [r.key, r.operator, r.values]),
    [
      ['app', 'exists', []],
      ['env', 'in', ['dev', 'prod']],
      ['legacy', '!', []],
      ['tier', '!=', ['front']],
      ['version', 'gt', ['2']],
    ],
  );
  assert.equal(parseLabelSelector('a==b').matches({ a: 'b' }), true);
  assert.equal(parseLabelSelector('a==b').toString(), 'a==b');
  assert.equal(parseLabelSelector('a notin (b)').matches({}), true);
  assert.equal(parseLabelSelector('a!=b').matches(undefined), true);
  assert.equal(parseLabelSelector('a').matches(undefined), false);
  assert.equal(parseLabelSelector('n<10').matches({ n: '-3' }), true);
  assert.equal(parseLabelSelector('n<10').matches({ n: '10' }), false);
  assert.equal(parseLabelSelector('n>9223372036854775806').matches({ n: '9223372036854775807' }), true);
});

test('whitespace, keywords as values and empty values', () => {
  assert.equal(parseLabelSelector(' a = b ,\tc\n').toString(), 'a=b,c');
  assert.equal(parseLabelSelector('a notin(a)').toString(), 'a notin (a)');
  assert.equal(parseLabelSelector('k in (in,notin)').toString(), 'k in (in,notin)');
  assert.equal(parseLabelSelector('in=notin').toString(), 'in=notin');
  assert.equal(parseLabelSelector('x in (foo,,baz),y,z notin ()').toString(), 'x in (,baz,foo),y,z notin ()');
  assert.equal(parseLabelSelector('a=').matches({ a: '' }), true);
  assert.equal(parseLabelSelector('a in (b,b,a)').toString(), 'a in (a,b)');
  assert.equal(parseLabelSelector('').empty(), true);
  assert.equal(parseLabelSelector('').toString(), '');
  assert.equal(parseLabelSelector('').matches({ any: 'thing' }), true);
  assert.equal(parseLabelSelector('example.com/tier=web').toString(), 'example.com/tier=web');
});

test('parse errors have upstream text', () => {
  const bad: [string, string][] = [
    ['a in (', "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['=b', "found '=', expected: !, identifier, or 'end of string'"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    ['a=b,,c', "found ',', expected: identifier after ','"],
    ['a>x', "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"],
    [
      'a>9223372036854775808',
      "unable to parse requirement: values[0]: Invalid value: \"9223372036854775808\": for 'Gt', 'Lt' operators, the value must be an integer",
    ],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${LABEL_VALUE_MSG}`],
    ['a=' + 'x'.repeat(64), `unable to parse requirement: values[0][a]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`],
    [
      'a/b/c',
      "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ],
  ];
  for (const [input, message] of bad) {
    assert.throws(
      () => parseLabelSelector(input),
      (e: unknown) => e instanceof SelectorParseError && e.message === message,
      input,
    );
  }
  // two bad values aggregate as upstream does
  assert.throws(
    () => parseLabelSelector('k in (-a,-b)'),
    (e: unknown) =>
      e instanceof SelectorParseError &&
      e.message ===
        `unable to parse requirement: [values[0][k]: Invalid value: "-a": ${LABEL_VALUE_MSG}, values[1][k]: Invalid value: "-b": ${LABEL_VALUE_MSG}]`,
  );
  try {
    parseLabelSelector('a=-b');
  } catch (e) {
    assert.equal((e as SelectorParseError).fieldErrors[0]?.field, 'values[0][a]');
  }
});

test('LabelSelector objects (LabelSelectorAsSelector)', () => {
  assert.equal(selectorFromLabelSelector(null).matches({}), false);
  assert.equal(selectorFromLabelSelector(undefined).empty(), false);
  assert.equal(matchesNothing(selectorFromLabelSelector(null)), true);
  assert.equal(selectorFromLabelSelector({}).matches({ any: 'x' }), true);
  assert.equal(selectorFromLabelSelector({ matchLabels: {}, matchExpressions: [] }).empty(), true);
  const s = selectorFromLabelSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] });
  assert.equal(s.matches({ app: 'web' }), true);
  assert.equal(s.matches({ app: 'web', tier: 'db' }), false);
  assert.equal(s.matches(undefined), false);
  const e = selectorFromLabelSelector({
    matchExpressions: [
      { key: 'c', operator: 'In', values: ['y', 'x'] },
      { key: 'b', operator: 'Exists' },
      { key: 'a', operator: 'DoesNotExist', values: [] },
    ],
  });
  assert.equal(e.toString(), '!a,b,c in (x,y)');
  assert.deepEqual(e.requirements[2]!.values, ['y', 'x']);

  const err = (ls: Parameters<typeof selectorFromLabelSelector>[0], message: string) =>
    assert.throws(
      () => selectorFromLabelSelector(ls),
      (x: unknown) => x instanceof SelectorParseError && x.message === message,
    );
  err({ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }, '"Bogus" is not a valid label selector operator');
  err({ matchExpressions: [{ key: 'k', operator: 'In', values: [] }] }, "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty");
  err(
    { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['a'] }] },
    'values: Invalid value: ["a"]: values set must be empty for exists and does not exist',
  );
  err(
    { matchLabels: { 'bad key': 'v' } },
    "key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  );
  err({ matchLabels: { k: 'bad value' } }, `values[0][k]: Invalid value: "bad value": ${LABEL_VALUE_MSG}`);
});

test('string forms', () => {
  assert.equal(labelSelectorToString({ matchLabels: { b: '2', a: '1' } }), 'a=1,b=2');
  assert.equal(labelSelectorToString({ matchLabels: { app: 'web' } }), 'app=web');
  assert.equal(labelSelectorToString(null), '');
  assert.equal(labelSelectorToString({ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }), '');
  assert.equal(formatLabelSelector({}), '<none>');
  assert.equal(formatLabelSelector({ matchLabels: { app: 'web' } }), 'app=web');
  assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }), '<error>');
  assert.equal(nothing().toString(), '');
  assert.equal(everything().toString(), '');
});

test('sets, exact matches and requirements', () => {
  const s = selectorFromSet({ tier: 'web', app: 'x' });
  assert.equal(s.toString(), 'app=x,tier=web');
  assert.equal(s.matches({ app: 'x', tier: 'web', extra: '1' }), true);
  assert.equal(s.matches({ app: 'x' }), false);
  assert.equal(selectorFromSet({}).empty(), true);
  assert.equal(selectorFromSet(null).matches({ a: 'b' }), true);
  assert.equal(s.requiresExactMatch('app'), 'x');
  assert.equal(parseLabelSelector('a in (x)').requiresExactMatch('a'), 'x');
  assert.equal(parseLabelSelector('a in (x,y)').requiresExactMatch('a'), undefined);
  assert.equal(parseLabelSelector('a!=x').requiresExactMatch('a'), undefined);
  assert.throws(() => validatedSelectorFromSet({ 'a b': 'c' }), SelectorParseError);
  assert.equal(
    everything()
      .add(newRequirement('b', '=', ['1']), newRequirement('a', 'exists', []))
      .toString(),
    'a,b=1',
  );
  assert.equal(
    nothing()
      .add(newRequirement('a', 'exists', []))
      .matches({ a: '' }),
    false,
  );
  assert.throws(
    () => newRequirement('a', 'like', ['x']),
    (e: unknown) => (e as Error).message === 'operator: Unsupported value: "like": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
  );
  assert.throws(
    () => newRequirement('a', '=', ['x', 'y']),
    (e: unknown) => (e as Error).message === 'values: Invalid value: ["x","y"]: exact-match compatibility requires one single value',
  );
  assert.throws(
    () => newRequirement('a', 'gt', ['1', '2']),
    (e: unknown) => (e as Error).message === 'values: Invalid value: ["1","2"]: for \'Gt\', \'Lt\' operators, exactly one value is required',
  );
  assert.throws(
    () => parseLabelSelector('a in (-x)', 'spec.selector'),
    (e: unknown) => (e as Error).message.startsWith('unable to parse requirement: spec.selector.values[0][a]: '),
  );
});
