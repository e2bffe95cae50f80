/**
 * admissionregistration.k8s.io/v1: MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration, as upstream Kubernetes 1.32
 * (`k8s.io/api/admissionregistration/v1`). Their webhooks sit in `webhooks`.
 */
import { bytes, enumString, int32, list, object, string, type Static } from '../schema/dsl.js';
import { LabelSelector, kindOf } from '../schema/meta.js';

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
