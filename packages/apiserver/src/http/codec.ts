/**
 * Request body decoding and response encoding: JSON and YAML, Kubernetes'
 * strict/warn/ignore field validation, and the upstream wording of decode
 * errors (`... cannot be handled as a Deployment: strict decoding error: ...`).
 */
import { checkAgainstSchema, type KubeObject, type ResourceDef, typeErrorMessage } from '@kubeling/api';
import { badRequest, isPlainObject, unsupportedMediaType } from '@kubeling/apimachinery';
import YAML from 'yaml';
import { decodeProtobufBody } from './protobuf.js';

export const JSON_TYPE = 'application/json';
export const YAML_TYPE = 'application/yaml';
export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';
export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export const BODY_TYPES = [JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE];

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The media type without parameters, lower case. */
export const mediaType = (contentType: string | undefined): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** Parses a JSON or YAML body into a plain value; 400 on malformed input. */
export function parseBody(raw: Buffer | undefined, contentType: string, what = 'request'): unknown {
  const mt = mediaType(contentType);
  if (mt === PROTOBUF_TYPE) return raw && raw.length ? decodeProtobufBody(raw) : null;
  const text = raw ? raw.toString('utf8') : '';
  if (mt === YAML_TYPE || mt === 'application/apply-patch+yaml' || mt === 'text/yaml' || mt === 'application/x-yaml') {
    try {
      const docs = YAML.parseAllDocuments(text);
      if (docs.length > 1) throw badRequest(`${what} body must contain a single YAML document`);
      const doc = docs[0];
      if (!doc) return null;
      if (doc.errors.length) throw new Error(doc.errors[0]!.message);
      return doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      if ((e as { status?: unknown }).status) throw e;
      throw badRequest(`error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (mt === JSON_TYPE || mt.endsWith('+json') || mt === '') {
    if (!text.trim()) return null;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }
  throw unsupportedMediaType(contentType, BODY_TYPES);
}

/**
 * Checks a decoded object against its kind: apiVersion/kind agreement, JSON types,
 * and unknown fields per `fieldValidation`. Returns warnings (for `Warn`).
 */
export function checkObjectBody(def: ResourceDef, body: unknown, validation: FieldValidation, bodyKind = def.kind): { obj: KubeObject; warnings: string[] } {
  const gv = def.group ? `${def.group}/${def.version}` : def.version;
  if (!isPlainObject(body)) {
    throw badRequest(`${bodyKind} in version "${def.version}" cannot be handled as a ${bodyKind}: the request body must be a JSON object`);
  }
  if (body.apiVersion !== undefined && body.apiVersion !== '' && body.apiVersion !== gv) {
    throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${gv})`);
  }
  if (body.kind !== undefined && body.kind !== '' && body.kind !== bodyKind) {
    throw badRequest(`${bodyKind} in version "${def.version}" cannot be handled as a ${String(body.kind)}: the kind in the body does not match`);
  }
  const issues = checkAgainstSchema(def.schema, body);
  if (issues.typeErrors.length) {
    throw badRequest(`${bodyKind} in version "${def.version}" cannot be handled as a ${bodyKind}: ${typeErrorMessage(issues.typeErrors[0]!)}`);
  }
  const warnings: string[] = [];
  if (issues.unknown.length && validation !== 'Ignore') {
    const texts = issues.unknown.map((f) => `unknown field "${f}"`);
    if (validation === 'Strict') {
      throw badRequest(`${bodyKind} in version "${def.version}" cannot be handled as a ${bodyKind}: strict decoding error: ${texts.join(', ')}`);
    }
    warnings.push(...texts);
  }
  const obj = body as KubeObject;
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return { obj, warnings };
}

export function fieldValidationOf(v: string | undefined): FieldValidation {
  if (v === undefined || v === '') return 'Ignore';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation parameter unsupported: ${v}`);
}

/** Whether the client prefers YAML to JSON. */
export function wantsYaml(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const part of accept.split(',')) {
    const mt = part.split(';')[0]!.trim().toLowerCase();
    if (mt === JSON_TYPE || mt === '*/*' || mt === 'application/*') return false;
    if (mt === YAML_TYPE) return true;
  }
  return false;
}

export function encode(body: unknown, yaml: boolean): { payload: string; contentType: string } {
  if (yaml) return { payload: YAML.stringify(body, { aliasDuplicateObjects: false }), contentType: YAML_TYPE };
  return { payload: JSON.stringify(body), contentType: JSON_TYPE };
}
