/**
 * Query parameters decoded and validated as kube-apiserver does it: numbers as
 * Go's strconv parses them (400 with its error text), booleans as upstream's
 * conversion reads them, and the ListOptions/CreateOptions rules of
 * apimachinery's internalversion validation (422 `ListOptions.meta.k8s.io ""
 * is invalid: ...`).
 */
import { aggregateMessage, badRequest, failure, field, goJSONKind, isPlainObject, type FieldError } from '@kubeling/apimachinery';
import type { DeleteOptions } from '../registry/delete.js';
import type { ListOptions } from '../registry/reader.js';
import type { WriteContext } from '../registry/store.js';
import { managerFromUserAgent } from '../fieldmanager/index.js';
import { q1, queryBool, type Query } from './request-info.js';
import { parseBody } from './codec.js';
import type { HandlerContext } from './context.js';
import type { IncludeObject } from './table.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(v, 10, 64): the value, or the error text Go gives. */
export function parseInt64(v: string): { value: number } | { error: string } {
  const q = field.goQuote(v);
  if (!/^[+-]?\d+$/.test(v)) return { error: `strconv.ParseInt: parsing ${q}: invalid syntax` };
  const n = BigInt(v);
  if (n < INT64_MIN || n > INT64_MAX) return { error: `strconv.ParseInt: parsing ${q}: value out of range` };
  return { value: Number(n) };
}

/** An int64 query parameter: undefined when absent or empty, 400 when Go would not parse it. */
export function int64Param(q: Query, k: string): number | undefined {
  const v = q1(q, k);
  if (v === undefined || v === '') return undefined;
  const r = parseInt64(v);
  if ('error' in r) throw badRequest(r.error);
  return r.value;
}

/** 422 for options of a request that break validation (`<Kind>.meta.k8s.io "" is invalid: ...`). */
export function invalidOptions(kind: string, errs: FieldError[]) {
  return failure('Invalid', `${kind}.meta.k8s.io "" is invalid: ${aggregateMessage(errs)}`, {
    group: 'meta.k8s.io',
    kind,
    causes: errs.map((e) => ({ reason: e.type, message: field.fieldErrorBody(e), field: e.field })),
  });
}

export interface ListQuery extends ListOptions {
  watch: boolean;
  sendInitialEvents: boolean | undefined;
  allowWatchBookmarks: boolean;
  timeoutSeconds: number | undefined;
}

/** The options of a list or watch, checked as upstream's ValidateListOptions. */
export function listQuery(q: Query, watch: boolean): ListQuery {
  const opts: ListQuery = {
    labelSelector: q1(q, 'labelSelector'),
    fieldSelector: q1(q, 'fieldSelector'),
    limit: int64Param(q, 'limit'),
    continue: q1(q, 'continue'),
    resourceVersion: q1(q, 'resourceVersion'),
    resourceVersionMatch: q1(q, 'resourceVersionMatch'),
    watch,
    sendInitialEvents: queryBool(q.sendInitialEvents),
    allowWatchBookmarks: queryBool(q.allowWatchBookmarks) === true,
    timeoutSeconds: int64Param(q, 'timeoutSeconds'),
  };
  const errs = watch ? validateWatchOptions(opts) : validateListOptions(opts);
  if (errs.length) throw invalidOptions('ListOptions', errs);
  return opts;
}

const RVM = 'resourceVersionMatch';

function validateListOptions(o: ListQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (match) {
    if (!o.resourceVersion) errs.push(field.forbidden(RVM, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continue) errs.push(field.forbidden(RVM, 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(field.notSupported(RVM, match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && o.resourceVersion === '0') errs.push(field.forbidden(RVM, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (o.sendInitialEvents !== undefined) errs.push(field.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

function validateWatchOptions(o: ListQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(field.forbidden(RVM, 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match) {
    if (o.sendInitialEvents === undefined) errs.push(field.forbidden(RVM, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push(field.notSupported(RVM, match, ['NotOlderThan']));
    if (o.continue) errs.push(field.forbidden(RVM, 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errs;
}

const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' };

/** dryRun values as ValidateDryRun checks them. */
function dryRunErrors(values: unknown[]): FieldError[] {
  return values.some((v) => v !== 'All') ? [field.notSupported('dryRun', values, ['All'])] : [];
}

/** The write's options (dryRun, fieldManager), checked as upstream's Validate{Create,Update,Patch}Options. */
export function writeContext(c: HandlerContext): WriteContext {
  const q = c.req.query as Query;
  const dry = q.dryRun;
  const values = Array.isArray(dry) ? dry : dry !== undefined ? [dry] : [];
  const fm = q1(q, 'fieldManager');
  const errs = dryRunErrors(values);
  if (fm !== undefined) {
    if (fm.length > 128) errs.push(field.tooLong('fieldManager', fm, 128));
    let i = 0;
    for (const ch of fm) {
      const cp = ch.codePointAt(0)!;
      if (/[\p{C}\p{Z}]/u.test(ch) && ch !== ' ')
        errs.push(field.invalid('fieldManager', fm, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})`));
      i += Buffer.byteLength(ch);
    }
  }
  if (errs.length) throw invalidOptions(OPTIONS_KIND[c.req.method] ?? 'CreateOptions', errs);
  const user = c.req.user;
  return {
    dryRun: values.length > 0,
    warnings: [],
    fieldManager: fm || managerFromUserAgent(c.req.headers['user-agent']),
    ...(user ? { user: { name: user.name, groups: user.groups, ...(user.uid ? { uid: user.uid } : {}), ...(user.extra ? { extra: user.extra } : {}) } } : {}),
  };
}

export function includeObject(q: Query): IncludeObject {
  const v = q1(q, 'includeObject');
  if (v === undefined || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

/** Kinds meta/v1 registers beside DeleteOptions: a body of one of them does not convert. */
const META_KINDS = new Set([
  'Status',
  'APIVersions',
  'APIGroupList',
  'APIGroup',
  'APIResourceList',
  'ListOptions',
  'GetOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'WatchEvent',
  'Table',
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
]);
const DELETE_FIELDS: Record<string, string> = {
  gracePeriodSeconds: 'int64',
  propagationPolicy: 'string',
  orphanDependents: 'bool',
  dryRun: '[]string',
  preconditions: 'v1.Preconditions',
  ignoreStoreReadErrorWithClusterBreakingPotential: 'bool',
};

/**
 * The DeleteOptions of a DELETE: from the body when there is one (JSON or YAML
 * of kind DeleteOptions), else from the query; 400 for a body that is no
 * DeleteOptions, 422 for options that break ValidateDeleteOptions.
 */
export function deleteOptions(c: HandlerContext): DeleteOptions {
  const q = c.req.query as Query;
  let body: Record<string, unknown> | undefined;
  const raw = c.req.body as Buffer | undefined;
  if (raw?.length) {
    const parsed = parseBody(raw, c.req.headers['content-type'] ?? 'application/json');
    if (parsed !== null) {
      if (!isPlainObject(parsed)) {
        throw badRequest(
          `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJSONKind(parsed)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
        );
      }
      const kind = parsed.kind;
      if (kind !== undefined && kind !== '' && kind !== 'DeleteOptions') {
        const version = typeof parsed.apiVersion === 'string' && parsed.apiVersion ? parsed.apiVersion.split('/').pop() : 'v1';
        if (META_KINDS.has(String(kind))) throw badRequest(`converting (v1.${String(kind)}) to (v1.DeleteOptions): unknown conversion`);
        throw badRequest(
          `no kind ${field.goQuote(String(kind))} is registered for version ${field.goQuote(version ?? 'v1')} in scheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"`,
        );
      }
      for (const [k, type] of Object.entries(DELETE_FIELDS)) {
        const v = parsed[k];
        if (v === undefined || v === null) continue;
        const ok =
          type === 'int64'
            ? typeof v === 'number' && Number.isSafeInteger(v)
            : type === 'string'
              ? typeof v === 'string'
              : type === 'bool'
                ? typeof v === 'boolean'
                : type === '[]string'
                  ? Array.isArray(v) && v.every((x) => typeof x === 'string')
                  : isPlainObject(v) &&
                    ['uid', 'resourceVersion'].every(
                      (f) =>
                        (v as Record<string, unknown>)[f] === undefined ||
                        (v as Record<string, unknown>)[f] === null ||
                        typeof (v as Record<string, unknown>)[f] === 'string',
                    );
        if (!ok) {
          const got =
            type === 'int64' && typeof v === 'number'
              ? `number ${v}`
              : type === '[]string' && Array.isArray(v)
                ? goJSONKind(v.find((x) => typeof x !== 'string'))
                : goJSONKind(v);
          throw badRequest(`json: cannot unmarshal ${got} into Go struct field DeleteOptions.${k} of type ${type}`);
        }
      }
      body = parsed;
    }
  }
  const src = body ?? {
    gracePeriodSeconds: int64Param(q, 'gracePeriodSeconds'),
    propagationPolicy: q1(q, 'propagationPolicy'),
    orphanDependents: queryBool(q.orphanDependents),
    dryRun: q.dryRun === undefined ? undefined : Array.isArray(q.dryRun) ? q.dryRun : [q.dryRun],
  };
  const out: DeleteOptions = {};
  const errs: FieldError[] = [];
  if (typeof src.gracePeriodSeconds === 'number') out.gracePeriodSeconds = src.gracePeriodSeconds;
  const policy = src.propagationPolicy;
  const orphan = src.orphanDependents;
  if (typeof orphan === 'boolean' && typeof policy === 'string')
    errs.push(field.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  if (typeof policy === 'string') {
    if (!['Orphan', 'Background', 'Foreground'].includes(policy))
      errs.push(field.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
    out.propagationPolicy = policy;
  }
  if (typeof orphan === 'boolean') out.orphanDependents = orphan;
  if (isPlainObject(src.preconditions)) out.preconditions = src.preconditions as DeleteOptions['preconditions'];
  if (Array.isArray(src.dryRun)) {
    errs.push(...dryRunErrors(src.dryRun));
    out.dryRun = src.dryRun as string[];
  }
  if (errs.length) throw invalidOptions('DeleteOptions', errs);
  return out;
}
