import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { isStatusError } from '@kubeling/apimachinery';
import { collect, FieldSet, pathString, type SchemaNode } from './fieldset.js';
import { apply, managerFromUserAgent, trackUpdate, type FieldContext } from './index.js';

const schema: SchemaNode = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' } } } },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        args: { type: 'array', items: { type: 'string' } },
        finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        containers: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              image: { type: 'string' },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
                items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
  },
};

const ctx = (manager: string): FieldContext => ({ manager, apiVersion: 'test/v1', schema, statusSubresource: true });
const obj = (spec: Record<string, unknown>, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'test/v1',
  kind: 'Thing',
  metadata: { name: 'x', ...(labels ? { labels } : {}) },
  spec,
});

test('field sets: structs recurse, maps and list items are members, atomic lists and scalars are leaves; FieldsV1 round-trips', () => {
  const c = collect(
    {
      metadata: { labels: { a: '1' } },
      spec: { replicas: 2, args: ['x'], finalizers: ['f'], containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] },
    },
    schema,
  );
  const f = c.set.toFieldsV1();
  assert.deepEqual(f, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    'f:spec': {
      'f:args': {},
      'f:containers': {
        'k:{"name":"c"}': {
          '.': {},
          'f:image': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
        },
      },
      'f:finalizers': { 'v:"f"': {} },
      'f:replicas': {},
    },
  });
  const back = FieldSet.fromFieldsV1(f);
  assert.equal(back.size, c.set.size);
  assert.equal(pathString(['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image']), '.spec.containers[name="c"].image');
});

test('updates move changed fields to the writer and drop removed ones from everyone', () => {
  const created = obj({ replicas: 1, containers: [{ name: 'c', image: 'a' }] });
  created.metadata.managedFields = trackUpdate(undefined, created, ctx('creator')) as never;
  const next = obj({ replicas: 3, containers: [{ name: 'c', image: 'a' }] });
  const mf = trackUpdate(created, next, ctx('scaler'))!;
  const by = Object.fromEntries(mf.map((e) => [e.manager, e.fieldsV1]));
  assert.deepEqual(by.scaler, { 'f:spec': { 'f:replicas': {} } });
  assert.ok(!('f:replicas' in (by.creator as any)['f:spec']));
  assert.ok((by.creator as any)['f:spec']['f:containers']);
  assert.equal(mf.find((e) => e.manager === 'scaler')!.operation, 'Update');
});

test('apply merges by key, conflicts with other owners unless forced, removes what it stopped applying', () => {
  const first = apply(
    undefined,
    obj(
      {
        replicas: 2,
        containers: [
          { name: 'a', image: 'v1' },
          { name: 'b', image: 'v1' },
        ],
      },
      { app: 'x' },
    ),
    ctx('me'),
    false,
  );
  assert.deepEqual(
    (first.spec as any).containers.map((c: any) => c.name),
    ['a', 'b'],
  );
  // Someone else changes replicas and adds a container.
  const changed = structuredClone(first);
  (changed.spec as any).replicas = 7;
  (changed.spec as any).containers.push({ name: 'sidecar', image: 's' });
  changed.metadata.managedFields = trackUpdate(first, changed, ctx('hpa')) as never;
  // Same value for replicas is shared ownership, not a conflict.
  const cfg = obj({ replicas: 2, containers: [{ name: 'a', image: 'v2' }] }, { app: 'x' });
  try {
    apply(changed, cfg, ctx('me'), false);
    assert.fail('expected a conflict');
  } catch (e) {
    assert.ok(isStatusError(e));
    assert.equal(e.status.code, 409);
    assert.match(e.status.message ?? '', /^Apply failed with 1 conflict: conflict with "hpa" using test\/v1 at .*: \.spec\.replicas$/);
    assert.equal(e.status.details?.causes?.[0]?.field, '.spec.replicas');
  }
  const forced = apply(changed, cfg, ctx('me'), true);
  const spec = forced.spec as any;
  assert.equal(spec.replicas, 2);
  assert.deepEqual(
    spec.containers.map((c: any) => [c.name, c.image]),
    [
      ['a', 'v2'],
      ['sidecar', 's'],
    ],
    'b (ours, dropped) goes; sidecar (theirs) stays',
  );
  const hpa = forced.metadata.managedFields!.find((e: any) => e.manager === 'hpa') as any;
  assert.ok(!hpa.fieldsV1['f:spec']['f:replicas'], 'forcing took replicas from hpa');
  const mine = forced.metadata.managedFields!.find((e: any) => e.manager === 'me') as any;
  assert.equal(mine.operation, 'Apply');
  assert.ok(mine.fieldsV1['f:metadata']['f:labels']['f:app']);
});

test('the default manager is the user agent up to its first slash', () => {
  assert.equal(managerFromUserAgent('kube-controller-manager/v1.32.0 (kubeling)'), 'kube-controller-manager');
  assert.equal(managerFromUserAgent(undefined), 'unknown');
});
