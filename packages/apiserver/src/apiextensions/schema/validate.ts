/**
 * Validation of a custom resource against its OpenAPI v3 schema, as
 * apiextensions-apiserver does it with k8s.io/kube-openapi's
 * pkg/validation/validate (schema.go, type.go, schema_props.go,
 * object_validator.go, slice_validator.go, validator.go, values.go) and turns
 * the result into field errors (pkg/apiserver/validation/validation.go
 * `kubeOpenAPIResultToFieldErrors`).
 *
 * Guarantees, as upstream:
 * - messages name the value's path the way kube-openapi builds it
 *   (`spec.list[0].name in body must be of type string: "integer"`); the
 *   field path is that name, prefixed by `fldPath`; errors without a name
 *   (anyOf/oneOf/allOf/not summaries, a wrong root type) go to `fldPath`,
 *   printed `<nil>` when it is empty, as the custom resource strategy's nil
 *   path prints;
 * - every applicable keyword is checked and errors are collected, except
 *   that a string stops at its first length/pattern failure and an object at
 *   a min/maxProperties failure; identical messages are reported once;
 * - `anyOf`/`oneOf` report the summary plus the errors of the alternative
 *   that matched most keywords (the first one on a tie);
 * - formats outside apiextensions' supported list are ignored; numbers are
 *   typed the way Go decodes JSON (integral → int64, else float64).
 */
import { type FieldError, field, jsonEqual } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { validateEmbeddedResources } from './embedded.js';
import { isKnownFormat, validatesFormat } from './formats.js';
import { jsonBadValue } from './gofmt.js';
import { validateListSetsAndMaps } from './listtype.js';
import { compileGoRegexp } from './regexp.js';

const { goQuote, goFloat, goJSON, required, invalid, notSupported, tooLong, tooMany, typeInvalid } = field;

type Code = 'type' | 'required' | 'tooLong' | 'enum' | 'maxItems' | 'tooManyProperties' | 'other' | 'composite';

interface VErr {
  code: Code;
  /** The kube-openapi error name (the value's path); undefined for composite errors. */
  name?: string;
  value?: unknown;
  /** The bound a TooLong/TooMany error was checked against. */
  valid?: number;
  values?: unknown[];
  message: string;
}

class Result {
  errors: VErr[] = [];
  matchCount = 0;
  add(...errs: VErr[]): void {
    for (const e of errs) if (!this.errors.some((x) => x.message === e.message)) this.errors.push(e);
  }
  merge(...others: (Result | undefined)[]): this {
    for (const o of others) {
      if (!o) continue;
      this.add(...o.errors);
      this.matchCount += o.matchCount;
    }
    return this;
  }
  get valid(): boolean {
    return this.errors.length === 0;
  }
}

const one = (e: VErr): Result => {
  const r = new Result();
  r.errors.push(e);
  return r;
};

export interface ValidatorOptions {
  /**
   * Validate as the custom resource validator does: the schema is converted
   * with `x-kubernetes-int-or-string` becoming `type: [integer, string]` and
   * unsupported formats dropped. Off for the validation of `default`s, which
   * runs on the structural schema's own conversion (ToKubeOpenAPI).
   */
  crdConversion: boolean;
}

const IN = 'body';
const MAX_JSON_FLOAT = 2 ** 53 - 1;
const isInt64 = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < 2 ** 63;

type Kind = 'nil' | 'bool' | 'string' | 'int' | 'float' | 'array' | 'object';
function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return isInt64(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/** swag.IsFloat64AJSONInteger. */
function isFloat64AJSONInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -MAX_JSON_FLOAT || f > MAX_JSON_FLOAT) return false;
  if (Number.isInteger(f)) return true;
  if (f < 0) return false;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  if (g === 0) return diff < 1e-9 * Number.MIN_VALUE;
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

const invalidType = (name: string, type: string, value: string): VErr => ({
  code: 'type',
  name,
  value,
  message: `${name} in ${IN} must be of type ${type}: ${goQuote(value)}`,
});

function schemaTypes(s: JSONSchemaProps, o: ValidatorOptions): string[] {
  if (o.crdConversion && s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

const schemaFormat = (s: JSONSchemaProps, o: ValidatorOptions): string => (!s.format || (o.crdConversion && !isKnownFormat(s.format)) ? '' : s.format);

// ---- the validators ------------------------------------------------------------

function validateType(types: string[], nullable: boolean, format: string, path: string, data: unknown): Result {
  const res = new Result();
  res.matchCount++;
  const kind = kindOf(data);
  if (kind === 'nil') {
    if (types.length > 0 && !types.includes('null') && !nullable) return one(invalidType(path, types.join(','), 'null'));
    return res;
  }
  const [schType, fmt] = {
    bool: ['boolean', ''],
    string: ['string', ''],
    int: ['integer', 'int64'],
    float: ['number', 'float64'],
    array: ['array', ''],
    object: ['object', ''],
  }[kind] as [string, string];
  const isFloatInt = schType === 'number' && isFloat64AJSONInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  const stringish = kind === 'string' || kind === 'array';
  if (!stringish && format !== '' && !(types.includes(schType) || fmt === format || isFloatInt || isIntFloat)) return one(invalidType(path, format, fmt));
  if (!(types.includes('number') || types.includes('integer')) && format !== '' && stringish) return res;
  if (!(types.includes(schType) || isFloatInt || isIntFloat)) return one(invalidType(path, types.join(','), schType));
  return res;
}

/** basicCommonValidator: enum membership with Go's reflect conversions. */
function enumMatches(data: unknown, e: unknown): boolean {
  const dk = kindOf(data);
  const ek = kindOf(e);
  if (dk === 'nil' || ek === 'nil') return false;
  if ((dk === 'int' || dk === 'float') && (ek === 'int' || ek === 'float')) {
    const d = data as number;
    return ek === 'int' ? Math.trunc(d) === e : d === e;
  }
  if (dk === 'int' && ek === 'string') {
    const n = data as number;
    return (n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : '\ufffd') === e;
  }
  if (dk !== ek) return false;
  return deepEqual(data, e);
}

/** Structural equality of JSON values (enum, uniqueItems, defaults): apimachinery's. */
export const deepEqual = jsonEqual;

function validateEnum(s: JSONSchemaProps, path: string, data: unknown): Result | undefined {
  if (!s.enum || s.enum.length === 0) return undefined;
  if (s.enum.some((e) => enumMatches(data, e))) return undefined;
  const list = s.enum.map((v) => (typeof v === 'string' ? v : goJSON(v))).join(' ');
  return one({ code: 'enum', name: path, value: data, values: s.enum, message: `${path} in ${IN} should be one of [${list}]` });
}

function validateString(s: JSONSchemaProps, path: string, data: string): Result | undefined {
  const runes = [...data].length;
  if (s.maxLength !== undefined && runes > s.maxLength)
    return one({ code: 'tooLong', name: path, value: data, valid: s.maxLength, message: `${path} in ${IN} should be at most ${s.maxLength} chars long` });
  if (s.minLength !== undefined && runes < s.minLength)
    return one({ code: 'other', name: path, value: data, message: `${path} in ${IN} should be at least ${s.minLength} chars long` });
  if (s.pattern) {
    const re = compileGoRegexp(s.pattern);
    if ('error' in re)
      return one({ code: 'other', name: path, value: data, message: `${path} in ${IN} should match '${s.pattern}, but pattern is invalid: ${re.error}'` });
    if ('re' in re && !re.re.test(data)) return one({ code: 'other', name: path, value: data, message: `${path} in ${IN} should match '${s.pattern}'` });
  }
  return undefined;
}

function validateNumber(s: JSONSchemaProps, path: string, data: number): Result {
  const res = new Result();
  const int = isInt64(data);
  const bound = (what: 'max' | 'min', limit: number, exclusive: boolean): VErr | undefined => {
    // MaximumNativeType/MinimumNativeType: an int64 value is compared with the bound converted to int64.
    const b = int ? Math.trunc(limit) : limit;
    const over = what === 'max' ? (exclusive ? data >= b : data > b) : exclusive ? data <= b : data < b;
    if (!over) return undefined;
    const rel = what === 'max' ? (exclusive ? 'less than' : 'less than or equal to') : exclusive ? 'greater than' : 'greater than or equal to';
    return { code: 'other', name: path, value: data, message: `${path} in ${IN} should be ${rel} ${int ? String(b) : goFloat(b)}` };
  };
  const mult = new Result();
  if (s.multipleOf !== undefined) {
    const f = s.multipleOf;
    const factorInt = Math.trunc(f);
    if (int && factorInt !== 0) {
      if (factorInt < 0)
        mult.add({ code: 'other', name: path, value: factorInt, message: `factor MultipleOf declared for ${path} must be positive: ${factorInt}` });
      else if (data % factorInt !== 0) mult.add({ code: 'other', name: path, value: data, message: `${path} in ${IN} should be a multiple of ${factorInt}` });
    } else if (f < 0) mult.add({ code: 'other', name: path, value: f, message: `factor MultipleOf declared for ${path} must be positive: ${goFloat(f)}` });
    else {
      const m = f < 1 ? (1 / f) * data : data / f;
      if (!isFloat64AJSONInteger(m)) mult.add({ code: 'other', name: path, value: data, message: `${path} in ${IN} should be a multiple of ${goFloat(f)}` });
    }
  }
  const min = new Result();
  if (s.minimum !== undefined) {
    const e = bound('min', s.minimum, s.exclusiveMinimum === true);
    if (e) min.add(e);
  }
  const max = new Result();
  if (s.maximum !== undefined) {
    const e = bound('max', s.maximum, s.exclusiveMaximum === true);
    if (e) max.add(e);
  }
  res.merge(mult, min, max);
  res.matchCount++;
  return res;
}

function validateSlice(s: JSONSchemaProps, path: string, data: unknown[], o: ValidatorOptions): Result {
  const res = new Result();
  const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
  if (items) data.forEach((v, i) => res.merge(validateValue(items, `${path}[${i}]`, v, o)));
  if (Array.isArray(s.items)) s.items.forEach((it, i) => i < data.length && res.merge(validateValue(it, `${path}[${i}]`, data[i], o)));
  if (s.minItems !== undefined && data.length < s.minItems)
    res.add({ code: 'other', name: path, value: data.length, message: `${path} in ${IN} should have at least ${s.minItems} items` });
  if (s.maxItems !== undefined && data.length > s.maxItems)
    res.add({ code: 'maxItems', name: path, value: data.length, valid: s.maxItems, message: `${path} in ${IN} should have at most ${s.maxItems} items` });
  if (s.uniqueItems && data.some((v, i) => data.slice(0, i).some((u) => deepEqual(u, v))))
    res.add({ code: 'other', name: path, message: `${path} in ${IN} shouldn't contain duplicates` });
  res.matchCount++;
  return res;
}

function validateObject(s: JSONSchemaProps, path: string, data: Record<string, unknown>, o: ValidatorOptions): Result {
  const keys = Object.keys(data).filter((k) => data[k] !== undefined);
  const n = keys.length;
  if (s.minProperties !== undefined && n < s.minProperties)
    return one({ code: 'other', name: path, value: n, message: `${path} in ${IN} should have at least ${s.minProperties} properties` });
  if (s.maxProperties !== undefined && n > s.maxProperties)
    return one({
      code: 'tooManyProperties',
      name: path,
      value: n,
      valid: s.maxProperties,
      message: `${path} in ${IN} should have at most ${s.maxProperties} properties`,
    });
  const res = new Result();
  const props = s.properties ?? {};
  const ap = s.additionalProperties;
  if (ap === false) {
    for (const k of keys)
      if (!Object.hasOwn(props, k)) res.add({ code: 'other', name: path, value: k, message: `${path}.${k} in ${IN} is a forbidden property` });
  } else if (ap && typeof ap === 'object') {
    for (const k of keys) if (!Object.hasOwn(props, k)) res.merge(validateValue(ap, `${path}.${k}`, data[k], o));
  }
  for (const [name, sub] of Object.entries(props)) {
    if (data[name] !== undefined || Object.hasOwn(data, name)) res.merge(validateValue(sub, path ? `${path}.${name}` : name, data[name], o));
  }
  for (const k of s.required ?? [])
    if (!Object.hasOwn(data, k) || data[k] === undefined) res.add({ code: 'required', name: `${path}.${k}`, message: `${path}.${k} in ${IN} is required` });
  return res;
}

function composite(message: string): VErr {
  return { code: 'composite', message };
}

function validateJunctors(s: JSONSchemaProps, path: string, data: unknown, o: ValidatorOptions): Result {
  const main = new Result();
  const q = goQuote(path);
  if (s.anyOf && s.anyOf.length > 0) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let ok = false;
    for (const sub of s.anyOf) {
      const r = validateValue(sub, path, data, o);
      if (r.valid) {
        best = undefined;
        ok = true;
        firstSuccess ??= r;
        break;
      }
      if (!best || r.matchCount > best.matchCount) best = r;
    }
    if (!ok) main.add(composite(`${q} must validate at least one schema (anyOf)`));
    if (best) main.merge(best);
    else if (firstSuccess) main.merge(firstSuccess);
  }
  if (s.oneOf && s.oneOf.length > 0) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let validated = 0;
    for (const sub of s.oneOf) {
      const r = validateValue(sub, path, data, o);
      if (r.valid) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      main.add(composite(`${q} must validate one and only one schema (oneOf). ${more}`));
      if (best) main.merge(best);
    } else if (firstSuccess) main.merge(firstSuccess);
  }
  if (s.allOf && s.allOf.length > 0) {
    let validated = 0;
    for (const sub of s.allOf) {
      const r = validateValue(sub, path, data, o);
      if (r.valid) validated++;
      main.merge(r);
    }
    if (validated !== s.allOf.length) main.add(composite(`${q} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`));
  }
  if (s.not && validateValue(s.not, path, data, o).valid) main.add(composite(`${q} must not validate the schema (not)`));
  main.matchCount++;
  return main;
}

/** SchemaValidator.Validate: every validator that applies to the value's kind, in kube-openapi's order. */
function validateValue(s: JSONSchemaProps, path: string, data: unknown, o: ValidatorOptions): Result {
  const res = new Result();
  const types = schemaTypes(s, o);
  const format = schemaFormat(s, o);
  const typeApplies = types.length > 0 || format !== '';
  if (data === null || data === undefined) {
    if (typeApplies) res.merge(validateType(types, s.nullable === true, format, path, data));
    res.merge(validateEnum(s, path, data));
    return res;
  }
  const kind = kindOf(data);
  const step = (r: Result | undefined): void => {
    res.merge(r);
    res.matchCount++;
  };
  if (typeApplies) step(validateType(types, s.nullable === true, format, path, data));
  step(validateJunctors(s, path, data, o));
  if (kind === 'string') {
    step(validateString(s, path, data as string));
    if (format !== '' && isKnownFormat(format) && !validatesFormat(format, data as string)) step(one(invalidTypeFormat(path, format, data as string)));
    else if (format !== '' && isKnownFormat(format)) step(undefined);
  }
  if (kind === 'int' || kind === 'float') step(validateNumber(s, path, data as number));
  if (kind === 'array') step(validateSlice(s, path, data as unknown[], o));
  step(validateEnum(s, path, data));
  if (kind === 'object') step(validateObject(s, path, data as Record<string, unknown>, o));
  res.matchCount++;
  return res;
}

const invalidTypeFormat = (path: string, format: string, data: string): VErr => ({
  code: 'type',
  name: path,
  value: data,
  message: `${path} in ${IN} must be of type ${format}: ${goQuote(data)}`,
});

// ---- conversion to field errors -------------------------------------------------

function toFieldErrors(res: Result, fldPath: string): FieldError[] {
  const root = fldPath === '' ? '<nil>' : fldPath;
  return res.errors.map((e): FieldError => {
    if (e.code === 'composite' || e.name === undefined) return invalid(root, '', e.message);
    const name = e.name.startsWith('.') ? e.name.slice(1) : e.name;
    const p = e.name === '' || e.name === '.' ? root : fldPath === '' ? name : `${fldPath}.${name}`;
    const value = e.value === undefined ? '' : jsonBadValue(e.value);
    switch (e.code) {
      case 'required':
        return required(p, '');
      case 'enum':
        return notSupported(
          p,
          jsonBadValue(e.value),
          (e.values ?? []).map((v) => (typeof v === 'string' ? v : goJSON(v))),
        );
      case 'tooLong':
        return tooLong(p, value, e.valid ?? -1);
      case 'maxItems':
      case 'tooManyProperties':
        return tooMany(p, typeof e.value === 'number' ? e.value : -1, e.valid ?? -1);
      case 'type':
        return typeInvalid(p, value, e.message);
      default:
        return invalid(p, value, e.message);
    }
  });
}

/**
 * Validates `obj` against `schema` with kube-openapi's semantics and returns
 * apiextensions' field errors (see the module doc). `fldPath` prefixes every
 * path ('' for a custom resource).
 */
export function openAPIValidate(schema: JSONSchemaProps, obj: unknown, fldPath = '', opts: ValidatorOptions = { crdConversion: true }): FieldError[] {
  const res = validateValue(schema, '', obj, opts);
  return res.valid ? [] : toFieldErrors(res, fldPath);
}

/**
 * Everything the custom resource strategy checks against the schema, in its
 * order: the OpenAPI validation (`openAPIValidate`), TypeMeta/ObjectMeta of
 * embedded resources (not the root's), and the uniqueness of
 * `x-kubernetes-list-type` set/map lists. CEL rules are not run here.
 */
export function validateCustomResource(schema: JSONSchemaProps, obj: unknown, fldPath = ''): FieldError[] {
  return [
    ...openAPIValidate(schema, obj, fldPath),
    ...validateEmbeddedResources(obj, schema, { isResourceRoot: false, fldPath }),
    ...validateListSetsAndMaps(schema, obj, fldPath),
  ];
}
