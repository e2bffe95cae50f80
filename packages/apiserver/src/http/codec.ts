/**
 * Request body decoding and response encoding: JSON and YAML, Kubernetes'
 * strict/warn/ignore field validation, and the upstream wording of decode
 * errors (`... cannot be handled as a Deployment: strict decoding error: ...`).
 */
import { isCustom } from '../apiextensions/catalog.js';
import { prune } from '../apiextensions/schema/index.js';
import { checkAgainstSchema, jsonNumberText, type KubeObject, type NumberText, type ResourceDef, typeErrorMessage, wire } from '@kubeling/api';
import { StatusError, badRequest, goJSONSyntaxError, isPlainObject, notAcceptable, unsupportedMediaType } from '@kubeling/apimachinery';
import YAML from 'yaml';
import { decodeProtobufBody, encodeProtobufBody } from './protobuf.js';

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

/**
 * How deep a body may nest. Go's decoder stops at 10,000 levels; kubeling stops
 * earlier, at a depth every part of it (cloning, patching, serializing) handles
 * without running out of stack, far beyond any real object.
 */
export const MAX_DEPTH = 1000;

/** A body that does not parse: 400 whose message is the decoder's error alone (callers add their context). */
export class BodySyntaxError extends StatusError {
  constructor(readonly detail: string) {
    super(badRequest(detail).status);
  }
}

/** What parsing a body found besides the value: for JSON, the literals of numbers JSON.parse rounds. */
export interface ParsedBody {
  value: unknown;
  numberText: NumberText | undefined;
}

/**
 * One linear pass over a JSON text that refuses nesting deeper than
 * `MAX_DEPTH` (as Go's scanner words it) before anything recursive sees it.
 */
export function scanJsonDepth(text: string): void {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const j = text.indexOf('"', i + 1);
        if (j < 0) return; // unterminated: JSON.parse reports it
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        i = j;
        if ((j - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_DEPTH) throw new BodySyntaxError(`invalid character '${text[i]}' exceeded max depth`);
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
}

/** Parses a JSON or YAML body into a plain value; 400 (a BodySyntaxError) on malformed input. */
export function parseBody(raw: Buffer | undefined, contentType: string, what = 'request'): unknown {
  return parseBodyFull(raw, contentType, what).value;
}

export function parseBodyFull(raw: Buffer | undefined, contentType: string, what = 'request'): ParsedBody {
  const mt = mediaType(contentType);
  if (mt === PROTOBUF_TYPE) {
    const value = raw?.length ? decodeProtobufBody(raw) : null;
    checkDepth(value, (d) => new BodySyntaxError(`protobuf message nested deeper than ${d}`));
    return { value, numberText: undefined };
  }
  const text = raw ? raw.toString('utf8') : '';
  if (mt === YAML_TYPE || mt === 'application/apply-patch+yaml' || mt === 'text/yaml' || mt === 'application/x-yaml') {
    return { value: parseYaml(text, what), numberText: undefined };
  }
  if (mt === JSON_TYPE || mt.endsWith('+json') || mt === '') {
    if (!text.trim()) return { value: null, numberText: undefined };
    scanJsonDepth(text);
    try {
      return { value: JSON.parse(text), numberText: jsonNumberText(text) };
    } catch (e) {
      throw new BodySyntaxError(goJSONSyntaxError(text, e as Error));
    }
  }
  throw unsupportedMediaType(contentType, BODY_TYPES);
}

/** `!!binary`: standard base64 (line breaks allowed) decoded to text, as sigs.k8s.io/yaml turns it into a string. */
const binaryTag = {
  tag: 'tag:yaml.org,2002:binary',
  default: false,
  resolve(src: string, onError: (msg: string) => void): string {
    const clean = src.replace(/[\s]/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
      onError('!!binary value contains invalid base64 data');
      return '';
    }
    return Buffer.from(clean, 'base64').toString('utf8');
  },
};

/**
 * How deep a YAML body may nest. The YAML parser recurses per level and runs
 * out of stack near a thousand (where a stack overflow can even be fatal), so
 * YAML nesting is measured before parsing and kept well below that.
 */
export const MAX_YAML_DEPTH = 256;

/**
 * A linear estimate of a YAML text's nesting, never below the real one: block
 * levels by indentation (and compact `- - x` sequences), flow levels by the
 * brackets that open collections, outside quotes and comments.
 */
export function yamlDepth(text: string, stopAbove = MAX_YAML_DEPTH): number {
  // Open block collections: the indentation of each, and whether it is a sequence.
  const open: { indent: number; seq: boolean }[] = [];
  let level = 0;
  let flow = 0;
  let quote: '' | "'" | '"' = '';
  let max = 0;
  for (const line of text.split('\n')) {
    let i = 0;
    if (!quote && flow === 0) {
      while (line[i] === ' ') i++;
      if (i === line.length || line[i] === '#' || line[i] === '\r') continue;
      const isSeq = line[i] === '-' && (line[i + 1] === ' ' || line[i + 1] === undefined || line[i + 1] === '\r');
      // A sequence may sit at its key's indentation; anything else at an indentation closes what is open there.
      while (open.length) {
        const top = open[open.length - 1]!;
        if (top.indent > i || (top.indent === i && (top.seq || !isSeq))) open.pop();
        else break;
      }
      // Each `- ` opens a sequence at its column (compact `- - x` nests them); `- k: v` opens a map inside the item.
      let j = i;
      if (!isSeq) open.push({ indent: i, seq: false });
      while (line[j] === '-' && (line[j + 1] === ' ' || line[j + 1] === undefined || line[j + 1] === '\r')) {
        open.push({ indent: j, seq: true });
        j += 2;
        while (line[j] === ' ') j++;
      }
      if (isSeq && /^[^#[{'"]*:(\s|$)/.test(line.slice(j))) open.push({ indent: j, seq: false });
      level = open.length;
      max = Math.max(max, level);
    }
    // `[` or `{` opens a collection at the start of a value, or anywhere inside a flow.
    let valueStart = true;
    for (; i < line.length; i++) {
      const c = line[i]!;
      if (quote) {
        if (c === '\\' && quote === '"') i++;
        else if (c === quote) {
          if (quote === "'" && line[i + 1] === "'") i++;
          else quote = '';
        }
        continue;
      }
      if (c === '#' && (i === 0 || line[i - 1] === ' ' || line[i - 1] === '\t')) break;
      if ((c === '"' || c === "'") && (valueStart || flow > 0)) quote = c;
      else if ((c === '[' || c === '{') && (valueStart || flow > 0)) {
        flow++;
        max = Math.max(max, level + flow);
      } else if ((c === ']' || c === '}') && flow > 0) flow--;
      if (max > stopAbove) return max;
      if (c === ' ' || c === '\t') continue;
      valueStart = c === ':' || c === '-' || c === ',' || c === '[' || c === '{' || c === '?';
    }
  }
  return max;
}

function parseYaml(text: string, what: string): unknown {
  if (yamlDepth(text) > MAX_YAML_DEPTH) throw new BodySyntaxError(`error converting YAML to JSON: yaml: exceeded max depth of ${MAX_YAML_DEPTH}`);
  let js: unknown;
  try {
    const docs = YAML.parseAllDocuments(text, {
      customTags: (tags) => [...tags.filter((t) => (t as { tag?: string }).tag !== binaryTag.tag), binaryTag as never],
    });
    if (docs.length > 1) throw badRequest(`${what} body must contain a single YAML document`);
    const doc = docs[0];
    if (!doc) return null;
    if (doc.errors.length) throw new Error(doc.errors[0]!.message);
    js = doc.toJS({ maxAliasCount: 100, mapAsMap: true });
  } catch (e) {
    if (e instanceof StatusError) throw e;
    const msg = e instanceof RangeError ? `exceeded max depth of ${MAX_DEPTH}` : (e as Error).message.split('\n')[0];
    throw new BodySyntaxError(`error converting YAML to JSON: yaml: ${msg}`);
  }
  return yamlToJson(js);
}

/**
 * The YAML value as the JSON sigs.k8s.io/yaml would make of it, without
 * recursion: maps with scalar keys become objects (keys as text), sets objects
 * of nulls, dates RFC 3339 text, bytes UTF-8 text; collection keys and
 * non-finite numbers are 400; nesting deeper than MAX_DEPTH is 400.
 */
function yamlToJson(root: unknown): unknown {
  const fail = (msg: string) => new BodySyntaxError(`error converting YAML to JSON: ${msg}`);
  const scalar = (v: unknown): unknown => {
    if (v instanceof Uint8Array) return new TextDecoder().decode(v);
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString().replace('.000Z', 'Z');
    if (typeof v === 'number' && !Number.isFinite(v)) throw fail(`json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`);
    if (typeof v === 'bigint') return Number(v);
    return v;
  };
  const isCollection = (v: unknown) => v instanceof Map || v instanceof Set || Array.isArray(v);
  const out = { v: undefined as unknown };
  // Each entry: the value to convert and where to put the result.
  const stack: { src: unknown; set: (x: unknown) => void; depth: number }[] = [{ src: root, set: (x) => (out.v = x), depth: 0 }];
  while (stack.length) {
    const { src, set, depth } = stack.pop()!;
    if (!isCollection(src)) {
      set(scalar(src));
      continue;
    }
    if (depth >= MAX_DEPTH) throw fail(`yaml: exceeded max depth of ${MAX_DEPTH}`);
    if (Array.isArray(src)) {
      const arr: unknown[] = new Array(src.length);
      set(arr);
      src.forEach((x, i) => stack.push({ src: x, set: (y) => (arr[i] = y), depth: depth + 1 }));
    } else if (src instanceof Set) {
      const obj: Record<string, unknown> = {};
      set(obj);
      for (const k of src) {
        if (isCollection(k)) throw fail('yaml: invalid map key: a collection');
        obj[String(scalar(k))] = null;
      }
    } else {
      const obj: Record<string, unknown> = {};
      set(obj);
      for (const [k, x] of src as Map<unknown, unknown>) {
        if (isCollection(k)) throw fail('yaml: invalid map key: a collection');
        const key = k === null ? 'null' : String(scalar(k));
        stack.push({ src: x, set: (y) => (obj[key] = y), depth: depth + 1 });
      }
    }
  }
  return out.v;
}

/** Throws the error `tooDeep` makes when a decoded value nests deeper than MAX_DEPTH (checked without recursion). */
function checkDepth(value: unknown, tooDeep: (max: number) => Error): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= MAX_DEPTH) throw tooDeep(MAX_DEPTH);
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, d + 1]);
  }
}

/** The summary upstream appends to an unrecognized body: its first 30 bytes, as text for JSON, in hex otherwise. */
export function summarizeBody(raw: Buffer | undefined): string {
  if (!raw || raw.length === 0) return '<empty>';
  if (raw[0] === 0x7b) return raw.length > 30 ? `${raw.subarray(0, 30).toString('utf8')} ...` : raw.toString('utf8');
  return raw.length > 30 ? `${raw.subarray(0, 30).toString('hex')} ...` : raw.toString('hex');
}

/**
 * Checks a decoded object against its kind: apiVersion/kind agreement, JSON types,
 * and unknown fields per `fieldValidation`. Returns warnings (for `Warn`).
 */
export function checkObjectBody(
  def: ResourceDef,
  body: unknown,
  validation: FieldValidation,
  bodyKind = def.kind,
  /** The literals of the body's numbers (JSON), for the messages of integers out of range. */
  numberText?: NumberText,
  /** Makes the error of a value of the wrong type (default: 400 `... cannot be handled as a Kind: <text>`). */
  typeError?: (text: string) => StatusError,
): { obj: KubeObject; warnings: string[] } {
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
  const issues = checkAgainstSchema(def.schema, body, numberText ? { numberText } : {});
  if (issues.typeErrors.length) {
    const text = typeErrorMessage(issues.typeErrors[0]!);
    throw typeError ? typeError(text) : badRequest(`${bodyKind} in version "${def.version}" cannot be handled as a ${bodyKind}: ${text}`);
  }
  // A custom resource's unknown fields are what pruning by its CRD's schema would drop.
  if (validation !== 'Ignore' && isCustom(def) && def.crd.schema)
    issues.unknown.push(...prune(structuredClone(body), def.crd.schema, { isResourceRoot: true }));
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

const SERVED = new Set(['*/*', 'application/*', JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE]);
const META_AS = new Set(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);

interface AcceptClause {
  type: string;
  params: Map<string, string>;
}

/** The media ranges of `Accept` that are not refused (`q=0`), highest `q` first, in their order otherwise (as goautoneg sorts them). */
export function acceptClauses(accept: string | undefined): AcceptClause[] {
  const out: (AcceptClause & { q: number; i: number })[] = [];
  for (const [i, part] of (accept ?? '').split(',').entries()) {
    const [type, ...rest] = part.split(';').map((x) => x.trim());
    if (!type) continue;
    const params = new Map(
      rest.map((p) => {
        const eq = p.indexOf('=');
        return (eq < 0 ? [p.toLowerCase(), ''] : [p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim()]) as [string, string];
      }),
    );
    const q = params.has('q') ? Number(params.get('q')) : 1;
    if (!(q > 0)) continue;
    out.push({ type: type.toLowerCase(), params, q, i });
  }
  return out.sort((a, b) => b.q - a.q || a.i - b.i);
}

/**
 * 406 unless one of the media ranges of `Accept` is one the apiserver serves:
 * JSON, YAML, protobuf (unless the resource has no protobuf encoding: `protobuf:
 * false`) or a wildcard, as itself or as a meta.k8s.io Table or partial-metadata
 * conversion of a version that exists.
 */
export function negotiate(accept: string | undefined, opts: { protobuf?: boolean } = {}): void {
  if (!accept?.trim()) return;
  for (const { type, params } of acceptClauses(accept)) {
    if (!SERVED.has(type)) continue;
    if (type === PROTOBUF_TYPE && opts.protobuf === false) continue;
    const as = params.get('as');
    if (as === undefined || as === '') return;
    if (META_AS.has(as) && params.get('g') === 'meta.k8s.io' && (params.get('v') === 'v1' || params.get('v') === 'v1beta1')) return;
  }
  throw notAcceptable([JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE]);
}

export type OutputFormat = 'json' | 'yaml' | 'protobuf';

/**
 * The encoding of an answer: the first media range of `Accept` the server can
 * write it in. Protobuf only for kinds that have it (Tables, discovery and
 * unknown kinds are JSON when the client takes JSON too); JSON by default.
 */
export function outputFormat(accept: string | undefined, protobuf: boolean): OutputFormat {
  for (const { type } of acceptClauses(accept)) {
    if (type === PROTOBUF_TYPE) {
      if (protobuf) return 'protobuf';
    } else if (type === YAML_TYPE) return 'yaml';
    else if (type === JSON_TYPE || type === '*/*' || type === 'application/*') return 'json';
  }
  return 'json';
}

/** Whether the client prefers YAML to JSON. */
export function wantsYaml(accept: string | undefined): boolean {
  return outputFormat(accept, false) === 'yaml';
}

/**
 * A body as JSON or YAML, written as Go writes it (wire.toGoJson: Go struct
 * order, zero values of fields without omitempty). The only place answers are
 * serialized to text: watch events use it too.
 */
export function encode(body: unknown, yaml: boolean): { payload: string; contentType: string } {
  // sigs.k8s.io/yaml converts the JSON through a map: YAML keys come out sorted.
  if (yaml) return { payload: YAML.stringify(wire.toGoJson(body), { aliasDuplicateObjects: false, sortMapEntries: true }), contentType: YAML_TYPE };
  return { payload: wire.goJsonText(body), contentType: JSON_TYPE };
}

/** A body in the encoding `Accept` asks for: protobuf (for kinds that have it), YAML or JSON. */
export function encodeFor(body: unknown, accept: string | undefined): { payload: string | Buffer; contentType: string } {
  const pb = acceptsProtobuf(accept) ? encodeProtobufBody(body) : undefined;
  const format = outputFormat(accept, pb !== undefined);
  if (format === 'protobuf' && pb) return { payload: pb, contentType: PROTOBUF_TYPE };
  return encode(body, format === 'yaml');
}

const acceptsProtobuf = (accept: string | undefined): boolean => accept?.toLowerCase().includes(PROTOBUF_TYPE) === true;
