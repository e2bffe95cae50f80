/**
 * Field errors as upstream's k8s.io/apimachinery/pkg/util/validation/field:
 * a type, a field path, the bad value and a detail, printed exactly as upstream
 * so that `Invalid` Status messages and causes match what kubectl users see.
 */

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Path builder: path('spec').child('containers').index(0).child('name') → spec.containers[0].name */
export class Path {
  constructor(private readonly s: string) {}
  child(name: string): Path {
    return new Path(this.s ? `${this.s}.${name}` : name);
  }
  index(i: number): Path {
    return new Path(`${this.s}[${i}]`);
  }
  key(k: string): Path {
    return new Path(`${this.s}[${k}]`);
  }
  toString(): string {
    return this.s;
  }
}
export const path = (root: string, ...more: string[]) => more.reduce((p, m) => p.child(m), new Path(root));

const str = (p: string | Path) => String(p);
const OMIT = Symbol('omit');

export const required = (p: string | Path, detail = ''): FieldError => ({ type: 'FieldValueRequired', field: str(p), badValue: '', detail });
export const invalid = (p: string | Path, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field: str(p), badValue: value, detail });
export const notSupported = (p: string | Path, value: unknown, valid: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field: str(p),
  badValue: value,
  detail: valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '',
});
export const duplicate = (p: string | Path, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: str(p), badValue: value, detail: '' });
export const forbidden = (p: string | Path, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: str(p), badValue: '', detail });
export const notFound = (p: string | Path, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: str(p), badValue: value, detail: '' });
export const tooLong = (p: string | Path, value: unknown, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: str(p),
  badValue: value === '' ? OMIT : value,
  detail: `may not be more than ${max} bytes`,
});
export const tooMany = (p: string | Path, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: str(p),
  badValue: actual,
  detail: `must have at most ${max} items`,
});
export const typeInvalid = (p: string | Path, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field: str(p), badValue: value, detail });
export const internal = (p: string | Path, detail: string): FieldError => ({ type: 'InternalError', field: str(p), badValue: '', detail });

/** Go's %#v-ish rendering upstream uses for bad values: strings quoted, numbers bare. */
function renderValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v);
}

/** The text after the field name: `Invalid value: -1: must be ...`. */
export function fieldErrorBody(e: FieldError): string {
  const parts: string[] = [TYPE_TEXT[e.type]];
  const omitValue =
    e.badValue === OMIT ||
    e.type === 'FieldValueRequired' ||
    e.type === 'FieldValueForbidden' ||
    e.type === 'InternalError' ||
    e.type === 'FieldValueTooMany' && false;
  if (!omitValue && e.badValue !== undefined) parts.push(renderValue(e.badValue));
  if (e.detail) parts.push(e.detail);
  return parts.join(': ');
}

/** Upstream `(*field.Error).Error()`: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`. */
export function fieldErrorMessage(e: FieldError): string {
  return e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e);
}

export const fieldErrorReason = (e: FieldError): string => e.type;

/** `ErrorList.ToAggregate().Error()`: one message, or `[a, b]`, de-duplicated. */
export function aggregateMessage(errs: FieldError[]): string {
  const msgs: string[] = [];
  for (const e of errs) {
    const m = fieldErrorMessage(e);
    if (!msgs.includes(m)) msgs.push(m);
  }
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}
