/**
 * ServiceAccount tokens (kubernetes pkg/serviceaccount): JWTs signed with the
 * cluster's ServiceAccount key through `jose` — issuer, audiences, expiry, and
 * the `kubernetes.io` claim naming the ServiceAccount (and the pod the token is
 * bound to). A token authenticates only while its ServiceAccount (same uid)
 * and its pod (same uid) still exist, so a deleted pod's token stops working.
 */
import { createHash, randomUUID } from 'node:crypto';
import { SignJWT, importPKCS8, importSPKI, jwtVerify, type CryptoKey, type JWTPayload, type KeyObject } from 'jose';
import type { KubeObject } from '@kubeling/api';
import type { TokenAuthenticator } from './authn.js';
import type { UserInfo } from './types.js';

/** The issuer of the legacy tokens token Secrets hold (serviceaccount.LegacyIssuer). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

export interface ServiceAccountTokenOptions {
  signingKeyPem?: string;
  publicKeyPems: string[];
  issuer: string;
  /** The apiserver's audiences (--api-audiences); the issuer by default. */
  audiences: string[];
  /** Reads from the apiserver's own stores. */
  lookup: {
    serviceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
    pod(namespace: string, name: string): Promise<KubeObject | undefined>;
    secret(namespace: string, name: string): Promise<KubeObject | undefined>;
  };
}

interface KubeClaim {
  namespace: string;
  serviceaccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
}

type Key = CryptoKey | KeyObject;

export class ServiceAccountTokens implements TokenAuthenticator {
  private signing: Promise<{ key: Key; kid: string }> | undefined;
  private readonly verifying: Promise<Key[]>;

  constructor(private readonly o: ServiceAccountTokenOptions) {
    if (o.signingKeyPem) {
      const pem = o.signingKeyPem;
      this.signing = importPKCS8(pem, 'ES256').then((key) => ({ key, kid: createHash('sha256').update(pem).digest('base64url').slice(0, 43) }));
    }
    this.verifying = Promise.all(o.publicKeyPems.map((p) => importSPKI(p, 'ES256')));
  }

  get audiences(): string[] {
    return this.o.audiences;
  }

  /** TokenRequest: a token for `sa`, optionally bound to `pod`. */
  async issue(sa: KubeObject, o: { audiences?: string[]; expirationSeconds: number; pod?: KubeObject }): Promise<{ token: string; expirationTimestamp: Date }> {
    if (!this.signing) throw new Error('no service account signing key is configured');
    const { key, kid } = await this.signing;
    const now = Math.floor(Date.now() / 1000);
    const exp = now + o.expirationSeconds;
    const claim: KubeClaim = {
      namespace: sa.metadata.namespace!,
      serviceaccount: { name: sa.metadata.name!, uid: sa.metadata.uid! },
      ...(o.pod ? { pod: { name: o.pod.metadata.name!, uid: o.pod.metadata.uid! } } : {}),
    };
    const token = await new SignJWT({ 'kubernetes.io': claim })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(this.o.issuer)
      .setSubject(`system:serviceaccount:${claim.namespace}:${claim.serviceaccount.name}`)
      .setAudience(o.audiences?.length ? o.audiences : this.o.audiences)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(key);
    return { token, expirationTimestamp: new Date(exp * 1000) };
  }

  /** Verifies signature, issuer, audience and expiry, then that the SA and pod still exist. */
  async authenticateToken(token: string, audiences: string[] = this.o.audiences): Promise<UserInfo | undefined> {
    if (token.split('.').length !== 3) return undefined;
    let payload: JWTPayload | undefined;
    for (const key of await this.verifying) {
      try {
        payload = (await jwtVerify(token, key, { issuer: [this.o.issuer, LEGACY_ISSUER], algorithms: ['ES256'] })).payload;
        break;
      } catch {
        // another key, or not ours
      }
    }
    if (!payload) return undefined;
    if (payload.iss === LEGACY_ISSUER) return this.authenticateLegacy(token, payload);
    const aud = Array.isArray(payload.aud) ? payload.aud : payload.aud ? [payload.aud] : [];
    if (!aud.some((a) => audiences.includes(a))) return undefined;
    const k = payload['kubernetes.io'] as KubeClaim | undefined;
    if (!k?.namespace || !k.serviceaccount?.name) return undefined;
    const sa = await this.o.lookup.serviceAccount(k.namespace, k.serviceaccount.name);
    if (!sa || sa.metadata.uid !== k.serviceaccount.uid || sa.metadata.deletionTimestamp) return undefined;
    const extra: Record<string, string[]> = {};
    if (k.pod) {
      const pod = await this.o.lookup.pod(k.namespace, k.pod.name);
      if (!pod || pod.metadata.uid !== k.pod.uid) return undefined;
      // A pod being deleted keeps its tokens for a minute (its preStop may need them), as upstream.
      const deleting = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
      if (deleting !== undefined && deleting < Date.now() - 60_000) return undefined;
      extra['authentication.kubernetes.io/pod-name'] = [k.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [k.pod.uid];
    }
    if (payload.jti) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${payload.jti}`];
    return {
      name: `system:serviceaccount:${k.namespace}:${k.serviceaccount.name}`,
      uid: k.serviceaccount.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${k.namespace}`],
      extra,
    };
  }

  /**
   * A legacy token (a token Secret's, issued by the controller-manager): valid
   * while its Secret holds this very token and its ServiceAccount (same uid)
   * exists (pkg/serviceaccount/legacy.go).
   */
  private async authenticateLegacy(token: string, p: JWTPayload): Promise<UserInfo | undefined> {
    const claim = (k: string) => (typeof p[`kubernetes.io/serviceaccount/${k}`] === 'string' ? (p[`kubernetes.io/serviceaccount/${k}`] as string) : '');
    const ns = claim('namespace');
    const name = claim('service-account.name');
    const uid = claim('service-account.uid');
    const secretName = claim('secret.name');
    if (!ns || !name || !secretName) return undefined;
    const secret = (await this.o.lookup.secret(ns, secretName)) as (KubeObject & { data?: Record<string, string> }) | undefined;
    if (!secret || secret.metadata.deletionTimestamp) return undefined;
    if (Buffer.from(secret.data?.token ?? '', 'base64').toString('utf8') !== token) return undefined;
    const sa = await this.o.lookup.serviceAccount(ns, name);
    if (!sa || sa.metadata.deletionTimestamp || (uid && sa.metadata.uid !== uid)) return undefined;
    return {
      name: `system:serviceaccount:${ns}:${name}`,
      uid: sa.metadata.uid!,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`],
      extra: {},
    };
  }
}
