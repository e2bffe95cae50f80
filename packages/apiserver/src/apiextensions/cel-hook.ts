/**
 * Where the CRD machinery meets CEL: the compile-time checks of a CRD's
 * `x-kubernetes-validations` rules (run by CRD validation) and the evaluation
 * of a custom resource against them (run by the custom resource's strategy).
 * Until the CEL environment is wired here, rules are neither compiled nor
 * evaluated: CRDs carrying them are accepted and their resources are checked
 * by the OpenAPI schema only.
 */
import type { KubeObject } from '@kubeling/api';
import type { FieldError } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from './types.js';

export type CompiledRules = undefined;

export function celRuleErrors(_schema: JSONSchemaProps, _fldPath: string): FieldError[] {
  return [];
}

export function compileCrdRules(_schema: JSONSchemaProps | undefined): CompiledRules {
  return undefined;
}

export function runCrdRules(_rules: CompiledRules, _obj: KubeObject, _old: KubeObject | undefined, _opts: { transitionOnly?: boolean } = {}): FieldError[] {
  return [];
}
