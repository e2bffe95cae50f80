/**
 * Every `x-kubernetes-validations` rule of the real CRDs in the shared corpus
 * (cert-manager, prometheus-operator, sample-controller) compiles without an
 * error under the CRD cost limits, and the example resources beside them pass
 * their rules (after the schema defaults are applied, as the apiserver
 * defaults before validating).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import { parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition, JSONSchemaProps } from '../types.js';
import { compileRules, type RuleProgram } from './compile.js';
import { RUNTIME_CEL_COST_BUDGET } from './env.js';
import { validateWithRules, validateWithRulesBudget } from './validate.js';

const CORPUS = '/work/shared/corpus/crds';

const yamlDocs = (file: string): unknown[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null && d !== undefined);

/** Structural defaulting of absent properties (what the apiserver does before validation), enough for these examples. */
function applyDefaults(v: unknown, s: JSONSchemaProps): unknown {
  if (Array.isArray(v)) {
    const items = Array.isArray(s.items) ? undefined : s.items;
    return items ? v.map((x) => applyDefaults(x, items)) : v;
  }
  if (typeof v !== 'object' || v === null) return v;
  const o: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  for (const [k, ps] of Object.entries(s.properties ?? {})) {
    if (o[k] === undefined && ps.default !== undefined) o[k] = structuredClone(ps.default);
    if (o[k] !== undefined) o[k] = applyDefaults(o[k], ps);
  }
  const ap = s.additionalProperties;
  if (ap && typeof ap === 'object') for (const k of Object.keys(o)) o[k] = applyDefaults(o[k], ap);
  return o;
}

const countRules = (p: RuleProgram | undefined): number =>
  p
    ? p.rules.length +
      countRules(p.items) +
      countRules(p.additionalProperties) +
      [...(p.properties?.values() ?? [])].reduce((n, c) => n + countRules(c), 0) +
      (p.allOf ?? []).reduce((n, c) => n + countRules(c), 0)
    : 0;

const projects = existsSync(CORPUS) ? readdirSync(CORPUS).filter((d) => existsSync(join(CORPUS, d, 'examples'))) : [];

describe('CEL rules of the CRD corpus', { skip: projects.length ? false : 'corpus not present' }, () => {
  const programs = new Map<string, { program: RuleProgram | undefined; schema: JSONSchemaProps }>();
  let total = 0;

  for (const project of projects) {
    const dir = join(CORPUS, project);
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
      it(`${project}/${f} compiles`, () => {
        for (const doc of yamlDocs(join(dir, f))) {
          const crd = doc as CustomResourceDefinition;
          if (crd.kind !== 'CustomResourceDefinition') continue;
          crd.spec.versions.forEach((v, i) => {
            const schema = v.schema?.openAPIV3Schema;
            if (!schema) return;
            const { errors, program } = compileRules(schema, `spec.versions[${i}].schema.openAPIV3Schema`);
            assert.deepEqual(errors.map(fieldErrorMessage), [], `${crd.metadata.name} ${v.name}`);
            total += countRules(program);
            programs.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, { program, schema });
          });
        }
      });
    }
  }

  it('found the corpus rules (2 in cert-manager, 26 in prometheus-operator)', () => {
    assert.equal(total, 28);
  });

  let spent = 0;
  for (const project of projects) {
    const dir = join(CORPUS, project, 'examples');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
      it(`${project}/examples/${f} passes its rules`, () => {
        for (const doc of yamlDocs(join(dir, f))) {
          const o = doc as { apiVersion: string; kind: string };
          const p = programs.get(`${o.apiVersion}/${o.kind}`);
          assert.ok(p, `no CRD for ${o.apiVersion} ${o.kind}`);
          const obj = applyDefaults(o, p.schema);
          const r = validateWithRulesBudget(p.program, obj, undefined);
          assert.deepEqual(r.errors.map(fieldErrorMessage), []);
          spent += RUNTIME_CEL_COST_BUDGET - r.remainingBudget;
          // an update with itself as the old object runs the transition rules too
          assert.deepEqual(validateWithRules(p.program, obj, obj).map(fieldErrorMessage), []);
        }
      });
    }
  }

  it('evaluated rules on the examples', () => {
    // prometheus-shards.yaml and others reach nodes with rules
    assert.ok(spent > 0, 'no rule ran');
  });
});
