/**
 * Query parameters decoded and validated as kube-apiserver does it: numbers as
 * Go's strconv parses them (400 with its error text), booleans as upstream's
 * conversion reads them, and the ListOptions/CreateOptions rules of
 * apimachinery's internalversion validation (422 `ListOptions.meta.k8s.io ""
 * is invalid: ...`).
 */
import { aggregateMessage, badRequest, failure, field, type FieldError } from '@kubeling/apimachinery';
import type { ListOptions } from '../registry/store.js';
import { q1, queryBool, type Query } from './request-info.js';

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
