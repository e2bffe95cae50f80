/**
 * JSON as Go writes it, and JSON → protobuf → JSON for a sample of every served
 * kind with every field of its wire table set (pointer fields at zero too).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resources } from '../resources.js';
import { toGoJson } from './json.js';
import { goJsonText } from './json-text.js';
import type { WireStruct, WireType } from './model.js';
import { decodeObject, encodeObject } from './protobuf.js';
import { kindStruct, wireStruct } from './registry.js';

test('Go order and zero values: a Status puts code last, a DaemonSet has its status counts', () => {
  const status = toGoJson({
    code: 404,
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    message: 'm',
    reason: 'NotFound',
    details: { kind: 'pods', name: 'x' },
  });
  assert.equal(
    JSON.stringify(status),
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}',
  );
  const ds = toGoJson({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'd', creationTimestamp: '2024-01-01T00:00:00Z' },
    status: { numberReady: 0 },
  }) as any;
  assert.deepEqual(ds.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  assert.deepEqual(Object.keys(ds), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(ds.spec.template.metadata.creationTimestamp, null);
  assert.deepEqual(ds.spec.selector, null);
});

test('omitempty zero values are dropped, pointers kept, unknown keys kept after the known ones, map keys sorted', () => {
  const d = toGoJson({
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    zzz: 1,
    metadata: { name: 'd', labels: { b: '2', a: '1' }, generation: 0, finalizers: [] },
    spec: { replicas: 0, minReadySeconds: 0, paused: false, template: { spec: { containers: [{ name: 'c', image: 'i', extra: true }] } } },
  }) as any;
  assert.deepEqual(Object.keys(d), ['kind', 'apiVersion', 'metadata', 'spec', 'status', 'zzz']);
  assert.deepEqual(Object.keys(d.metadata.labels), ['a', 'b']);
  assert.equal('generation' in d.metadata, false);
  assert.equal('finalizers' in d.metadata, false);
  assert.equal(d.spec.replicas, 0);
  assert.equal('minReadySeconds' in d.spec, false);
  assert.equal('paused' in d.spec, false);
  assert.deepEqual(d.spec.template.spec.containers[0], { name: 'c', image: 'i', resources: {}, extra: true });
  // A kind the tables do not know is left alone.
  const cr = { apiVersion: 'example.com/v1', kind: 'Widget', spec: { x: 1 } };
  assert.equal(toGoJson(cr), cr);
  assert.equal(goJsonText(d), JSON.stringify(d));
  assert.equal(goJsonText(cr), JSON.stringify(cr));
});

/** A value of every field, non-zero (pointers at zero when `zero`), structs filled `depth` levels deep. */
function sample(t: WireType, ptr: boolean, zero: boolean, depth: number, n: number): unknown {
  if (ptr && zero && t.k === 'scalar') return t.s === 'string' ? '' : t.s === 'bool' ? false : t.s === 'bytes' ? '' : 0;
  switch (t.k) {
    case 'scalar':
      return t.s === 'string'
        ? `s${n}`
        : t.s === 'bool'
          ? true
          : t.s === 'bytes'
            ? Buffer.from(`b${n}`).toString('base64')
            : t.s === 'float64'
              ? 1.5
              : t.s === 'any'
                ? undefined
                : n + 1;
    case 'special':
      return {
        Time: '2021-02-03T04:05:06Z',
        MicroTime: '2021-02-03T04:05:06.123456Z',
        Duration: '1m30s',
        Quantity: '250m',
        IntOrString: n % 2 ? '50%' : 7,
        RawExtension: { a: [1, 'x'] },
        FieldsV1: { 'f:a': {} },
      }[t.s];
    case 'struct': {
      const st = wireStruct(t.name)!;
      const v = depth > 5 ? {} : fill(st, zero, depth + 1);
      // An empty non-pointer struct is what Go writes for an unset one: it decodes as unset.
      return ptr || Object.keys(v).length ? v : undefined;
    }
    case 'slice':
    case 'wrapper': {
      const x = sample(t.of, false, zero, depth, n + 1);
      return x === undefined ? undefined : [x];
    }
    case 'map': {
      const x = sample(t.of, false, zero, depth, n + 1);
      return x === undefined ? undefined : { k: x };
    }
  }
}

function fill(st: WireStruct, zero: boolean, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  st.fields.forEach((f, i) => {
    if (f.noJson || f.num === 0) return;
    if (f.inline && f.type.k === 'struct') return void Object.assign(out, fill(wireStruct(f.type.name)!, zero, depth));
    const v = sample(f.type, f.ptr, zero, depth, i);
    if (v !== undefined) out[f.json] = v;
  });
  return out;
}

test('every served kind: JSON → protobuf → JSON keeps every field, zero-valued pointers included', () => {
  let n = 0;
  for (const r of resources) {
    if (r.protobuf === false) continue; // served as JSON only
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    const st = kindStruct(apiVersion, r.kind)!;
    assert.ok(st, `${apiVersion} ${r.kind}`);
    for (const zero of [false, true]) {
      const obj = { apiVersion, kind: r.kind, ...fill(st, zero, 0) };
      const back = decodeObject(encodeObject(obj)!);
      assert.deepEqual(back, obj, `${apiVersion} ${r.kind}${zero ? ' (zero pointers)' : ''}`);
      assert.equal(JSON.stringify(toGoJson(back)), JSON.stringify(toGoJson(obj)));
      // The direct text writer says what toGoJson says.
      assert.equal(goJsonText(obj), JSON.stringify(toGoJson(obj)));
      assert.equal(
        goJsonText({ ...obj, metadata: null, spec: { unknown: [1] }, extra: 'x' }),
        JSON.stringify(toGoJson({ ...obj, metadata: null, spec: { unknown: [1] }, extra: 'x' })),
      );
    }
    n++;
  }
  // Lists, and the kinds every group-version takes.
  for (const [apiVersion, kind] of [
    ['v1', 'PodList'],
    ['apps/v1', 'DeploymentList'],
    ['apps/v1', 'DeleteOptions'],
    ['v1', 'Status'],
    ['policy/v1', 'Eviction'],
    ['autoscaling/v1', 'Scale'],
    ['v1', 'Binding'],
    ['authentication.k8s.io/v1', 'TokenRequest'],
  ] as const) {
    const st = kindStruct(apiVersion, kind)!;
    assert.ok(st, `${apiVersion} ${kind}`);
    const obj = { apiVersion, kind, ...fill(st, true, 0) };
    assert.deepEqual(decodeObject(encodeObject(obj)!), obj, `${apiVersion} ${kind}`);
  }
  assert.ok(n >= 40, `${n} kinds`);
});
