/**
 * Table columns of ValidatingAdmissionPolicies and their bindings, as kubernetes
 * pkg/printers/internalversion/printers.go prints them: NAME, VALIDATIONS,
 * PARAMKIND, AGE and NAME, POLICYNAME, PARAMREF, AGE.
 */
import type { LabelSelector, admissionregistrationv1 } from '@kubeling/api';
import { AGE, NAME, age, col, printer, type Printer } from '../../http/printers/columns.js';

/** The generated protobuf `String()` of a LabelSelector, which upstream prints for a selector paramRef. */
export function labelSelectorGoString(s: LabelSelector): string {
  const labels = Object.keys(s.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${s.matchLabels![k]},`)
    .join('');
  const exprs = (s.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

export const admissionPolicyPrinters: Record<string, Printer> = {
  'admissionregistration.k8s.io/validatingadmissionpolicies': printer<admissionregistrationv1.ValidatingAdmissionPolicy>(
    [
      NAME,
      col('Validations', 'Validations indicates the number of validation rules defined in this configuration', { type: 'integer' }),
      col('ParamKind', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      AGE,
    ],
    (p, now) => {
      const pk = p.spec?.paramKind;
      return [p.metadata?.name, p.spec?.validations?.length ?? 0, pk ? `${pk.apiVersion ?? ''}/${pk.kind ?? ''}` : '<unset>', age(p, now)];
    },
  ),
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': printer<admissionregistrationv1.ValidatingAdmissionPolicyBinding>(
    [
      NAME,
      col('PolicyName', 'PolicyName indicates the policy definition which the policy binding binded to'),
      col('ParamRef', 'ParamRef indicates the param resource which sets the configration param'),
      AGE,
    ],
    (b, now) => {
      const pr = b.spec?.paramRef;
      let param = '<unset>';
      // A name without a namespace may be a cluster-scoped param: upstream cannot tell from here and prints `*/`.
      if (pr?.name) param = pr.namespace ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
      else if (pr?.selector) param = labelSelectorGoString(pr.selector);
      return [b.metadata?.name, b.spec?.policyName ?? '', param, age(b, now)];
    },
  ),
};
