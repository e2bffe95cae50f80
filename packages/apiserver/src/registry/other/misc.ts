/** Strategies of the resources with little behaviour of their own. */
import { field, jsonEqual, validatePathSegmentName, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { defaultPodSpec, validatePodSpec } from '../core/pods.js';

export const plainStrategy: Strategy = {};

export const statusStrategy: Strategy = { statusSubresource: true };

export const priorityClassStrategy: Strategy = {
  defaults(obj) {
    obj.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  validate(obj) {
    const errs: FieldError[] = [];
    if (typeof obj.value !== 'number') errs.push(field.required('value', ''));
    else if (obj.value > 1_000_000_000 && !String(obj.metadata.name).startsWith('system-')) {
      errs.push(field.forbidden('value', 'maximum allowed value of a user defined priority is 1000000000'));
    }
    return errs;
  },
  validateUpdate(obj, old) {
    return obj.value === old.value ? [] : [field.forbidden('value', 'may not be changed in an update.')];
  },
};

/** RBAC objects: names are path segments (ValidateRBACName), so `system:node` is fine. */
export const roleStrategy: Strategy = { nameValidation: validatePathSegmentName };

export const roleBindingStrategy: Strategy = {
  nameValidation: validatePathSegmentName,
  validate(obj) {
    const ref = (obj.roleRef ?? {}) as { kind?: string; name?: string; apiGroup?: string };
    const errs: FieldError[] = [];
    if (!ref.name) errs.push(field.required('roleRef.name', ''));
    if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') errs.push(field.notSupported('roleRef.kind', ref.kind ?? '', ['Role', 'ClusterRole']));
    return errs;
  },
  validateUpdate(obj, old) {
    return jsonEqual(obj.roleRef, old.roleRef) ? [] : [field.invalid('roleRef', obj.roleRef, 'cannot change roleRef')];
  },
};

export const podTemplateStrategy: Strategy = {
  defaults(obj) {
    const t = (obj.template ?? {}) as { spec?: Record<string, unknown> };
    if (t.spec) defaultPodSpec(t.spec as never);
  },
  validate(obj) {
    const t = (obj.template ?? {}) as { spec?: Record<string, unknown> };
    return validatePodSpec(t.spec as never, 'template.spec');
  },
};

export const generationStatusStrategy: Strategy = { generation: true, statusSubresource: true };
