/**
 * Reading decoded JSON objects as the core/v1 defaulting and validation
 * modules do. Go's "unset" is `undefined`, `null` and, for strings and
 * numbers, `''` and `0`, as a Go zero value is; a member of the wrong JSON
 * type reads as unset. Not part of the package's exports.
 */

export type Obj = Record<string, unknown>;
export type List = Obj[];

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const objOf = (v: unknown): Obj | undefined => (isObj(v) ? v : undefined);
export const listOf = (v: unknown): List => (Array.isArray(v) ? (v.filter(isObj) as List) : []);
export const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');
export const numOf = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
/** Whether a Go field would be unset: absent, null, '' or 0. */
export const unset = (v: unknown): boolean => v === undefined || v === null || v === '' || v === 0;
/** Sets `o[k]` to `v` when it is unset. */
export const defaultTo = (o: Obj, k: string, v: unknown): void => {
  if (unset(o[k])) o[k] = v;
};
