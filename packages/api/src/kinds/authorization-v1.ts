/**
 * authorization.k8s.io/v1: SubjectAccessReview, SelfSubjectAccessReview,
 * LocalSubjectAccessReview and SelfSubjectRulesReview, as upstream Kubernetes
 * 1.32 (`k8s.io/api/authorization/v1`).
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, list, map, object, string, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelectorRequirement } from '../schema/meta.js';

const Z = 'io.k8s.api.authorization.v1.';

/** `metav1.FieldSelectorRequirement` (only used here). */
export const FieldSelectorRequirement = object(
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement',
  'FieldSelectorRequirement is a selector that contains values, a key, and an operator that relates the key and values.',
  {
    key: string('key is the field selector key that the requirement applies to.'),
    operator: string("operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists, DoesNotExist."),
    values: list(Type.String(), 'values is an array of string values; it must be non-empty for In and NotIn and empty for Exists and DoesNotExist.', {
      listType: 'atomic',
    }),
  },
  ['key', 'operator'],
);

export const FieldSelectorAttributes = object(Z + 'FieldSelectorAttributes', 'FieldSelectorAttributes indicates a field limited access.', {
  rawSelector: string('rawSelector is the serialization of a field selector that would be included in a query parameter.'),
  requirements: list(FieldSelectorRequirement, 'requirements is the parsed interpretation of a field selector.', { listType: 'atomic' }),
});

export const LabelSelectorAttributes = object(Z + 'LabelSelectorAttributes', 'LabelSelectorAttributes indicates a label limited access.', {
  rawSelector: string('rawSelector is the serialization of a label selector that would be included in a query parameter.'),
  requirements: list(LabelSelectorRequirement, 'requirements is the parsed interpretation of a label selector.', { listType: 'atomic' }),
});

export const ResourceAttributes = object(
  Z + 'ResourceAttributes',
  'ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface.',
  {
    namespace: string('namespace is the namespace of the action being requested; "" means all for namespaced resources.'),
    verb: string('verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy. "*" means all.'),
    group: string('group is the API Group of the Resource. "*" means all.'),
    version: string('version is the API Version of the Resource. "*" means all.'),
    resource: string('resource is one of the existing resource types. "*" means all.'),
    subresource: string('subresource is one of the existing resource types. "" means none.'),
    name: string('name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.'),
    fieldSelector: described(
      FieldSelectorAttributes,
      'fieldSelector describes the limitation on access based on field. It can only limit access, not broaden it.',
    ),
    labelSelector: described(
      LabelSelectorAttributes,
      'labelSelector describes the limitation on access based on labels. It can only limit access, not broaden it.',
    ),
  },
);

export const NonResourceAttributes = object(
  Z + 'NonResourceAttributes',
  'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface.',
  {
    path: string('path is the URL path of the request.'),
    verb: string('verb is the standard HTTP verb.'),
  },
);

export const SubjectAccessReviewSpec = object(
  Z + 'SubjectAccessReviewSpec',
  'SubjectAccessReviewSpec is a description of the access request; exactly one of resourceAttributes and nonResourceAttributes must be set.',
  {
    resourceAttributes: described(ResourceAttributes, 'resourceAttributes describes information for a resource access request.'),
    nonResourceAttributes: described(NonResourceAttributes, 'nonResourceAttributes describes information for a non-resource access request.'),
    user: string("user is the user you're testing for."),
    groups: list(Type.String(), "groups is the groups you're testing for.", { listType: 'atomic' }),
    extra: map(Type.Array(Type.String()), 'extra corresponds to the user.Info.GetExtra() method from the authenticator.'),
    uid: string('uid information about the requesting user.'),
  },
);

export const SelfSubjectAccessReviewSpec = object(
  Z + 'SelfSubjectAccessReviewSpec',
  'SelfSubjectAccessReviewSpec is a description of the access request; exactly one of resourceAttributes and nonResourceAttributes must be set.',
  {
    resourceAttributes: described(ResourceAttributes, 'resourceAttributes describes information for a resource access request.'),
    nonResourceAttributes: described(NonResourceAttributes, 'nonResourceAttributes describes information for a non-resource access request.'),
  },
);

export const SubjectAccessReviewStatus = object(
  Z + 'SubjectAccessReviewStatus',
  'SubjectAccessReviewStatus holds the result of an access review.',
  {
    allowed: boolean('allowed is true if the action would be allowed, false otherwise.'),
    denied: boolean('denied is optional. True if the action would be denied, otherwise false.'),
    reason: string('reason is optional. It indicates why a request was allowed or denied.'),
    evaluationError: string('evaluationError is an indication that some error occurred during the authorization check.'),
  },
  ['allowed'],
);

export const SubjectAccessReview = kindOf(Z + 'SubjectAccessReview', 'SubjectAccessReview checks whether or not a user or group can perform an action.', {
  spec: described(SubjectAccessReviewSpec, 'Spec holds information about the request being evaluated.'),
  status: described(SubjectAccessReviewStatus, 'Status is filled in by the server and indicates whether the request is allowed or not.'),
});

export const SelfSubjectAccessReview = kindOf(
  Z + 'SelfSubjectAccessReview',
  'SelfSubjectAccessReview checks whether or the current user can perform an action.',
  {
    spec: described(SelfSubjectAccessReviewSpec, 'Spec holds information about the request being evaluated. user and groups must be empty.'),
    status: described(SubjectAccessReviewStatus, 'Status is filled in by the server and indicates whether the request is allowed or not.'),
  },
);

export const LocalSubjectAccessReview = kindOf(
  Z + 'LocalSubjectAccessReview',
  'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace.',
  {
    spec: described(
      SubjectAccessReviewSpec,
      'Spec holds information about the request being evaluated; spec.namespace must be equal to the namespace of the request.',
    ),
    status: described(SubjectAccessReviewStatus, 'Status is filled in by the server and indicates whether the request is allowed or not.'),
  },
);

export const ResourceRule = object(
  Z + 'ResourceRule',
  'ResourceRule is the list of actions the subject is allowed to perform on resources.',
  {
    verbs: list(Type.String(), 'Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, delete, proxy. "*" means all.', {
      listType: 'atomic',
    }),
    apiGroups: list(Type.String(), 'APIGroups is the name of the APIGroup that contains the resources. "*" means all.', { listType: 'atomic' }),
    resources: list(Type.String(), 'Resources is a list of resources this rule applies to. "*" means all in the specified apiGroups.', { listType: 'atomic' }),
    resourceNames: list(Type.String(), 'ResourceNames is an optional white list of names that the rule applies to. "*" means all.', { listType: 'atomic' }),
  },
  ['verbs'],
);

export const NonResourceRule = object(
  Z + 'NonResourceRule',
  'NonResourceRule holds information that describes a rule for the non-resource.',
  {
    verbs: list(Type.String(), 'Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, patch, head, options. "*" means all.', {
      listType: 'atomic',
    }),
    nonResourceURLs: list(Type.String(), 'NonResourceURLs is a set of partial urls that a user should have access to. "*" means all.', { listType: 'atomic' }),
  },
  ['verbs'],
);

export const SelfSubjectRulesReviewSpec = object(
  Z + 'SelfSubjectRulesReviewSpec',
  'SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.',
  {
    namespace: string('Namespace to evaluate rules for. Required.'),
  },
);

export const SubjectRulesReviewStatus = object(
  Z + 'SubjectRulesReviewStatus',
  'SubjectRulesReviewStatus contains the result of a rules check, which can be incomplete.',
  {
    resourceRules: list(ResourceRule, 'ResourceRules is the list of actions the subject is allowed to perform on resources.', { listType: 'atomic' }),
    nonResourceRules: list(NonResourceRule, 'NonResourceRules is the list of actions the subject is allowed to perform on non-resources.', {
      listType: 'atomic',
    }),
    incomplete: boolean('Incomplete is true when the rules returned by this call are incomplete.'),
    evaluationError: string('EvaluationError can appear in combination with Rules and indicates an error occurred during rule evaluation.'),
  },
  ['resourceRules', 'nonResourceRules', 'incomplete'],
);

export const SelfSubjectRulesReview = kindOf(
  Z + 'SelfSubjectRulesReview',
  'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.',
  {
    spec: described(SelfSubjectRulesReviewSpec, 'Spec holds information about the request being evaluated.'),
    status: described(SubjectRulesReviewStatus, 'Status is filled in by the server and indicates the set of actions a user can perform.'),
  },
);

export type FieldSelectorRequirement = Static<typeof FieldSelectorRequirement>;
export type FieldSelectorAttributes = Static<typeof FieldSelectorAttributes>;
export type LabelSelectorAttributes = Static<typeof LabelSelectorAttributes>;
export type ResourceAttributes = Static<typeof ResourceAttributes>;
export type NonResourceAttributes = Static<typeof NonResourceAttributes>;
export type SubjectAccessReviewSpec = Static<typeof SubjectAccessReviewSpec>;
export type SelfSubjectAccessReviewSpec = Static<typeof SelfSubjectAccessReviewSpec>;
export type SubjectAccessReviewStatus = Static<typeof SubjectAccessReviewStatus>;
export type SubjectAccessReview = Static<typeof SubjectAccessReview>;
export type SelfSubjectAccessReview = Static<typeof SelfSubjectAccessReview>;
export type LocalSubjectAccessReview = Static<typeof LocalSubjectAccessReview>;
export type ResourceRule = Static<typeof ResourceRule>;
export type NonResourceRule = Static<typeof NonResourceRule>;
export type SelfSubjectRulesReviewSpec = Static<typeof SelfSubjectRulesReviewSpec>;
export type SubjectRulesReviewStatus = Static<typeof SubjectRulesReviewStatus>;
export type SelfSubjectRulesReview = Static<typeof SelfSubjectRulesReview>;
