/**
 * Structural schemas (apiextensions-apiserver pkg/apiserver/schema:
 * convert.go `NewStructural`, validation.go `ValidateStructural`,
 * complete.go `validateStructuralCompleteness`).
 *
 * A structural schema says what every field is outside of the value
 * validations: each node has a `type` (or int-or-string/preserve-unknown-
 * fields), `allOf`/`anyOf`/`oneOf`/`not` only restrict values (no types,
 * defaults, descriptions, extensions, or fields the outer schema does not
 * declare), and `metadata` at the root may only restrict `name` and
 * `generateName`. `structuralErrors` reports the violations with upstream's
 * paths and texts, sorted by message as upstream sorts them; a schema that
 * cannot even be converted (`id`, `$ref`, `items` as an array, …) yields the
 * single conversion error upstream reports, as an Invalid value at `fldPath`.
 */
import { type FieldError, field, fieldErrorMessage } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { goRegexpError } from './regexp.js';

const { required, invalid, forbidden } = field;

type Level = 'root' | 'item' | 'field';

const child = (p: string, name: string): string => (p ? `${p}.${name}` : name);
const key = (p: string, k: string): string => `${p}[${k}]`;
const nonEmpty = <T>(a: readonly T[] | undefined): a is readonly T[] => a !== undefined && a.length > 0;
const hasKeys = (o: object | undefined): boolean => o !== undefined && Object.keys(o).length > 0;
/** A schema for `items` (undefined when absent or when it is the unsupported array form). */
export const itemsSchema = (s: JSONSchemaProps): JSONSchemaProps | undefined => (s.items && !Array.isArray(s.items) ? s.items : undefined);
/** The structural default: `default: null` counts as no default (upstream's JSON{nil}). */
export const hasStructuralDefault = (s: JSONSchemaProps): boolean => s.default !== undefined && s.default !== null;

// ---- NewStructural's conversion errors ------------------------------------------

function unsupportedField(s: JSONSchemaProps): string {
  if (s.id) return "OpenAPIV3Schema 'id' is not supported";
  if (s.$schema) return "OpenAPIV3Schema 'schema' is not supported";
  if (s.$ref) return "OpenAPIV3Schema '$ref' is not supported";
  if (hasKeys(s.patternProperties)) return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (hasKeys(s.dependencies)) return "OpenAPIV3Schema 'dependencies' is not supported";
  if (s.additionalItems !== undefined) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (hasKeys(s.definitions)) return "OpenAPIV3Schema 'definitions' is not supported";
  return '';
}

/** The error NewStructural returns for `s`, or '' when it converts. */
export function structuralConversionError(s: JSONSchemaProps | undefined, nested = false): string {
  if (!s) return '';
  const own = unsupportedField(s);
  if (own) return own;
  for (const x of [s.not, ...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    const e = structuralConversionError(x, true);
    if (e) return e;
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    const e = structuralConversionError(s.additionalProperties, nested);
    if (e) return e;
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(s.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  const e = structuralConversionError(itemsSchema(s), nested);
  if (e) return e;
  for (const p of Object.values(s.properties ?? {})) {
    const pe = structuralConversionError(p, nested);
    if (pe) return pe;
  }
  return '';
}

// ---- ValidateStructural ----------------------------------------------------------

/** The int-or-string junctor shape `anyOf: [{type: integer}, {type: string}]`, nothing else set. */
function isIntOrStringAnyOf(anyOf: readonly JSONSchemaProps[] | undefined): boolean {
  if (anyOf?.length !== 2) return false;
  const only = (x: JSONSchemaProps, t: string): boolean =>
    x.type === t && Object.entries(x).every(([k, v]) => k === 'type' || v === undefined || v === '' || v === false);
  return only(anyOf[0]!, 'integer') && only(anyOf[1]!, 'string');
}

function validateValueValidation(v: JSONSchemaProps, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf) v.anyOf?.forEach((x, i) => errs.push(...validateNested(x, false, lvl, `${child(p, 'anyOf')}[${i}]`)));
  v.allOf?.forEach((x, i) => errs.push(...validateNested(x, skipFirstAllOfAnyOf && i === 0, lvl, `${child(p, 'allOf')}[${i}]`)));
  v.oneOf?.forEach((x, i) => errs.push(...validateNested(x, false, lvl, `${child(p, 'oneOf')}[${i}]`)));
  if (v.not) errs.push(...validateNested(v.not, false, lvl, child(p, 'not')));
  if (v.pattern) {
    const e = goRegexpError(v.pattern);
    if (e) errs.push(invalid(child(p, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${e}`));
  }
  return errs;
}

/** validateNestedValueValidation: inside a logical junctor only value validations may appear. */
function validateNested(v: JSONSchemaProps, skipAnyOf: boolean, lvl: Level, p: string): FieldError[] {
  const errs = validateValueValidation(v, skipAnyOf, false, lvl, p);
  const items = itemsSchema(v);
  if (items) errs.push(...validateNested(items, false, lvl, child(p, 'items')));
  for (const [k, x] of Object.entries(v.properties ?? {})) errs.push(...validateNested(x, false, 'field', key(child(p, 'properties'), k)));
  const f = (name: string, detail: string): void => void errs.push(forbidden(child(p, name), detail));
  if (v.type) f('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) f('additionalProperties', 'must be undefined to be structural');
  if (hasStructuralDefault(v)) f('default', 'must be undefined to be structural');
  if (v.title) f('title', 'must be empty to be structural');
  if (v.description) f('description', 'must be empty to be structural');
  if (v.nullable) f('nullable', 'must be false to be structural');
  if (v.externalDocs !== undefined) f('externalDocs', 'must be undefined to be structural');
  if (v['x-kubernetes-preserve-unknown-fields']) f('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v['x-kubernetes-embedded-resource']) f('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v['x-kubernetes-int-or-string']) f('x-kubernetes-int-or-string', 'must be false to be structural');
  if (nonEmpty(v['x-kubernetes-list-map-keys'])) f('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (v['x-kubernetes-list-type'] !== undefined) f('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v['x-kubernetes-map-type'] !== undefined) f('x-kubernetes-map-type', 'must be undefined to be structural');
  if (nonEmpty(v['x-kubernetes-validations'])) f('x-kubernetes-validations', 'must be empty to be structural');
  if (v.properties && Object.hasOwn(v.properties, 'metadata'))
    errs.push(forbidden(key(child(p, 'properties'), 'metadata'), 'must not be specified in a nested context'));
  return errs;
}

/** What remains of the root `metadata` schema once name/generateName, type and default are set aside must be nothing. */
function metadataRestrictsMoreThanNames(m: JSONSchemaProps): boolean {
  const props = Object.keys(m.properties ?? {});
  const onlyNames = props.length > 0 && props.length <= 2 && props.every((k) => k === 'name' || k === 'generateName');
  // Go compares the remaining Structural with its zero value: empty strings, false and the
  // slices the conversion rebuilds (allOf/anyOf/oneOf/enum) count as unset; any pointer does not.
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined) continue;
    switch (k) {
      case 'type':
      case 'default':
      case 'example':
      case 'externalDocs':
      case 'id':
      case '$schema':
      case '$ref':
      case 'patternProperties':
      case 'dependencies':
      case 'definitions':
      case 'additionalItems':
        continue;
      case 'properties':
        if (onlyNames || props.length === 0) continue;
        return true;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
      case 'enum':
        if (Array.isArray(v) && v.length === 0) continue;
        return true;
      case 'description':
      case 'title':
      case 'format':
      case 'pattern':
        if (v === '') continue;
        return true;
      case 'nullable':
      case 'uniqueItems':
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
      case 'x-kubernetes-embedded-resource':
      case 'x-kubernetes-int-or-string':
        if (v === false) continue;
        return true;
      case 'x-kubernetes-preserve-unknown-fields':
        if (v !== true) continue;
        return true;
      default:
        return true;
    }
  }
  return false;
}

function validateInvariants(s: JSONSchemaProps, lvl: Level, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const items = itemsSchema(s);
  if (s.type === 'array' && !items) errs.push(required(child(p, 'items'), 'must be specified'));
  if (items) errs.push(...validateInvariants(items, 'item', child(p, 'items')));
  for (const [k, x] of Object.entries(s.properties ?? {})) errs.push(...validateInvariants(x, 'field', key(child(p, 'properties'), k)));
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    if (lvl === 'root') errs.push(forbidden(child(p, 'additionalProperties'), 'must not be used at the root'));
    if (typeof ap === 'object') errs.push(...validateInvariants(ap, 'field', child(p, 'additionalProperties')));
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve)
    errs.push(invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(invalid(child(p, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));

  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = nonEmpty(s.allOf) && isIntOrStringAnyOf(s.allOf[0]!.anyOf);
  errs.push(...validateValueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, p));

  const checkMetadata = lvl === 'root' || embedded;
  const type = s.type ?? '';
  if (embedded && type !== 'object') {
    if (!type) errs.push(required(child(p, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(invalid(child(p, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && !preserve) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[lvl];
    errs.push(required(child(p, 'type'), `must not be empty ${where}`));
  }
  if (embedded && ap !== undefined) errs.push(forbidden(child(p, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && type && type !== 'object') errs.push(invalid(child(p, 'type'), type, 'must be object at the root'));

  const props = s.properties ?? {};
  const propsPath = child(p, 'properties');
  for (const name of ['kind', 'apiVersion']) {
    const x = Object.hasOwn(props, name) ? props[name] : undefined;
    if (x && checkMetadata && x.type !== 'string') errs.push(invalid(child(key(propsPath, name), 'type'), x.type ?? '', 'must be string'));
  }
  const metadata = Object.hasOwn(props, 'metadata') ? props.metadata : undefined;
  if (metadata) {
    const mp = key(propsPath, 'metadata');
    if (checkMetadata && metadata.type !== 'object') errs.push(invalid(child(mp, 'type'), metadata.type ?? '', 'must be object'));
    if (lvl === 'root' && metadataRestrictsMoreThanNames(metadata))
      errs.push(forbidden(mp, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  if (embedded && !preserve && !hasKeys(s.properties))
    errs.push(required(propsPath, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  return errs;
}

// ---- completeness ---------------------------------------------------------------

function valueValidationCompleteness(v: JSONSchemaProps, s: JSONSchemaProps | undefined, sPath: string, vPath: string): FieldError[] {
  if (!s) return [required(sPath, `because it is defined in ${vPath}`)];
  const errs: FieldError[] = [];
  if (v.not) errs.push(...nestedCompleteness(v.not, s, sPath, child(vPath, 'not')));
  v.allOf?.forEach((x, i) => errs.push(...nestedCompleteness(x, s, sPath, `${child(vPath, 'allOf')}[${i}]`)));
  v.anyOf?.forEach((x, i) => errs.push(...nestedCompleteness(x, s, sPath, `${child(vPath, 'anyOf')}[${i}]`)));
  v.oneOf?.forEach((x, i) => errs.push(...nestedCompleteness(x, s, sPath, `${child(vPath, 'oneOf')}[${i}]`)));
  return errs;
}

function nestedCompleteness(v: JSONSchemaProps | undefined, s: JSONSchemaProps | undefined, sPath: string, vPath: string): FieldError[] {
  if (!v) return [];
  if (!s) return [required(sPath, `because it is defined in ${vPath}`)];
  const errs = valueValidationCompleteness(v, s, sPath, vPath);
  errs.push(...nestedCompleteness(itemsSchema(v), itemsSchema(s), child(sPath, 'items'), child(vPath, 'items')));
  for (const [k, vf] of Object.entries(v.properties ?? {})) {
    const sf = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
    const sp = key(child(sPath, 'properties'), k);
    const vp = key(child(vPath, 'properties'), k);
    if (!sf) errs.push(required(sp, `because it is defined in ${vp}`));
    else errs.push(...nestedCompleteness(vf, sf, sp, vp));
  }
  return errs;
}

/** Go's sort of field errors by their Error() text (byte order). */
export const sortByMessage = (errs: FieldError[]): FieldError[] =>
  errs
    .map((e) => [fieldErrorMessage(e), e] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, e]) => e);

/** ValidateStructural on an already converted schema. */
export function validateStructural(schema: JSONSchemaProps, fldPath: string): FieldError[] {
  return sortByMessage([...validateInvariants(schema, 'root', fldPath), ...valueValidationCompleteness(schema, schema, fldPath, fldPath)]);
}

/**
 * The structural-schema check: NewStructural's conversion error (as
 * `<fldPath>: Invalid value: "": <error>`) or ValidateStructural's errors.
 */
export function structuralErrors(schema: JSONSchemaProps, fldPath: string): FieldError[] {
  const conv = structuralConversionError(schema);
  if (conv) return [invalid(fldPath, '', conv)];
  return validateStructural(schema, fldPath);
}

/** Whether `schema` is structural (no conversion error, no ValidateStructural error). */
export const isStructural = (schema: JSONSchemaProps | undefined): boolean => !!schema && structuralErrors(schema, '').length === 0;
