/**
 * The schema language of kubeling's API types.
 *
 * Every kind is described once, with these builders over TypeBox. From that one
 * description come the TypeScript type (`Static<typeof X>`), request decoding
 * (type checks and unknown-field detection, see `decode.ts`), strategic-merge
 * keys (`x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy`), and the
 * OpenAPI v3 documents that `kubectl explain` and field validation read.
 *
 * Conventions:
 * - `object(id, description, props, required)` names a reusable definition with
 *   the upstream OpenAPI name (`io.k8s.api.core.v1.Container`); OpenAPI output
 *   refers to it by `$ref`. Properties are optional unless listed in `required`
 *   (as in upstream OpenAPI, `required` only documents what validation enforces).
 * - Lists carry their patch metadata through `list(item, description, opts)`.
 * - `opaque(description)` is an object whose inside is not described: any fields
 *   are accepted and kept (used for rarely used volume sources and the like).
 */
import {
  Type,
  type TArray,
  type TObject,
  type TOptional,
  type TProperties,
  type TRecord,
  type TSchema,
  type TString,
  type TInteger,
  type TNumber,
  type TBoolean,
  type TUnion,
  type TUnsafe,
} from '@sinclair/typebox';

export interface ListOptions {
  /** Strategic-merge key of the list's elements (`x-kubernetes-patch-merge-key`). */
  mergeKey?: string;
  /** `x-kubernetes-patch-strategy`: `merge`, `retainKeys`, `merge,retainKeys`. Absent means replace. */
  strategy?: 'merge' | 'retainKeys' | 'merge,retainKeys';
  /** `x-kubernetes-list-type` used by server-side apply. */
  listType?: 'atomic' | 'map' | 'set';
  /** `x-kubernetes-list-map-keys` for `listType: map`. */
  mapKeys?: string[];
}

const desc = (description?: string, extra?: Record<string, unknown>) => ({ ...(description ? { description } : {}), ...(extra ?? {}) });

export const string = (description?: string, extra?: Record<string, unknown>): TString => Type.String(desc(description, extra));

/** A string restricted to known values (documented; checked by validation, not decoding). */
export const enumString = (values: readonly string[], description?: string): TString => Type.String(desc(description, { enum: [...values] }));

export const int32 = (description?: string): TInteger => Type.Integer(desc(description, { format: 'int32' }));
export const int64 = (description?: string): TInteger => Type.Integer(desc(description, { format: 'int64' }));
export const number = (description?: string): TNumber => Type.Number(desc(description, { format: 'double' }));
export const boolean = (description?: string): TBoolean => Type.Boolean(desc(description));
/** RFC 3339 time, as `metav1.Time` serialises. */
export const time = (description?: string): TString => Type.String(desc(description, { format: 'date-time' }));
/** base64 bytes, as Go `[]byte` serialises. */
export const bytes = (description?: string): TString => Type.String(desc(description, { format: 'byte' }));

/** `resource.Quantity`: a string like `100m` or `1Gi`; JSON numbers are accepted too. */
export const quantity = (description?: string): TUnion<[TString, TNumber]> =>
  Type.Union([Type.String(), Type.Number()], desc(description, { 'x-kubeling-quantity': true }));

/** `intstr.IntOrString`. */
export const intOrString = (description?: string): TUnion<[TInteger, TString]> =>
  Type.Union([Type.Integer(), Type.String()], desc(description, { 'x-kubernetes-int-or-string': true }));

/** `map[string]V`. */
export const map = <V extends TSchema>(value: V, description?: string): TRecord<TString, V> =>
  Type.Record(Type.String(), value, desc(description)) as TRecord<TString, V>;

export const list = <I extends TSchema>(item: I, description?: string, opts: ListOptions = {}): TArray<I> => {
  const extra: Record<string, unknown> = {};
  if (opts.mergeKey) extra['x-kubernetes-patch-merge-key'] = opts.mergeKey;
  if (opts.strategy) extra['x-kubernetes-patch-strategy'] = opts.strategy;
  if (opts.listType) extra['x-kubernetes-list-type'] = opts.listType;
  if (opts.mapKeys) extra['x-kubernetes-list-map-keys'] = opts.mapKeys;
  return Type.Array(item, desc(description, extra));
};

/** An object whose fields are not described; everything inside is accepted and kept. */
export const opaque = (description?: string): TUnsafe<Record<string, unknown>> =>
  Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    ...desc(description),
    'x-kubernetes-preserve-unknown-fields': true,
  });

type WithOptional<P extends TProperties, R extends keyof P> = {
  [K in keyof P]: K extends R ? P[K] : TOptional<P[K]>;
};

/**
 * A named object definition. `id` is the upstream OpenAPI definition name.
 * Fields not named in `required` are optional.
 */
export function object<P extends TProperties, R extends keyof P = never>(
  id: string,
  description: string,
  props: P,
  required: readonly R[] = [],
): TObject<WithOptional<P, R>> {
  const out: TProperties = {};
  const req = new Set<PropertyKey>(required);
  for (const [k, v] of Object.entries(props)) out[k] = req.has(k) ? v : Type.Optional(v);
  return Type.Object(out, { $id: id, description }) as TObject<WithOptional<P, R>>;
}

/** Gives a field its own description without changing the referenced definition. */
export const described = <S extends TSchema>(schema: S, description: string): S => ({ ...schema, 'x-kubeling-field-description': description }) as S;

export type { Static, TSchema, TObject } from '@sinclair/typebox';
