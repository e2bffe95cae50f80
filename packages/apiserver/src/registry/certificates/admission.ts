/**
 * The certificates admission plugins (kubernetes plugin/pkg/admission/
 * certificates), validating:
 *
 * - CertificateApproval: a write to `certificatesigningrequests/approval`
 *   needs verb `approve` on resource `signers` (group certificates.k8s.io)
 *   named after the request's signerName, or `<domain>/*`.
 * - CertificateSigning: a write to `/status` that changes the certificate or
 *   the conditions needs verb `sign` on that signer.
 * - CertificateSubjectRestriction: a new request for the
 *   `kubernetes.io/kube-apiserver-client` signer may not ask for the
 *   `system:masters` group.
 *
 * Refusals are 403 Forbidden in upstream's words.
 */
import type { certificatesv1, KubeObject } from '@kubeling/api';
import { forbidden, jsonEqual } from '@kubeling/apimachinery';
import { parseCSR } from '@kubeling/pki';
import type { AdmissionAttributes, ValidatingAdmission } from '../../admission/index.js';
import type { Attributes, Decision, UserInfo } from '../../auth/types.js';
import { pemOf } from './validation.js';

type CSR = certificatesv1.CertificateSigningRequest;

const RESOURCE = 'certificates.k8s.io/certificatesigningrequests';
const GR = { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' };

export type Authorize = (a: Attributes) => Decision | Promise<Decision>;

/** certificates.IsAuthorizedForSignerName: the signer by name, then its domain's wildcard. */
export async function authorizedForSigner(authorize: Authorize, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  const attrs = (name: string): Attributes => ({ user, verb, isResourceRequest: true, apiGroup: 'certificates.k8s.io', resource: 'signers', name });
  if ((await authorize(attrs(signerName))).allowed) return true;
  return (await authorize(attrs(`${signerName.split('/')[0]}/*`))).allowed;
}

const userOf = (a: AdmissionAttributes): UserInfo => a.user ?? { name: '', groups: [] };

export class CertificateApproval implements ValidatingAdmission {
  readonly name = 'CertificateApproval';
  constructor(private readonly authorize: Authorize) {}
  handles(a: AdmissionAttributes): boolean {
    return a.resource === RESOURCE && a.subresource === 'approval';
  }
  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const signer = (obj as unknown as CSR).spec?.signerName ?? '';
    if (!(await authorizedForSigner(this.authorize, userOf(a), 'approve', signer)))
      throw forbidden(GR, obj.metadata.name ?? '', `user not permitted to approve requests with signerName "${signer}"`);
  }
}

export class CertificateSigning implements ValidatingAdmission {
  readonly name = 'CertificateSigning';
  constructor(private readonly authorize: Authorize) {}
  handles(a: AdmissionAttributes): boolean {
    return a.resource === RESOURCE && a.subresource === 'status' && a.operation === 'UPDATE';
  }
  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const csr = obj as unknown as CSR;
    const old = a.old as unknown as CSR | undefined;
    if (!old) return;
    // Only a change of the certificate or the conditions is signing.
    if ((csr.status?.certificate ?? '') === (old.status?.certificate ?? '') && jsonEqual(csr.status?.conditions ?? [], old.status?.conditions ?? [])) return;
    const signer = old.spec?.signerName ?? '';
    if (!(await authorizedForSigner(this.authorize, userOf(a), 'sign', signer)))
      throw forbidden(GR, obj.metadata.name ?? '', `user not permitted to sign requests with signerName "${signer}"`);
  }
}

export class CertificateSubjectRestriction implements ValidatingAdmission {
  readonly name = 'CertificateSubjectRestriction';
  handles(a: AdmissionAttributes): boolean {
    return a.resource === RESOURCE && a.operation === 'CREATE' && !a.subresource;
  }
  async validate(obj: KubeObject): Promise<void> {
    const csr = obj as unknown as CSR;
    const signer = csr.spec?.signerName;
    if (signer !== 'kubernetes.io/kube-apiserver-client') return;
    let orgs: string[];
    try {
      orgs = parseCSR(pemOf(csr.spec?.request)).organizations;
    } catch (e) {
      throw forbidden(GR, obj.metadata.name ?? '', `failed to parse CSR: ${(e as Error).message}`);
    }
    if (orgs.includes('system:masters')) throw forbidden(GR, obj.metadata.name ?? '', `use of ${signer} signer with system:masters group is not allowed`);
  }
}
