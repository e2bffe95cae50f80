/**
 * Bootstrap token Secrets as the bootstrap controllers read them
 * (k8s.io/cluster-bootstrap/token/api and util): `bootstrap-token-<id>` in
 * kube-system, of type `bootstrap.kubernetes.io/token`, with base64 data.
 */
import { CompactSign } from 'jose';
import type { KubeObject } from '@kubeling/api';

export const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';
/** The signed ConfigMap (kube-public/cluster-info), its kubeconfig key and the signatures' key prefix. */
export const CLUSTER_INFO = { namespace: 'kube-public', name: 'cluster-info', kubeconfigKey: 'kubeconfig', jwsPrefix: 'jws-kubeconfig-' } as const;

export type Secret = KubeObject & { type?: string; data?: Record<string, string> };

export const dataOf = (s: Secret, k: string): string => Buffer.from(s.data?.[k] ?? '', 'base64').toString('utf8');

/** When the token expires (ms), or undefined when it does not; NaN for an unparsable expiration. */
export function expiresAt(s: Secret): number | undefined {
  const exp = dataOf(s, 'expiration');
  return exp ? Date.parse(exp) : undefined;
}

/** The token `<id>.<secret>` a valid token Secret holds, or undefined (wrong type, name or form). */
export function tokenOf(s: Secret): { id: string; token: string } | undefined {
  if (s.type !== BOOTSTRAP_TOKEN_TYPE || !s.metadata.name?.startsWith(BOOTSTRAP_SECRET_PREFIX)) return undefined;
  const id = dataOf(s, 'token-id');
  const secret = dataOf(s, 'token-secret');
  if (s.metadata.name !== BOOTSTRAP_SECRET_PREFIX + id || !/^[a-z0-9]{6}$/.test(id) || !/^[a-z0-9]{16}$/.test(secret)) return undefined;
  return { id, token: `${id}.${secret}` };
}

/**
 * The detached JWS of `content` signed with `token` (HS256, kid = token id), as
 * cluster-bootstrap's jws.ComputeDetachedSignature: the compact form with its
 * payload left out (`header..signature`).
 */
export async function detachedSignature(content: string, id: string, token: string): Promise<string> {
  const jws = await new CompactSign(new TextEncoder().encode(content)).setProtectedHeader({ alg: 'HS256', kid: id }).sign(new TextEncoder().encode(token));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}
