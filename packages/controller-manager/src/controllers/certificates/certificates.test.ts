/** The certificate controllers' pure parts: the signers' rules, validity, and what the cleaner deletes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CertificateRequestInfo } from '@kubeling/pki';
import { CSRCLEANER_DEFAULTS, cleanupReason } from './cleaner.js';
import { validateAPIServerClient, validateKubeletClient, validateKubeletServing, type CSR } from './common.js';
import { certificateTTL, validity } from './signer.js';

const req = (o: Partial<CertificateRequestInfo>): CertificateRequestInfo => ({
  commonName: 'system:node:n1',
  organizations: ['system:nodes'],
  dnsNames: [],
  ipAddresses: [],
  emailAddresses: [],
  uris: [],
  keyAlgorithm: 'ECDSA',
  ...o,
});

test('kubelet client and serving rules, as upstream words them', () => {
  assert.equal(validateKubeletClient(req({}), ['digital signature', 'client auth']), undefined);
  assert.equal(validateKubeletClient(req({}), ['client auth', 'key encipherment', 'digital signature']), undefined);
  assert.equal(validateKubeletClient(req({ organizations: ['system:nodes', 'x'] }), ['client auth']), 'subject organization is not system:nodes');
  assert.equal(validateKubeletClient(req({ dnsNames: ['a'] }), ['client auth']), 'DNS subjectAltNames are not allowed');
  assert.equal(validateKubeletClient(req({ commonName: 'bob' }), ['client auth']), 'subject common name does not begin with system:node:');
  assert.equal(validateKubeletClient(req({}), ['client auth']), 'usages did not match [client auth digital signature key encipherment]');
  assert.equal(validateKubeletServing(req({}), ['server auth']), 'DNS or IP subjectAltName is required');
  assert.equal(validateKubeletServing(req({ ipAddresses: ['127.0.0.1'] }), ['digital signature', 'server auth']), undefined);
  assert.equal(validateKubeletServing(req({ ipAddresses: ['127.0.0.1'], emailAddresses: ['a@b'] }), ['server auth']), 'Email subjectAltNames are not allowed');
  assert.equal(validateAPIServerClient(req({}), ['key encipherment']), 'missing required usage for client certificate: client auth');
  assert.equal(validateAPIServerClient(req({}), ['client auth', 'server auth']), 'invalid usage for client certificate: server auth');
});

test('validity: the requested duration within [10 min, max], backdated 5 min, long ones at both ends, never past the CA', () => {
  const H = 3_600_000;
  assert.equal(certificateTTL(undefined, 24 * H), 24 * H);
  assert.equal(certificateTTL(600, 24 * H), 600_000);
  assert.equal(certificateTTL(100 * 3600, 24 * H), 24 * H);
  const now = Date.UTC(2030, 0, 1);
  assert.deepEqual(validity(now, H, now + 100 * H), { notBefore: new Date(now - 300_000), notAfter: new Date(now + H) });
  assert.deepEqual(validity(now, 10 * H, now + 100 * H), { notBefore: new Date(now - 300_000), notAfter: new Date(now + 10 * H - 300_000) });
  assert.deepEqual(validity(now, 10 * H, now + H).notAfter, new Date(now + H));
  assert.throws(() => validity(now, H, now - H), /the signer has expired/);
  assert.throws(() => validity(now, H, now - 1), /refusing to sign a certificate that expired in the past/);
});

test('the cleaner deletes by condition age and creation time', () => {
  const now = Date.UTC(2030, 0, 2);
  const at = (msAgo: number) => new Date(now - msAgo).toISOString();
  const csr = (created: number, conditions: { type: string; lastUpdateTime?: string }[], certificate?: string) =>
    ({ metadata: { name: 'c', creationTimestamp: at(created) }, spec: {}, status: { conditions, ...(certificate ? { certificate } : {}) } }) as unknown as CSR;
  const o = { ...CSRCLEANER_DEFAULTS, now: () => now };
  const H = 3_600_000;
  assert.equal(cleanupReason(csr(2 * H, []), o), undefined);
  assert.equal(cleanupReason(csr(25 * H, []), o), 'pending past the pending deadline');
  assert.equal(cleanupReason(csr(2 * H, [{ type: 'Denied', lastUpdateTime: at(2 * H) }]), o), 'denied past the denied deadline');
  assert.equal(cleanupReason(csr(2 * H, [{ type: 'Failed', lastUpdateTime: at(2 * H) }]), o), 'failed past the denied deadline');
  assert.equal(cleanupReason(csr(2 * H, [{ type: 'Approved', lastUpdateTime: at(2 * H) }]), o), undefined, 'approved but not issued stays');
  assert.equal(cleanupReason(csr(2 * H, [{ type: 'Approved', lastUpdateTime: at(2 * H) }], 'eA=='), o), 'approved and issued past the approved deadline');
  assert.equal(cleanupReason(csr(2 * H, [{ type: 'Approved', lastUpdateTime: at(30 * 60_000) }], 'eA=='), o), undefined);
});
