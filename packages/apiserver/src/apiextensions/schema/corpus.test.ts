import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { aggregateMessage, fieldErrorMessage } from '@kubeling/apimachinery';
import { parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition, JSONSchemaProps } from '../types.js';
import { defaultCustomResourceDefinition, validateCustomResourceDefinition } from '../validation.js';
import { applyDefaults } from './defaults.js';
import { prune } from './prune.js';
import { structuralErrors } from './structural.js';
import { validateCustomResource } from './validate.js';

// Real CRDs and example resources (cert-manager, prometheus-operator, sample-controller); see its README.md.
const ROOT = '/work/shared/corpus/crds';
type Doc = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } };

const load = (file: string): unknown[] => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as unknown);
const projects = (() => {
  try {
    return readdirSync(ROOT, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
})();
const crds: CustomResourceDefinition[] = projects.flatMap((p) =>
  readdirSync(join(ROOT, p))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => load(join(ROOT, p, f)) as CustomResourceDefinition[]),
);
const examples: Doc[] = projects.flatMap((p) =>
  readdirSync(join(ROOT, p, 'examples'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => load(join(ROOT, p, 'examples', f)).filter(Boolean) as Doc[]),
);

const schemaFor = (o: Doc): JSONSchemaProps => {
  const [group, version] = o.apiVersion.split('/');
  const crd = crds.find((c) => c.spec.group === group && c.spec.names.kind === o.kind);
  assert.ok(crd, `no CRD for ${o.apiVersion} ${o.kind}`);
  const v = crd.spec.versions.find((x) => x.name === version && x.served);
  assert.ok(v?.schema?.openAPIV3Schema, `no served schema for ${o.apiVersion} ${o.kind}`);
  return v.schema.openAPIV3Schema;
};

test('the corpus is there', { skip: projects.length === 0 && 'corpus not present' }, () => {
  assert.ok(crds.length >= 18, `${crds.length} CRDs`);
  assert.ok(examples.length >= 8, `${examples.length} examples`);
});

test('every corpus schema is structural', { skip: projects.length === 0 }, () => {
  for (const crd of crds)
    crd.spec.versions.forEach((v, i) => {
      const errs = structuralErrors(v.schema!.openAPIV3Schema!, `spec.versions[${i}].schema.openAPIV3Schema`);
      assert.equal(aggregateMessage(errs), '', crd.metadata.name);
    });
});

test('every corpus CRD passes CRD validation once defaulted; CEL rules reach the hook', { skip: projects.length === 0 }, () => {
  let celNodes = 0;
  for (const src of crds) {
    const crd = structuredClone(src);
    defaultCustomResourceDefinition(crd);
    const errs = validateCustomResourceDefinition(crd, () => {
      celNodes++;
      return [];
    });
    assert.equal(aggregateMessage(errs), '', crd.metadata.name);
  }
  // 2 rule-carrying nodes in cert-manager's issuers, 14 in prometheus-operator (README.md).
  assert.equal(celNodes, 16);
});

test('every example validates clean after pruning and defaulting', { skip: projects.length === 0 }, () => {
  for (const src of examples) {
    const obj = structuredClone(src);
    const s = schemaFor(obj);
    assert.deepEqual(prune(obj, s, { isResourceRoot: true }), [], `${obj.kind}/${obj.metadata.name} has unknown fields`);
    applyDefaults(obj, s);
    assert.equal(aggregateMessage(validateCustomResource(s, obj)), '', `${obj.kind}/${obj.metadata.name}`);
  }
});

test('defaults from real schemas are applied', { skip: projects.length === 0 }, () => {
  const prom = structuredClone(examples.find((e) => e.kind === 'Prometheus')!);
  applyDefaults(prom, schemaFor(prom));
  const spec = prom.spec as Record<string, unknown>;
  // prometheus-operator's Prometheus defaults spec.evaluationInterval and spec.portName.
  assert.equal(spec.evaluationInterval, '30s');
  assert.equal(spec.portName, 'web');
});

test('broken examples fail with upstream messages', { skip: projects.length === 0 }, () => {
  const sm = structuredClone(examples.find((e) => e.kind === 'ServiceMonitor')!);
  (sm.spec as { endpoints: Record<string, unknown>[] }).endpoints[0]!.port = 80;
  (sm.spec as Record<string, unknown>).bogus = true;
  const s = schemaFor(sm);
  assert.deepEqual(prune(sm, s, { isResourceRoot: true }), ['spec.bogus']);
  assert.deepEqual(validateCustomResource(s, sm).map(fieldErrorMessage), [
    'spec.endpoints[0].port: Invalid value: "integer": spec.endpoints[0].port in body must be of type string: "integer"',
  ]);
  const foo = structuredClone(examples.find((e) => e.kind === 'Foo')!);
  (foo.spec as Record<string, unknown>).replicas = 'one';
  assert.deepEqual(validateCustomResource(schemaFor(foo), foo).map(fieldErrorMessage), [
    'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
  ]);
});
