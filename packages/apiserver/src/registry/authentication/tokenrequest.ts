/**
 * POST serviceaccounts/<name>/token (TokenRequest): a signed, expiring,
 * optionally pod-bound token for the ServiceAccount
 * (pkg/registry/core/serviceaccount/storage TokenREST).
 */
import type { KubeObject } from '@kubeling/api';
import { badRequest, failure, isPlainObject, rfc3339 } from '@kubeling/apimachinery';
import type { ServiceAccountTokens } from '../../auth/index.js';
import type { Store } from '../store.js';

interface TokenRequestSpec {
  audiences?: string[];
  expirationSeconds?: number;
  boundObjectRef?: { kind?: string; name?: string; uid?: string };
}

export async function createTokenRequest(
  deps: { serviceAccounts: Store; pods: Store; tokens: ServiceAccountTokens },
  ns: string | undefined,
  name: string,
  body: unknown,
  user: { name: string; groups: string[] } | undefined,
): Promise<Record<string, unknown>> {
  const sa = await deps.serviceAccounts.get(ns, name);
  if (!isPlainObject(body)) throw badRequest('TokenRequest must be a JSON object');
  const spec = ((body as { spec?: TokenRequestSpec }).spec ?? {}) as TokenRequestSpec;
  // Admission sees the TokenRequest as written (NodeRestriction binds kubelets' tokens to their pods).
  await deps.serviceAccounts.admission.admit(
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name, namespace: ns }, spec } as unknown as KubeObject,
    {
      operation: 'CREATE',
      resource: '/serviceaccounts',
      subresource: 'token',
      namespace: ns,
      name,
      ...(user ? { user } : {}),
    },
  );
  const invalid = (detail: string) => failure('Invalid', `TokenRequest.authentication.k8s.io "${name}" is invalid: ${detail}`);
  const exp = spec.expirationSeconds ?? 3600;
  if (!Number.isInteger(exp) || exp < 600) throw invalid(`spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration less than 10 minutes`);
  if (exp > 2 ** 32) throw invalid(`spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`);
  let pod: KubeObject | undefined;
  const ref = spec.boundObjectRef;
  if (ref) {
    if (ref.kind !== 'Pod' && ref.kind !== 'Secret')
      throw invalid(`spec.boundObjectRef.kind: Unsupported value: "${ref.kind}": supported values: "Pod", "Secret"`);
    if (ref.kind === 'Pod') {
      pod = await deps.pods.get(ns, ref.name ?? '');
      if (ref.uid && ref.uid !== pod.metadata.uid)
        throw failure(
          'Conflict',
          `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
    }
  }
  const audiences = spec.audiences?.length ? spec.audiences : deps.tokens.audiences;
  const t = await deps.tokens.issue(sa, { audiences, expirationSeconds: exp, ...(pod ? { pod } : {}) });
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: ns, creationTimestamp: null },
    spec: { audiences, expirationSeconds: exp, boundObjectRef: ref ? { ...ref, apiVersion: 'v1', ...(pod ? { uid: pod.metadata.uid } : {}) } : null },
    status: { token: t.token, expirationTimestamp: rfc3339(t.expirationTimestamp) },
  };
}
