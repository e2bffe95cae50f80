import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { wire } from '@kubeling/api';
import { MAX_DEPTH, MAX_YAML_DEPTH, encodeFor, negotiate, outputFormat, parseBody, scanJsonDepth, yamlDepth } from './codec.js';

/** The real depth of a parsed value (arrays and maps count a level each). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(v as object).map(depthOf));
}

test('the YAML depth estimate is never below the real depth', () => {
  const docs = [
    'a: 1\n',
    'a:\n  b:\n    c: [1, {d: [2, 3]}]\n',
    '- - - x\n',
    'a:\n- b: [\n    [1, 2],\n    {c: "]]]"}\n  ]\n',
    "a: 'it''s [not' \nb: \"[\\\"\" # [[[ comment\nc: {x: {y: {z: 1}}}\n",
    'spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        args: ["a", "b"]\n        env:\n        - {name: X, value: "1"}\n',
    'a: |\n  text [ with { brackets\n    indented\nb: 2\n',
  ];
  for (const d of docs) {
    const real = depthOf(YAML.parse(d));
    assert.ok(yamlDepth(d) >= real, `${JSON.stringify(d)}: estimate ${yamlDepth(d)} < real ${real}`);
    assert.ok(yamlDepth(d) <= real + 3, `${JSON.stringify(d)}: estimate ${yamlDepth(d)} far above ${real}`);
  }
  assert.ok(yamlDepth('['.repeat(5000) + ']'.repeat(5000)) > MAX_YAML_DEPTH);
  assert.ok(yamlDepth(Array.from({ length: 600 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')) > MAX_YAML_DEPTH);
  assert.ok(yamlDepth('- '.repeat(600) + 'x') > MAX_YAML_DEPTH);
});

test('bodies nested deeper than the limits are 400 before any recursive parser sees them', () => {
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  assert.doesNotThrow(() => scanJsonDepth(deep(MAX_DEPTH)));
  assert.throws(() => scanJsonDepth(deep(MAX_DEPTH + 1)), /invalid character '\{' exceeded max depth/);
  // Brackets in strings do not count, escaped quotes do not end them.
  assert.doesNotThrow(() => scanJsonDepth(JSON.stringify({ a: '{'.repeat(5000), b: 'x\\"{{{' })));
  assert.throws(
    () => parseBody(Buffer.from('['.repeat(100_000)), 'application/yaml'),
    (e: any) => e.status.code === 400 && /exceeded max depth of 256/.test(e.status.message),
  );
  assert.throws(
    () => parseBody(Buffer.from('['.repeat(100_000)), 'application/json'),
    (e: any) => e.status.code === 400,
  );
});

test('YAML as sigs.k8s.io/yaml turns it into JSON: !!binary is text, bad base64 is 400, sets and dates become JSON', () => {
  assert.deepEqual(parseBody(Buffer.from('a: !!binary aGVsbG8=\n'), 'application/yaml'), { a: 'hello' });
  assert.throws(() => parseBody(Buffer.from("a: !!binary '%%%'\n"), 'application/yaml'), /!!binary value contains invalid base64 data/);
  assert.deepEqual(parseBody(Buffer.from('a: !!set {x: null}\nb: !!timestamp 2001-12-14\n1: one\n'), 'application/yaml'), {
    a: { x: null },
    b: '2001-12-14T00:00:00Z',
    1: 'one',
  });
  assert.throws(() => parseBody(Buffer.from('a: .inf\n'), 'application/yaml'), /json: unsupported value: \+Inf/);
  assert.throws(() => parseBody(Buffer.from('? [a]\n: 1\n'), 'application/yaml'), /invalid map key/);
});

test('Accept: 406 only when no media range is one the apiserver serves', () => {
  for (const ok of [
    undefined,
    '',
    '*/*',
    'application/json',
    'application/yaml',
    'application/json;stream=watch',
    'application/vnd.kubernetes.protobuf, application/json',
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
    'text/html, */*;q=0.8',
  ]) {
    assert.doesNotThrow(() => negotiate(ok), String(ok));
  }
  for (const bad of [
    'application/xml',
    'text/html',
    'application/json;as=Table;v=v9;g=meta.k8s.io',
    'application/json;as=Bogus;g=meta.k8s.io;v=v1',
    'application/json;q=0',
  ]) {
    assert.throws(
      () => negotiate(bad),
      (e: any) => e.status.code === 406 && e.status.reason === 'NotAcceptable',
      bad,
    );
  }
});

test('the answer is protobuf when Accept lists protobuf before JSON and the kind has it; 406 when protobuf is all the client takes and the kind has none', () => {
  const cg = 'application/vnd.kubernetes.protobuf, application/json';
  assert.equal(outputFormat(cg, true), 'protobuf');
  assert.equal(outputFormat(cg, false), 'json');
  assert.equal(outputFormat('application/json, application/vnd.kubernetes.protobuf', true), 'json');
  assert.equal(outputFormat('application/vnd.kubernetes.protobuf;q=0.5, application/yaml', true), 'yaml');
  assert.equal(outputFormat('application/vnd.kubernetes.protobuf;stream=watch', true), 'protobuf');
  assert.equal(outputFormat(undefined, true), 'json');
  assert.doesNotThrow(() => negotiate('application/vnd.kubernetes.protobuf', { protobuf: true }));
  assert.doesNotThrow(() => negotiate(cg, { protobuf: false }));
  assert.throws(
    () => negotiate('application/vnd.kubernetes.protobuf', { protobuf: false }),
    (e: any) => e.status.code === 406,
  );
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', metadata: {} };
  const pb = encodeFor(status, cg);
  assert.equal(pb.contentType, 'application/vnd.kubernetes.protobuf');
  assert.deepEqual(wire.decodeObject(pb.payload as Buffer), { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  // Kinds without protobuf (a Table) are JSON, in Go's key order.
  const table = encodeFor({ apiVersion: 'meta.k8s.io/v1', kind: 'Table', columnDefinitions: [], rows: [], metadata: {} }, cg);
  assert.equal(table.contentType, 'application/json');
  assert.equal(table.payload, '{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"columnDefinitions":[],"rows":[]}');
});
