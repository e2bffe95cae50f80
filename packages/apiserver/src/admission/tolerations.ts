/**
 * Toleration helpers of the pod admission plugins (kubernetes
 * pkg/util/tolerations, pkg/apis/core/helper AddOrUpdateTolerationInPod,
 * pkg/apis/core/validation ValidateTolerations): whitelists, merges, and the
 * checks of tolerations given in a plugin configuration.
 */
import { field, isQualifiedName, isValidLabelValue, type FieldError } from '@kubeling/apimachinery';
import { isSuperset, mergeTolerations } from './runtimeclass.js';

export { mergeTolerations };

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

/** VerifyAgainstWhitelist: every toleration is covered by one of the whitelist's (anything passes an empty whitelist). */
export function verifyAgainstWhitelist(tolerations: readonly Toleration[], whitelist: readonly Toleration[]): boolean {
  if (!whitelist.length || !tolerations.length) return true;
  return tolerations.every((t) => whitelist.some((w) => isSuperset(w, t)));
}

const same = (a: Toleration, b: Toleration, k: keyof Toleration) => (a[k] ?? '') === (b[k] ?? '');

/**
 * AddOrUpdateTolerationInPod: replaces the toleration matching `t` on key,
 * effect, operator and value (when it differs, e.g. in tolerationSeconds), else
 * appends it. Returns the list, or undefined when `t` is already there as it is.
 */
export function addOrUpdateToleration(list: readonly Toleration[], t: Toleration): Toleration[] | undefined {
  let updated = false;
  const out: Toleration[] = [];
  for (const have of list) {
    if (same(have, t, 'key') && same(have, t, 'effect') && same(have, t, 'operator') && same(have, t, 'value')) {
      if ((have.tolerationSeconds ?? null) === (t.tolerationSeconds ?? null)) return undefined;
      out.push(t);
      updated = true;
    } else out.push(have);
  }
  if (!updated) out.push(t);
  return out;
}

const OPERATORS = ['Equal', 'Exists'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** ValidateTolerations, for tolerations read from a configuration or an annotation. */
export function validateTolerations(list: unknown, path: string): FieldError[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return [field.typeInvalid(path, list, 'must be a list of tolerations')];
  const errs: FieldError[] = [];
  list.forEach((raw: unknown, i) => {
    const p = `${path}[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      errs.push(field.typeInvalid(p, raw, 'must be a toleration'));
      return;
    }
    const t = raw as Record<string, unknown>;
    for (const k of ['key', 'operator', 'value', 'effect'])
      if (t[k] !== undefined && typeof t[k] !== 'string') errs.push(field.typeInvalid(`${p}.${k}`, t[k], 'must be a string'));
    const key = typeof t.key === 'string' ? t.key : '';
    const op = typeof t.operator === 'string' ? t.operator : '';
    const value = typeof t.value === 'string' ? t.value : '';
    const effect = typeof t.effect === 'string' ? t.effect : '';
    if (key) for (const m of isQualifiedName(key)) errs.push(field.invalid(`${p}.key`, key, m));
    if (!key && op !== 'Exists')
      errs.push(field.invalid(`${p}.operator`, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) {
      if (typeof t.tolerationSeconds !== 'number' || !Number.isInteger(t.tolerationSeconds))
        errs.push(field.typeInvalid(`${p}.tolerationSeconds`, t.tolerationSeconds, 'must be an integer'));
      if (effect !== 'NoExecute') errs.push(field.invalid(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op === 'Equal' || op === '') for (const m of isValidLabelValue(value)) errs.push(field.invalid(`${p}.operator`, value, m));
    else if (op === 'Exists') {
      if (value) errs.push(field.invalid(`${p}.operator`, t, "value must be empty when `operator` is 'Exists'"));
    } else errs.push(field.notSupported(`${p}.operator`, op, OPERATORS));
    if (effect && !EFFECTS.includes(effect)) errs.push(field.notSupported(`${p}.effect`, effect, EFFECTS));
  });
  return errs;
}
