import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLabelSelector, selectorFromLabelSelector, labelSelectorToString, SelectorParseError } from './labels.js';
import { parseFieldSelector } from './fields.js';

test('label selector syntax', () => {
  const s = parseLabelSelector('env in (prod, dev),tier!=front,app,!legacy,version>2');
  assert.equal(s.matches({ env: 'prod', app: 'x', version: '3' }), true);
  assert.equal(s.matches({ env: 'prod', app: 'x', tier: 'front', version: '3' }), false);
  assert.equal(s.matches({ env: 'qa', app: 'x', version: '3' }), false);
  assert.equal(s.matches({ env: 'prod', version: '3' }), false);
  assert.equal(s.matches({ env: 'prod', app: 'x', legacy: '', version: '3' }), false);
  assert.equal(s.toString(), 'app,env in (dev,prod),!legacy,tier!=front,version>2');
  assert.equal(parseLabelSelector('a==b').matches({ a: 'b' }), true);
  assert.equal(parseLabelSelector('a notin (b)').matches({}), true);
  assert.equal(parseLabelSelector('').empty(), true);
  for (const bad of ['a in (', 'a=b=c', 'a in b', '=b', 'a,', 'a b']) {
    assert.throws(() => parseLabelSelector(bad), SelectorParseError, bad);
  }
});

test('LabelSelector objects', () => {
  assert.equal(selectorFromLabelSelector(null).matches({}), false);
  assert.equal(selectorFromLabelSelector({}).matches({ any: 'x' }), true);
  const s = selectorFromLabelSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] });
  assert.equal(s.matches({ app: 'web' }), true);
  assert.equal(s.matches({ app: 'web', tier: 'db' }), false);
  assert.equal(labelSelectorToString({ matchLabels: { b: '2', a: '1' } }), 'a=1,b=2');
  assert.throws(() => selectorFromLabelSelector({ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }));
});

test('field selectors', () => {
  const f = parseFieldSelector('metadata.name=x,status.phase!=Running');
  assert.equal(f.matches((k) => ({ 'metadata.name': 'x', 'status.phase': 'Pending' })[k]), true);
  assert.equal(f.matches((k) => ({ 'metadata.name': 'x', 'status.phase': 'Running' })[k]), false);
  assert.equal(f.requiresExactMatch('metadata.name'), 'x');
  assert.equal(parseFieldSelector('a=b\\,c').requirements[0]!.value, 'b,c');
  assert.throws(() => parseFieldSelector('nonsense'));
});
