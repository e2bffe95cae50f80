/**
 * CertificateSigningRequest validation, as upstream's
 * pkg/apis/certificates/validation: the request must be a PEM CERTIFICATE
 * REQUEST whose signature verifies, usages known and unique, signerName a
 * qualified `domain/path`, expirationSeconds at least 600, conditions well
 * formed (Approved/Denied/Failed only True, Approved and Denied exclusive, no
 * duplicate types), status.certificate only PEM CERTIFICATE blocks. Updates
 * may not remove Approved/Denied/Failed; only /approval may add or change
 * Approved/Denied, only /status may set the certificate, and never change it
 * once set. Problems already present in the stored object are tolerated
 * (getValidationOptions).
 */
import type { certificatesv1 } from '@kubeling/api';
import { field, isDNS1123Label, isDNS1123Subdomain, jsonEqual, type FieldError } from '@kubeling/apimachinery';
import { checkCertificatePEM, verifyCSR } from '@kubeling/pki';

type CSR = certificatesv1.CertificateSigningRequest;
type Condition = certificatesv1.CertificateSigningRequestCondition;

export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

export const VALID_USAGES = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
];
const SORTED_USAGES = [...VALID_USAGES].sort();
const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);

export interface CSRValidationOptions {
  allowSettingApprovalConditions?: boolean;
  allowSettingCertificate?: boolean;
  allowBothApprovedAndDenied?: boolean;
  allowLegacySignerName?: boolean;
  allowDuplicateConditionTypes?: boolean;
  allowEmptyConditionType?: boolean;
  allowArbitraryCertificate?: boolean;
  allowUnknownUsages?: boolean;
  allowDuplicateUsages?: boolean;
}

/** base64 `[]byte` fields as the PEM text they hold. */
export const pemOf = (b64: string | undefined): string => (b64 ? Buffer.from(b64, 'base64').toString('latin1') : '');

/** `%#v` of a Go `[]byte`, as ErrorBody prints spec.request. */
const goBytes = (b64: string | undefined) =>
  new field.GoValue(b64 ? `[]byte{${[...Buffer.from(b64, 'base64')].map((b) => `0x${b.toString(16)}`).join(', ')}}` : '[]byte(nil)');

/** apivalidation.ValidateSignerName: `<domain>/<path>`, the domain a DNS subdomain of 2+ labels. */
export function validateSignerName(p: string, signerName: string | undefined): FieldError[] {
  if (!signerName) return [field.required(p, 'signerName must be provided')];
  const errs: FieldError[] = [];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [field.invalid(p, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments as [string, string];
  if (domain.length > 253) errs.push(field.tooLong(p, domain, 253));
  const labels = domain.split('.');
  for (const l of labels) {
    const bad = isDNS1123Label(l);
    if (bad.length) {
      for (const m of bad) errs.push(field.invalid(p, domain, `validating label "${l}": ${m}`));
      break;
    }
  }
  if (labels.length < 2) errs.push(field.invalid(p, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of path.split('.')) {
    const bad = isDNS1123Subdomain(l);
    if (bad.length) {
      for (const m of bad) errs.push(field.invalid(p, path, `validating label "${l}": ${m}`));
      break;
    }
  }
  const max = 253 + 253 + 63 + 1 + 1;
  if (signerName.length > max) errs.push(field.tooLong(p, signerName, max));
  return errs;
}

const conditionsOf = (csr: CSR): Condition[] => csr.status?.conditions ?? [];

function validateConditions(csr: CSR, o: CSRValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const p = `status.conditions[${i}]`;
    if (!o.allowEmptyConditionType && !c.type) errs.push(field.required(`${p}.type`, ''));
    const allowed = TRUE_ONLY.has(c.type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(field.required(`${p}.status`, ''));
    else if (!allowed.includes(c.status)) errs.push(field.notSupported(`${p}.status`, c.status, allowed));
    if (!o.allowBothApprovedAndDenied) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied) errs.push(field.invalid(`${p}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved) errs.push(field.invalid(`${p}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!o.allowDuplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(field.duplicate(`${p}.type`, c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

/** validateCertificateSigningRequest: everything but the object metadata. */
export function validateCSR(csr: CSR, o: CSRValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const spec = csr.spec ?? ({} as CSR['spec'] & object);
  try {
    verifyCSR(pemOf(spec.request));
  } catch (e) {
    errs.push(field.invalid('spec.request', goBytes(spec.request), (e as Error).message));
  }
  const usages = spec.usages ?? [];
  if (usages.length === 0) errs.push(field.required('spec.usages', ''));
  if (!o.allowUnknownUsages) usages.forEach((u, i) => VALID_USAGES.includes(u) || errs.push(field.notSupported(`spec.usages[${i}]`, u, SORTED_USAGES)));
  if (!o.allowDuplicateUsages) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(field.duplicate(`spec.usages[${i}]`, u));
      seen.add(u);
    });
  }
  if (!o.allowLegacySignerName && spec.signerName === LEGACY_UNKNOWN_SIGNER)
    errs.push(field.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  else errs.push(...validateSignerName('spec.signerName', spec.signerName));
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null && spec.expirationSeconds < 600)
    errs.push(field.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  errs.push(...validateConditions(csr, o));
  if (!o.allowArbitraryCertificate) {
    try {
      checkCertificatePEM(pemOf(csr.status?.certificate));
    } catch (e) {
      errs.push(field.invalid('status.certificate', '<certificate data>', (e as Error).message));
    }
  }
  return errs;
}

const hasDuplicateTypes = (csr: CSR) => new Set(conditionsOf(csr).map((c) => c.type)).size !== conditionsOf(csr).length;

/** getValidationOptions(new, old): what the stored object already breaks is tolerated. */
export function updateOptions(csr: CSR, old: CSR): CSRValidationOptions {
  const types = conditionsOf(old).map((c) => c.type);
  let certBad = false;
  try {
    checkCertificatePEM(pemOf(old.status?.certificate));
  } catch {
    certBad = true;
  }
  return {
    allowBothApprovedAndDenied: types.includes('Approved') && types.includes('Denied'),
    allowLegacySignerName: old.spec?.signerName === LEGACY_UNKNOWN_SIGNER,
    allowDuplicateConditionTypes: hasDuplicateTypes(old),
    allowEmptyConditionType: types.includes(''),
    allowArbitraryCertificate: (csr.status?.certificate ?? '') === (old.status?.certificate ?? '') || certBad,
    allowDuplicateUsages: new Set(old.spec?.usages ?? []).size !== (old.spec?.usages ?? []).length,
    allowUnknownUsages: (old.spec?.usages ?? []).some((u) => !VALID_USAGES.includes(u)),
  };
}

/** The update rules of validateCertificateSigningRequestUpdate beyond validateCSR. */
export function validateCSRUpdateRules(csr: CSR, old: CSR, o: CSRValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const of = (x: CSR, t: string) => conditionsOf(x).filter((c) => c.type === t);
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (of(csr, t).length < of(old, t).length) errs.push(field.forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
  }
  if (!o.allowSettingApprovalConditions) {
    for (const t of ['Approved', 'Denied']) {
      const before = of(old, t);
      const after = of(csr, t);
      if (after.length > before.length) errs.push(field.forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
      else if (after.length === before.length && !jsonEqual(before, after))
        errs.push(field.forbidden('status.conditions', `updates may not modify a condition of type "${t}"`));
    }
  }
  const cert = csr.status?.certificate ?? '';
  const oldCert = old.status?.certificate ?? '';
  if (cert !== oldCert) {
    if (!o.allowSettingCertificate) errs.push(field.forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert) errs.push(field.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}
