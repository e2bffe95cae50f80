/**
 * The cluster's PKI (what kubeadm's certs phase makes): a CA, the apiserver's
 * serving certificate, client certificates whose CN is the user and whose O
 * entries are its groups, and a ServiceAccount signing key pair. EC P-256 keys,
 * PEM files. X.509 encoding comes from @peculiar/x509.
 */
import 'reflect-metadata';
import { webcrypto, createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

export interface CA extends CertAndKey {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END ${label}-----\n`;

async function keyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

const serial = () =>
  randomBytes(16)
    .toString('hex')
    .replace(/^[89a-f]/, '1');

/** A self-signed CA valid for 10 years. */
export async function createCA(commonName = 'kubeling-ca'): Promise<CA> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3650 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    cert,
    key: keys.privateKey,
    certPem: cert.toString('pem') + '\n',
    keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

/** Loads a CA written by `writeCA` (cert and PKCS#8 key). */
export async function loadCA(certPem: string, keyPem: string): Promise<CA> {
  const cert = new x509.X509Certificate(certPem);
  const der = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
  const key = await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
  return { cert, key, certPem, keyPem };
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ips?: string[];
  usage: 'server' | 'client' | 'both';
  days?: number;
}

const escapeRDN = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');

/** A certificate signed by `ca`. */
export async function issue(ca: CA, o: IssueOptions): Promise<CertAndKey> {
  const keys = await keyPair();
  const subject = [`CN=${escapeRDN(o.commonName)}`, ...(o.organizations ?? []).map((g) => `O=${escapeRDN(g)}`)].join(', ');
  const eku =
    o.usage === 'server'
      ? [x509.ExtendedKeyUsage.serverAuth]
      : o.usage === 'client'
        ? [x509.ExtendedKeyUsage.clientAuth]
        : [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(eku),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
  ];
  const names = [...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value }))];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + (o.days ?? 365) * DAY),
    signingKey: ca.key,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** The ServiceAccount token signing key pair (ES256), PEM. */
export async function serviceAccountKeys(): Promise<{ privatePem: string; publicPem: string }> {
  const keys = await keyPair();
  const privatePem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const publicPem = createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }).toString();
  return { privatePem, publicPem };
}

/** The names the apiserver's certificate answers to. */
export const APISERVER_DNS = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
/** Loopback and the `kubernetes` Service's IP (the first of the service range 127.1.0.0/16). */
export const APISERVER_IPS = ['127.0.0.1', '::1', '127.1.0.1'];

export interface ClusterPKI {
  dir: string;
  ca: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  saKey: string;
  saPub: string;
  /** user → cert/key file paths */
  clients: Record<string, { cert: string; key: string }>;
}

/**
 * Writes the cluster's PKI under `dir` (idempotent: existing files are kept):
 * ca, apiserver, sa, and the client certificates asked for.
 */
/** A serving certificate signed by the cluster CA under `dir` (`<name>.crt`/`.key`), made once (kubelets' HTTPS). */
export async function ensureServingCert(
  dir: string,
  name: string,
  o: { commonName: string; ips?: string[]; dnsNames?: string[] },
): Promise<{ cert: string; key: string }> {
  const f = (n: string) => join(dir, n);
  if (!existsSync(f(`${name}.crt`))) {
    const ca = await loadCA(readFileSync(f('ca.crt'), 'utf8'), readFileSync(f('ca.key'), 'utf8'));
    const s = await issue(ca, { commonName: o.commonName, ips: o.ips ?? [], dnsNames: o.dnsNames ?? [], usage: 'server' });
    writeFileSync(f(`${name}.crt`), s.certPem, { mode: 0o644 });
    writeFileSync(f(`${name}.key`), s.keyPem, { mode: 0o600 });
  }
  return { cert: f(`${name}.crt`), key: f(`${name}.key`) };
}

export async function ensureClusterPKI(dir: string, clients: Record<string, { cn: string; orgs?: string[] }>, extraIPs: string[] = []): Promise<ClusterPKI> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (n: string) => join(dir, n);
  const write = (n: string, s: string, mode = 0o600) => writeFileSync(f(n), s, { mode });
  let ca: CA;
  if (existsSync(f('ca.crt')) && existsSync(f('ca.key'))) ca = await loadCA(readFileSync(f('ca.crt'), 'utf8'), readFileSync(f('ca.key'), 'utf8'));
  else {
    ca = await createCA();
    write('ca.crt', ca.certPem, 0o644);
    write('ca.key', ca.keyPem);
  }
  if (!existsSync(f('apiserver.crt'))) {
    const s = await issue(ca, { commonName: 'kube-apiserver', dnsNames: APISERVER_DNS, ips: [...APISERVER_IPS, ...extraIPs], usage: 'server' });
    write('apiserver.crt', s.certPem, 0o644);
    write('apiserver.key', s.keyPem);
  }
  if (!existsSync(f('sa.key'))) {
    const k = await serviceAccountKeys();
    write('sa.key', k.privatePem);
    write('sa.pub', k.publicPem, 0o644);
  }
  const out: ClusterPKI['clients'] = {};
  for (const [name, c] of Object.entries(clients)) {
    if (!existsSync(f(`${name}.crt`))) {
      const s = await issue(ca, { commonName: c.cn, organizations: c.orgs ?? [], usage: 'client' });
      write(`${name}.crt`, s.certPem, 0o644);
      write(`${name}.key`, s.keyPem);
    }
    out[name] = { cert: f(`${name}.crt`), key: f(`${name}.key`) };
  }
  return {
    dir,
    ca: f('ca.crt'),
    caKey: f('ca.key'),
    apiserverCert: f('apiserver.crt'),
    apiserverKey: f('apiserver.key'),
    saKey: f('sa.key'),
    saPub: f('sa.pub'),
    clients: out,
  };
}

/**
 * The front proxy's PKI under `dir` (kubeadm's front-proxy-ca and
 * front-proxy-client), made once: a CA of its own, whose client certificate
 * the aggregation layer presents to extension servers. They trust requests
 * signed by it to carry the user in X-Remote-User, so it must not be the
 * cluster CA, whose clients are users themselves.
 */
export async function ensureFrontProxyPKI(dir: string): Promise<{ ca: string; clientCert: string; clientKey: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (n: string) => join(dir, n);
  let ca: CA;
  if (existsSync(f('front-proxy-ca.crt')) && existsSync(f('front-proxy-ca.key')))
    ca = await loadCA(readFileSync(f('front-proxy-ca.crt'), 'utf8'), readFileSync(f('front-proxy-ca.key'), 'utf8'));
  else {
    ca = await createCA('front-proxy-ca');
    writeFileSync(f('front-proxy-ca.crt'), ca.certPem, { mode: 0o644 });
    writeFileSync(f('front-proxy-ca.key'), ca.keyPem, { mode: 0o600 });
  }
  if (!existsSync(f('front-proxy-client.crt'))) {
    const c = await issue(ca, { commonName: 'front-proxy-client', usage: 'client' });
    writeFileSync(f('front-proxy-client.crt'), c.certPem, { mode: 0o644 });
    writeFileSync(f('front-proxy-client.key'), c.keyPem, { mode: 0o600 });
  }
  return { ca: f('front-proxy-ca.crt'), clientCert: f('front-proxy-client.crt'), clientKey: f('front-proxy-client.key') };
}

// Certificate signing requests and the certificates issued for them (the certificates API).
export * from './csr.js';
