import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../errors.js';
import { applyStrategicMergePatch, type SchemaNode } from './strategic-merge-patch.js';

/** `{key: {key: ... leaf}}`, n levels of `key` above the leaf. */
function deepObject(n: number, key: string, leaf: Record<string, unknown>): Record<string, unknown> {
  let v = leaf;
  for (let i = 0; i < n; i++) v = { [key]: v };
  return v;
}

/** The value under a chain of `key`. */
function bottom(v: unknown, key: string): unknown {
  while (typeof v === 'object' && v !== null && key in v) v = (v as Record<string, unknown>)[key];
  return v;
}

/** Nesting depth of a JSON value (a scalar is 0), without recursion. */
function depthOf(v: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    max = Math.max(max, d + 1);
    for (const c of Object.values(x)) stack.push([c, d + 1]);
  }
  return max;
}

const mergeList = (mergeKey: string | undefined, items: SchemaNode): SchemaNode => ({
  type: 'array',
  'x-kubernetes-patch-strategy': 'merge',
  ...(mergeKey ? { 'x-kubernetes-patch-merge-key': mergeKey } : {}),
  items,
});

const container: SchemaNode = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    image: { type: 'string' },
    args: { type: 'array', items: { type: 'string' } },
    env: mergeList('name', { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } }),
  },
};

const deploymentSchema: SchemaNode = {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        finalizers: mergeList(undefined, { type: 'string' }),
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        strategy: {
          type: 'object',
          'x-kubernetes-patch-strategy': 'retainKeys',
          properties: { type: { type: 'string' }, rollingUpdate: { type: 'object' } },
        },
        template: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              properties: { containers: mergeList('name', container), initContainers: mergeList('name', container) },
            },
          },
        },
      },
    },
  },
};

const deployment = () => ({
  metadata: { name: 'web', finalizers: ['a', 'b'], labels: { app: 'web' } },
  spec: {
    replicas: 1,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
    template: {
      spec: {
        containers: [
          { name: 'a', image: 'a' },
          { name: 'b', image: 'b' },
        ],
      },
    },
  },
});

const tmpl = (spec: unknown) => ({ spec: { template: { spec } } });
const smp = (patch: unknown, doc: unknown = deployment()) => applyStrategicMergePatch(doc, patch, deploymentSchema) as ReturnType<typeof deployment>;

function rejects(patch: unknown, code: number, reason: string, message: string | RegExp, doc: unknown = deployment()) {
  assert.throws(
    () => smp(patch, doc),
    (e: unknown) => {
      assert.ok(e instanceof StatusError, `not a StatusError: ${String(e)}`);
      assert.equal(e.status.code, code);
      assert.equal(e.status.reason, reason);
      if (typeof message === 'string') assert.equal(e.status.message, message);
      else assert.match(e.status.message ?? '', message);
      return true;
    },
  );
}

const bad = (patch: unknown, message: string | RegExp, doc?: unknown) => rejects(patch, 400, 'BadRequest', message, doc);

test('a list element without its merge key', () => {
  bad(tmpl({ containers: [{ image: 'x' }] }), 'map: map[image:x] does not contain declared merge key: name');
  bad(tmpl({ containers: [{ $patch: 'delete' }] }), 'map: map[$patch:delete] does not contain declared merge key: name');
});

test('an unknown $patch in a map or a list element', () => {
  bad({ spec: { $patch: 'bogus', replicas: 2 } }, 'unknown patch type: bogus in map: map[$patch:bogus replicas:2]');
  bad(tmpl({ containers: [{ name: 'c', $patch: 'bogus' }] }), 'unknown patch type: bogus in map: map[$patch:bogus name:c]');
  // $patch: merge is no directive for a map; a number prints as Go's %s prints an int64.
  bad({ spec: { $patch: 'merge' } }, 'unknown patch type: merge in map: map[$patch:merge]');
  bad({ spec: { $patch: 5 } }, 'unknown patch type: %!s(int64=5) in map: map[$patch:5]');
  bad({ $patch: 'bogus' }, 'unknown patch type: bogus in map: map[$patch:bogus]');
});

test('$patch: merge in a list element', () => {
  bad(tmpl({ containers: [{ $patch: 'merge' }] }), 'merging lists cannot yet be specified in the patch');
});

test('$setElementOrder that is not a list', () => {
  const c = [{ name: 'c', image: 'y' }];
  bad(tmpl({ '$setElementOrder/containers': 'x', containers: c }), 'expected a []interface {}, but received a string');
  bad(tmpl({ '$setElementOrder/containers': 1.5, containers: c }), 'expected a []interface {}, but received a float64');
  bad(tmpl({ '$setElementOrder/containers': true, containers: c }), 'expected a []interface {}, but received a bool');
  bad(tmpl({ '$setElementOrder/containers': {}, containers: c }), 'expected a []interface {}, but received a map[string]interface {}');
  bad(tmpl({ '$setElementOrder/containers': null, containers: c }), 'expected a []interface {}, but received a %!s(<nil>)');
  // and the list it orders must be a list too
  bad(tmpl({ '$setElementOrder/containers': [{ name: 'a' }], containers: 'x' }), 'expected a []interface {}, but received a string');
});

test('a patch list item missing from $setElementOrder', () => {
  bad(
    tmpl({ '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'c', image: 'y' }] }),
    "The order in patch list:\n[map[image:y name:c]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n",
  );
  bad({ metadata: { '$setElementOrder/finalizers': ['a'], finalizers: ['z'] } }, "The order in patch list:\n[z]\n doesn't match $setElementOrder list:\n[a]\n");
});

test('a $setElementOrder element without the merge key', () => {
  bad(
    tmpl({ '$setElementOrder/containers': [{ image: 'x' }], containers: [{ name: 'c', image: 'y' }] }),
    'map: map[image:x] does not contain declared merge key: name',
  );
  // also when the patch does not touch the list
  bad(tmpl({ '$setElementOrder/containers': [{ name: 'a' }, { image: 'x' }] }), 'map: map[image:x] does not contain declared merge key: name');
});

test('$setElementOrder without a field, $deleteFromPrimitiveList without a field', () => {
  bad(tmpl({ $setElementOrder: [{ name: 'c' }] }), 'invalid patch format of setElementOrder list');
  bad(tmpl({ '$setElementOrderX/containers': [{ name: 'c' }] }), 'invalid patch format of setElementOrder list');
  bad({ metadata: { $deleteFromPrimitiveList: ['a'] } }, 'invalid patch format of primitive list');
});

test('$retainKeys that is not a list of strings, or misses keys of the patch', () => {
  bad({ spec: { strategy: { $retainKeys: 'x' } } }, 'invalid patch format of retainKeys');
  bad({ spec: { strategy: { $retainKeys: [1] } } }, 'invalid patch format of retainKeys');
  bad({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: { maxSurge: 2 } } } }, 'invalid patch format of retainKeys');
  // valid: keys not retained are cleared, null members need not be listed
  const out = smp({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } });
  assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
});

test('$deleteFromPrimitiveList that is not a list', () => {
  bad({ metadata: { '$deleteFromPrimitiveList/finalizers': 'x' } }, 'invalid patch format of primitive list');
  bad({ metadata: { '$deleteFromPrimitiveList/finalizers': null } }, 'invalid patch format of primitive list');
  bad({ metadata: { '$deleteFromPrimitiveList/finalizers': { a: 1 } } }, 'invalid patch format of primitive list');
  assert.deepEqual(smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }).metadata.finalizers, ['b']);
  // deletion lists apply to lists that do not merge too
  const doc = deployment();
  (doc.spec.template.spec.containers[0] as Record<string, unknown>).args = ['x', 'y', 'x'];
  const out = smp(tmpl({ containers: [{ name: 'a', '$deleteFromPrimitiveList/args': ['x'] }] }), doc);
  assert.deepEqual((out.spec.template.spec.containers[0] as Record<string, unknown>).args, ['y']);
});

test('a list of lists is 422 Invalid, as upstream words every 422 of NewGenericServerResponse', () => {
  const doc = { spec: { template: { spec: { containers: [] } } } };
  rejects(tmpl({ containers: [[{ name: 'c' }]] }), 422, 'Invalid', 'the server rejected our request due to an error in our request', doc);
  rejects(
    { metadata: { '$setElementOrder/finalizers': [['a']], finalizers: [['a']] } },
    422,
    'Invalid',
    'the server rejected our request due to an error in our request',
    { metadata: {} },
  );
  // against elements that are maps, it is a list of mixed types
  bad(tmpl({ containers: [[{ name: 'c' }]] }), 'list element types are not identical: [[map[image:a name:a] map[image:b name:b]] [[map[name:c]]]]');
});

test('a merge list of maps without a merge key, and elements of mixed types', () => {
  bad({ metadata: { finalizers: [{ a: 1 }] } }, 'list element types are not identical: [[a b] [map[a:1]]]');
  bad({ metadata: { finalizers: [{ a: 1 }] } }, 'cannot merge lists without merge key for string', { metadata: { finalizers: [] } });
  bad(tmpl({ containers: ['x'] }), 'list element types are not identical: [[map[image:a name:a] map[image:b name:b]] [x]]');
});

test('$patch: delete and replace work as upstream', () => {
  // delete of a list element, the new element first (patch items before server-only ones)
  assert.deepEqual(
    smp(
      tmpl({
        containers: [
          { name: 'b', $patch: 'delete' },
          { name: 'c', image: 'c' },
        ],
      }),
    ).spec.template.spec.containers,
    [
      { name: 'c', image: 'c' },
      { name: 'a', image: 'a' },
    ],
  );
  // replace of a whole list
  assert.deepEqual(smp(tmpl({ containers: [{ name: 'c', image: 'c' }, { $patch: 'replace' }] })).spec.template.spec.containers, [{ name: 'c', image: 'c' }]);
  // replace and delete of a map
  assert.deepEqual(smp({ spec: { strategy: { $patch: 'replace', type: 'Recreate' } } }).spec.strategy, { type: 'Recreate' });
  assert.deepEqual(smp({ metadata: { labels: { $patch: 'delete' } } }).metadata.labels, {});
  // nested element merge keeps the order of the server
  assert.deepEqual(smp(tmpl({ containers: [{ name: 'b', image: 'B' }] })).spec.template.spec.containers, [
    { name: 'a', image: 'a' },
    { name: 'b', image: 'B' },
  ]);
});

test('$setElementOrder orders, primitive lists merge as sets, null deletes', () => {
  const out = smp(tmpl({ '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }, { name: 'a' }], containers: [{ name: 'c', image: 'c' }] }));
  assert.deepEqual(
    out.spec.template.spec.containers.map((c) => c.name),
    ['b', 'c', 'a'],
  );
  assert.deepEqual(smp({ metadata: { finalizers: ['c', 'a'] } }).metadata.finalizers, ['c', 'a', 'b']);
  assert.deepEqual(smp({ metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'], finalizers: ['c'] } }).metadata.finalizers, ['b', 'c', 'a']);
  const gone = smp({ metadata: { labels: null }, spec: { replicas: 3 } });
  assert.equal('labels' in gone.metadata, false);
  assert.equal(gone.spec.replicas, 3);
});

test('directives never stay in the result; other $ fields are data', () => {
  // a field the original lacks: maps holding $patch go (removeDirectives), and null members
  const added = smp({
    spec: {
      template: {
        spec: {
          initContainers: [
            { name: 'i', $patch: 'delete' },
            { name: 'j', image: null, env: [{ name: 'e', $patch: 'replace' }, { name: 'f' }] },
          ],
        },
      },
    },
  });
  assert.deepEqual((added.spec.template.spec as Record<string, unknown>).initContainers, [{ name: 'j', env: [{ name: 'f' }] }]);
  assert.equal('labels' in smp({ metadata: { labels: { $patch: 'delete' } } }, { metadata: {} }).metadata, false);
  // a new element of a merged list is taken as it is, less its directive keys
  const appended = smp(tmpl({ containers: [{ name: 'c', env: [{ name: 'e', $patch: 'replace' }], '$setElementOrder/env': [{ name: 'e' }] }] }));
  assert.deepEqual(appended.spec.template.spec.containers[0], { name: 'c', env: [{ name: 'e' }] });
  const schemaDoc = { spec: { $ref: '#/a' } };
  assert.deepEqual(applyStrategicMergePatch(schemaDoc, { spec: { $schema: 'x' } }, undefined), { spec: { $ref: '#/a', $schema: 'x' } });
});

test('the document and the patch are not changed; __proto__ is data', () => {
  const doc = deployment();
  const patch = tmpl({ containers: [{ name: 'a', image: 'z' }] });
  const before = JSON.stringify([doc, patch]);
  smp(patch, doc);
  assert.equal(JSON.stringify([doc, patch]), before);
  const out = applyStrategicMergePatch({}, JSON.parse('{"__proto__":{"x":1}}'), undefined) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { x: 1 });
});

test('a patch that is not an object is 400', () => {
  assert.throws(
    () => applyStrategicMergePatch({}, [], undefined),
    (e: unknown) => e instanceof StatusError && e.status.code === 400,
  );
});

test('10,000 levels deep in the document and in the patch', () => {
  const doc = { spec: deepObject(10_000, 'a', { v: 1 }) };
  const patch = { spec: deepObject(10_000, 'a', { w: 2 }) };
  const out = applyStrategicMergePatch(doc, patch, undefined) as Record<string, unknown>;
  assert.equal(depthOf(out), 10_002);
  // a deep patch put in place whole, a deep patch with a directive at the bottom, a deep error message
  assert.equal(depthOf(applyStrategicMergePatch({}, patch, undefined)), 10_002);
  const deleted = applyStrategicMergePatch(doc, { spec: deepObject(10_000, 'a', { $patch: 'delete' }) }, undefined) as Record<string, unknown>;
  assert.deepEqual(bottom(deleted.spec, 'a'), {});
  assert.deepEqual(bottom(out.spec, 'a'), { v: 1, w: 2 });
  assert.throws(
    () => applyStrategicMergePatch(doc, { spec: deepObject(10_000, 'a', { $patch: 'bogus' }) }, undefined),
    (e: unknown) => e instanceof StatusError && e.status.code === 400 && e.status.message === 'unknown patch type: bogus in map: map[$patch:bogus]',
  );
  // deep lists of maps merged by key
  const listSchema: SchemaNode = { type: 'object', properties: {} };
  let s = listSchema;
  for (let i = 0; i < 5_000; i++) {
    const item: SchemaNode = { type: 'object', properties: {} };
    s.properties!.l = mergeList('k', item);
    s = item;
  }
  const deepList = (n: number, leaf: Record<string, unknown>) => {
    let v: Record<string, unknown> = leaf;
    for (let i = 0; i < n; i++) v = { l: [{ k: 'x', ...v }] };
    return v;
  };
  const merged = applyStrategicMergePatch(deepList(5_000, { a: 1 }), deepList(5_000, { b: 2 }), listSchema);
  assert.equal(depthOf(merged), 10_001);
  assert.throws(
    () => applyStrategicMergePatch(deepList(5_000, {}), deepList(4_999, { l: [{ nokey: 1 }] }), listSchema),
    (e: unknown) => e instanceof StatusError && e.status.message === 'map: map[nokey:1] does not contain declared merge key: k',
  );
  // an error message printing a 10,000-deep value
  assert.throws(
    () => applyStrategicMergePatch(doc, { $patch: 'bogus', spec: deepObject(10_000, 'a', {}) }, undefined),
    (e: unknown) =>
      e instanceof StatusError &&
      e.status.code === 400 &&
      (e.status.message ?? '').startsWith('unknown patch type: bogus in map: map[$patch:bogus spec:map[a:map[a:'),
  );
});
