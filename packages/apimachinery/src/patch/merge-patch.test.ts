import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch, createMergePatch } from './merge-patch.js';

test('objects merge, null deletes, anything else replaces', () => {
  const doc = { a: { b: 1, c: 2 }, l: [1, 2], s: 'x' };
  assert.deepEqual(applyMergePatch(doc, { a: { b: null, d: 3 }, l: [3], s: { t: 1 } }), { a: { c: 2, d: 3 }, l: [3], s: { t: 1 } });
  assert.deepEqual(doc, { a: { b: 1, c: 2 }, l: [1, 2], s: 'x' });
  // values put in place whole lose their null members, as evanphx/json-patch prunes them
  assert.deepEqual(applyMergePatch({ s: 'x' }, { n: { a: null, b: { c: null, d: 1 } }, s: { x: null }, l: [null, { a: null }] }), {
    s: {},
    n: { b: { d: 1 } },
    l: [null, {}],
  });
  assert.deepEqual(applyMergePatch({ a: 1 }, [1]), [1]);
  const proto = applyMergePatch({}, JSON.parse('{"__proto__":{"x":1}}')) as object;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
});

test('createMergePatch', () => {
  assert.deepEqual(createMergePatch({ a: 1, b: { c: 1, d: 2 }, e: { f: 1 } }, { b: { c: 1, d: 3 }, e: { f: 1 }, g: [1] }), { a: null, b: { d: 3 }, g: [1] });
  assert.deepEqual(createMergePatch({ a: { b: {} } }, { a: { b: {} } }), {});
});

test('10,000 levels deep in the document and in the patch', () => {
  const deep = (n: number, leaf: Record<string, unknown>) => {
    let v = leaf;
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  const bottom = (v: unknown) => {
    while (typeof v === 'object' && v !== null && 'a' in v) v = (v as { a: unknown }).a;
    return v;
  };
  const out = applyMergePatch({ spec: deep(10_000, { x: 1 }) }, { spec: deep(10_000, { y: 2, z: null }) }) as { spec: unknown };
  assert.deepEqual(bottom(out.spec), { x: 1, y: 2 });
  assert.deepEqual(bottom((applyMergePatch({}, { spec: deep(10_000, { y: 2, z: null }) }) as { spec: unknown }).spec), { y: 2 });
  const diff = createMergePatch({ spec: deep(10_000, { x: 1 }) }, { spec: deep(10_000, { x: 2 }) }) as { spec: unknown };
  assert.deepEqual(bottom(diff.spec), { x: 2 });
  assert.deepEqual(createMergePatch({ spec: deep(10_000, { x: 1 }) }, { spec: deep(10_000, { x: 1 }) }), {});
});
