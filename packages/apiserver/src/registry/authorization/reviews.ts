/**
 * The authorization.k8s.io reviews, created and never stored: the three
 * subject access reviews (may this user do this) and SelfSubjectRulesReview
 * (what may I do in this namespace), answered by the apiserver's authorizer:
 * its whole union, so that a webhook's denial is reported as `denied` and an
 * authorizer's failure as `evaluationError` (pkg/registry/authorization).
 */
import type { KubeObject } from '@kubeling/api';
import { failure } from '@kubeling/apimachinery';
import type { Attributes, Authorizer, RbacAuthorizer, RuleSet, UserInfo } from '../../auth/index.js';

const reviewed = (obj: KubeObject, kind: string) => ({
  ...obj,
  apiVersion: 'authorization.k8s.io/v1',
  kind,
  metadata: { ...(obj.metadata ?? {}), creationTimestamp: null },
});

/**
 * SubjectAccessReview, LocalSubjectAccessReview (in `namespace`) and
 * SelfSubjectAccessReview (of `requester`).
 */
export async function subjectAccessReview(
  kind: 'SubjectAccessReview' | 'LocalSubjectAccessReview' | 'SelfSubjectAccessReview',
  obj: KubeObject,
  deps: { authorizer?: Authorizer | undefined; requester?: UserInfo | undefined; namespace?: string | undefined },
): Promise<Record<string, unknown>> {
  const spec = ((obj as { spec?: Record<string, unknown> }).spec ?? {}) as {
    user?: string;
    uid?: string;
    groups?: string[];
    resourceAttributes?: Record<string, string>;
    nonResourceAttributes?: Record<string, string>;
  };
  const out = reviewed(obj, kind);
  if (!deps.authorizer) return { ...out, status: { allowed: true, reason: 'no authorizer is configured: every request is allowed' } };
  let user: UserInfo;
  if (kind === 'SelfSubjectAccessReview') user = deps.requester!;
  else {
    if (!spec.user && !(spec.groups ?? []).length)
      throw failure('Invalid', `${kind}.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`);
    user = { name: spec.user ?? '', ...(spec.uid ? { uid: spec.uid } : {}), groups: spec.groups ?? [] };
  }
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  if (!ra && !nra)
    throw failure(
      'Invalid',
      `${kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
    );
  if (kind === 'LocalSubjectAccessReview' && ra && ra.namespace !== deps.namespace)
    throw failure('BadRequest', `spec.resourceAttributes.namespace must match namespace: ${deps.namespace}`);
  const attrs: Attributes = ra
    ? {
        user,
        verb: ra.verb ?? '',
        isResourceRequest: true,
        ...(ra.namespace ? { namespace: ra.namespace } : {}),
        apiGroup: ra.group ?? '',
        resource: ra.resource ?? '',
        ...(ra.subresource ? { subresource: ra.subresource } : {}),
        ...(ra.name ? { name: ra.name } : {}),
      }
    : { user, verb: nra!.verb ?? '', isResourceRequest: false, path: nra!.path ?? '' };
  const d = await deps.authorizer.authorize(attrs);
  return {
    ...out,
    status: {
      allowed: d.allowed,
      ...(!d.allowed && d.denied ? { denied: true } : {}),
      ...(d.reason ? { reason: d.reason } : {}),
      ...(d.error ? { evaluationError: d.error } : {}),
    },
  };
}

/**
 * SelfSubjectRulesReview: the requester's rules in the namespace, from every
 * authorizer that can list them (RBAC, ABAC, AlwaysAllow); `incomplete` when
 * another (a webhook, the Node authorizer for a node) may allow more.
 * Everything without authorization.
 */
export function selfSubjectRulesReview(
  obj: KubeObject,
  deps: { authorizer?: Authorizer | undefined; rbac?: RbacAuthorizer | undefined; requester?: UserInfo | undefined },
): Record<string, unknown> {
  const ns = (obj as { spec?: { namespace?: string } }).spec?.namespace ?? '';
  let rules: RuleSet = {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  };
  if (deps.authorizer) {
    const user = deps.requester!;
    if (deps.authorizer.resolveRules) rules = deps.authorizer.resolveRules(user, ns);
    else if (deps.rbac) rules = deps.rbac.resolveRules(user, ns);
    else rules = { resourceRules: [], nonResourceRules: [], incomplete: true };
  }
  const dedupe = <T>(list: T[]) => [...new Map(list.map((x) => [JSON.stringify(x), x])).values()];
  return {
    ...reviewed(obj, 'SelfSubjectRulesReview'),
    status: {
      resourceRules: dedupe(rules.resourceRules),
      nonResourceRules: dedupe(rules.nonResourceRules),
      incomplete: rules.incomplete,
      ...(rules.error ? { evaluationError: rules.error } : {}),
    },
  };
}
