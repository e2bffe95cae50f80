/**
 * Where the CRD machinery meets CEL (cel/): the compile-time checks of a CRD's
 * `x-kubernetes-validations` rules — compilation, result types, fieldPaths and
 * the estimated cost limits per rule and per schema — run after the rest of
 * the CRD's validation has found its schemas structural, and the evaluation of
 * a custom resource against them (run by the custom resource's strategy).
 */
import type { KubeObject } from '@kubeling/api';
import type { FieldError } from '@kubeling/apimachinery';
import { compileRules, type RuleProgram, validateWithRules } from './cel/index.js';
import { deepEqual } from './schema/index.js';
import type { CustomResourceDefinition, JSONSchemaProps } from './types.js';

export type CompiledRules = RuleProgram | undefined;

const hasRules = (s: JSONSchemaProps | undefined): boolean => !!s && JSON.stringify(s).includes('"x-kubernetes-validations"');

/**
 * The CEL errors of a CRD's schemas, at the paths upstream names them
 * (`spec.validation.openAPIV3Schema` when every version has the same schema, as
 * the internal form hoists it). Schemas with errors of their own already are
 * skipped, and errors `known` already reports are not repeated.
 */
export function celCrdErrors(crd: CustomResourceDefinition, known: readonly FieldError[]): FieldError[] {
  const versions = Array.isArray(crd.spec?.versions) ? crd.spec.versions : [];
  const schemas = versions.map((v) => v.schema?.openAPIV3Schema);
  if (!schemas.some(hasRules)) return [];
  const hoisted = schemas.length > 0 && schemas.every((s) => deepEqual(s, schemas[0]));
  const targets = hoisted
    ? [{ schema: schemas[0], path: 'spec.validation.openAPIV3Schema' }]
    : schemas.map((schema, i) => ({ schema, path: `spec.versions[${i}].schema.openAPIV3Schema` }));
  const seen = new Set(known.map((e) => `${e.field}\u0000${e.type}\u0000${e.detail}`));
  const out: FieldError[] = [];
  for (const t of targets) {
    if (!t.schema || !hasRules(t.schema)) continue;
    if (known.some((e) => e.field === t.path || e.field.startsWith(`${t.path}.`) || e.field.startsWith(`${t.path}[`))) continue;
    for (const e of compileRules(t.schema, t.path).errors) {
      const k = `${e.field}\u0000${e.type}\u0000${e.detail}`;
      if (!seen.has(k)) out.push(e);
    }
  }
  return out;
}

export function compileCrdRules(schema: JSONSchemaProps | undefined): CompiledRules {
  if (!schema || !hasRules(schema)) return undefined;
  const { errors, program } = compileRules(schema, '');
  // A CRD whose rules do not compile is refused when written; one stored before that rule existed is served without its rules.
  return errors.length ? undefined : program;
}

/** The rules' errors for a write: all of them, or (on update, where `validate` ran the rest) only those that read `oldSelf`. */
export function runCrdRules(rules: CompiledRules, obj: KubeObject, old: KubeObject | undefined, opts: { transitionOnly?: boolean } = {}): FieldError[] {
  if (!rules) return [];
  const errs = validateWithRules(rules, obj as never, old as never);
  if (!opts.transitionOnly) return errs;
  const without = validateWithRules(rules, obj as never, undefined);
  const key = (e: FieldError) => `${e.field}\u0000${e.type}\u0000${e.detail}`;
  const plain = new Set(without.map(key));
  return errs.filter((e) => !plain.has(key(e)));
}
