/**
 * RFC 7386 JSON merge patch, as evanphx/json-patch's MergePatch (kube-apiserver's)
 * applies it: objects merge recursively, null deletes, anything else replaces; a
 * value put in place whole loses the null members of its objects. Both walks use
 * an explicit stack, so deeply nested documents do not overflow it.
 */
import { cloneJson, hasOwn, isObject, jsonEqualDeep, setKey } from './values.js';

type Obj = Record<string, unknown>;

/** A copy without null object members, at any depth (pruneNulls; null list elements stay). */
const pruned = <T>(v: T): T => cloneJson(v, (_k, x) => x === null);

export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return pruned(patch);
  const out: Obj = isObject(doc) ? cloneJson(doc) : {};
  const stack: [Obj, Obj][] = [[out, patch]];
  while (stack.length) {
    const [target, p] = stack.pop()!;
    for (const k of Object.keys(p)) {
      const v = p[k];
      if (v === null) {
        delete target[k];
        continue;
      }
      const cur = hasOwn(target, k) ? target[k] : undefined;
      if (cur === undefined || cur === null || !isObject(cur)) setKey(target, k, pruned(v));
      else if (isObject(v)) stack.push([cur, v]);
      else setKey(target, k, cloneJson(v));
    }
  }
  return out;
}

/** The merge patch that turns `original` into `modified`. */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isObject(original) || !isObject(modified)) return cloneJson(modified);
  const out: Obj = {};
  const stack: [Obj, Obj, Obj][] = [[original, modified, out]];
  // Sub-patches of objects present on both sides, parents before children; empty ones go at the end.
  const subs: [Obj, string, Obj][] = [];
  while (stack.length) {
    const [o, m, target] = stack.pop()!;
    for (const k of Object.keys(o)) if (!hasOwn(m, k)) setKey(target, k, null);
    for (const k of Object.keys(m)) {
      const v = m[k];
      const ov = hasOwn(o, k) ? o[k] : undefined;
      if (ov === undefined) setKey(target, k, cloneJson(v));
      else if (isObject(v) && isObject(ov)) {
        const sub: Obj = {};
        setKey(target, k, sub);
        subs.push([target, k, sub]);
        stack.push([ov, v, sub]);
      } else if (!jsonEqualDeep(ov, v)) setKey(target, k, cloneJson(v));
    }
  }
  for (let i = subs.length - 1; i >= 0; i--) {
    const [target, k, sub] = subs[i]!;
    if (!Object.keys(sub).length) delete target[k];
  }
  return out;
}
