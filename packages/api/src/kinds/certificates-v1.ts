/**
 * certificates.k8s.io/v1: CertificateSigningRequest, as upstream Kubernetes
 * 1.33 (`k8s.io/api/certificates/v1`). `request` and `certificate` are
 * `[]byte` (base64 in JSON) holding PEM.
 */
import { Type } from '@sinclair/typebox';
import { bytes, described, int32, list, map, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const C = 'io.k8s.api.certificates.v1.';

export const CertificateSigningRequestSpec = object(
  C + 'CertificateSigningRequestSpec',
  'CertificateSigningRequestSpec contains the certificate request.',
  {
    request: {
      ...bytes('request contains an x509 certificate signing request encoded in a "CERTIFICATE REQUEST" PEM block.'),
      'x-kubernetes-list-type': 'atomic',
    },
    signerName: string('signerName indicates the requested signer, and is a qualified name.'),
    expirationSeconds: int32('expirationSeconds is the requested duration of validity of the issued certificate.'),
    usages: list(Type.String(), 'usages specifies a set of key usages requested in the issued certificate.', { listType: 'atomic' }),
    username: string(
      'username contains the name of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.',
    ),
    uid: string('uid contains the uid of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.'),
    groups: list(Type.String(), 'groups contains group membership of the user that created the CertificateSigningRequest.', { listType: 'atomic' }),
    extra: map(Type.Array(Type.String()), 'extra contains extra attributes of the user that created the CertificateSigningRequest.'),
  },
  ['request', 'signerName'],
);

export const CertificateSigningRequestCondition = object(
  C + 'CertificateSigningRequestCondition',
  'CertificateSigningRequestCondition describes a condition of a CertificateSigningRequest object',
  {
    type: string('type of the condition. Known conditions are "Approved", "Denied", and "Failed".'),
    status: string('status of the condition, one of True, False, Unknown. Approved, Denied, and Failed conditions may not be "False" or "Unknown".'),
    reason: string('reason indicates a brief reason for the request state'),
    message: string('message contains a human readable message with details about the request state'),
    lastUpdateTime: time('lastUpdateTime is the time of the last update to this condition'),
    lastTransitionTime: time('lastTransitionTime is the time the condition last transitioned from one status to another.'),
  },
  ['type', 'status'],
);

export const CertificateSigningRequestStatus = object(
  C + 'CertificateSigningRequestStatus',
  'CertificateSigningRequestStatus contains conditions used to indicate approved/denied/failed status of the request, and the issued certificate.',
  {
    conditions: list(CertificateSigningRequestCondition, 'conditions applied to the request. Known conditions are "Approved", "Denied", and "Failed".', {
      listType: 'map',
      mapKeys: ['type'],
    }),
    certificate: {
      ...bytes('certificate is populated with an issued certificate by the signer after an Approved condition is present.'),
      'x-kubernetes-list-type': 'atomic',
    },
  },
);

export const CertificateSigningRequest = kindOf(
  C + 'CertificateSigningRequest',
  'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting a certificate signing request, and having it asynchronously approved and issued.',
  {
    spec: described(CertificateSigningRequestSpec, 'spec contains the certificate request, and is immutable after creation.'),
    status: described(
      CertificateSigningRequestStatus,
      'status contains information about whether the request is approved or denied, and the certificate issued by the signer, or the failure condition indicating signer failure.',
    ),
  },
);

export type CertificateSigningRequestSpec = Static<typeof CertificateSigningRequestSpec>;
export type CertificateSigningRequestCondition = Static<typeof CertificateSigningRequestCondition>;
export type CertificateSigningRequestStatus = Static<typeof CertificateSigningRequestStatus>;
export type CertificateSigningRequest = Static<typeof CertificateSigningRequest>;
