/**
 * The rules of a custom resource, made from its CRD's version
 * (k8s.io/apiextensions-apiserver pkg/registry/customresource strategy.go,
 * validator.go and status_strategy.go, with the schema coercion of
 * pkg/apiserver/customresource_handler.go): unknown fields pruned, defaults
 * applied on write and when read from storage, the OpenAPI schema, list
 * types, embedded resources and `x-kubernetes-validations` rules checked,
 * `generation` bumped on changes outside metadata and status, status written
 * separately when the status subresource is on, and field selectors on the
 * CRD's `selectableFields`.
 */
import type { KubeObject } from '@kubeling/api';
import { type FieldError, field as fe, jsonpath } from '@kubeling/apimachinery';
import type { Strategy } from '../registry/strategy.js';
import type { CrdServing } from './catalog.js';
import { applyDefaults, prune, validateCustomResource } from './schema/index.js';
import { compileCrdRules, type CompiledRules, runCrdRules } from './cel-hook.js';
import type { JSONSchemaProps } from './types.js';

/** The value at a simple JSON path (`.spec.replicas`), as selectable fields and scale paths name them. */
export function valueAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/^\./, '').split('.')) {
    if (!part) continue;
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Writes `v` at a simple JSON path, creating the objects on the way. */
export function setValueAt(obj: Record<string, unknown>, path: string, v: unknown): void {
  const parts = path.replace(/^\./, '').split('.').filter(Boolean);
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = v;
}

/** A field selector value as upstream renders one: strings as they are, numbers and booleans in their JSON text. */
function selectableValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** The scale subresource's replica values must be integers (validator.go ValidateScaleSpec/Status). */
function scaleErrors(obj: KubeObject, scale: NonNullable<CrdServing['scale']>): FieldError[] {
  const errs: FieldError[] = [];
  const check = (path: string) => {
    const v = valueAt(obj, path);
    if (v === undefined) return;
    const p = path.replace(/^\./, '');
    if (typeof v !== 'number' || !Number.isInteger(v)) errs.push(fe.invalid(p, v, 'should be an integer value'));
    else if (v < 0) errs.push(fe.invalid(p, v, 'should be a non-negative integer'));
    else if (v > 2147483647) errs.push(fe.invalid(p, v, 'should be less than or equal to 2147483647'));
  };
  check(scale.specReplicasPath);
  check(scale.statusReplicasPath);
  if (scale.labelSelectorPath) {
    const v = valueAt(obj, scale.labelSelectorPath);
    if (v !== undefined && typeof v !== 'string') errs.push(fe.invalid(scale.labelSelectorPath.replace(/^\./, ''), v, 'must be a string'));
  }
  return errs;
}

/** The strategy of one served version of a CRD. `storage` is the storage version's schema (what is stored is defaulted by it). */
export function customResourceStrategy(serving: CrdServing, apiVersion: string, kind: string, storageApiVersion: string): Strategy {
  const schema: JSONSchemaProps | undefined = serving.schema;
  let rules: CompiledRules | undefined;
  const compiled = () => (rules ??= compileCrdRules(schema));
  const validateBody = (obj: KubeObject, old: KubeObject | undefined): FieldError[] => {
    const errs: FieldError[] = [];
    // The schema's keywords, list types and embedded resources (validateCustomResource checks all three).
    if (schema) errs.push(...validateCustomResource(schema, obj));
    if (serving.scale) errs.push(...scaleErrors(obj, serving.scale));
    if (!errs.length && schema) errs.push(...runCrdRules(compiled(), obj, old));
    return errs;
  };
  const strategy: Strategy = {
    generation: true,
    statusSubresource: serving.statusSubresource,
    defaults(obj) {
      if (!schema) return;
      prune(obj, schema, { isResourceRoot: true });
      applyDefaults(obj, schema);
    },
    prepareForCreate(obj) {
      if (serving.statusSubresource) delete obj.status;
    },
    validate: (obj) => validateBody(obj, undefined),
    validateUpdate: (obj, old) => (schema ? runTransitionOnly(compiled(), obj, old) : []),
    prepareForStatusUpdate(obj) {
      if (schema) {
        prune(obj, schema, { isResourceRoot: true });
        applyDefaults(obj, schema);
      }
    },
    validateStatusUpdate: (obj, old) => validateBody(obj, old),
    fields(obj) {
      const out: Record<string, string> = {};
      for (const path of serving.selectableFields) {
        // An unset field selects as the empty string.
        out[path.replace(/^\./, '')] = selectableValue(valueAt(obj, path)) ?? '';
      }
      return out;
    },
  };
  // Objects are stored in the storage version: None conversion rewrites apiVersion (and defaults by the schema of the version read).
  if (apiVersion !== storageApiVersion) {
    strategy.toExternal = (stored) => {
      const out = { ...stored, apiVersion, kind };
      if (schema) applyDefaults(out, schema);
      return out;
    };
    strategy.fromExternal = (o) => ({ ...o, apiVersion: storageApiVersion });
  } else if (schema) {
    strategy.toExternal = (stored) => {
      const out = structuredClone(stored);
      applyDefaults(out, schema);
      return out;
    };
  }
  return strategy;
}

/**
 * On update the whole body is validated by `validate` (the store runs both);
 * `validateUpdate` only adds what needs the old object: transition rules. Since
 * the generic update path calls `validate(obj)` without the old object, the
 * rules that read `oldSelf` are evaluated here.
 */
function runTransitionOnly(rules: CompiledRules, obj: KubeObject, old: KubeObject): FieldError[] {
  return runCrdRules(rules, obj, old, { transitionOnly: true });
}

/**
 * Printer cell of an additionalPrinterColumn (tableconvertor.go): the JSONPath's
 * first value; strings as printed by the JSONPath template, other types kept
 * when they match, dates as an age.
 */
export function columnCell(obj: KubeObject, col: CrdServing['columns'][number], now: number, age: (ms: number) => string): unknown {
  let values: unknown[];
  try {
    values = jsonpath.select(col.jsonPath, obj);
  } catch {
    return null;
  }
  const v = values[0];
  if (v === undefined || v === null) return null;
  switch (col.type) {
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date': {
      if (typeof v !== 'string') return null;
      const t = Date.parse(v);
      return Number.isNaN(t) ? '<invalid>' : age(now - t);
    }
    default:
      return typeof v === 'string' ? v : jsonpath.goJSON(v);
  }
}
