/**
 * admissionregistration.k8s.io/v1: MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration, as upstream Kubernetes 1.32
 * (`k8s.io/api/admissionregistration/v1`). Their webhooks sit in `webhooks`.
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (1.30+) follow them.
 */
import { bytes, enumString, int32, int64, list, object, string, type Static } from '../schema/dsl.js';
import { Condition, LabelSelector, kindOf } from '../schema/meta.js';

const A = 'io.k8s.api.admissionregistration.v1.';

export const ServiceReference = object(
  A + 'ServiceReference',
  'ServiceReference holds a reference to Service.legacy.k8s.io',
  {
    namespace: string('namespace is the namespace of the service.'),
    name: string('name is the name of the service.'),
    path: string('path is an optional URL path which will be sent in any request to this service.'),
    port: int32('If specified, the port on the service that hosting webhook. Default to 443.'),
  },
  ['namespace', 'name'],
);

export const WebhookClientConfig = object(A + 'WebhookClientConfig', 'WebhookClientConfig contains the information to make a TLS connection with the webhook', {
  url: string('url gives the location of the webhook, in standard URL form (`scheme://host:port/path`).'),
  service: ServiceReference,
  caBundle: bytes("caBundle is a PEM encoded CA bundle which will be used to validate the webhook's server certificate."),
});

export const RuleWithOperations = object(A + 'RuleWithOperations', 'RuleWithOperations is a tuple of Operations and Resources.', {
  operations: list(string(), 'Operations is the operations the admission hook cares about - CREATE, UPDATE, DELETE, CONNECT or * for all.', {
    listType: 'atomic',
  }),
  apiGroups: list(string(), "APIGroups is the API groups the resources belong to. '*' is all groups.", { listType: 'atomic' }),
  apiVersions: list(string(), "APIVersions is the API versions the resources belong to. '*' is all versions.", { listType: 'atomic' }),
  resources: list(string(), 'Resources is a list of resources this rule applies to.', { listType: 'atomic' }),
  scope: enumString(['Cluster', 'Namespaced', '*'], 'scope specifies the scope of this rule.'),
});

export const MatchCondition = object(
  A + 'MatchCondition',
  'MatchCondition represents a condition which must by fulfilled for a request to be sent to a webhook.',
  {
    name: string(
      'Name is an identifier for this match condition, used for strategic merging of MatchConditions, as well as providing an identifier for logging purposes.',
    ),
    expression: string('Expression represents the expression which will be evaluated by CEL. Must evaluate to bool.'),
  },
  ['name', 'expression'],
);

const matchConditions = list(MatchCondition, 'MatchConditions is a list of conditions that must be met for a request to be sent to this webhook.', {
  mergeKey: 'name',
  strategy: 'merge',
  listType: 'map',
  mapKeys: ['name'],
});

const webhookFields = {
  name: string('The name of the admission webhook.'),
  clientConfig: WebhookClientConfig,
  rules: list(RuleWithOperations, 'Rules describes what operations on what resources/subresources the webhook cares about.', { listType: 'atomic' }),
  failurePolicy: enumString(
    ['Ignore', 'Fail'],
    'FailurePolicy defines how unrecognized errors from the admission endpoint are handled - allowed values are Ignore or Fail. Defaults to Fail.',
  ),
  matchPolicy: enumString(['Exact', 'Equivalent'], 'matchPolicy defines how the "rules" list is used to match incoming requests.'),
  namespaceSelector: LabelSelector,
  objectSelector: LabelSelector,
  sideEffects: enumString(['Unknown', 'None', 'Some', 'NoneOnDryRun'], 'SideEffects states whether this webhook has side effects.'),
  timeoutSeconds: int32('TimeoutSeconds specifies the timeout for this webhook. Default to 10 seconds.'),
  admissionReviewVersions: list(string(), 'AdmissionReviewVersions is an ordered list of preferred `AdmissionReview` versions the Webhook expects.', {
    listType: 'atomic',
  }),
  matchConditions,
};

export const MutatingWebhook = object(
  A + 'MutatingWebhook',
  'MutatingWebhook describes an admission webhook and the resources and operations it applies to.',
  {
    ...webhookFields,
    reinvocationPolicy: enumString(
      ['Never', 'IfNeeded'],
      'reinvocationPolicy indicates whether this webhook should be called multiple times as part of a single admission evaluation.',
    ),
  },
  ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'],
);

export const ValidatingWebhook = object(
  A + 'ValidatingWebhook',
  'ValidatingWebhook describes an admission webhook and the resources and operations it applies to.',
  webhookFields,
  ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'],
);

export const MutatingWebhookConfiguration = kindOf(
  A + 'MutatingWebhookConfiguration',
  'MutatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and may change the object.',
  {
    webhooks: list(MutatingWebhook, 'Webhooks is a list of webhooks and the affected resources and operations.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
  },
);

export const ValidatingWebhookConfiguration = kindOf(
  A + 'ValidatingWebhookConfiguration',
  'ValidatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject and object without changing it.',
  {
    webhooks: list(ValidatingWebhook, 'Webhooks is a list of webhooks and the affected resources and operations.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
  },
);

export type MutatingWebhookConfiguration = Static<typeof MutatingWebhookConfiguration>;
export type ValidatingWebhookConfiguration = Static<typeof ValidatingWebhookConfiguration>;

// ---- ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding -------------------------------

export const ParamKind = object(A + 'ParamKind', 'ParamKind is a tuple of Group Kind and Version.', {
  apiVersion: string('APIVersion is the API group version the resources belong to. In format of "group/version". Required.'),
  kind: string('Kind is the API kind the resources belong to. Required.'),
});

export const NamedRuleWithOperations = object(
  A + 'NamedRuleWithOperations',
  'NamedRuleWithOperations is a tuple of Operations and Resources with ResourceNames.',
  {
    resourceNames: list(
      string(),
      'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.',
      {
        listType: 'atomic',
      },
    ),
    ...RuleWithOperations.properties,
  },
);

export const MatchResources = object(
  A + 'MatchResources',
  'MatchResources decides whether to run the admission control policy on an object based on whether it meets the match criteria. The exclude rules take precedence over include rules (if a resource matches both, it is excluded)',
  {
    namespaceSelector: LabelSelector,
    objectSelector: LabelSelector,
    resourceRules: list(
      NamedRuleWithOperations,
      'ResourceRules describes what operations on what resources/subresources the ValidatingAdmissionPolicy matches.',
      {
        listType: 'atomic',
      },
    ),
    excludeResourceRules: list(
      NamedRuleWithOperations,
      'ExcludeResourceRules describes what operations on what resources/subresources the ValidatingAdmissionPolicy should not care about.',
      { listType: 'atomic' },
    ),
    matchPolicy: enumString(['Exact', 'Equivalent'], 'matchPolicy defines how the "MatchResources" list is used to match incoming requests.'),
  },
);

export const Validation = object(
  A + 'Validation',
  'Validation specifies the CEL expression which is used to apply the validation.',
  {
    expression: string('Expression represents the expression which will be evaluated by CEL.'),
    message: string('Message represents the message displayed when validation fails.'),
    reason: string('Reason represents a machine-readable description of why this validation failed.'),
    messageExpression: string(
      'messageExpression declares a CEL expression that evaluates to the validation failure message that is returned when this rule fails.',
    ),
  },
  ['expression'],
);

export const AuditAnnotation = object(
  A + 'AuditAnnotation',
  'AuditAnnotation describes how to produce an audit annotation for an API request.',
  {
    key: string('key specifies the audit annotation key.'),
    valueExpression: string('valueExpression represents the expression which is evaluated by CEL to produce an audit annotation value.'),
  },
  ['key', 'valueExpression'],
);

export const Variable = object(
  A + 'Variable',
  'Variable is the definition of a variable that is used for composition. A variable is defined as a named expression.',
  {
    name: string('Name is the name of the variable. The name must be a valid CEL identifier and unique among all variables.'),
    expression: string('Expression is the expression that will be evaluated as the value of the variable.'),
  },
  ['name', 'expression'],
);

export const ValidatingAdmissionPolicySpec = object(
  A + 'ValidatingAdmissionPolicySpec',
  'ValidatingAdmissionPolicySpec is the specification of the desired behavior of the AdmissionPolicy.',
  {
    paramKind: ParamKind,
    matchConstraints: MatchResources,
    validations: list(Validation, 'Validations contain CEL expressions which is used to apply the validation.', { listType: 'atomic' }),
    failurePolicy: enumString(['Ignore', 'Fail'], 'failurePolicy defines how to handle failures for the admission policy. Defaults to Fail.'),
    auditAnnotations: list(
      AuditAnnotation,
      'auditAnnotations contains CEL expressions which are used to produce audit annotations for the audit event of the API request.',
      {
        listType: 'atomic',
      },
    ),
    matchConditions: list(MatchCondition, 'MatchConditions is a list of conditions that must be met for a request to be validated.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
    variables: list(Variable, 'Variables contain definitions of variables that can be used in composition of other expressions.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
  },
);

export const ExpressionWarning = object(
  A + 'ExpressionWarning',
  'ExpressionWarning is a warning information that targets a specific expression.',
  {
    fieldRef: string('The path to the field that refers the expression.'),
    warning: string('The content of type checking information in a human-readable form.'),
  },
  ['fieldRef', 'warning'],
);

export const TypeChecking = object(A + 'TypeChecking', 'TypeChecking contains results of type checking the expressions in the ValidatingAdmissionPolicy', {
  expressionWarnings: list(ExpressionWarning, 'The type checking warnings for each expression.', { listType: 'atomic' }),
});

export const ValidatingAdmissionPolicyStatus = object(
  A + 'ValidatingAdmissionPolicyStatus',
  'ValidatingAdmissionPolicyStatus represents the status of an admission validation policy.',
  {
    observedGeneration: int64('The generation observed by the controller.'),
    typeChecking: TypeChecking,
    conditions: list(Condition, "The conditions represent the latest available observations of a policy's current state.", {
      listType: 'map',
      mapKeys: ['type'],
    }),
  },
);

export const ValidatingAdmissionPolicy = kindOf(
  A + 'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicy describes the definition of an admission validation policy that accepts or rejects an object without changing it.',
  { spec: ValidatingAdmissionPolicySpec, status: ValidatingAdmissionPolicyStatus },
);

export const ParamRef = object(
  A + 'ParamRef',
  'ParamRef describes how to locate the params to be used as input to expressions of rules applied by a policy binding.',
  {
    name: string('name is the name of the resource being referenced.'),
    namespace: string('namespace is the namespace of the referenced resource.'),
    selector: LabelSelector,
    parameterNotFoundAction: enumString(
      ['Allow', 'Deny'],
      '`parameterNotFoundAction` controls the behavior of the binding when the resource exists, and name or selector is valid, but there are no parameters matched by the binding.',
    ),
  },
);

export const ValidatingAdmissionPolicyBindingSpec = object(
  A + 'ValidatingAdmissionPolicyBindingSpec',
  'ValidatingAdmissionPolicyBindingSpec is the specification of the ValidatingAdmissionPolicyBinding.',
  {
    policyName: string('PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding binds to.'),
    paramRef: ParamRef,
    matchResources: MatchResources,
    validationActions: list(string(), 'validationActions declares how Validations of the referenced ValidatingAdmissionPolicy are enforced.', {
      listType: 'set',
    }),
  },
);

export const ValidatingAdmissionPolicyBinding = kindOf(
  A + 'ValidatingAdmissionPolicyBinding',
  'ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized resources.',
  { spec: ValidatingAdmissionPolicyBindingSpec },
);

export type MatchCondition = Static<typeof MatchCondition>;
export type MatchResources = Static<typeof MatchResources>;
export type NamedRuleWithOperations = Static<typeof NamedRuleWithOperations>;
export type ParamRef = Static<typeof ParamRef>;
export type ValidatingAdmissionPolicy = Static<typeof ValidatingAdmissionPolicy>;
export type ValidatingAdmissionPolicyBinding = Static<typeof ValidatingAdmissionPolicyBinding>;
