/**
 * The authorization.k8s.io reviews, created and never stored: the three
 * subject access reviews (may this user do this) and SelfSubjectRulesReview
 * (what may I do in this namespace), answered by the apiserver's authorizer.
 */
import type { KubeObject } from '@kubeling/api';
import { failure } from '@kubeling/apimachinery';
import type { Attributes, Authorizer, RbacAuthorizer, UserInfo } from '../../auth/index.js';

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
  return { ...out, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } };
}

/** SelfSubjectRulesReview: the requester's RBAC rules in the namespace (everything without authorization). */
export function selfSubjectRulesReview(
  obj: KubeObject,
  deps: { authorizer?: Authorizer | undefined; rbac?: RbacAuthorizer | undefined; requester?: UserInfo | undefined },
): Record<string, unknown> {
  const ns = (obj as { spec?: { namespace?: string } }).spec?.namespace;
  let resourceRules: Record<string, unknown>[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
  let nonResourceRules: Record<string, unknown>[] = [{ verbs: ['*'], nonResourceURLs: ['*'] }];
  if (deps.authorizer && deps.rbac) {
    const user = deps.requester!;
    const rules = deps.rbac.rulesFor(user, ns);
    if (user.groups.includes('system:masters')) rules.unshift({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] });
    const dedupe = <T>(list: T[]) => [...new Map(list.map((x) => [JSON.stringify(x), x])).values()];
    resourceRules = dedupe(
      rules
        .filter((r) => r.resources?.length)
        .map((r) => ({
          verbs: r.verbs,
          apiGroups: r.apiGroups ?? [],
          resources: r.resources ?? [],
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        })),
    );
    nonResourceRules = dedupe(rules.filter((r) => r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })));
  }
  return { ...reviewed(obj, 'SelfSubjectRulesReview'), status: { resourceRules, nonResourceRules, incomplete: false } };
}
