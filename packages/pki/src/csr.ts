/**
 * PKCS#10 certificate signing requests and the certificates a signer issues
 * for them: what the certificates API needs (kubernetes pkg/apis/certificates
 * ParseCSR, the validation of status.certificate, and the local CA signer of
 * pkg/controller/certificates/authority). X.509 and PKCS#10 encoding come
 * from @peculiar/x509 over node's WebCrypto, like the rest of this package.
 *
 * Errors are thrown as plain `Error`s whose messages are upstream's where
 * upstream's own code makes them (PEM and certificate-list checks); those of
 * Go's x509 parser are not reproduced word for word.
 */
import 'reflect-metadata';
import { createPrivateKey, createPublicKey, randomBytes, verify as verifySignature, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface PemBlock {
  type: string;
  headers: Record<string, string>;
  der: Buffer;
}

/**
 * Go's `pem.Decode` applied repeatedly: every well-formed block in the data, in
 * order. Text between blocks is skipped, as Go skips it.
 */
export function pemBlocks(data: string): PemBlock[] {
  const out: PemBlock[] = [];
  const re = /-----BEGIN ([^\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (const m of data.matchAll(re)) {
    const headers: Record<string, string> = {};
    const lines = m[2]!.split(/\r?\n/);
    let i = 0;
    for (; i < lines.length; i++) {
      const h = /^([^:\s]+):\s*(.*)$/.exec(lines[i]!);
      if (!h) break;
      headers[h[1]!] = h[2]!;
    }
    const body = lines.slice(i).join('').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) continue;
    out.push({ type: m[1]!, headers, der: Buffer.from(body, 'base64') });
  }
  return out;
}

const toPem = (label: string, der: ArrayBuffer | Buffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der as ArrayBuffer)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;

/** The parts of a request the signers and approvers look at (Go's x509.CertificateRequest). */
export interface CertificateRequestInfo {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** Key algorithm of the requested certificate: `ECDSA`, `RSASSA-PKCS1-v1_5`, `Ed25519`, ... */
  keyAlgorithm: string;
}

export interface ParsedCSR extends CertificateRequestInfo {
  request: x509.Pkcs10CertificateRequest;
}

function sanOf(exts: readonly x509.Extension[]): { type: string; value: string }[] {
  const san = exts.find((e) => e instanceof x509.SubjectAlternativeNameExtension) as x509.SubjectAlternativeNameExtension | undefined;
  return san ? san.names.items.map((n) => ({ type: n.type, value: n.value })) : [];
}

/**
 * Upstream's `certificates.ParseCSR`: the first PEM block must be a
 * CERTIFICATE REQUEST holding one PKCS#10 request. Does not check the
 * signature (`verifyCSR` does).
 */
export function parseCSR(pem: string): ParsedCSR {
  const block = pemBlocks(pem)[0];
  if (block?.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let request: x509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(block.der);
  } catch (e) {
    throw new Error(`x509: malformed certificate request: ${(e as Error).message}`);
  }
  const names = sanOf(request.extensions);
  const of = (t: string) => names.filter((n) => n.type === t).map((n) => n.value);
  return {
    request,
    commonName: request.subjectName.getField('CN')[0] ?? '',
    organizations: request.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emailAddresses: of('email'),
    uris: of('url'),
    keyAlgorithm: request.publicKey.algorithm.name,
  };
}

/** The bytes of the first element inside a DER SEQUENCE (a signed object's to-be-signed part). */
function firstChild(der: Buffer): Buffer {
  const len = (at: number): [length: number, header: number] => {
    const b = der[at + 1]!;
    if (b < 0x80) return [b, 2];
    const n = b & 0x7f;
    if (n === 0 || n > 4) throw new Error('x509: malformed certificate request');
    let l = 0;
    for (let i = 0; i < n; i++) l = l * 256 + der[at + 2 + i]!;
    return [l, 2 + n];
  };
  if (der[0] !== 0x30) throw new Error('x509: malformed certificate request');
  const [, outer] = len(0);
  const [inner, header] = len(outer);
  return der.subarray(outer, outer + header + inner);
}

/**
 * Upstream's validateCSR: parses, then checks the request's signature with its
 * own key (x509.CertificateRequest.CheckSignature). Synchronous, as validation
 * is: the check uses node's crypto.verify rather than WebCrypto.
 */
export function verifyCSR(pem: string): ParsedCSR {
  const parsed = parseCSR(pem);
  const req = parsed.request;
  const alg = req.signatureAlgorithm as { name: string; hash?: { name: string } };
  let ok = false;
  try {
    const key = createPublicKey({ key: Buffer.from(req.publicKey.rawData), format: 'der', type: 'spki' });
    const hash = alg.name === 'Ed25519' ? null : (alg.hash?.name ?? 'SHA-256').replace('-', '').toLowerCase();
    ok = verifySignature(hash, firstChild(Buffer.from(req.rawData)), key, Buffer.from(req.signature));
  } catch {
    ok = false;
  }
  if (!ok) throw new Error(parsed.keyAlgorithm.startsWith('RSA') ? 'crypto/rsa: verification error' : `x509: ${parsed.keyAlgorithm} verification failure`);
  return parsed;
}

/** Upstream's validateCertificate: PEM CERTIFICATE blocks only, no headers, each a parsable certificate. */
export function checkCertificatePEM(pem: string): void {
  if (pem.length === 0) return;
  const blocks = pemBlocks(pem);
  if (blocks.length === 0) throw new Error('must contain at least one CERTIFICATE PEM block');
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') throw new Error(`only CERTIFICATE PEM blocks are allowed, found "${b.type}"`);
    if (Object.keys(b.headers).length) throw new Error('no PEM block headers are permitted');
    try {
      new x509.X509Certificate(b.der);
    } catch (e) {
      throw new Error(`x509: malformed certificate: ${(e as Error).message}`);
    }
  }
}

/** The certificates of a PEM bundle, first to last. */
export function parseCertificates(pem: string): x509.X509Certificate[] {
  return pemBlocks(pem)
    .filter((b) => b.type === 'CERTIFICATE')
    .map((b) => new x509.X509Certificate(b.der));
}

export type KeyAlgorithm = 'ECDSA' | 'RSA';

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const RSA_2048 = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } as const;

/** A new key and a request signed with it (what a kubelet or `openssl req` makes). */
export async function createCSR(o: {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ips?: string[];
  algorithm?: KeyAlgorithm;
}): Promise<{ csrPem: string; keyPem: string }> {
  const alg = o.algorithm === 'RSA' ? RSA_2048 : ECDSA_P256;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const escapeRDN = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');
  const name = [`CN=${escapeRDN(o.commonName)}`, ...(o.organizations ?? []).map((g) => `O=${escapeRDN(g)}`)].join(', ');
  const names = [...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: alg,
    extensions: names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return { csrPem: request.toString('pem') + '\n', keyPem: toPem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** A CA that signs: its certificate and private key (EC P-256/P-384 or RSA). */
export interface SigningCA {
  cert: x509.X509Certificate;
  key: CryptoKey;
  certPem: string;
  algorithm: { name: string; hash: string };
}

/** Loads a CA certificate and its private key (PKCS#8, PKCS#1 or SEC1 PEM). */
export async function loadSigningCA(certPem: string, keyPem: string): Promise<SigningCA> {
  const cert = new x509.X509Certificate(certPem);
  const priv = createPrivateKey(keyPem);
  const der = priv.export({ type: 'pkcs8', format: 'der' });
  let algorithm: { name: string; hash: string; namedCurve?: string };
  if (priv.asymmetricKeyType === 'ec') {
    const curve = priv.asymmetricKeyDetails?.namedCurve;
    algorithm = curve === 'secp384r1' ? { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' } : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  } else if (priv.asymmetricKeyType === 'rsa') algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  else throw new Error(`unsupported CA key type ${priv.asymmetricKeyType}`);
  const key = await webcrypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']);
  return { cert, key, certPem, algorithm: { name: algorithm.name, hash: algorithm.hash } };
}

/** certificates.k8s.io key usages that are X.509 key usage bits (authority/policies.go keyUsageDict). */
const KEY_USAGE: Record<string, number> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

/** Those that are extended key usages, in the order Go sorts them (its ExtKeyUsage enum). */
const EXT_KEY_USAGE: [string, string][] = [
  ['any', '2.5.29.37.0'],
  ['server auth', x509.ExtendedKeyUsage.serverAuth],
  ['client auth', x509.ExtendedKeyUsage.clientAuth],
  ['code signing', x509.ExtendedKeyUsage.codeSigning],
  ['email protection', x509.ExtendedKeyUsage.emailProtection],
  ['s/mime', x509.ExtendedKeyUsage.emailProtection],
  ['ipsec end system', '1.3.6.1.5.5.7.3.5'],
  ['ipsec tunnel', '1.3.6.1.5.5.7.3.6'],
  ['ipsec user', '1.3.6.1.5.5.7.3.7'],
  ['timestamping', x509.ExtendedKeyUsage.timeStamping],
  ['ocsp signing', x509.ExtendedKeyUsage.ocspSigning],
  ['microsoft sgc', '1.3.6.1.4.1.311.10.3.3'],
  ['netscape sgc', '2.16.840.1.113730.4.1'],
];

/** The X.509 key usage bits and extended key usage OIDs of certificates.k8s.io usages; throws on unknown ones. */
export function keyUsagesFromStrings(usages: readonly string[]): { keyUsage: number; extKeyUsages: string[] } {
  let keyUsage = 0;
  const ext = new Set<string>();
  const unknown: string[] = [];
  for (const u of usages) {
    if (KEY_USAGE[u] !== undefined) keyUsage |= KEY_USAGE[u]!;
    else if (EXT_KEY_USAGE.some(([n]) => n === u)) ext.add(EXT_KEY_USAGE.find(([n]) => n === u)![1]);
    else unknown.push(u);
  }
  if (unknown.length) throw new Error(`unrecognized usage values: [${unknown.map((u) => JSON.stringify(u)).join(' ')}]`);
  const order = EXT_KEY_USAGE.map(([, oid]) => oid);
  return { keyUsage, extKeyUsages: [...ext].sort((a, b) => order.indexOf(a) - order.indexOf(b)) };
}

export interface SignOptions {
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
}

/**
 * Issues a certificate for a request, as upstream's CertificateAuthority.Sign
 * with the PermissiveSigningPolicy: the request's subject and DNS/IP/email/URI
 * names, a random 128-bit serial, the given usages and validity, basic
 * constraints CA=false, no other extension of the request. The caller
 * computes the validity (and truncates it to the CA's). Answers PEM.
 */
export async function signCSR(ca: SigningCA, csr: ParsedCSR, o: SignOptions): Promise<string> {
  const { keyUsage, extKeyUsages } = keyUsagesFromStrings(o.usages);
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (keyUsage) extensions.push(new x509.KeyUsagesExtension(keyUsage, true));
  if (extKeyUsages.length) extensions.push(new x509.ExtendedKeyUsageExtension(extKeyUsages));
  if (ca.cert.getExtension(x509.SubjectKeyIdentifierExtension)) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(ca.cert));
  const names = sanOf(csr.request.extensions).filter((n) => ['dns', 'ip', 'email', 'url'].includes(n.type)) as x509.JsonGeneralName[];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: csr.request.subjectName,
    issuer: ca.cert.subjectName,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    signingKey: ca.key,
    publicKey: csr.request.publicKey,
    signingAlgorithm: ca.algorithm,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** Whether `certPem` (its first certificate) was signed by the CA in `caPem` and names it as issuer. */
export async function chainsTo(certPem: string, caPem: string): Promise<boolean> {
  const [cert] = parseCertificates(certPem);
  const ca = new x509.X509Certificate(caPem);
  if (!cert || cert.issuer !== ca.subject) return false;
  return cert.verify({ publicKey: ca.publicKey, signatureOnly: true });
}

export interface CertificateInfo {
  subject: string;
  issuer: string;
  commonName: string;
  organizations: string[];
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  /** certificates.k8s.io names of the key usage bits set (`digital signature`, ...). */
  keyUsages: string[];
  /** certificates.k8s.io names of the extended key usages (`client auth`, ...). */
  extKeyUsages: string[];
  dnsNames: string[];
  ipAddresses: string[];
}

/** What a certificate says (its first one, for a bundle), with usages in certificates.k8s.io terms. */
export function describeCertificate(pem: string): CertificateInfo {
  const [cert] = parseCertificates(pem);
  if (!cert) throw new Error('no certificate');
  const ku = cert.getExtension(x509.KeyUsagesExtension)?.usages ?? 0;
  const eku = Array.from(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [], String);
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  const names = sanOf(cert.extensions);
  const kuNames = [
    'digital signature',
    'content commitment',
    'key encipherment',
    'data encipherment',
    'key agreement',
    'cert sign',
    'crl sign',
    'encipher only',
    'decipher only',
  ];
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    commonName: cert.subjectName.getField('CN')[0] ?? '',
    organizations: cert.subjectName.getField('O'),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCA: !!bc?.ca,
    keyUsages: kuNames.filter((_, i) => ku & (1 << i)),
    extKeyUsages: eku.map((oid) => EXT_KEY_USAGE.find(([n, o]) => o === oid && n !== 's/mime')?.[0] ?? oid),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
  };
}
