/**
 * The per-node rules a CRD's OpenAPI schema must follow
 * (pkg/apis/apiextensions/validation/validation.go
 * `ValidateCustomResourceDefinitionOpenAPISchema`, `specStandardValidatorV3`,
 * `validateMapListKeysMapSet`, and the static checks on
 * `x-kubernetes-validations` rules).
 *
 * It walks every node (properties, items, additionalProperties, allOf/anyOf/
 * oneOf/not, definitions, dependencies) and reports unsupported keywords,
 * defaults where they are forbidden (inside top-level metadata, inside
 * additionalProperties of metadata), `uniqueItems`, properties next to
 * additionalProperties, misuse of the list/map type extensions, and malformed
 * validation rules. CEL compilation is delegated to `celErrors`, called for
 * each node with rules when the schema is otherwise valid at and below that
 * node, as upstream only compiles rules then.
 */
import { type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { validFieldPath } from './fieldpath.js';
import { itemsSchema, structuralConversionError } from './structural.js';

const { required, invalid, forbidden, notSupported } = field;

/** Context handed to the CEL hook with each node that has `x-kubernetes-validations`. */
export interface CELNodeContext {
  /** The highest ancestor path under which `oldSelf` cannot be correlated (set or atomic lists, non-granular maps), if any. */
  oldSelfForbiddenPath?: string;
}

/** Compiles the `x-kubernetes-validations` rules of one schema node; returns their errors. */
export type CELErrorsFn = (schema: JSONSchemaProps, path: string, ctx: CELNodeContext) => FieldError[];

export interface OpenAPISchemaOptions {
  allowDefaults: boolean;
  requireValidPropertyType: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  /** When set (the schema is structural and its defaults are valid), CEL rules are compiled through it. */
  celErrors?: CELErrorsFn | undefined;
}

interface NodeState {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
  oldSelfForbiddenPath?: string | undefined;
}

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const SUPPORTED_RULE_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

const child = (p: string, name: string): string => `${p}.${name}`;
const key = (p: string, k: string): string => `${p}[${k}]`;
const hasKeys = (o: object | undefined): boolean => o !== undefined && Object.keys(o).length > 0;
const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);
const mapIsCorrelatable = (t: string | undefined): boolean => t === undefined || t === 'granular' || t === 'atomic';

/** specStandardValidatorV3.validate. */
function standardErrors(s: JSONSchemaProps, p: string, st: NodeState, o: OpenAPISchemaOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (o.requireValidPropertyType && s.type && !OPENAPI_V3_TYPES.includes(s.type)) errs.push(notSupported(child(p, 'type'), s.type, OPENAPI_V3_TYPES));
  if (s.default !== undefined && !st.allowDefaults)
    errs.push(forbidden(child(p, 'default'), `must not be set${st.disallowDefaultsReason ? ` ${st.disallowDefaultsReason}` : ''}`));
  if (s.id) errs.push(forbidden(child(p, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined) errs.push(forbidden(child(p, 'additionalItems'), 'additionalItems is not supported'));
  if (hasKeys(s.patternProperties)) errs.push(forbidden(child(p, 'patternProperties'), 'patternProperties is not supported'));
  if (hasKeys(s.definitions)) errs.push(forbidden(child(p, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined) errs.push(forbidden(child(p, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(forbidden(child(p, '$ref'), '$ref is not supported'));
  if (s.type === 'null') errs.push(forbidden(child(p, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0) errs.push(forbidden(child(p, 'items'), 'items must be a schema object and not an array'));
  if (st.insideResourceMeta && s['x-kubernetes-embedded-resource'])
    errs.push(forbidden(child(p, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  return errs;
}

/** validateMapListKeysMapSet: set/map list items are not nullable; map keys are required or defaulted, never nullable. */
export function mapListKeysMapSetErrors(s: JSONSchemaProps, p: string): FieldError[] {
  const items = itemsSchema(s);
  const lt = s['x-kubernetes-list-type'];
  if (!items || (lt !== 'set' && lt !== 'map')) return [];
  const errs: FieldError[] = [];
  if (items.nullable) errs.push(forbidden(child(child(p, 'items'), 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${lt}`));
  if (lt === 'map') {
    for (const k of s['x-kubernetes-list-map-keys'] ?? []) {
      const prop = items.properties && Object.hasOwn(items.properties, k) ? items.properties[k] : undefined;
      if (!prop) continue;
      const kp = key(child(child(p, 'items'), 'properties'), k);
      if (!(items.required ?? []).includes(k) && prop.default === undefined)
        errs.push(required(child(kp, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
      if (prop.nullable) errs.push(forbidden(child(kp, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
    }
  }
  return errs;
}

function listAndMapTypeErrors(s: JSONSchemaProps, p: string, o: OpenAPISchemaOptions): FieldError[] {
  const errs: FieldError[] = [];
  const mt = s['x-kubernetes-map-type'];
  const lt = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const typeMust = (t: string, ext: string): void =>
    void errs.push(
      s.type ? invalid(child(p, 'type'), s.type, `must be ${t} if ${ext} is specified`) : required(child(p, 'type'), `must be ${t} if ${ext} is specified`),
    );
  if (mt !== undefined && s.type !== 'object') typeMust('object', 'x-kubernetes-map-type');
  if (mt !== undefined && mt !== 'atomic' && mt !== 'granular') errs.push(notSupported(child(p, 'x-kubernetes-map-type'), mt, ['atomic', 'granular']));
  const items = itemsSchema(s);
  if (lt !== undefined && s.type !== 'array') typeMust('array', 'x-kubernetes-list-type');
  else if (o.requireAtomicSetType && lt === 'set' && items) {
    if (items.type === 'array' && items['x-kubernetes-list-type'] !== undefined && items['x-kubernetes-list-type'] !== 'atomic')
      errs.push(
        invalid(
          child(child(p, 'items'), 'x-kubernetes-list-type'),
          items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic')
      errs.push(
        invalid(
          child(child(p, 'items'), 'x-kubernetes-map-type'),
          items['x-kubernetes-list-type'] ?? null,
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
  }
  if (lt !== undefined && lt !== 'atomic' && lt !== 'set' && lt !== 'map')
    errs.push(notSupported(child(p, 'x-kubernetes-list-type'), lt, ['atomic', 'set', 'map']));
  if (keys.length > 0) {
    if (lt === undefined) errs.push(required(child(p, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (lt !== 'map') errs.push(invalid(child(p, 'x-kubernetes-list-type'), lt, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (lt === 'map') {
    const keysValue = new field.GoValue(`[]string{${keys.map((k) => field.goQuote(k)).join(', ')}}`);
    if (keys.length === 0) errs.push(required(child(p, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (s.items === undefined) errs.push(required(child(p, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(s.items)) errs.push(invalid(child(p, 'items'), '', 'must only have a single schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object')
      errs.push(invalid(child(child(p, 'items'), 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of keys) {
        const prop = items.properties && Object.hasOwn(items.properties, k) ? items.properties[k] : undefined;
        if (prop) {
          if (prop.type === 'array' || prop.type === 'object')
            errs.push(
              invalid(
                child(key(child(child(p, 'items'), 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
        } else errs.push(invalid(child(p, 'x-kubernetes-list-map-keys'), keysValue, 'entries must all be names of item properties'));
        if (seen.has(k)) errs.push(invalid(child(p, 'x-kubernetes-list-map-keys'), keysValue, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  if (o.requireMapListKeysMapSetValidation) errs.push(...mapListKeysMapSetErrors(s, p));
  return errs;
}

/** The static checks on `x-kubernetes-validations` rules. */
function ruleErrors(s: JSONSchemaProps, p: string): FieldError[] {
  const errs: FieldError[] = [];
  (s['x-kubernetes-validations'] ?? []).forEach((rule, i) => {
    const rp = `${child(p, 'x-kubernetes-validations')}[${i}]`;
    const trimmedRule = (rule.rule ?? '').trim();
    const msg = rule.message ?? '';
    const trimmedMsg = msg.trim();
    if (!trimmedRule) errs.push(required(child(rp, 'rule'), 'rule is not specified'));
    else if (msg.length > 0 && !trimmedMsg) errs.push(invalid(child(rp, 'message'), msg, 'message must be non-empty if specified'));
    else if (hasNewlines(trimmedMsg)) errs.push(invalid(child(rp, 'message'), msg, 'message must not contain line breaks'));
    else if (hasNewlines(trimmedRule) && !trimmedMsg) errs.push(required(child(rp, 'message'), 'message must be specified if rule contains line breaks'));
    const me = rule.messageExpression ?? '';
    if (me.length > 0 && !me.trim()) errs.push(required(child(rp, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    if (rule.reason !== undefined && !SUPPORTED_RULE_REASONS.includes(rule.reason))
      errs.push(notSupported(child(rp, 'reason'), rule.reason, SUPPORTED_RULE_REASONS));
    const fp = rule.fieldPath ?? '';
    if (fp.length > 0 && !fp.trim()) errs.push(invalid(child(rp, 'fieldPath'), fp, 'fieldPath must be non-empty if specified'));
    if (hasNewlines(fp)) errs.push(invalid(child(rp, 'fieldPath'), fp, 'fieldPath must not contain line breaks'));
    if (fp.length > 0 && !structuralConversionError(s)) {
      try {
        validFieldPath(fp, s);
      } catch {
        errs.push(invalid(child(rp, 'fieldPath'), fp, 'fieldPath must be a valid path'));
      }
    }
  });
  return errs;
}

interface Collected {
  schema: FieldError[];
  cel: FieldError[];
}

function walk(s: JSONSchemaProps | undefined, p: string, st: NodeState, isRoot: boolean, cel: boolean, o: OpenAPISchemaOptions): Collected {
  const out: Collected = { schema: [], cel: [] };
  if (!s) return out;
  const add = (c: Collected): void => {
    out.schema.push(...c.schema);
    out.cel.push(...c.cel);
  };
  out.schema.push(...standardErrors(s, p, st, o));
  if (s.uniqueItems) out.schema.push(forbidden(child(p, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    if (hasKeys(s.properties) && (ap === false || typeof ap === 'object'))
      out.schema.push(forbidden(child(p, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    const sub = st.insideResourceMeta ? { ...st, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' } : st;
    if (typeof ap === 'object') add(walk(ap, child(p, 'additionalProperties'), sub, false, cel, o));
  }
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    let sub: NodeState = st;
    if (!mapIsCorrelatable(s['x-kubernetes-map-type']) && !sub.oldSelfForbiddenPath) sub = { ...sub, oldSelfForbiddenPath: p };
    if ((isRoot || s['x-kubernetes-embedded-resource']) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${k}` };
    }
    add(walk(prop, key(child(p, 'properties'), k), sub, false, cel, o));
  }
  if (s.not) add(walk(s.not, child(p, 'not'), st, false, false, o));
  s.allOf?.forEach((x, i) => add(walk(x, `${child(p, 'allOf')}[${i}]`, st, false, false, o)));
  s.oneOf?.forEach((x, i) => add(walk(x, `${child(p, 'oneOf')}[${i}]`, st, false, false, o)));
  s.anyOf?.forEach((x, i) => add(walk(x, `${child(p, 'anyOf')}[${i}]`, st, false, false, o)));
  for (const [k, x] of Object.entries(s.definitions ?? {})) add(walk(x, key(child(p, 'definitions'), k), st, false, false, o));
  if (s.items !== undefined) {
    const sub = s['x-kubernetes-list-type'] !== 'map' && !st.oldSelfForbiddenPath ? { ...st, oldSelfForbiddenPath: p } : st;
    if (Array.isArray(s.items)) s.items.forEach((x, i) => add(walk(x, `${child(p, 'items')}[${i}]`, sub, false, cel, o)));
    else add(walk(s.items, child(p, 'items'), sub, false, cel, o));
  }
  for (const [k, d] of Object.entries(s.dependencies ?? {})) if (!Array.isArray(d)) add(walk(d, key(child(p, 'dependencies'), k), st, false, false, o));
  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    out.schema.push(invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  out.schema.push(...listAndMapTypeErrors(s, p, o));
  if ((s['x-kubernetes-validations'] ?? []).length > 0) {
    out.schema.push(...ruleErrors(s, p));
    if (out.schema.length === 0 && cel && o.celErrors) {
      const ctx: CELNodeContext = st.oldSelfForbiddenPath !== undefined ? { oldSelfForbiddenPath: st.oldSelfForbiddenPath } : {};
      out.cel.push(...o.celErrors(s, p, ctx));
    }
  }
  return out;
}

/**
 * ValidateCustomResourceDefinitionOpenAPISchema from the root of a version's
 * schema: schema errors first, then the CEL errors (`celErrors` is only
 * consulted when `o.celErrors` is set).
 */
export function openAPISchemaErrors(schema: JSONSchemaProps, fldPath: string, o: OpenAPISchemaOptions): FieldError[] {
  const st: NodeState = { allowDefaults: o.allowDefaults, disallowDefaultsReason: '', insideResourceMeta: false };
  const c = walk(schema, fldPath, st, true, o.celErrors !== undefined, o);
  return [...c.schema, ...c.cel];
}

/** SchemaHas: whether `pred` holds for some node of `s`. */
export function schemaHas(s: JSONSchemaProps | undefined, pred: (s: JSONSchemaProps) => boolean): boolean {
  if (!s) return false;
  if (pred(s)) return true;
  const subs: (JSONSchemaProps | undefined)[] = [
    ...(Array.isArray(s.items) ? s.items : [s.items]),
    ...(s.allOf ?? []),
    ...(s.anyOf ?? []),
    ...(s.oneOf ?? []),
    s.not,
    ...Object.values(s.properties ?? {}),
    typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined,
    ...Object.values(s.patternProperties ?? {}),
    typeof s.additionalItems === 'object' ? s.additionalItems : undefined,
    ...Object.values(s.definitions ?? {}),
    ...Object.values(s.dependencies ?? {}).map((d) => (Array.isArray(d) ? undefined : d)),
  ];
  return subs.some((x) => schemaHas(x, pred));
}

export const schemaHasDefaults = (s: JSONSchemaProps | undefined): boolean => schemaHas(s, (x) => x.default !== undefined);
export const schemaHasKubernetesExtensions = (s: JSONSchemaProps | undefined): boolean =>
  schemaHas(
    s,
    (x) =>
      x['x-kubernetes-embedded-resource'] === true ||
      x['x-kubernetes-preserve-unknown-fields'] !== undefined ||
      x['x-kubernetes-int-or-string'] === true ||
      (x['x-kubernetes-list-map-keys'] ?? []).length > 0 ||
      x['x-kubernetes-list-type'] !== undefined ||
      (x['x-kubernetes-validations'] ?? []).length > 0,
  );
export const schemaHasInvalidTypes = (s: JSONSchemaProps | undefined): boolean => schemaHas(s, (x) => !!x.type && !OPENAPI_V3_TYPES.includes(x.type));
export const schemaHasNonAtomicSetType = (s: JSONSchemaProps | undefined): boolean =>
  schemaHas(s, (x) => {
    const items = itemsSchema(x);
    if (x['x-kubernetes-list-type'] !== 'set' || !items) return false;
    if (items.type === 'array') return items['x-kubernetes-list-type'] !== undefined && items['x-kubernetes-list-type'] !== 'atomic';
    if (items.type === 'object') return items['x-kubernetes-map-type'] !== 'atomic';
    return false;
  });
export const schemaHasInvalidMapListKeysMapSet = (s: JSONSchemaProps | undefined): boolean => schemaHas(s, (x) => mapListKeysMapSetErrors(x, '').length > 0);
