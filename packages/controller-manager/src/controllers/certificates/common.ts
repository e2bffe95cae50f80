/**
 * What the certificate controllers share (kubernetes pkg/controller/
 * certificates/certificate_controller_utils.go and pkg/apis/certificates/
 * helpers.go): the CSR's conditions, its PEM request, and the rules of the
 * built-in kubernetes.io signers about what a request may ask for.
 */
import type { certificatesv1, KubeObject } from '@kubeling/api';
import type { CertificateRequestInfo } from '@kubeling/pki';

type CSRSpec = NonNullable<certificatesv1.CertificateSigningRequest['spec']>;
/** A stored request: the spec (request and signerName required) is always there. */
export type CSR = Omit<certificatesv1.CertificateSigningRequest, 'spec'> & { spec: CSRSpec } & KubeObject;
export type CSRCondition = certificatesv1.CertificateSigningRequestCondition;

export const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';

export const hasCondition = (csr: CSR, type: string): boolean => (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** GetCertApprovalCondition: whether an Approved or Denied condition is there at all. */
export function approvalState(csr: CSR): { approved: boolean; denied: boolean } {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  return { approved: types.has('Approved'), denied: types.has('Denied') };
}

/** IsCertificateRequestApproved: approved and not denied. */
export function isApproved(csr: CSR): boolean {
  const { approved, denied } = approvalState(csr);
  return approved && !denied;
}

/** spec.request / status.certificate as PEM text. */
export const pemOf = (b64: string | undefined): string => (b64 ? Buffer.from(b64, 'base64').toString('latin1') : '');

const sameSet = (a: ReadonlySet<string>, b: readonly string[]) => a.size === new Set(b).size && b.every((x) => a.has(x));

const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];
const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];

const sortedList = (xs: readonly string[]) => `[${[...xs].sort().join(' ')}]`;
const onlySystemNodes = (req: CertificateRequestInfo) => req.organizations.length === 1 && req.organizations[0] === 'system:nodes';

/** ValidateKubeletServingCSR: O=system:nodes, CN system:node:*, DNS or IP names only, serving usages. */
export function validateKubeletServing(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (!onlySystemNodes(req)) return 'subject organization is not system:nodes';
  if (!req.dnsNames.length && !req.ipAddresses.length) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_SERVING_USAGES) && !sameSet(set, KUBELET_SERVING_USAGES_NO_RSA))
    return `usages did not match ${sortedList(KUBELET_SERVING_USAGES)}`;
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** ValidateKubeletClientCSR: O=system:nodes, CN system:node:*, no subject alternative names, client usages. */
export function validateKubeletClient(req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  if (!onlySystemNodes(req)) return 'subject organization is not system:nodes';
  if (req.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_CLIENT_USAGES) && !sameSet(set, KUBELET_CLIENT_USAGES_NO_RSA)) return `usages did not match ${sortedList(KUBELET_CLIENT_USAGES)}`;
  return undefined;
}

/** validAPIServerClientUsages: client auth required; digital signature and key encipherment allowed. */
export function validateAPIServerClient(_req: CertificateRequestInfo, usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/** The signers this controller-manager signs for, and what each accepts (signer.go getCSRVerificationFuncForSignerName). */
export const SIGNER_RULES: Readonly<Record<string, (req: CertificateRequestInfo, usages: readonly string[]) => string | undefined>> = {
  [KUBELET_SERVING]: validateKubeletServing,
  [KUBE_APISERVER_CLIENT_KUBELET]: validateKubeletClient,
  [KUBE_APISERVER_CLIENT]: validateAPIServerClient,
};
