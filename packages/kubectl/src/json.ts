/**
 * Reading JSON whose shape is not known in advance: objects of any kind from
 * the server or from manifests, discovery and OpenAPI documents, and the
 * parts of them kubectl prints.
 *
 * The readers narrow instead of trusting a shape, in the manner of upstream's
 * unstructured helpers (k8s.io/apimachinery/pkg/apis/meta/v1/unstructured,
 * `NestedFieldNoCopy`, `NestedString`, `NestedSlice`): a member that is
 * absent, or of another JSON type than the one asked for, reads as absent.
 * Nothing here copies or changes what it reads.
 */

/** A JSON object, its members not yet looked at. */
export type JsonObject = { [k: string]: unknown };

/** Whether `v` is a JSON object (not null, not a list). */
export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` when it is an object. */
export const asObject = (v: unknown): JsonObject | undefined => (isObject(v) ? v : undefined);

/** `v` when it is a list, else an empty one. */
export const asList = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);

/** The objects of `v` when it is a list (other items left out), else none. */
export const asObjects = (v: unknown): JsonObject[] => asList(v).filter(isObject);

/** `v` when it is a string. */
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The strings of `v` when it is a list (other items left out), else none. */
export const asStrings = (v: unknown): string[] => asList(v).filter((x): x is string => typeof x === 'string');

/** `v` when it is a number. */
export const asNumber = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** A string map (labels, annotations, a selector's matchLabels): the string members of `v` when it is an object. */
export function asStringMap(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/**
 * The value at `path` below `v`, as `v?.a?.b` reads it: undefined when a step
 * is missing or is not an object.
 */
export function nested(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const k of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}
