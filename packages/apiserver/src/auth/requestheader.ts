/**
 * Client certificates, each checked against its own CA, and request-header
 * (front proxy) authentication: k8s.io/apiserver pkg/authentication/request
 * x509/x509.go (Verify against the CA's pool, client-auth usage) and
 * headerrequest/requestheader.go.
 *
 * The TLS server trusts the client CA and the request-header CA at once, so
 * `socket.authorized` only says "one of them". `CertPool.verifyPeer` walks
 * the peer's chain itself — signature, issuer and validity of each link,
 * intermediates only where they are CAs — down to a certificate of its own
 * bundle: a certificate of the request-header CA never authenticates as its
 * CN through the x509 authenticator, and one of the client CA can never set
 * X-Remote-User.
 *
 * A front-proxy certificate (one of the allowed CNs, any when the list is
 * empty) names the user in the first username header with a value, the
 * groups in every value of the group headers (one per header line), the
 * extras in `<prefix><key>` headers (key lowercased and %-unescaped). Those
 * headers are removed from every request once read, so nothing after
 * authentication can take them for an identity.
 */
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { UserInfo } from './types.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
/** Links followed from the leaf towards a root: longer chains are refused. */
const MAX_CHAIN = 8;

/** The certificates of a PEM bundle; a malformed one throws. */
export function parseBundle(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((c) => new X509Certificate(c));
}

const validAt = (c: X509Certificate, now: number) => now >= Date.parse(c.validFrom) && now <= Date.parse(c.validTo);

function issuedBy(child: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return child.checkIssued(issuer) && child.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** The peer's certificates as the TLS layer reports them (leaf first, each at most once). */
function peerChain(sock: TLSSocket): { leaf: PeerCertificate; chain: X509Certificate[] } | undefined {
  if (typeof sock.getPeerCertificate !== 'function') return undefined;
  const leaf = sock.getPeerCertificate(true);
  if (!leaf?.raw) return undefined;
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let cur: PeerCertificate | undefined = leaf;
  while (cur?.raw && !seen.has(cur.fingerprint256) && chain.length <= MAX_CHAIN) {
    seen.add(cur.fingerprint256);
    chain.push(new X509Certificate(cur.raw));
    cur = (cur as { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return { leaf, chain };
}

/** CN and O entries of a parsed subject (a repeated entry is an array). */
function subjectNames(subject: unknown): { cn: string; orgs: string[] } {
  const s = (subject ?? {}) as Record<string, string | string[] | undefined>;
  const all = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  return { cn: all(s.CN)[0] ?? '', orgs: all(s.O) };
}

export type PeerVerification = { cn: string; orgs: string[] } | { error: string };

/** The CA bundle one authenticator trusts. */
export class CertPool {
  private readonly roots: X509Certificate[];

  constructor(pem: string) {
    this.roots = parseBundle(pem);
    if (!this.roots.length) throw new Error('data does not contain any valid RSA or ECDSA certificates');
  }

  /** Whether `chain[0]` leads to one of this pool's certificates (x509.Verify with client-auth usage). */
  verifies(chain: X509Certificate[], now = Date.now()): PeerVerification | undefined {
    const leaf = chain[0];
    if (!leaf) return undefined;
    const eku = leaf.keyUsage;
    if (eku?.length && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return { error: 'x509: certificate specifies an incompatible key usage' };
    if (!validAt(leaf, now)) return { error: 'x509: certificate has expired or is not yet valid' };
    let cur = leaf;
    for (let depth = 0; depth < MAX_CHAIN; depth++) {
      if (this.roots.some((r) => validAt(r, now) && (r.fingerprint256 === cur.fingerprint256 || issuedBy(cur, r)))) return { cn: '', orgs: [] };
      const next = chain.find((c) => c !== cur && c.ca && validAt(c, now) && issuedBy(cur, c));
      if (!next) break;
      cur = next;
    }
    return { error: 'x509: certificate signed by unknown authority' };
  }

  /** The TLS peer's CN and O when its certificate chains to this pool; undefined without a certificate. */
  verifyPeer(sock: TLSSocket, now = Date.now()): PeerVerification | undefined {
    if (!sock.encrypted) return undefined;
    const peer = peerChain(sock);
    if (!peer) return undefined;
    if (!sock.authorized) return { error: 'x509: certificate signed by unknown authority' };
    const v = this.verifies(peer.chain, now);
    if (!v || 'error' in v) return v;
    return subjectNames(peer.leaf.subject);
  }
}

/** The --requestheader-* settings (the aggregation layer's RequestHeaderConfig). */
export interface RequestHeaderSettings {
  clientCA: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeadersPrefix: string[];
}

function trimHeaders(names: string[]): string[] {
  return names.map((n) => {
    const t = n.trim();
    if (!t) throw new Error(`empty header ${JSON.stringify(n)}`);
    return t.toLowerCase();
  });
}

/** url.PathUnescape: %XX decoded; a malformed key is kept as it is (requestheader.go unescapeExtraKey). */
function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

export class RequestHeaderAuthenticator {
  private readonly pool: CertPool;
  private readonly names: string[];
  private readonly groups: string[];
  private readonly prefixes: string[];

  constructor(private readonly s: RequestHeaderSettings) {
    this.pool = new CertPool(s.clientCA);
    this.names = trimHeaders(s.usernameHeaders);
    this.groups = trimHeaders(s.groupHeaders);
    this.prefixes = trimHeaders(s.extraHeadersPrefix);
  }

  /**
   * The user a trusted proxy names; undefined when the certificate is not the
   * proxy's or no username header is set; an error for a proxy CN not allowed.
   * The identity headers are removed either way.
   */
  authenticate(req: IncomingMessage): { user: UserInfo } | { error: string } | undefined {
    try {
      const v = this.pool.verifyPeer(req.socket as TLSSocket);
      // Not a proxy: the x509 authenticator reports what is wrong with its certificate.
      if (!v || 'error' in v) return undefined;
      if (this.s.allowedNames.length && !this.s.allowedNames.includes(v.cn)) return { error: `x509: subject with cn=${v.cn} is not in the allowed list` };
      return this.fromHeaders(req);
    } finally {
      this.strip(req);
    }
  }

  private fromHeaders(req: IncomingMessage): { user: UserInfo } | undefined {
    const h = req.headersDistinct;
    let name = '';
    for (const n of this.names) {
      name = h[n]?.[0] ?? '';
      if (name) break;
    }
    if (!name) return undefined;
    const groups: string[] = [];
    for (const n of this.groups) for (const v of h[n] ?? []) if (v) groups.push(v);
    const extra: Record<string, string[]> = {};
    for (const p of this.prefixes)
      for (const [k, vs] of Object.entries(h)) {
        if (!k.startsWith(p) || !vs) continue;
        const key = unescapeKey(k.slice(p.length));
        (extra[key] ??= []).push(...vs);
      }
    return { user: { name, groups, ...(Object.keys(extra).length ? { extra } : {}) } };
  }

  /** ClearAuthenticationHeaders. */
  private strip(req: IncomingMessage): void {
    const identity = (k: string) => this.names.includes(k) || this.groups.includes(k) || this.prefixes.some((p) => k.startsWith(p));
    const distinct = req.headersDistinct;
    for (const k of Object.keys(req.headers)) {
      if (!identity(k)) continue;
      delete req.headers[k];
      delete distinct[k];
    }
  }
}
