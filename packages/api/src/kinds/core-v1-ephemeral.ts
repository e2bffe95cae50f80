/**
 * Updates through a pod's `ephemeralcontainers` subresource, as kube-apiserver
 * 1.33 checks them (pkg/apis/core/validation ValidatePodEphemeralContainersUpdate,
 * pkg/registry/core/pod/strategy.go podEphemeralContainersStrategy): the whole
 * new spec is valid (ephemeral containers are checked there: unique names,
 * a target that names a container, no ports, probes, lifecycle or resources),
 * existing ephemeral containers are neither removed nor changed, and static
 * (mirror) pods take none.
 *
 * The specs are decoded and defaulted JSON objects, as in core-v1-validation.ts,
 * whose validatePodEphemeralContainersUpdate puts these parts together.
 */
import { field, jsonEqual, type FieldError } from '@kubeling/apimachinery';
import { type Obj, listOf, objOf, strOf } from './json-fields.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * A decoded value as Go would hold it, for comparing as apimachinery's
 * Semantic.DeepEqual does: zero values (false, '', 0, null) are dropped, and
 * empty lists and maps equal absent ones.
 */
function goValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(goValue) : undefined;
  const o = objOf(v);
  if (o) {
    const out: Obj = {};
    for (const [k, x] of Object.entries(o)) {
      const g = goValue(x);
      if (g !== undefined) out[k] = g;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === false || v === '' || v === 0 || v === null ? undefined : v;
}

const semanticEqual = (a: unknown, b: unknown): boolean => jsonEqual(goValue(a), goValue(b));

/**
 * What differs between two versions of an object (an ephemeral container, a
 * pod spec), one top-level field a line. Upstream's messages end with a go-cmp
 * diff of the Go structs; this says the same (which field, what it was, what
 * it became) in JSON.
 */
export function objectFieldDiff(before: Obj, after: Obj): string {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const lines: string[] = [];
  for (const k of keys) {
    if (semanticEqual(before[k], after[k])) continue;
    if (before[k] !== undefined) lines.push(`- ${k}: ${JSON.stringify(before[k])}`);
    if (after[k] !== undefined) lines.push(`+ ${k}: ${JSON.stringify(after[k])}`);
  }
  return lines.join('\n');
}

/** Whether a pod is a static pod's mirror (its annotations name the config source). */
export const isMirrorPod = (annotations: Record<string, string> | undefined): boolean => !!annotations && Object.hasOwn(annotations, MIRROR_POD_ANNOTATION);

/**
 * Part 2 of ValidatePodEphemeralContainersUpdate: what the update did to the
 * ephemeral containers the pod already had — none may be removed or changed.
 */
export function ephemeralContainersChanges(newSpec: unknown, oldSpec: unknown): FieldError[] {
  const path = 'spec.ephemeralContainers';
  const byName = new Map<string, Obj>();
  for (const c of listOf(objOf(newSpec)?.ephemeralContainers)) byName.set(strOf(c.name), c);
  const errs: FieldError[] = [];
  // Order is not kept by patches, so each old container is looked up by name.
  for (const old of listOf(objOf(oldSpec)?.ephemeralContainers)) {
    const name = strOf(old.name);
    const cur = byName.get(name);
    if (!cur) errs.push(field.forbidden(path, `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`));
    else if (!semanticEqual(old, cur))
      errs.push(field.forbidden(path, `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n${objectFieldDiff(old, cur)}`));
  }
  return errs;
}
