/**
 * flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration,
 * the configuration of API Priority and Fairness, as upstream Kubernetes 1.33
 * (`k8s.io/api/flowcontrol/v1`). Both are cluster-scoped and have a status
 * subresource. Defaulting and validation live in the apiserver's strategy
 * (registry/flowcontrol), as upstream's pkg/apis/flowcontrol/v1 defaults.go and
 * pkg/apis/flowcontrol/validation do.
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, enumString, int32, list, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const F = 'io.k8s.api.flowcontrol.v1.';

/** The annotation that lets the apiserver keep a bootstrap object's spec up to date. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';
/** Response headers naming (by UID) the FlowSchema and priority level a request was classified into. */
export const HEADER_FLOW_SCHEMA_UID = 'X-Kubernetes-PF-FlowSchema-UID';
export const HEADER_PRIORITY_LEVEL_UID = 'X-Kubernetes-PF-PriorityLevel-UID';

const set = { listType: 'set' as const };
const atomic = { listType: 'atomic' as const };

// ---------------------------------------------------------------- FlowSchema

export const UserSubject = object(
  F + 'UserSubject',
  'UserSubject holds detailed information for user-kind subject.',
  {
    name: string('`name` is the username that matches, or "*" to match all usernames. Required.'),
  },
  ['name'],
);

export const GroupSubject = object(
  F + 'GroupSubject',
  'GroupSubject holds detailed information for group-kind subject.',
  {
    name: string('name is the user group that matches, or "*" to match all user groups. Required.'),
  },
  ['name'],
);

export const ServiceAccountSubject = object(
  F + 'ServiceAccountSubject',
  'ServiceAccountSubject holds detailed information for service-account-kind subject.',
  {
    namespace: string('`namespace` is the namespace of matching ServiceAccount objects. Required.'),
    name: string('`name` is the name of matching ServiceAccount objects, or "*" to match regardless of name. Required.'),
  },
  ['namespace', 'name'],
);

export const Subject = object(
  F + 'Subject',
  'Subject matches the originator of a request, as identified by the request authentication system. Exactly one of `user`, `group` or `serviceAccount` is set, as `kind` says.',
  {
    kind: enumString(['Group', 'ServiceAccount', 'User'], '`kind` indicates which one of the other fields is non-empty. Required'),
    user: described(UserSubject, '`user` matches based on username.'),
    group: described(GroupSubject, '`group` matches based on user group name.'),
    serviceAccount: described(ServiceAccountSubject, '`serviceAccount` matches ServiceAccounts.'),
  },
  ['kind'],
);

export const ResourcePolicyRule = object(
  F + 'ResourcePolicyRule',
  "ResourcePolicyRule is a predicate that matches some resource requests, testing the request's verb and the target resource. A ResourcePolicyRule matches a resource request if and only if: (a) at least one member of verbs matches the request, (b) at least one member of apiGroups matches the request, (c) at least one member of resources matches the request, and (d) either (d1) the request does not specify a namespace and clusterScope is true or (d2) the request specifies a namespace and at least one member of namespaces matches it.",
  {
    verbs: list(
      Type.String(),
      '`verbs` is a list of matching verbs and may not be empty. "*" matches all verbs and, if present, must be the only entry. Required.',
      set,
    ),
    apiGroups: list(
      Type.String(),
      '`apiGroups` is a list of matching API groups and may not be empty. "*" matches all API groups and, if present, must be the only entry. Required.',
      set,
    ),
    resources: list(
      Type.String(),
      '`resources` is a list of matching resources (i.e., lowercase and plural) with, if desired, subresource, e.g. "services" or "nodes/status". "*" matches all resources and, if present, must be the only entry. Required.',
      set,
    ),
    clusterScope: boolean(
      '`clusterScope` indicates whether to match requests that do not specify a namespace (which happens either because the resource is not namespaced or the request targets all namespaces).',
    ),
    namespaces: list(
      Type.String(),
      '`namespaces` is a list of target namespaces that restricts matches. A request that specifies a target namespace matches only if either (a) this list contains that target namespace or (b) this list contains "*".',
      set,
    ),
  },
  ['verbs', 'apiGroups', 'resources'],
);

export const NonResourcePolicyRule = object(
  F + 'NonResourcePolicyRule',
  'NonResourcePolicyRule is a predicate that matches non-resource requests according to their verb and the target non-resource URL. A NonResourcePolicyRule matches a request if and only if both (a) at least one member of verbs matches the request and (b) at least one member of nonResourceURLs matches the request.',
  {
    verbs: list(
      Type.String(),
      '`verbs` is a list of matching verbs and may not be empty. "*" matches all verbs. If it is present, it must be the only entry. Required.',
      set,
    ),
    nonResourceURLs: list(
      Type.String(),
      '`nonResourceURLs` is a set of url prefixes that a user should have access to and may not be empty. For example: "/healthz" is legal, "/hea*" is illegal, "/hea" is legal but matches nothing, "/hea/*" also matches nothing, "/healthz/*" matches all per-component health checks. "*" matches all non-resource urls. If it is present, it must be the only entry. Required.',
      set,
    ),
  },
  ['verbs', 'nonResourceURLs'],
);

export const PolicyRulesWithSubjects = object(
  F + 'PolicyRulesWithSubjects',
  'PolicyRulesWithSubjects prescribes a test that applies to a request to an apiserver. The test considers the subject making the request, the verb being requested, and the resource to be acted upon. This PolicyRulesWithSubjects matches a request if and only if both (a) at least one member of subjects matches the request and (b) at least one member of resourceRules or nonResourceRules matches the request.',
  {
    subjects: list(
      Subject,
      'subjects is the list of normal user, serviceaccount, or group that this rule cares about. There must be at least one member in this slice. Required.',
      atomic,
    ),
    resourceRules: list(
      ResourcePolicyRule,
      '`resourceRules` is a slice of ResourcePolicyRules that identify matching requests according to their verb and the target resource.',
      atomic,
    ),
    nonResourceRules: list(
      NonResourcePolicyRule,
      '`nonResourceRules` is a list of NonResourcePolicyRules that identify matching requests according to their verb and the target non-resource URL.',
      atomic,
    ),
  },
  ['subjects'],
);

export const PriorityLevelConfigurationReference = object(
  F + 'PriorityLevelConfigurationReference',
  'PriorityLevelConfigurationReference contains information that points to the "request-priority" being used.',
  { name: string('`name` is the name of the priority level configuration being referenced Required.') },
  ['name'],
);

export const FlowDistinguisherMethod = object(
  F + 'FlowDistinguisherMethod',
  'FlowDistinguisherMethod specifies the method of a flow distinguisher.',
  {
    type: enumString(
      ['ByNamespace', 'ByUser'],
      '`type` is the type of flow distinguisher method. The supported types are "ByUser" and "ByNamespace". Required.',
    ),
  },
  ['type'],
);

export const FlowSchemaSpec = object(
  F + 'FlowSchemaSpec',
  "FlowSchemaSpec describes how the FlowSchema's specification looks like.",
  {
    priorityLevelConfiguration: described(
      PriorityLevelConfigurationReference,
      '`priorityLevelConfiguration` should reference a PriorityLevelConfiguration in the cluster. If the reference cannot be resolved, the FlowSchema will be ignored and marked as invalid in its status. Required.',
    ),
    matchingPrecedence: int32(
      '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence. Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.',
    ),
    distinguisherMethod: described(
      FlowDistinguisherMethod,
      '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.',
    ),
    rules: list(
      PolicyRulesWithSubjects,
      '`rules` describes which requests will match this flow schema. This FlowSchema matches a request if and only if at least one member of rules matches the request. if it is an empty slice, there will be no requests matching the FlowSchema.',
      atomic,
    ),
  },
  ['priorityLevelConfiguration'],
);

export const FlowSchemaCondition = object(F + 'FlowSchemaCondition', 'FlowSchemaCondition describes conditions for a FlowSchema.', {
  type: string('`type` is the type of the condition. Required.'),
  status: string('`status` is the status of the condition. Can be True, False, Unknown. Required.'),
  lastTransitionTime: time('`lastTransitionTime` is the last time the condition transitioned from one status to another.'),
  reason: string("`reason` is a unique, one-word, CamelCase reason for the condition's last transition."),
  message: string('`message` is a human-readable message indicating details about last transition.'),
});

const conditions = { mergeKey: 'type', strategy: 'merge' as const, listType: 'map' as const, mapKeys: ['type'] };

export const FlowSchemaStatus = object(F + 'FlowSchemaStatus', 'FlowSchemaStatus represents the current state of a FlowSchema.', {
  conditions: list(FlowSchemaCondition, '`conditions` is a list of the current states of FlowSchema.', conditions),
});

export const FlowSchema = kindOf(
  F + 'FlowSchema',
  'FlowSchema defines the schema of a group of flows. Note that a flow is made up of a set of inbound API requests with similar attributes and is identified by a pair of strings: the name of the FlowSchema and a "flow distinguisher".',
  {
    spec: described(FlowSchemaSpec, '`spec` is the specification of the desired behavior of a FlowSchema.'),
    status: described(FlowSchemaStatus, '`status` is the current status of a FlowSchema.'),
  },
);

// ---------------------------------------------------------------- PriorityLevelConfiguration

export const QueuingConfiguration = object(F + 'QueuingConfiguration', 'QueuingConfiguration holds the configuration parameters for queuing', {
  queues: int32(
    '`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive. Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant. This field has a default value of 64.',
  ),
  handSize: int32(
    "`handSize` is a small positive number that configures the shuffle sharding of requests into queues. When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here. The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`. This field has a default value of 8.",
  ),
  queueLengthLimit: int32(
    '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected. This value must be positive. If not specified, it will be defaulted to 50.',
  ),
});

export const LimitResponse = object(
  F + 'LimitResponse',
  'LimitResponse defines how to handle requests that can not be executed right now.',
  {
    type: enumString(
      ['Queue', 'Reject'],
      '`type` is "Queue" or "Reject". "Queue" means that requests that can not be executed upon arrival are held in a queue until they can be executed or a queuing limit is reached. "Reject" means that requests that can not be executed upon arrival are rejected. Required.',
    ),
    queuing: described(
      QueuingConfiguration,
      '`queuing` holds the configuration parameters for queuing. This field may be non-empty only if `type` is `"Queue"`.',
    ),
  },
  ['type'],
);

export const LimitedPriorityLevelConfiguration = object(
  F + 'LimitedPriorityLevelConfiguration',
  'LimitedPriorityLevelConfiguration specifies how to handle requests that are subject to limits. It addresses two issues: how are requests for this priority level limited, and what should be done with requests that exceed the limit?',
  {
    nominalConcurrencyShares: int32(
      '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level: NominalCL(i) = ceil( ServerCL * NCS(i) / sum_ncs ), sum_ncs = sum[priority level k] NCS(k). If not specified, this field defaults to a value of 30. Setting this field to zero supports the construction of a "jail" for this priority level that is used to hold some request(s).',
    ),
    limitResponse: described(LimitResponse, '`limitResponse` indicates what to do with requests that can not be executed right now'),
    lendablePercent: int32(
      "`lendablePercent` prescribes the fraction of the level's NominalCL that can be borrowed by other priority levels. The value of this field must be between 0 and 100, inclusive, and it defaults to 0.",
    ),
    borrowingLimitPercent: int32(
      "`borrowingLimitPercent`, if present, configures a limit on how many seats this priority level can borrow from other priority levels, as a percentage of the level's NominalCL. When this field is left nil, the limit is effectively infinite.",
    ),
  },
);

export const ExemptPriorityLevelConfiguration = object(
  F + 'ExemptPriorityLevelConfiguration',
  'ExemptPriorityLevelConfiguration describes the configurable aspects of the handling of exempt requests. In the mandatory exempt configuration object the values in the fields here can be modified by authorized users, unlike the rest of the `spec`.',
  {
    nominalConcurrencyShares: int32(
      '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats nominally reserved for this priority level. This DOES NOT limit the dispatching from this priority level but affects the other priority levels through the borrowing mechanism. The default value is zero.',
    ),
    lendablePercent: int32(
      "`lendablePercent` prescribes the fraction of the level's NominalCL that can be borrowed by other priority levels. This value of this field must be between 0 and 100, inclusive, and it defaults to 0.",
    ),
  },
);

export const PriorityLevelConfigurationSpec = object(
  F + 'PriorityLevelConfigurationSpec',
  'PriorityLevelConfigurationSpec specifies the configuration of a priority level.',
  {
    type: enumString(
      ['Exempt', 'Limited'],
      '`type` indicates whether this priority level is subject to limitation on request execution. A value of `"Exempt"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels. A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.',
    ),
    limited: described(
      LimitedPriorityLevelConfiguration,
      '`limited` specifies how requests are handled for a Limited priority level. This field must be non-empty if and only if `type` is `"Limited"`.',
    ),
    exempt: described(
      ExemptPriorityLevelConfiguration,
      '`exempt` specifies how requests are handled for an exempt priority level. This field MUST be empty if `type` is `"Limited"`.',
    ),
  },
  ['type'],
);

export const PriorityLevelConfigurationCondition = object(
  F + 'PriorityLevelConfigurationCondition',
  'PriorityLevelConfigurationCondition defines the condition of priority level.',
  {
    type: string('`type` is the type of the condition. Required.'),
    status: string('`status` is the status of the condition. Can be True, False, Unknown. Required.'),
    lastTransitionTime: time('`lastTransitionTime` is the last time the condition transitioned from one status to another.'),
    reason: string("`reason` is a unique, one-word, CamelCase reason for the condition's last transition."),
    message: string('`message` is a human-readable message indicating details about last transition.'),
  },
);

export const PriorityLevelConfigurationStatus = object(
  F + 'PriorityLevelConfigurationStatus',
  'PriorityLevelConfigurationStatus represents the current state of a "request-priority".',
  { conditions: list(PriorityLevelConfigurationCondition, '`conditions` is the current state of "request-priority".', conditions) },
);

export const PriorityLevelConfiguration = kindOf(
  F + 'PriorityLevelConfiguration',
  'PriorityLevelConfiguration represents the configuration of a priority level.',
  {
    spec: described(PriorityLevelConfigurationSpec, '`spec` is the specification of the desired behavior of a "request-priority".'),
    status: described(PriorityLevelConfigurationStatus, '`status` is the current status of a "request-priority".'),
  },
);

export type Subject = Static<typeof Subject>;
export type ResourcePolicyRule = Static<typeof ResourcePolicyRule>;
export type NonResourcePolicyRule = Static<typeof NonResourcePolicyRule>;
export type PolicyRulesWithSubjects = Static<typeof PolicyRulesWithSubjects>;
export type FlowSchemaSpec = Static<typeof FlowSchemaSpec>;
export type FlowSchemaCondition = Static<typeof FlowSchemaCondition>;
export type FlowSchema = Static<typeof FlowSchema>;
export type QueuingConfiguration = Static<typeof QueuingConfiguration>;
export type LimitedPriorityLevelConfiguration = Static<typeof LimitedPriorityLevelConfiguration>;
export type ExemptPriorityLevelConfiguration = Static<typeof ExemptPriorityLevelConfiguration>;
export type PriorityLevelConfigurationSpec = Static<typeof PriorityLevelConfigurationSpec>;
export type PriorityLevelConfiguration = Static<typeof PriorityLevelConfiguration>;
