/**
 * TypeMeta and ObjectMeta of embedded resources (`x-kubernetes-embedded-resource:
 * true`), as apiextensions-apiserver checks them
 * (pkg/apiserver/schema/objectmeta/validation.go `Validate`, coerce.go
 * `GetObjectMeta`).
 *
 * At every embedded resource: `apiVersion` and `kind` are required
 * (`Required value`), must be strings, apiVersion a group/version with at most
 * one slash, kind a DNS-1035 label in any case; `metadata` must decode as
 * ObjectMeta and is validated like a namespaced-or-not object's metadata with
 * path-segment name rules (a missing name is fine). The resource root itself
 * is only checked with `isResourceRoot` (the strategy validates the root's
 * ObjectMeta itself).
 */
import { type FieldError, field, isDNS1035Label, validateObjectMeta, validatePathSegmentName } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';
import { jsonBadValue } from './gofmt.js';

const { required, invalid } = field;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const join = (p: string, name: string): string => (p ? `${p}.${name}` : name);

/** What Go's JSON decoder calls a value's kind in `cannot unmarshal <kind> into ...`. */
const jsonKind = (v: unknown): string =>
  Array.isArray(v)
    ? 'array'
    : v === null
      ? 'null'
      : typeof v === 'object'
        ? 'object'
        : typeof v === 'boolean'
          ? 'bool'
          : typeof v === 'number'
            ? 'number'
            : 'string';

type GoType = 'string' | 'int64' | 'time' | 'map[string]string' | '[]string' | 'list';
const OBJECT_META_FIELDS: Record<string, GoType> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: 'map[string]string',
  annotations: 'map[string]string',
  ownerReferences: 'list',
  finalizers: '[]string',
  managedFields: 'list',
};

/**
 * GetObjectMeta without dropping malformed fields: the decode error Go's JSON
 * decoder reports for metadata that is not an ObjectMeta, or ''.
 */
export function objectMetaDecodeError(metadata: unknown): string {
  if (metadata === null) return '';
  if (!isObject(metadata)) return `json: cannot unmarshal ${jsonKind(metadata)} into Go value of type v1.ObjectMeta`;
  for (const [k, v] of Object.entries(metadata)) {
    const t = OBJECT_META_FIELDS[k];
    if (!t || v === null) continue;
    const bad = (goType: string, kind = jsonKind(v)): string => `json: cannot unmarshal ${kind} into Go struct field ObjectMeta.${k} of type ${goType}`;
    switch (t) {
      case 'string':
        if (typeof v !== 'string') return bad('string');
        break;
      case 'int64':
        if (typeof v !== 'number' || !Number.isInteger(v)) return bad('int64');
        break;
      case 'time':
        if (typeof v !== 'string') return bad('v1.Time');
        if (Number.isNaN(Date.parse(v))) return `parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(v)} as "2006"`;
        break;
      case 'map[string]string':
        if (!isObject(v)) return bad('map[string]string');
        for (const lv of Object.values(v)) if (typeof lv !== 'string' && lv !== null) return bad('string', jsonKind(lv));
        break;
      case '[]string':
        if (!Array.isArray(v)) return bad('[]string');
        for (const e of v) if (typeof e !== 'string' && e !== null) return bad('string', jsonKind(e));
        break;
      case 'list':
        if (!Array.isArray(v)) return bad(k === 'ownerReferences' ? '[]v1.OwnerReference' : '[]v1.ManagedFieldsEntry');
        break;
    }
  }
  return '';
}

/** schema.ParseGroupVersion's error, or ''. */
const parseGroupVersionError = (gv: string): string => ((gv.match(/\//g)?.length ?? 0) > 1 ? `unexpected GroupVersion string: ${gv}` : '');

function validateEmbeddedResource(p: string, x: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(required(join(p, 'apiVersion'), ''));
  if (!Object.hasOwn(x, 'kind')) errs.push(required(join(p, 'kind'), ''));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      const fp = join(p, 'apiVersion');
      if (typeof v !== 'string') errs.push(invalid(fp, jsonBadValue(v), 'must be a string'));
      else if (v === '') errs.push(required(fp, ''));
      else {
        const e = parseGroupVersionError(v);
        if (e) errs.push(invalid(fp, v, e));
      }
    } else if (k === 'kind') {
      const fp = join(p, 'kind');
      if (typeof v !== 'string') errs.push(invalid(fp, jsonBadValue(v), 'must be a string'));
      else if (v === '') errs.push(required(fp, ''));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length) errs.push(invalid(fp, v, `may have mixed case, but should otherwise match: ${e.join(',')}`));
      }
    } else if (k === 'metadata') {
      const fp = join(p, 'metadata');
      const decodeErr = objectMetaDecodeError(v);
      if (decodeErr) errs.push(invalid(fp, jsonBadValue(v), decodeErr));
      else if (isObject(v)) {
        const meta = { ...v, name: typeof v.name === 'string' && v.name ? v.name : 'fakename' };
        const ns = typeof v.namespace === 'string' ? v.namespace : '';
        errs.push(...validateObjectMeta(meta as Parameters<typeof validateObjectMeta>[0], { namespaced: ns.length > 0, nameFn: validatePathSegmentName }, fp));
      }
    }
  }
  return errs;
}

function validate(p: string, x: unknown, s: JSONSchemaProps | undefined): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (Array.isArray(x)) {
    const items = s.items && !Array.isArray(s.items) ? s.items : undefined;
    x.forEach((v, i) => errs.push(...validate(`${p}[${i}]`, v, items)));
  } else if (isObject(x)) {
    if (s['x-kubernetes-embedded-resource']) errs.push(...validateEmbeddedResource(p, x));
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
      if (prop) errs.push(...validate(join(p, k), v, prop));
      else if (s.additionalProperties !== undefined)
        errs.push(...validate(`${p}[${k}]`, v, typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined));
    }
  }
  return errs;
}

/**
 * objectmeta.Validate: TypeMeta/ObjectMeta of every embedded resource in
 * `obj` (and of `obj` itself when `isResourceRoot`).
 */
export function validateEmbeddedResources(
  obj: unknown,
  schema: JSONSchemaProps | undefined,
  opts: { isResourceRoot?: boolean; fldPath?: string } = {},
): FieldError[] {
  let s = schema;
  if (opts.isResourceRoot && !s?.['x-kubernetes-embedded-resource']) s = { ...(s ?? {}), 'x-kubernetes-embedded-resource': true };
  return validate(opts.fldPath ?? '', obj, s);
}
