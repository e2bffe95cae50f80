/**
 * autoscaling/v2: HorizontalPodAutoscaler as upstream Kubernetes 1.33
 * (`k8s.io/api/autoscaling/v2`): metrics of five source types, scaling
 * behavior (stabilization windows, rate policies, per-direction tolerance) and
 * the status the horizontal-pod-autoscaler controller writes. It is the storage
 * version of HorizontalPodAutoscalers; autoscaling/v1 is a view of it.
 */
import { described, enumString, int32, int64, list, object, quantity, string, time, type ListOptions, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';

const S = 'io.k8s.api.autoscaling.v2.';

const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'] as const;
const METRIC_TARGET_TYPES = ['AverageValue', 'Utilization', 'Value'] as const;

export const CrossVersionObjectReference = object(
  S + 'CrossVersionObjectReference',
  'CrossVersionObjectReference contains enough information to let you identify the referred resource.',
  {
    kind: string('kind is the kind of the referent.'),
    name: string('name is the name of the referent.'),
    apiVersion: string('apiVersion is the API version of the referent'),
  },
  ['kind', 'name'],
);

export const MetricIdentifier = object(
  S + 'MetricIdentifier',
  'MetricIdentifier defines the name and optionally selector for a metric',
  {
    name: string('name is the name of the given metric'),
    selector: described(
      LabelSelector,
      'selector is the string-encoded form of a standard kubernetes label selector for the given metric. When set, it is passed as an additional parameter to the metrics server for more specific metrics scoping.',
    ),
  },
  ['name'],
);

export const MetricTarget = object(
  S + 'MetricTarget',
  'MetricTarget defines the target value, average value, or average utilization of a specific metric',
  {
    type: enumString(METRIC_TARGET_TYPES, 'type represents whether the metric type is Utilization, Value, or AverageValue'),
    value: quantity('value is the target value of the metric (as a quantity).'),
    averageValue: quantity('averageValue is the target value of the average of the metric across all relevant pods (as a quantity)'),
    averageUtilization: int32(
      'averageUtilization is the target value of the average of the resource metric across all relevant pods, represented as a percentage of the requested value of the resource for the pods. Currently only valid for Resource metric source type',
    ),
  },
  ['type'],
);

export const MetricValueStatus = object(S + 'MetricValueStatus', 'MetricValueStatus holds the current value for a metric', {
  value: quantity('value is the current value of the metric (as a quantity).'),
  averageValue: quantity('averageValue is the current value of the average of the metric across all relevant pods (as a quantity)'),
  averageUtilization: int32(
    'currentAverageUtilization is the current value of the average of the resource metric across all relevant pods, represented as a percentage of the requested value of the resource for the pods.',
  ),
});

const target = (d: string) => described(MetricTarget, d);
const current = described(MetricValueStatus, 'current contains the current value for the given metric');
const metric = described(MetricIdentifier, 'metric identifies the target metric by name and selector');

export const ObjectMetricSource = object(
  S + 'ObjectMetricSource',
  'ObjectMetricSource indicates how to scale on a metric describing a kubernetes object (for example, hits-per-second on an Ingress object).',
  {
    describedObject: described(CrossVersionObjectReference, 'describedObject specifies the descriptions of a object,such as kind,name apiVersion'),
    target: target('target specifies the target value for the given metric'),
    metric,
  },
  ['describedObject', 'target', 'metric'],
);

export const PodsMetricSource = object(
  S + 'PodsMetricSource',
  'PodsMetricSource indicates how to scale on a metric describing each pod in the current scale target (for example, transactions-processed-per-second). The values will be averaged together before being compared to the target value.',
  { metric, target: target('target specifies the target value for the given metric') },
  ['metric', 'target'],
);

export const ResourceMetricSource = object(
  S + 'ResourceMetricSource',
  'ResourceMetricSource indicates how to scale on a resource metric known to Kubernetes, as specified in requests and limits, describing each pod in the current scale target (e.g. CPU or memory). The values will be averaged together before being compared to the target.',
  { name: string('name is the name of the resource in question.'), target: target('target specifies the target value for the given metric') },
  ['name', 'target'],
);

export const ContainerResourceMetricSource = object(
  S + 'ContainerResourceMetricSource',
  'ContainerResourceMetricSource indicates how to scale on a resource metric known to Kubernetes, as specified in requests and limits, describing a single container in each pod of the current scale target (e.g. CPU or memory).',
  {
    name: string('name is the name of the resource in question.'),
    target: target('target specifies the target value for the given metric'),
    container: string('container is the name of the container in the pods of the scaling target'),
  },
  ['name', 'target', 'container'],
);

export const ExternalMetricSource = object(
  S + 'ExternalMetricSource',
  'ExternalMetricSource indicates how to scale on a metric not associated with any Kubernetes object (for example length of queue in cloud messaging service, or QPS from loadbalancer running outside of cluster).',
  { metric, target: target('target specifies the target value for the given metric') },
  ['metric', 'target'],
);

export const MetricSpec = object(
  S + 'MetricSpec',
  'MetricSpec specifies how to scale based on a single metric (only `type` and one other matching field should be set at once).',
  {
    type: enumString(
      METRIC_SOURCE_TYPES,
      'type is the type of metric source.  It should be one of "ContainerResource", "External", "Object", "Pods" or "Resource", each mapping to a matching field in the object.',
    ),
    object: described(
      ObjectMetricSource,
      'object refers to a metric describing a single kubernetes object (for example, hits-per-second on an Ingress object).',
    ),
    pods: described(
      PodsMetricSource,
      'pods refers to a metric describing each pod in the current scale target (for example, transactions-processed-per-second).',
    ),
    resource: described(
      ResourceMetricSource,
      'resource refers to a resource metric (such as those specified in requests and limits) known to Kubernetes describing each pod in the current scale target (e.g. CPU or memory).',
    ),
    containerResource: described(
      ContainerResourceMetricSource,
      'containerResource refers to a resource metric (such as those specified in requests and limits) known to Kubernetes describing a single container in each pod of the current scale target (e.g. CPU or memory).',
    ),
    external: described(ExternalMetricSource, 'external refers to a global metric that is not associated with any Kubernetes object.'),
  },
  ['type'],
);

export const HPAScalingPolicy = object(
  S + 'HPAScalingPolicy',
  'HPAScalingPolicy is a single policy which must hold true for a specified past interval.',
  {
    type: enumString(['Percent', 'Pods'], 'type is used to specify the scaling policy.'),
    value: int32('value contains the amount of change which is permitted by the policy. It must be greater than zero'),
    periodSeconds: int32(
      'periodSeconds specifies the window of time for which the policy should hold true. PeriodSeconds must be greater than zero and less than or equal to 1800 (30 min).',
    ),
  },
  ['type', 'value', 'periodSeconds'],
);

export const HPAScalingRules = object(
  S + 'HPAScalingRules',
  'HPAScalingRules configures the scaling behavior for one direction via scaling Policy Rules and a configurable metric tolerance.',
  {
    stabilizationWindowSeconds: int32(
      'stabilizationWindowSeconds is the number of seconds for which past recommendations should be considered while scaling up or scaling down. StabilizationWindowSeconds must be greater than or equal to zero and less than or equal to 3600 (one hour). If not set, use the default values: - For scale up: 0 (i.e. no stabilization is done). - For scale down: 300 (i.e. the stabilization window is 300 seconds long).',
    ),
    selectPolicy: enumString(
      ['Disabled', 'Max', 'Min'],
      'selectPolicy is used to specify which policy should be used. If not set, the default value Max is used.',
    ),
    policies: list(HPAScalingPolicy, 'policies is a list of potential scaling polices which can be used during scaling.', { listType: 'atomic' }),
    tolerance: quantity(
      'tolerance is the tolerance on the ratio between the current and desired metric value under which no updates are made to the desired number of replicas (e.g. 0.01 for 1%). Must be greater than or equal to zero. This is an alpha field and requires the HPAConfigurableTolerance feature gate to be enabled.',
    ),
  },
);

export const HorizontalPodAutoscalerBehavior = object(
  S + 'HorizontalPodAutoscalerBehavior',
  'HorizontalPodAutoscalerBehavior configures the scaling behavior of the target in both Up and Down directions (scaleUp and scaleDown fields respectively).',
  {
    scaleUp: described(HPAScalingRules, 'scaleUp is scaling policy for scaling Up.'),
    scaleDown: described(HPAScalingRules, 'scaleDown is scaling policy for scaling Down.'),
  },
);

export const HorizontalPodAutoscalerSpec = object(
  S + 'HorizontalPodAutoscalerSpec',
  'HorizontalPodAutoscalerSpec describes the desired functionality of the HorizontalPodAutoscaler.',
  {
    scaleTargetRef: described(
      CrossVersionObjectReference,
      'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
    ),
    minReplicas: int32('minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.'),
    maxReplicas: int32('maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.'),
    metrics: list(
      MetricSpec,
      'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used). If not set, the default metric will be set to 80% average CPU utilization.',
      { listType: 'atomic' },
    ),
    behavior: described(
      HorizontalPodAutoscalerBehavior,
      'behavior configures the scaling behavior of the target in both Up and Down directions (scaleUp and scaleDown fields respectively). If not set, the default HPAScalingRules for scale up and scale down are used.',
    ),
  },
  ['scaleTargetRef', 'maxReplicas'],
);

export const ObjectMetricStatus = object(
  S + 'ObjectMetricStatus',
  'ObjectMetricStatus indicates the current value of a metric describing a kubernetes object (for example, hits-per-second on an Ingress object).',
  {
    metric,
    current,
    describedObject: described(CrossVersionObjectReference, 'DescribedObject specifies the descriptions of a object,such as kind,name apiVersion'),
  },
  ['metric', 'current', 'describedObject'],
);

export const PodsMetricStatus = object(
  S + 'PodsMetricStatus',
  'PodsMetricStatus indicates the current value of a metric describing each pod in the current scale target (for example, transactions-processed-per-second).',
  { metric, current },
  ['metric', 'current'],
);

export const ResourceMetricStatus = object(
  S + 'ResourceMetricStatus',
  'ResourceMetricStatus indicates the current value of a resource metric known to Kubernetes, as specified in requests and limits, describing each pod in the current scale target (e.g. CPU or memory).',
  { name: string('name is the name of the resource in question.'), current },
  ['name', 'current'],
);

export const ContainerResourceMetricStatus = object(
  S + 'ContainerResourceMetricStatus',
  'ContainerResourceMetricStatus indicates the current value of a resource metric known to Kubernetes, as specified in requests and limits, describing a single container in each pod in the current scale target (e.g. CPU or memory).',
  {
    name: string('name is the name of the resource in question.'),
    current,
    container: string('container is the name of the container in the pods of the scaling target'),
  },
  ['name', 'current', 'container'],
);

export const ExternalMetricStatus = object(
  S + 'ExternalMetricStatus',
  'ExternalMetricStatus indicates the current value of a global metric not associated with any Kubernetes object.',
  { metric, current },
  ['metric', 'current'],
);

export const MetricStatus = object(
  S + 'MetricStatus',
  'MetricStatus describes the last-read state of a single metric.',
  {
    type: enumString(
      METRIC_SOURCE_TYPES,
      'type is the type of metric source.  It will be one of "ContainerResource", "External", "Object", "Pods" or "Resource", each corresponds to a matching field in the object.',
    ),
    object: described(
      ObjectMetricStatus,
      'object refers to a metric describing a single kubernetes object (for example, hits-per-second on an Ingress object).',
    ),
    pods: described(
      PodsMetricStatus,
      'pods refers to a metric describing each pod in the current scale target (for example, transactions-processed-per-second).',
    ),
    resource: described(
      ResourceMetricStatus,
      'resource refers to a resource metric (such as those specified in requests and limits) known to Kubernetes describing each pod in the current scale target.',
    ),
    containerResource: described(
      ContainerResourceMetricStatus,
      'container resource refers to a resource metric (such as those specified in requests and limits) known to Kubernetes describing a single container in each pod in the current scale target.',
    ),
    external: described(ExternalMetricStatus, 'external refers to a global metric that is not associated with any Kubernetes object.'),
  },
  ['type'],
);

export const HorizontalPodAutoscalerCondition = object(
  S + 'HorizontalPodAutoscalerCondition',
  'HorizontalPodAutoscalerCondition describes the state of a HorizontalPodAutoscaler at a certain point.',
  {
    type: string('type describes the current condition'),
    status: string('status is the status of the condition (True, False, Unknown)'),
    lastTransitionTime: time('lastTransitionTime is the last time the condition transitioned from one status to another'),
    reason: string("reason is the reason for the condition's last transition."),
    message: string('message is a human-readable explanation containing details about the transition'),
  },
  ['type', 'status'],
);

const conditionsOpts: ListOptions = { mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'] };

export const HorizontalPodAutoscalerStatus = object(
  S + 'HorizontalPodAutoscalerStatus',
  'HorizontalPodAutoscalerStatus describes the current status of a horizontal pod autoscaler.',
  {
    observedGeneration: int64('observedGeneration is the most recent generation observed by this autoscaler.'),
    lastScaleTime: time(
      'lastScaleTime is the last time the HorizontalPodAutoscaler scaled the number of pods, used by the autoscaler to control how often the number of pods is changed.',
    ),
    currentReplicas: int32('currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
    desiredReplicas: int32('desiredReplicas is the desired number of replicas of pods managed by this autoscaler, as last calculated by the autoscaler.'),
    currentMetrics: list(MetricStatus, 'currentMetrics is the last read state of the metrics used by this autoscaler.', { listType: 'atomic' }),
    conditions: list(
      HorizontalPodAutoscalerCondition,
      'conditions is the set of conditions required for this autoscaler to scale its target, and indicates whether or not those conditions are met.',
      conditionsOpts,
    ),
  },
  ['desiredReplicas'],
);

export const HorizontalPodAutoscaler = kindOf(
  S + 'HorizontalPodAutoscaler',
  'HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler, which automatically manages the replica count of any resource implementing the scale subresource based on the metrics specified.',
  {
    spec: described(
      HorizontalPodAutoscalerSpec,
      'spec is the specification for the behaviour of the autoscaler. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status.',
    ),
    status: described(HorizontalPodAutoscalerStatus, 'status is the current information about the autoscaler.'),
  },
);

export type CrossVersionObjectReference = Static<typeof CrossVersionObjectReference>;
export type MetricIdentifier = Static<typeof MetricIdentifier>;
export type MetricTarget = Static<typeof MetricTarget>;
export type MetricValueStatus = Static<typeof MetricValueStatus>;
export type MetricSpec = Static<typeof MetricSpec>;
export type MetricStatus = Static<typeof MetricStatus>;
export type HPAScalingPolicy = Static<typeof HPAScalingPolicy>;
export type HPAScalingRules = Static<typeof HPAScalingRules>;
export type HorizontalPodAutoscalerBehavior = Static<typeof HorizontalPodAutoscalerBehavior>;
export type HorizontalPodAutoscalerSpec = Static<typeof HorizontalPodAutoscalerSpec>;
export type HorizontalPodAutoscalerCondition = Static<typeof HorizontalPodAutoscalerCondition>;
export type HorizontalPodAutoscalerStatus = Static<typeof HorizontalPodAutoscalerStatus>;
export type HorizontalPodAutoscaler = Static<typeof HorizontalPodAutoscaler>;
