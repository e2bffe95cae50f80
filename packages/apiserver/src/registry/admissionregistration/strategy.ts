/**
 * Strategies of admissionregistration.k8s.io resources (kubernetes
 * pkg/registry/admissionregistration/validatingadmissionpolicy,
 * validatingadmissionpolicybinding, and the webhook configurations' match
 * conditions), with the defaults of pkg/apis/admissionregistration/v1
 * defaults.go: failurePolicy Fail; matchPolicy Equivalent, empty namespace and
 * object selectors and scope `*` in match resources.
 *
 * A policy's status is written only through /status (by the type-checking
 * controller); a spec change bumps metadata.generation. Not done here:
 * upstream's check that whoever sets a paramKind (or a binding's paramRef)
 * may `get` that kind, which needs the request's user in validation.
 */
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import type { FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { validateBinding, validateMatchConditions, validatePolicy, validatePolicyStatus } from './validation.js';

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;
type Binding = admissionregistrationv1.ValidatingAdmissionPolicyBinding;
type MatchResources = admissionregistrationv1.MatchResources;

const asPolicy = (o: KubeObject) => o as unknown as Policy;
const asBinding = (o: KubeObject) => o as unknown as Binding;

/** SetDefaults_MatchResources, and SetDefaults_Rule for its rules. */
export function defaultMatchResources(mr: MatchResources): void {
  mr.matchPolicy ??= 'Equivalent';
  mr.namespaceSelector ??= {};
  mr.objectSelector ??= {};
  for (const r of [...(mr.resourceRules ?? []), ...(mr.excludeResourceRules ?? [])]) r.scope ??= '*';
}

export const validatingAdmissionPolicyStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults(obj) {
    const spec = asPolicy(obj).spec;
    if (!spec || typeof spec !== 'object') return;
    spec.failurePolicy ??= 'Fail';
    if (spec.matchConstraints) defaultMatchResources(spec.matchConstraints);
  },
  prepareForCreate(obj) {
    // PrepareForCreate: the status is the controller's.
    asPolicy(obj).status = {};
  },
  validate: (obj): FieldError[] => validatePolicy(asPolicy(obj)),
  validateStatusUpdate: (obj): FieldError[] => validatePolicyStatus(asPolicy(obj)),
};

export const validatingAdmissionPolicyBindingStrategy: Strategy = {
  generation: true,
  defaults(obj) {
    const spec = asBinding(obj).spec;
    if (spec?.matchResources) defaultMatchResources(spec.matchResources);
  },
  validate: (obj): FieldError[] => validateBinding(asBinding(obj)),
};

/** Webhook configurations: their webhooks' matchConditions are compiled as upstream's validateMatchConditions does. */
export const webhookConfigurationStrategy: Strategy = {
  validate(obj): FieldError[] {
    const hooks = (obj as { webhooks?: { matchConditions?: admissionregistrationv1.MatchCondition[] }[] }).webhooks ?? [];
    return hooks.flatMap((w, i) => validateMatchConditions(w.matchConditions, false, `webhooks[${i}].matchConditions`));
  },
};
