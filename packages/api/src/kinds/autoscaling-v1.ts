/**
 * autoscaling/v1: Scale (the `scale` subresource of Deployments, ReplicaSets and
 * StatefulSets) and HorizontalPodAutoscaler, as upstream Kubernetes 1.32
 * (`k8s.io/api/autoscaling/v1`).
 */
import { described, int32, int64, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const S = 'io.k8s.api.autoscaling.v1.';

// ---------------------------------------------------------------- Scale

export const ScaleSpec = object(S + 'ScaleSpec', 'ScaleSpec describes the attributes of a scale subresource.', {
  replicas: int32('replicas is the desired number of instances for the scaled object.'),
});

export const ScaleStatus = object(
  S + 'ScaleStatus',
  'ScaleStatus represents the current status of a scale subresource.',
  {
    replicas: int32('replicas is the actual number of observed instances of the scaled object.'),
    selector: string('selector is the label query over pods that should match the replicas count, in the serialized query-param form.'),
  },
  ['replicas'],
);

export const Scale = kindOf(S + 'Scale', 'Scale represents a scaling request for a resource.', {
  spec: described(ScaleSpec, 'spec defines the behavior of the scale.'),
  status: described(ScaleStatus, 'status is the current status of the scale.'),
});

// ---------------------------------------------------------------- HorizontalPodAutoscaler

export const CrossVersionObjectReference = object(
  S + 'CrossVersionObjectReference',
  'CrossVersionObjectReference contains enough information to let you identify the referred resource.',
  {
    kind: string('kind is the kind of the referent.'),
    name: string('name is the name of the referent.'),
    apiVersion: string('apiVersion is the API version of the referent.'),
  },
  ['kind', 'name'],
);

export const HorizontalPodAutoscalerSpec = object(
  S + 'HorizontalPodAutoscalerSpec',
  'HorizontalPodAutoscalerSpec is the specification of a horizontal pod autoscaler.',
  {
    scaleTargetRef: described(
      CrossVersionObjectReference,
      'reference to scaled resource; horizontal pod autoscaler will learn the current resource consumption and will set the desired number of pods by using its Scale subresource.',
    ),
    minReplicas: int32('minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down. It defaults to 1 pod.'),
    maxReplicas: int32('maxReplicas is the upper limit for the number of pods that can be set by the autoscaler; cannot be smaller than MinReplicas.'),
    targetCPUUtilizationPercentage: int32(
      'targetCPUUtilizationPercentage is the target average CPU utilization (represented as a percentage of requested CPU) over all the pods.',
    ),
  },
  ['scaleTargetRef', 'maxReplicas'],
);

export const HorizontalPodAutoscalerStatus = object(
  S + 'HorizontalPodAutoscalerStatus',
  'HorizontalPodAutoscalerStatus is the current status of a horizontal pod autoscaler.',
  {
    observedGeneration: int64('observedGeneration is the most recent generation observed by this autoscaler.'),
    lastScaleTime: time('lastScaleTime is the last time the HorizontalPodAutoscaler scaled the number of pods.'),
    currentReplicas: int32('currentReplicas is the current number of replicas of pods managed by this autoscaler.'),
    desiredReplicas: int32('desiredReplicas is the desired number of replicas of pods managed by this autoscaler.'),
    currentCPUUtilizationPercentage: int32(
      'currentCPUUtilizationPercentage is the current average CPU utilization over all pods, as a percentage of requested CPU.',
    ),
  },
  ['currentReplicas', 'desiredReplicas'],
);

export const HorizontalPodAutoscaler = kindOf(S + 'HorizontalPodAutoscaler', 'HorizontalPodAutoscaler is the configuration of a horizontal pod autoscaler.', {
  spec: described(HorizontalPodAutoscalerSpec, 'spec defines the behaviour of autoscaler.'),
  status: described(HorizontalPodAutoscalerStatus, 'status is the current information about the autoscaler.'),
});

export type ScaleSpec = Static<typeof ScaleSpec>;
export type ScaleStatus = Static<typeof ScaleStatus>;
export type Scale = Static<typeof Scale>;
export type CrossVersionObjectReference = Static<typeof CrossVersionObjectReference>;
export type HorizontalPodAutoscalerSpec = Static<typeof HorizontalPodAutoscalerSpec>;
export type HorizontalPodAutoscalerStatus = Static<typeof HorizontalPodAutoscalerStatus>;
export type HorizontalPodAutoscaler = Static<typeof HorizontalPodAutoscaler>;
