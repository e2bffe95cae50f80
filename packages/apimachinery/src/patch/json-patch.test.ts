import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../errors.js';
import { MAX_JSON_PATCH_OPERATIONS, PatchError, applyJsonPatch } from './json-patch.js';

const cm = () => ({ kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['a'] }, data: { k: 'v' } });

function fails(ops: unknown, message?: string | RegExp, doc: unknown = cm()) {
  assert.throws(
    () => applyJsonPatch(doc, ops),
    (e: unknown) => {
      // PatchError is what the HTTP layer answers 422 Invalid.
      assert.ok(e instanceof PatchError, `not a PatchError: ${String(e)}`);
      if (typeof message === 'string') assert.equal(e.message, message);
      else if (message) assert.match(e.message, message);
      return true;
    },
  );
}

test('more than 10,000 operations is 413 RequestEntityTooLarge', () => {
  const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'ConfigMap' }));
  assert.throws(
    () => applyJsonPatch(cm(), ops),
    (e: unknown) =>
      e instanceof StatusError &&
      e.status.code === 413 &&
      e.status.reason === 'RequestEntityTooLarge' &&
      e.status.message === 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
  );
  assert.equal(MAX_JSON_PATCH_OPERATIONS, 10_000);
  // exactly 10,000 is fine, and a caller may lift the limit
  assert.deepEqual(applyJsonPatch(cm(), ops.slice(1)), cm());
  assert.deepEqual(applyJsonPatch(cm(), ops, { maxOperations: Infinity }), cm());
});

test('a patch that is not a list', () => {
  fails({}, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
});

test('operation errors are PatchErrors with a helpful message', () => {
  fails([{ op: 'bogus', path: '/data' }], 'Unexpected kind: bogus');
  fails([{ path: '/data' }], 'invalid operation: missing op');
  fails([null], 'invalid operation: missing op');
  fails([[1]], 'invalid operation: missing op');
  fails([{ op: 'add', value: 1 }], 'add operation does not apply: missing path');
  fails([{ op: 'add', path: '/data/x' }], 'add operation does not apply: missing value');
  fails([{ op: 'test', path: '/metadata/name', value: 'nope' }], 'testing value /metadata/name failed: test failed');
  fails([{ op: 'remove', path: '/nothing/here' }], 'remove operation does not apply: doc is missing path: "/nothing/here"');
  fails([{ op: 'remove', path: '/data/nothing' }], 'remove operation does not apply: doc is missing key: /data/nothing');
  fails([{ op: 'add', path: '/metadata/finalizers/7', value: 'x' }], 'add operation does not apply: doc is missing path: "/metadata/finalizers/7"');
  fails([{ op: 'add', path: 'data', value: {} }], 'invalid JSON pointer: "data"');
  fails([{ op: 'move', from: '/metadata', path: '/metadata/x' }], 'move operation does not apply: doc is missing path: "/metadata/x"');
  fails([{ op: 'copy', path: '/x' }], 'copy operation does not apply: missing from');
  // inherited properties are not members
  fails([{ op: 'remove', path: '/data/constructor' }], 'remove operation does not apply: doc is missing key: /data/constructor');
  fails([{ op: 'copy', from: '/data/toString', path: '/x' }], 'copy operation does not apply: doc is missing path: "/data/toString"');
});

test('the operations work', () => {
  const out = applyJsonPatch(cm(), [
    { op: 'add', path: '/data/n', value: { a: [1] } },
    { op: 'replace', path: '/data/k', value: 'w' },
    { op: 'copy', from: '/data/n', path: '/data/m' },
    { op: 'move', from: '/data/n', path: '/data/o' },
    { op: 'add', path: '/metadata/finalizers/-', value: 'b' },
    { op: 'add', path: '/metadata/finalizers/0', value: 'z' },
    { op: 'remove', path: '/metadata/finalizers/1' },
    { op: 'test', path: '/data/m', value: { a: [1] } },
    { op: 'add', path: '/data/a~1b~0c', value: '1' },
  ]);
  assert.deepEqual(out, { kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['z', 'b'] }, data: { k: 'w', m: { a: [1] }, o: { a: [1] }, 'a/b~c': '1' } });
  // the copy is a copy
  const copied = applyJsonPatch({ a: { x: 1 } }, [
    { op: 'copy', from: '/a', path: '/b' },
    { op: 'replace', path: '/b/x', value: 2 },
  ]);
  assert.deepEqual(copied, { a: { x: 1 }, b: { x: 2 } });
  // the input is never changed; __proto__ is a member like any other
  const doc = cm();
  applyJsonPatch(doc, [{ op: 'remove', path: '/data' }]);
  assert.deepEqual(doc, cm());
  const proto = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { x: 1 } }]) as object;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value, { x: 1 });
});

test('copies cannot blow the document up (3 MiB accumulated, as JSONPatchMaxCopyBytes)', () => {
  const ops = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '', path: `/c${i}` }));
  fails(ops, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/, { a: 'x'.repeat(1000) });
});

test('10,000 levels deep in the document and in the patch', () => {
  const deep = (n: number, leaf: unknown) => {
    let v = leaf;
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  const doc = { spec: deep(10_000, 1) };
  const value = deep(10_000, 2);
  const path = `/spec${'/a'.repeat(9_999)}`;
  const out = applyJsonPatch(doc, [
    { op: 'test', path: '/spec', value: deep(10_000, 1) },
    { op: 'add', path: `${path}/b`, value },
    { op: 'copy', from: `${path}/b`, path: `${path}/c` },
    { op: 'test', path: `${path}/c`, value: deep(10_000, 2) },
    { op: 'replace', path: `${path}/a`, value: 3 },
  ]) as { spec: unknown };
  let v: unknown = out.spec;
  for (let i = 0; i < 9_999; i++) v = (v as { a: unknown }).a;
  assert.equal((v as { a: unknown }).a, 3);
  fails([{ op: 'test', path: '/spec', value: deep(10_000, 2) }], 'testing value /spec failed: test failed', doc);
});
