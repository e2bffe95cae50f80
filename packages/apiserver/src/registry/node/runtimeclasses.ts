/**
 * RuntimeClasses (kubernetes pkg/registry/node/runtimeclass, validation from
 * pkg/apis/node/validation): the handler is a DNS label and immutable; the
 * overhead is validated as container limits are; the scheduling node
 * selector as labels, its tolerations as a pod's, without duplicates.
 */
import { validateResourceRequirements, type nodev1 } from '@kubeling/api';
import { field, isValidLabelValue, nameIsDNSLabel, validateImmutableField, validateLabelName, validateLabels, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type Toleration = { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number | null };

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** `%#v` of a core.Toleration, as a Duplicate error prints it. */
const goToleration = (t: Toleration) =>
  new field.GoValue(
    `core.Toleration{Key:${field.goQuote(t.key ?? '')}, Operator:${field.goQuote(t.operator ?? '')}, Value:${field.goQuote(t.value ?? '')}, Effect:${field.goQuote(t.effect ?? '')}, TolerationSeconds:${
      t.tolerationSeconds === undefined || t.tolerationSeconds === null ? '(*int64)(nil)' : `(*int64)(${t.tolerationSeconds})`
    }}`,
  );

/** corevalidation.ValidateTolerations. */
export function validateTolerations(tolerations: readonly Toleration[], p: string): FieldError[] {
  const errs: FieldError[] = [];
  tolerations.forEach((t, i) => {
    const ip = `${p}[${i}]`;
    if (t.key) errs.push(...validateLabelName(t.key, `${ip}.key`));
    if (!t.key && t.operator !== 'Exists')
      errs.push(field.invalid(`${ip}.operator`, t.operator ?? '', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute')
      errs.push(field.invalid(`${ip}.effect`, t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    switch (t.operator ?? '') {
      case 'Equal':
      case '': {
        const bad = isValidLabelValue(t.value ?? '');
        if (bad.length) errs.push(field.invalid(`${ip}.operator`, t.value ?? '', bad.join(';')));
        break;
      }
      case 'Exists':
        if (t.value) errs.push(field.invalid(`${ip}.operator`, goToleration(t), "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(field.notSupported(`${ip}.operator`, t.operator, ['Equal', 'Exists']));
    }
    if (t.effect && !TAINT_EFFECTS.includes(t.effect)) errs.push(field.notSupported(`${ip}.effect`, t.effect, TAINT_EFFECTS));
  });
  return errs;
}

export const runtimeClassStrategy: Strategy = {
  validate(obj) {
    const rc = obj as unknown as nodev1.RuntimeClass;
    const errs: FieldError[] = [];
    for (const m of nameIsDNSLabel(rc.handler ?? '', false)) errs.push(field.invalid('handler', rc.handler ?? '', m));
    if (rc.overhead) errs.push(...validateResourceRequirements({ limits: rc.overhead.podFixed ?? {} }, 'overhead'));
    if (rc.scheduling) {
      if (rc.scheduling.nodeSelector) errs.push(...validateLabels(rc.scheduling.nodeSelector, 'scheduling.nodeSelector'));
      const tolerations = (rc.scheduling.tolerations ?? []) as Toleration[];
      errs.push(...validateTolerations(tolerations, 'scheduling.tolerations'));
      const seen = new Set<string>();
      tolerations.forEach((t, i) => {
        const k = JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
        if (seen.has(k)) errs.push(field.duplicate(`scheduling.tolerations[${i}]`, goToleration(t)));
        seen.add(k);
      });
    }
    return errs;
  },
  validateUpdate: (obj, old) => validateImmutableField(obj.handler, old.handler, 'handler'),
};
