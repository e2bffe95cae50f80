/**
 * APIServices (kube-aggregator pkg/registry/apiservice, validation from
 * pkg/apis/apiregistration/validation): the name is `<version>.<group>`; a
 * local APIService (no service) carries neither a CA bundle nor
 * insecureSkipTLSVerify; priorities are bounded; the service port defaults
 * to 443. Status conditions are True, False or Unknown.
 */
import type { apiregistrationv1, KubeObject } from '@kubeling/api';

type APIService = apiregistrationv1.APIService;
import { field, isDNS1035Label, isDNS1123Subdomain, isValidPortNum, validatePathSegmentName, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../registry/strategy.js';

const asAPIService = (o: KubeObject) => o as unknown as APIService;

/** ValidateAPIService. */
export function validateAPIService(obj: KubeObject): FieldError[] {
  const a = asAPIService(obj);
  const spec = a.spec ?? { groupPriorityMinimum: 0, versionPriority: 0 };
  const errs: FieldError[] = [];
  const group = spec.group ?? '';
  const version = spec.version ?? '';
  const required = `${version}.${group}`;
  const name = a.metadata?.name ?? '';
  if (name && !validatePathSegmentName(name, false).length && name !== required)
    errs.push(field.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${field.goQuote(required)}`));
  if (!group && version !== 'v1') errs.push(field.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push(field.invalid('spec.group', group, m));
  for (const m of isDNS1035Label(version)) errs.push(field.invalid('spec.version', version, m));
  const gp = spec.groupPriorityMinimum ?? 0;
  if (gp <= 0 || gp > 20000) errs.push(field.invalid('spec.groupPriorityMinimum', gp, 'must be positive and less than 20000'));
  const vp = spec.versionPriority ?? 0;
  if (vp <= 0 || vp > 1000) errs.push(field.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const caBytes = spec.caBundle ? Buffer.from(spec.caBundle, 'base64').length : 0;
  if (!spec.service) {
    if (caBytes) errs.push(field.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify) errs.push(field.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  if (!spec.service.namespace) errs.push(field.required('spec.service.namespace', ''));
  if (!spec.service.name) errs.push(field.required('spec.service.name', ''));
  const port = spec.service.port ?? 443;
  const bad = isValidPortNum(port);
  if (bad.length) errs.push(field.invalid('spec.service.port', port, `port is not valid: ${bad.join(', ')}`));
  if (spec.insecureSkipTLSVerify && caBytes) errs.push(field.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
}

const CONDITION_STATUSES = ['True', 'False', 'Unknown'];

function validateStatus(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  (asAPIService(obj).status?.conditions ?? []).forEach((c, i) => {
    if (!CONDITION_STATUSES.includes(c.status)) errs.push(field.notSupported(`status.conditions[${i}].status`, c.status, CONDITION_STATUSES));
  });
  return errs;
}

export const apiServiceStrategy: Strategy = {
  nameValidation: validatePathSegmentName,
  statusSubresource: true,
  defaults(obj) {
    const svc = asAPIService(obj).spec?.service;
    if (svc && svc.port === undefined) svc.port = 443;
  },
  prepareForCreate(obj) {
    delete obj.status;
  },
  validate: validateAPIService,
  validateUpdate: (obj) => validateAPIService(obj),
  validateStatusUpdate: validateStatus,
};
