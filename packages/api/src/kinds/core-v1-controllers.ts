/**
 * core/v1 ReplicationController (the ReplicaSet's predecessor, with an equality
 * selector) and ComponentStatus (the control plane's health, computed on read).
 * Field names and types follow upstream `k8s.io/api/core/v1`.
 */
import { Type } from '@sinclair/typebox';
import { described, int32, int64, list, map, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';
import { C, PodTemplateSpec } from './core-v1-pod.js';

export const ReplicationControllerSpec = object(
  C + 'ReplicationControllerSpec',
  'ReplicationControllerSpec is the specification of a replication controller.',
  {
    replicas: int32('Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1.'),
    minReadySeconds: int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.',
    ),
    selector: map(
      Type.String(),
      'Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template.',
    ),
    template: described(PodTemplateSpec, 'Template is the object that describes the pod that will be created if insufficient replicas are detected.'),
  },
);

export const ReplicationControllerCondition = object(
  C + 'ReplicationControllerCondition',
  'ReplicationControllerCondition describes the state of a replication controller at a certain point.',
  {
    type: string('Type of replication controller condition.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: time('The last time the condition transitioned from one status to another.'),
    reason: string("The reason for the condition's last transition."),
    message: string('A human readable message indicating details about the transition.'),
  },
  ['type', 'status'],
);

export const ReplicationControllerStatus = object(
  C + 'ReplicationControllerStatus',
  'ReplicationControllerStatus represents the current status of a replication controller.',
  {
    replicas: int32('Replicas is the most recently observed number of replicas.'),
    fullyLabeledReplicas: int32('The number of pods that have labels matching the labels of the pod template of the replication controller.'),
    readyReplicas: int32('The number of ready replicas for this replication controller.'),
    availableReplicas: int32('The number of available replicas (ready for at least minReadySeconds) for this replication controller.'),
    observedGeneration: int64('ObservedGeneration reflects the generation of the most recently observed replication controller.'),
    conditions: list(ReplicationControllerCondition, "Represents the latest available observations of a replication controller's current state.", {
      mergeKey: 'type',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['type'],
    }),
  },
  ['replicas'],
);

export const ReplicationController = kindOf(C + 'ReplicationController', 'ReplicationController represents the configuration of a replication controller.', {
  spec: described(ReplicationControllerSpec, 'Spec defines the specification of the desired behavior of the replication controller.'),
  status: described(ReplicationControllerStatus, 'Status is the most recently observed status of the replication controller.'),
});

export const ComponentCondition = object(
  C + 'ComponentCondition',
  'Information about the condition of a component.',
  {
    type: string('Type of condition for a component. Valid value: "Healthy"'),
    status: string('Status of the condition for a component. Valid values for "Healthy": "True", "False", or "Unknown".'),
    message: string('Message about the condition for a component. For example, information about a health check.'),
    error: string('Condition error code for a component. For example, a health check error code.'),
  },
  ['type', 'status'],
);

export const ComponentStatus = kindOf(
  C + 'ComponentStatus',
  'ComponentStatus (and ComponentStatusList) holds the cluster validation info. Deprecated: This API is deprecated in v1.19+',
  {
    conditions: list(ComponentCondition, 'List of component conditions observed', { mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'] }),
  },
);

export type ReplicationController = Static<typeof ReplicationController>;
export type ComponentStatus = Static<typeof ComponentStatus>;
