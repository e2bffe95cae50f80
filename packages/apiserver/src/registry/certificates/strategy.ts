/**
 * CertificateSigningRequests (kubernetes pkg/registry/certificates/
 * certificates/strategy.go). On create the requester's identity is recorded
 * in spec.username/uid/groups/extra, whatever the body said, and the status
 * is cleared: nobody creates an approved request. Updates of the main
 * resource change neither spec nor status. `/status` changes the status
 * (the certificate, conditions other than Approved/Denied, whose existing
 * instances are kept); `/approval` changes only the conditions. Condition
 * times are filled in when missing. `spec.signerName` is a selectable field.
 */
import type { certificatesv1, KubeObject } from '@kubeling/api';
import { rfc3339, validatePathSegmentName, type FieldError } from '@kubeling/apimachinery';
import { invalidObject } from '../rest.js';
import type { Strategy } from '../strategy.js';
import { updateOptions, validateCSR, validateCSRUpdateRules } from './validation.js';

type CSR = certificatesv1.CertificateSigningRequest;
type Condition = certificatesv1.CertificateSigningRequestCondition;

const csrOf = (o: KubeObject) => o as unknown as CSR;
const GK = { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' };

/** Keeps the old instances of a condition type when their number is unchanged (preserveConditionInstances). */
function preserveConditionInstances(csr: CSR, old: CSR, type: string): void {
  const conds = csr.status?.conditions ?? [];
  const oldConds = old.status?.conditions ?? [];
  const newIdx = conds.flatMap((c, i) => (c.type === type ? [i] : []));
  const oldIdx = oldConds.flatMap((c, i) => (c.type === type ? [i] : []));
  if (newIdx.length !== oldIdx.length) return;
  oldIdx.forEach((oi, k) => {
    conds[newIdx[k]!] = structuredClone(oldConds[oi]!);
  });
}

/** Fills lastUpdateTime (now) and lastTransitionTime (the old condition's of the same type and status, else now). */
export function populateConditionTimestamps(csr: CSR, old: CSR, now = rfc3339()): void {
  for (const c of csr.status?.conditions ?? []) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const prev = (old.status?.conditions ?? []).find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = prev?.lastTransitionTime ?? now;
    }
  }
}

function fail(csr: CSR, errs: FieldError[]): void {
  if (errs.length) throw invalidObject(GK, csr.metadata?.name ?? '', errs);
}

export const csrStrategy: Strategy = {
  // ValidateCertificateRequestName accepts any name; the REST layer still wants a path segment.
  nameValidation: validatePathSegmentName,
  statusSubresource: true,
  prepareForCreate(obj, user) {
    const csr = csrOf(obj);
    const spec = (csr.spec ??= {} as CSR['spec'] & object);
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    if (user) {
      spec.username = user.name;
      if (user.uid) spec.uid = user.uid;
      if (user.groups.length) spec.groups = [...user.groups];
      if (user.extra && Object.keys(user.extra).length) spec.extra = structuredClone(user.extra);
    }
    csr.status = {};
  },
  validate: (obj) => validateCSR(csrOf(obj)),
  prepareForUpdate(obj, old) {
    obj.spec = structuredClone(old.spec);
    if (old.status === undefined) delete obj.status;
    else obj.status = structuredClone(old.status);
  },
  validateUpdate: (obj, old) => validateCSRUpdateRules(csrOf(obj), csrOf(old), updateOptions(csrOf(obj), csrOf(old))),
  prepareForStatusUpdate(obj, old) {
    const csr = csrOf(obj);
    obj.spec = structuredClone(old.spec);
    preserveConditionInstances(csr, csrOf(old), 'Approved');
    preserveConditionInstances(csr, csrOf(old), 'Denied');
    populateConditionTimestamps(csr, csrOf(old));
  },
  validateStatusUpdate(obj, old) {
    const o = { ...updateOptions(csrOf(obj), csrOf(old)), allowSettingCertificate: true };
    return [...validateCSR(csrOf(obj), o), ...validateCSRUpdateRules(csrOf(obj), csrOf(old), o)];
  },
  subresourceUpdate: {
    // csrApprovalStrategy: only the conditions are taken from the body.
    approval(obj, old) {
      const body = csrOf(obj);
      populateConditionTimestamps(body, csrOf(old));
      // csrApprovalStrategy: the conditions and the object's metadata are taken, nothing else.
      const next = structuredClone(old);
      next.metadata = structuredClone(obj.metadata);
      const conditions: Condition[] = body.status?.conditions ?? [];
      const status = (next.status ?? {}) as NonNullable<CSR['status']>;
      next.status = { ...status, conditions } as KubeObject['status'];
      if (!conditions.length) delete (next.status as { conditions?: unknown }).conditions;
      const o = { ...updateOptions(csrOf(next), csrOf(old)), allowSettingApprovalConditions: true };
      fail(csrOf(next), [...validateCSR(csrOf(next), o), ...validateCSRUpdateRules(csrOf(next), csrOf(old), o)]);
      return next;
    },
  },
  fields: (obj) => ({ 'spec.signerName': csrOf(obj).spec?.signerName ?? '' }),
};
