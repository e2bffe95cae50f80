/**
 * Structural defaulting (apiextensions-apiserver pkg/apiserver/schema/defaulting:
 * algorithm.go `Default`, prunenulls.go `PruneNonNullableNullsWithoutDefaults`,
 * validation.go `ValidateDefaults`).
 *
 * `applyDefaults` runs upstream's two steps in order: a `null` where the
 * schema is not nullable and has no default is removed; then every missing
 * field with a `default` in `properties` is set (a deep copy), a non-nullable
 * `null` with a default is replaced, and the same happens for
 * `additionalProperties` values and `items` entries that are non-nullable
 * nulls. Defaults are applied top-down, so defaulted objects get their own
 * nested defaults. It mutates `obj` in place and never throws.
 *
 * `validateDefaults` checks, for a CRD schema, that every `default` validates
 * against its own node, has no fields the schema would prune, and yields
 * valid TypeMeta/ObjectMeta inside embedded resources.
 */
import { aggregateMessage, type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { objectMetaDecodeError, validateEmbeddedResources } from './embedded.js';
import { jsonBadValue } from './gofmt.js';
import { prune } from './prune.js';
import { hasStructuralDefault, itemsSchema } from './structural.js';
import { deepEqual, openAPIValidate } from './validate.js';

const { invalid } = field;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const propOf = (s: JSONSchemaProps, k: string): JSONSchemaProps | undefined => (s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined);
const additional = (s: JSONSchemaProps): JSONSchemaProps | undefined =>
  s.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
const copy = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

// ---- defaulting -----------------------------------------------------------------

const isNonNullableNull = (x: unknown, s: JSONSchemaProps | undefined): boolean => x === null && !!s && !s.nullable;

/** PruneNonNullableNullsWithoutDefaults. */
export function pruneNonNullableNullsWithoutDefaults(x: unknown, s: JSONSchemaProps | undefined): void {
  if (Array.isArray(x)) {
    const items = s ? itemsSchema(s) : undefined;
    for (const v of x) pruneNonNullableNullsWithoutDefaults(v, items);
    return;
  }
  if (!isObject(x)) return;
  for (const k of Object.keys(x)) {
    const sub = s ? (propOf(s, k) ?? additional(s)) : undefined;
    if (isNonNullableNull(x[k], sub) && !hasStructuralDefault(sub!)) delete x[k];
    else pruneNonNullableNullsWithoutDefaults(x[k], sub);
  }
}

/** Default: sets missing and non-nullable-null fields to their schema default. */
export function defaultValue(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = itemsSchema(s);
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items) && hasStructuralDefault(items!)) x[i] = copy(items!.default);
      defaultValue(x[i], items);
    }
    return;
  }
  if (!isObject(x)) return;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    if (!hasStructuralDefault(prop)) continue;
    if (!Object.hasOwn(x, k) || x[k] === undefined || isNonNullableNull(x[k], prop)) x[k] = copy(prop.default);
  }
  const ap = additional(s);
  for (const k of Object.keys(x)) {
    const prop = propOf(s, k);
    if (prop) defaultValue(x[k], prop);
    else if (s.additionalProperties !== undefined) {
      if (isNonNullableNull(x[k], ap) && hasStructuralDefault(ap!)) x[k] = copy(ap!.default);
      defaultValue(x[k], ap);
    }
  }
}

/**
 * What the apiserver does to a decoded custom resource before validation:
 * drop non-nullable nulls without defaults, then apply defaults.
 */
export function applyDefaults(obj: unknown, schema: JSONSchemaProps | undefined): void {
  if (!schema) return;
  pruneNonNullableNullsWithoutDefaults(obj, schema);
  defaultValue(obj, schema);
}

// ---- validation of defaults --------------------------------------------------------

type Step = { child: string } | { index: true };

/** The object a default inside TypeMeta/ObjectMeta ends up in (SurroundingObjectFunc). */
function surround(steps: readonly Step[], value: unknown): Record<string, unknown> {
  let v = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const st = steps[i]!;
    v = 'index' in st ? [v] : { [st.child]: v };
  }
  return { apiVersion: 'validation/v1', kind: 'Validation', ...(isObject(v) ? v : {}) };
}

/** The TypeMeta/ObjectMeta decoding errors objectmeta.Coerce reports, as one field error. */
function coerceError(p: string, obj: unknown): FieldError | undefined {
  if (!isObject(obj)) return undefined;
  const join = (n: string): string => (p ? `${p}.${n}` : n);
  for (const k of ['apiVersion', 'kind'])
    if (Object.hasOwn(obj, k) && typeof obj[k] !== 'string') return invalid(join(k), jsonBadValue(obj[k]), 'must be a string');
  if (Object.hasOwn(obj, 'metadata')) {
    const e = objectMetaDecodeError(obj.metadata);
    if (e) return invalid(join('metadata'), jsonBadValue(obj.metadata), e);
  }
  return undefined;
}

export interface ValidateDefaultsOptions {
  isResourceRoot: boolean;
  requirePrunedDefaults: boolean;
}

function validateNode(
  p: string,
  s: JSONSchemaProps,
  rootSchema: JSONSchemaProps,
  steps: Step[],
  insideMeta: boolean,
  opts: ValidateDefaultsOptions,
  errs: FieldError[],
): void {
  if (s['x-kubernetes-embedded-resource']) {
    insideMeta = false;
    steps = [];
    rootSchema = s;
  }
  if (hasStructuralDefault(s)) {
    const dp = `${p}.default`;
    const def = s.default;
    const crErrs = (): FieldError[] => openAPIValidate(s, def, dp, { crdConversion: false });
    if (insideMeta) {
      const obj = surround(steps, copy(def));
      const ce = coerceError('', obj);
      const metaErrs = ce ? [] : validateEmbeddedResources(obj, rootSchema, { isResourceRoot: true });
      if (ce) errs.push(invalid(dp, jsonBadValue(def), `must result in valid metadata: ${aggregateMessage([ce])}`));
      else if (metaErrs.length) errs.push(invalid(dp, jsonBadValue(def), `must result in valid metadata: ${aggregateMessage(metaErrs)}`));
      else errs.push(...crErrs());
    } else {
      const embedded = s['x-kubernetes-embedded-resource'] === true;
      if (opts.requirePrunedDefaults) {
        const pruned = copy(def);
        prune(pruned, s, { isResourceRoot: embedded });
        if (!deepEqual(pruned, def)) errs.push(invalid(dp, jsonBadValue(def), 'must not have unknown fields'));
      }
      const ce = embedded ? coerceError(dp, def) : undefined;
      const metaErrs = ce ? [] : validateEmbeddedResources(def, s, { isResourceRoot: embedded, fldPath: dp });
      if (ce) errs.push(ce);
      else if (metaErrs.length) errs.push(...metaErrs);
      else errs.push(...crErrs());
    }
  }
  const items = itemsSchema(s);
  if (items) validateNode(`${p}.items`, items, rootSchema, [...steps, { index: true }], insideMeta, opts, errs);
  for (const [k, sub] of Object.entries(s.properties ?? {})) {
    const subInsideMeta = insideMeta || (s['x-kubernetes-embedded-resource'] === true && (k === 'metadata' || k === 'apiVersion' || k === 'kind'));
    validateNode(`${p}.properties[${k}]`, sub, rootSchema, [...steps, { child: k }], subInsideMeta, opts, errs);
  }
}

/**
 * ValidateDefaults: every `default` must validate against its node, be
 * pruned (no unknown fields) when `requirePrunedDefaults`, and keep
 * TypeMeta/ObjectMeta of embedded resources valid. `additionalProperties`
 * are not followed, as upstream.
 */
export function validateDefaults(schema: JSONSchemaProps, fldPath: string, opts: ValidateDefaultsOptions): FieldError[] {
  let s = schema;
  if (opts.isResourceRoot && !s['x-kubernetes-embedded-resource']) s = { ...s, 'x-kubernetes-embedded-resource': true };
  const errs: FieldError[] = [];
  validateNode(fldPath, s, s, [], false, opts, errs);
  return errs;
}
