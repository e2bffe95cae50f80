/** PKCS#10 requests and what the signer makes of them: parsing, signature checks, usages, issued certificates. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import {
  checkCertificatePEM,
  createCA,
  createCSR,
  describeCertificate,
  issue,
  keyUsagesFromStrings,
  loadSigningCA,
  parseCSR,
  pemBlocks,
  signCSR,
  verifyCSR,
} from './index.js';

test('a request is parsed for its subject and names; its signature is checked, for EC and RSA keys', async () => {
  for (const algorithm of ['ECDSA', 'RSA'] as const) {
    const { csrPem } = await createCSR({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ips: ['127.0.0.5'], algorithm });
    const r = verifyCSR(csrPem);
    assert.deepEqual(
      [r.commonName, r.organizations, r.dnsNames, r.ipAddresses, r.emailAddresses],
      ['system:node:n1', ['system:nodes'], ['n1'], ['127.0.0.5'], []],
    );
    const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 3]! ^= 0xff;
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    assert.throws(() => verifyCSR(bad), algorithm === 'RSA' ? /^Error: crypto\/rsa: verification error$/ : /^Error: x509: ECDSA verification failure$/);
  }
  assert.throws(() => parseCSR('junk'), /^Error: PEM block type must be CERTIFICATE REQUEST$/);
  assert.throws(() => parseCSR('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /PEM block type must be CERTIFICATE REQUEST/);
});

test('usages map to key usage bits and extended key usages, in Go order; unknown ones are refused', () => {
  const u = keyUsagesFromStrings(['client auth', 'digital signature', 'server auth', 'key encipherment', 'any']);
  assert.equal(u.keyUsage, 1 | 4);
  assert.deepEqual(u.extKeyUsages, ['2.5.29.37.0', '1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.throws(() => keyUsagesFromStrings(['flying', 'client auth']), /unrecognized usage values: \["flying"\]/);
});

test('signCSR issues a non-CA certificate for the request, chained to the CA', async () => {
  const ca = await createCA('t');
  const signer = await loadSigningCA(ca.certPem, ca.keyPem);
  const { csrPem } = await createCSR({ commonName: 'carol', organizations: ['devs'], dnsNames: ['c.example'] });
  const notBefore = new Date(Date.UTC(2030, 0, 1));
  const notAfter = new Date(Date.UTC(2030, 0, 2));
  const pem = await signCSR(signer, parseCSR(csrPem), { usages: ['digital signature', 'client auth'], notBefore, notAfter });
  checkCertificatePEM(pem);
  const info = describeCertificate(pem);
  assert.deepEqual(
    [info.commonName, info.organizations, info.isCA, info.keyUsages, info.extKeyUsages, info.dnsNames],
    ['carol', ['devs'], false, ['digital signature'], ['client auth'], ['c.example']],
  );
  assert.deepEqual([info.notBefore, info.notAfter], [notBefore, notAfter]);
  assert.ok(new X509Certificate(pem).verify(new X509Certificate(ca.certPem).publicKey));
});

test('certificate PEM checks follow upstream validateCertificate', async () => {
  const ca = await createCA('t');
  const { certPem } = await issue(ca, { commonName: 'x', usage: 'client' });
  checkCertificatePEM('');
  checkCertificatePEM(`some text\n${certPem}${certPem}`);
  assert.throws(() => checkCertificatePEM('nothing'), /must contain at least one CERTIFICATE PEM block/);
  assert.throws(
    () => checkCertificatePEM(`${certPem}-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n`),
    /only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"/,
  );
  const withHeader = certPem.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n');
  assert.throws(() => checkCertificatePEM(withHeader), /no PEM block headers are permitted/);
  assert.deepEqual(
    pemBlocks(`a\n${certPem}b\n${certPem}`).map((b) => b.type),
    ['CERTIFICATE', 'CERTIFICATE'],
  );
});
