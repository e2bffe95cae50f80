/**
 * The params of a (policy, binding) pair (k8s.io/apiserver
 * pkg/admission/plugin/policy/generic/policy_dispatcher.go CollectParams):
 * none when the policy has no paramKind (the `params` variable is not
 * declared) or the binding no paramRef (`params` is null); otherwise the
 * object named by paramRef.name, or every object paramRef.selector selects,
 * in paramRef.namespace or, for a namespaced paramKind, the request's
 * namespace. Finding none is an error only with parameterNotFoundAction Deny.
 * Errors are configuration errors of the binding (the caller applies the
 * policy's failurePolicy).
 */
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { StatusError, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { ObjectReader } from '../lookups.js';

export interface ParamSource {
  reader: ObjectReader;
  namespaced: boolean;
}

/** `undefined`: no params variable; `null`: declared but unset. */
export type Param = KubeObject | null | undefined;

const isNotFound = (e: unknown) => e instanceof StatusError && e.status.reason === 'NotFound';

export async function collectParams(
  paramKind: { apiVersion?: string; kind?: string } | undefined,
  source: ParamSource | undefined,
  paramRef: admissionregistrationv1.ParamRef | undefined,
  namespace: string,
): Promise<Param[]> {
  if (!paramKind) return [undefined];
  if (!paramRef) return [null];
  if (!source) throw new Error(`paramKind kind \`${paramKindString(paramKind)}\` not known`);
  let ns: string | undefined;
  if (source.namespaced) {
    ns = paramRef.namespace || namespace;
    if (!ns) throw new Error('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (paramRef.namespace) {
    throw new Error('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: KubeObject[] = [];
  if (paramRef.name) {
    if (paramRef.selector) throw new Error('paramRef.name and paramRef.selector are mutually exclusive');
    try {
      params = [await source.reader.get(ns, paramRef.name, '0')];
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  } else if (paramRef.selector) {
    const selector = selectorFromLabelSelector(paramRef.selector);
    const { items } = await source.reader.list(ns, { resourceVersion: '0' });
    params = items.filter((o) => selector.matches(o.metadata.labels ?? {}));
  } else {
    throw new Error('one of name or selector must be provided');
  }
  if (!params.length && paramRef.parameterNotFoundAction === 'Deny') throw new Error('no params found for policy binding with `Deny` parameterNotFoundAction');
  return params;
}

/** ParamKind.String() of the generated Go type. */
export const paramKindString = (pk: { apiVersion?: string; kind?: string }) => `&ParamKind{APIVersion:${pk.apiVersion ?? ''},Kind:${pk.kind ?? ''},}`;
