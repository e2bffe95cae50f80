/**
 * rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding, as upstream Kubernetes 1.32 (`k8s.io/api/rbac/v1`).
 * These kinds have no spec: `rules`, `subjects`, `roleRef` sit at the top level.
 */
import { Type } from '@sinclair/typebox';
import { described, list, object, string, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';

const R = 'io.k8s.api.rbac.v1.';

export const PolicyRule = object(
  R + 'PolicyRule',
  'PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.',
  {
    verbs: list(Type.String(), "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs.", {
      listType: 'atomic',
    }),
    apiGroups: list(
      Type.String(),
      'APIGroups is the name of the APIGroup that contains the resources; "" represents the core API group and "*" all API groups.',
      {
        listType: 'atomic',
      },
    ),
    resources: list(Type.String(), "Resources is a list of resources this rule applies to. '*' represents all resources.", { listType: 'atomic' }),
    resourceNames: list(
      Type.String(),
      'ResourceNames is an optional white list of names that the rule applies to. An empty set means that everything is allowed.',
      {
        listType: 'atomic',
      },
    ),
    nonResourceURLs: list(Type.String(), 'NonResourceURLs is a set of partial urls that a user should have access to; it only applies to ClusterRoles.', {
      listType: 'atomic',
    }),
  },
  ['verbs'],
);

export const Subject = object(
  R + 'Subject',
  'Subject contains a reference to the object or user identities a role binding applies to.',
  {
    kind: string('Kind of object being referenced. Values defined by this API group are "User", "Group", and "ServiceAccount".'),
    apiGroup: string(
      'APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects and "rbac.authorization.k8s.io" for User and Group subjects.',
    ),
    name: string('Name of the object being referenced.'),
    namespace: string('Namespace of the referenced object; must be empty for non-namespace objects such as "User" or "Group".'),
  },
  ['kind', 'name'],
);

export const RoleRef = object(
  R + 'RoleRef',
  'RoleRef contains information that points to the role being used.',
  {
    apiGroup: string('APIGroup is the group for the resource being referenced.'),
    kind: string('Kind is the type of resource being referenced.'),
    name: string('Name is the name of resource being referenced.'),
  },
  ['apiGroup', 'kind', 'name'],
);

export const AggregationRule = object(R + 'AggregationRule', 'AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole.', {
  clusterRoleSelectors: list(
    LabelSelector,
    "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules; if any of the selectors match, then the ClusterRole's permissions will be added.",
    {
      listType: 'atomic',
    },
  ),
});

export const Role = kindOf(R + 'Role', 'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.', {
  rules: list(PolicyRule, 'Rules holds all the PolicyRules for this Role.', { listType: 'atomic' }),
});

export const ClusterRole = kindOf(
  R + 'ClusterRole',
  'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.',
  {
    rules: list(PolicyRule, 'Rules holds all the PolicyRules for this ClusterRole.', { listType: 'atomic' }),
    aggregationRule: described(
      AggregationRule,
      'AggregationRule is an optional field that describes how to build the Rules for this ClusterRole; if set, the controller manages Rules.',
    ),
  },
);

export const RoleBinding = kindOf(
  R + 'RoleBinding',
  'RoleBinding references a role, but does not contain it; it adds who information via Subjects and namespace information by which namespace it exists in.',
  {
    subjects: list(Subject, 'Subjects holds references to the objects the role applies to.', { listType: 'atomic' }),
    roleRef: described(RoleRef, 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. Immutable.'),
  },
);

export const ClusterRoleBinding = kindOf(
  R + 'ClusterRoleBinding',
  'ClusterRoleBinding references a ClusterRole, but not contain it; it can add who information via Subject.',
  {
    subjects: list(Subject, 'Subjects holds references to the objects the role applies to.', { listType: 'atomic' }),
    roleRef: described(RoleRef, 'RoleRef can only reference a ClusterRole in the global namespace. Immutable.'),
  },
);

export type PolicyRule = Static<typeof PolicyRule>;
export type Subject = Static<typeof Subject>;
export type RoleRef = Static<typeof RoleRef>;
export type AggregationRule = Static<typeof AggregationRule>;
export type Role = Static<typeof Role>;
export type ClusterRole = Static<typeof ClusterRole>;
export type RoleBinding = Static<typeof RoleBinding>;
export type ClusterRoleBinding = Static<typeof ClusterRoleBinding>;
