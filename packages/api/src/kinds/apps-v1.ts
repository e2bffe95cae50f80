/**
 * apps/v1: Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision.
 * Field names, types and patch metadata follow upstream Kubernetes 1.32
 * (`k8s.io/api/apps/v1`).
 */
import {
  boolean,
  described,
  enumString,
  int32,
  int64,
  intOrString,
  list,
  object,
  opaque,
  string,
  time,
  type ListOptions,
  type Static,
  type TSchema,
} from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';
import { PersistentVolumeClaim, PodTemplateSpec } from './core-v1.js';

const A = 'io.k8s.api.apps.v1.';

/**
 * A struct-valued field with its own `x-kubernetes-patch-strategy` (upstream puts
 * the tag on the field, not on the referenced definition).
 */
const withPatchStrategy = <S extends TSchema>(schema: S, strategy: string): S => ({ ...schema, 'x-kubernetes-patch-strategy': strategy }) as S;

const conditionsOpts: ListOptions = { mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'] };

// ---------------------------------------------------------------- Deployment

export const RollingUpdateDeployment = object(A + 'RollingUpdateDeployment', 'Spec to control the desired behavior of rolling update.', {
  maxUnavailable: intOrString('The maximum number of pods that can be unavailable during the update, as an absolute number or a percentage of desired pods.'),
  maxSurge: intOrString('The maximum number of pods that can be scheduled above the desired number of pods, as an absolute number or a percentage.'),
});

export const DeploymentStrategy = object(A + 'DeploymentStrategy', 'DeploymentStrategy describes how to replace existing pods with new ones.', {
  type: enumString(['Recreate', 'RollingUpdate'], 'Type of deployment. Can be "Recreate" or "RollingUpdate". Default is RollingUpdate.'),
  rollingUpdate: described(RollingUpdateDeployment, 'Rolling update config params. Present only if DeploymentStrategyType = RollingUpdate.'),
});

export const DeploymentSpec = object(
  A + 'DeploymentSpec',
  'DeploymentSpec is the specification of the desired behavior of the Deployment.',
  {
    replicas: int32('Number of desired pods. Defaults to 1.'),
    selector: described(LabelSelector, "Label selector for pods; it must match the pod template's labels."),
    template: described(PodTemplateSpec, 'Template describes the pods that will be created.'),
    strategy: withPatchStrategy(described(DeploymentStrategy, 'The deployment strategy to use to replace existing pods with new ones.'), 'retainKeys'),
    minReadySeconds: int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.',
    ),
    revisionHistoryLimit: int32('The number of old ReplicaSets to retain to allow rollback. Defaults to 10.'),
    paused: boolean('Indicates that the deployment is paused.'),
    progressDeadlineSeconds: int32('The maximum time in seconds for a deployment to make progress before it is considered to be failed. Defaults to 600s.'),
  },
  ['selector', 'template'],
);

export const DeploymentCondition = object(
  A + 'DeploymentCondition',
  'DeploymentCondition describes the state of a deployment at a certain point.',
  {
    type: string('Type of deployment condition.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastUpdateTime: time('The last time this condition was updated.'),
    lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
    reason: string("The reason for the condition's last transition."),
    message: string('A human readable message indicating details about the transition.'),
  },
  ['type', 'status'],
);

export const DeploymentStatus = object(A + 'DeploymentStatus', 'DeploymentStatus is the most recently observed status of the Deployment.', {
  observedGeneration: int64('The generation observed by the deployment controller.'),
  replicas: int32('Total number of non-terminating pods targeted by this deployment (their labels match the selector).'),
  updatedReplicas: int32('Total number of non-terminating pods targeted by this deployment that have the desired template spec.'),
  readyReplicas: int32('Total number of non-terminating pods targeted by this Deployment with a Ready Condition.'),
  availableReplicas: int32('Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.'),
  unavailableReplicas: int32('Total number of unavailable pods targeted by this deployment.'),
  terminatingReplicas: int32('Total number of terminating pods (have a non-null .metadata.deletionTimestamp) targeted by this deployment.'),
  conditions: list(DeploymentCondition, "Represents the latest available observations of a deployment's current state.", conditionsOpts),
  collisionCount: int32('Count of hash collisions for the Deployment, used when naming the newest ReplicaSet.'),
});

export const Deployment = kindOf(A + 'Deployment', 'Deployment enables declarative updates for Pods and ReplicaSets.', {
  spec: described(DeploymentSpec, 'Specification of the desired behavior of the Deployment.'),
  status: described(DeploymentStatus, 'Most recently observed status of the Deployment.'),
});

// ---------------------------------------------------------------- ReplicaSet

export const ReplicaSetSpec = object(
  A + 'ReplicaSetSpec',
  'ReplicaSetSpec is the specification of a ReplicaSet.',
  {
    replicas: int32('Replicas is the number of desired pods. Defaults to 1.'),
    minReadySeconds: int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available.',
    ),
    selector: described(LabelSelector, 'Selector is a label query over pods that should match the replica count.'),
    template: described(PodTemplateSpec, 'Template is the object that describes the pod that will be created if insufficient replicas are detected.'),
  },
  ['selector'],
);

export const ReplicaSetCondition = object(
  A + 'ReplicaSetCondition',
  'ReplicaSetCondition describes the state of a replica set at a certain point.',
  {
    type: string('Type of replica set condition.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: time('The last time the condition transitioned from one status to another.'),
    reason: string("The reason for the condition's last transition."),
    message: string('A human readable message indicating details about the transition.'),
  },
  ['type', 'status'],
);

export const ReplicaSetStatus = object(
  A + 'ReplicaSetStatus',
  'ReplicaSetStatus represents the current status of a ReplicaSet.',
  {
    replicas: int32('Replicas is the most recently observed number of non-terminating pods.'),
    fullyLabeledReplicas: int32('The number of non-terminating pods that have labels matching the labels of the pod template of the replicaset.'),
    readyReplicas: int32('The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.'),
    availableReplicas: int32('The number of available non-terminating pods (ready for at least minReadySeconds) for this replica set.'),
    terminatingReplicas: int32('The number of terminating pods (have a non-null .metadata.deletionTimestamp) for this replica set.'),
    observedGeneration: int64('ObservedGeneration reflects the generation of the most recently observed ReplicaSet.'),
    conditions: list(ReplicaSetCondition, "Represents the latest available observations of a replica set's current state.", conditionsOpts),
  },
  ['replicas'],
);

export const ReplicaSet = kindOf(A + 'ReplicaSet', 'ReplicaSet ensures that a specified number of pod replicas are running at any given time.', {
  spec: described(ReplicaSetSpec, 'Spec defines the specification of the desired behavior of the ReplicaSet.'),
  status: described(ReplicaSetStatus, 'Status is the most recently observed status of the ReplicaSet.'),
});

// ---------------------------------------------------------------- DaemonSet

export const RollingUpdateDaemonSet = object(A + 'RollingUpdateDaemonSet', 'Spec to control the desired behavior of daemon set rolling update.', {
  maxUnavailable: intOrString('The maximum number of DaemonSet pods that can be unavailable during the update, as an absolute number or a percentage.'),
  maxSurge: intOrString('The maximum number of nodes with an existing available DaemonSet pod that can have an updated DaemonSet pod during an update.'),
});

export const DaemonSetUpdateStrategy = object(
  A + 'DaemonSetUpdateStrategy',
  'DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet.',
  {
    type: enumString(['OnDelete', 'RollingUpdate'], 'Type of daemon set update. Can be "RollingUpdate" or "OnDelete". Default is RollingUpdate.'),
    rollingUpdate: described(RollingUpdateDaemonSet, 'Rolling update config params. Present only if type = "RollingUpdate".'),
  },
);

export const DaemonSetSpec = object(
  A + 'DaemonSetSpec',
  'DaemonSetSpec is the specification of a daemon set.',
  {
    selector: described(LabelSelector, "A label query over pods that are managed by the daemon set; it must match the pod template's labels."),
    template: described(PodTemplateSpec, 'An object that describes the pod that will be created on every eligible node.'),
    updateStrategy: described(DaemonSetUpdateStrategy, 'An update strategy to replace existing DaemonSet pods with new pods.'),
    minReadySeconds: int32(
      'The minimum number of seconds for which a newly created DaemonSet pod should be ready without any of its container crashing, for it to be considered available.',
    ),
    revisionHistoryLimit: int32('The number of old history to retain to allow rollback. Defaults to 10.'),
  },
  ['selector', 'template'],
);

export const DaemonSetCondition = object(
  A + 'DaemonSetCondition',
  'DaemonSetCondition describes the state of a DaemonSet at a certain point.',
  {
    type: string('Type of DaemonSet condition.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
    reason: string("The reason for the condition's last transition."),
    message: string('A human readable message indicating details about the transition.'),
  },
  ['type', 'status'],
);

export const DaemonSetStatus = object(
  A + 'DaemonSetStatus',
  'DaemonSetStatus represents the current status of a daemon set.',
  {
    currentNumberScheduled: int32('The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.'),
    numberMisscheduled: int32('The number of nodes that are running the daemon pod, but are not supposed to run the daemon pod.'),
    desiredNumberScheduled: int32('The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).'),
    numberReady: int32('The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.'),
    observedGeneration: int64('The most recent generation observed by the daemon set controller.'),
    updatedNumberScheduled: int32('The total number of nodes that are running updated daemon pod.'),
    numberAvailable: int32('The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.'),
    numberUnavailable: int32('The number of nodes that should be running the daemon pod and have none of the daemon pod running and available.'),
    collisionCount: int32('Count of hash collisions for the DaemonSet, used when naming the newest ControllerRevision.'),
    conditions: list(DaemonSetCondition, "Represents the latest available observations of a DaemonSet's current state.", conditionsOpts),
  },
  ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady'],
);

export const DaemonSet = kindOf(A + 'DaemonSet', 'DaemonSet represents the configuration of a daemon set.', {
  spec: described(DaemonSetSpec, 'The desired behavior of this daemon set.'),
  status: described(DaemonSetStatus, 'The current status of this daemon set.'),
});

// ---------------------------------------------------------------- StatefulSet

export const RollingUpdateStatefulSetStrategy = object(
  A + 'RollingUpdateStatefulSetStrategy',
  'RollingUpdateStatefulSetStrategy is used to communicate parameter for RollingUpdateStatefulSetStrategyType.',
  {
    partition: int32('Partition indicates the ordinal at which the StatefulSet should be partitioned for updates. The default value is 0.'),
    maxUnavailable: intOrString('The maximum number of pods that can be unavailable during the update, as an absolute number or a percentage. Defaults to 1.'),
  },
);

export const StatefulSetUpdateStrategy = object(
  A + 'StatefulSetUpdateStrategy',
  'StatefulSetUpdateStrategy indicates the strategy that the StatefulSet controller will use to perform updates.',
  {
    type: enumString(['OnDelete', 'RollingUpdate'], 'Type indicates the type of the StatefulSetUpdateStrategy. Default is RollingUpdate.'),
    rollingUpdate: described(
      RollingUpdateStatefulSetStrategy,
      'RollingUpdate is used to communicate parameters when Type is RollingUpdateStatefulSetStrategyType.',
    ),
  },
);

export const StatefulSetPersistentVolumeClaimRetentionPolicy = object(
  A + 'StatefulSetPersistentVolumeClaimRetentionPolicy',
  'StatefulSetPersistentVolumeClaimRetentionPolicy describes the policy used for PVCs created from the StatefulSet VolumeClaimTemplates.',
  {
    whenDeleted: string(
      'WhenDeleted specifies what happens to PVCs created from StatefulSet VolumeClaimTemplates when the StatefulSet is deleted (Retain or Delete).',
    ),
    whenScaled: string(
      'WhenScaled specifies what happens to PVCs created from StatefulSet VolumeClaimTemplates when the StatefulSet is scaled down (Retain or Delete).',
    ),
  },
);

export const StatefulSetOrdinals = object(
  A + 'StatefulSetOrdinals',
  'StatefulSetOrdinals describes the policy used for replica ordinal assignment in this StatefulSet.',
  {
    start: int32("start is the number representing the first replica's index. Defaults to 0."),
  },
);

export const StatefulSetSpec = object(
  A + 'StatefulSetSpec',
  'A StatefulSetSpec is the specification of a StatefulSet.',
  {
    replicas: int32('replicas is the desired number of replicas of the given Template. Defaults to 1.'),
    selector: described(LabelSelector, 'selector is a label query over pods that should match the replica count.'),
    template: described(PodTemplateSpec, 'template is the object that describes the pod that will be created if insufficient replicas are detected.'),
    volumeClaimTemplates: list(PersistentVolumeClaim, 'volumeClaimTemplates is a list of claims that pods are allowed to reference.', { listType: 'atomic' }),
    serviceName: string('serviceName is the name of the service that governs this StatefulSet.'),
    podManagementPolicy: enumString(
      ['OrderedReady', 'Parallel'],
      'podManagementPolicy controls how pods are created during initial scale up, when replacing pods on nodes, or when scaling down.',
    ),
    updateStrategy: described(
      StatefulSetUpdateStrategy,
      'updateStrategy indicates the StatefulSetUpdateStrategy that will be employed to update Pods in the StatefulSet when a revision is made to Template.',
    ),
    revisionHistoryLimit: int32(
      "revisionHistoryLimit is the maximum number of revisions that will be maintained in the StatefulSet's revision history. The default value is 10.",
    ),
    minReadySeconds: int32(
      'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing for it to be considered available.',
    ),
    persistentVolumeClaimRetentionPolicy: described(
      StatefulSetPersistentVolumeClaimRetentionPolicy,
      'persistentVolumeClaimRetentionPolicy describes the lifecycle of persistent volume claims created from volumeClaimTemplates.',
    ),
    ordinals: described(StatefulSetOrdinals, 'ordinals controls the numbering of replica indices in a StatefulSet.'),
  },
  ['selector', 'template'],
);

export const StatefulSetCondition = object(
  A + 'StatefulSetCondition',
  'StatefulSetCondition describes the state of a statefulset at a certain point.',
  {
    type: string('Type of statefulset condition.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
    reason: string("The reason for the condition's last transition."),
    message: string('A human readable message indicating details about the transition.'),
  },
  ['type', 'status'],
);

export const StatefulSetStatus = object(
  A + 'StatefulSetStatus',
  'StatefulSetStatus represents the current state of a StatefulSet.',
  {
    observedGeneration: int64('observedGeneration is the most recent generation observed for this StatefulSet.'),
    replicas: int32('replicas is the number of Pods created by the StatefulSet controller.'),
    readyReplicas: int32('readyReplicas is the number of pods created for this StatefulSet with a Ready Condition.'),
    currentReplicas: int32(
      'currentReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version indicated by currentRevision.',
    ),
    updatedReplicas: int32(
      'updatedReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version indicated by updateRevision.',
    ),
    currentRevision: string(
      'currentRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the sequence [0,currentReplicas).',
    ),
    updateRevision: string(
      'updateRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the sequence [replicas-updatedReplicas,replicas).',
    ),
    collisionCount: int32('collisionCount is the count of hash collisions for the StatefulSet, used when naming the newest ControllerRevision.'),
    conditions: list(StatefulSetCondition, "Represents the latest available observations of a statefulset's current state.", conditionsOpts),
    availableReplicas: int32('Total number of available pods (ready for at least minReadySeconds) targeted by this statefulset.'),
  },
  ['replicas'],
);

export const StatefulSet = kindOf(A + 'StatefulSet', 'StatefulSet represents a set of pods with consistent identities.', {
  spec: described(StatefulSetSpec, 'Spec defines the desired identities of pods in this set.'),
  status: described(StatefulSetStatus, 'Status is the current status of Pods in this StatefulSet.'),
});

// ---------------------------------------------------------------- ControllerRevision

export const ControllerRevision = kindOf(A + 'ControllerRevision', 'ControllerRevision implements an immutable snapshot of state data.', {
  data: opaque('Data is the serialized representation of the state.'),
  revision: int64('Revision indicates the revision of the state represented by Data.'),
});

export type RollingUpdateDeployment = Static<typeof RollingUpdateDeployment>;
export type DeploymentStrategy = Static<typeof DeploymentStrategy>;
export type DeploymentSpec = Static<typeof DeploymentSpec>;
export type DeploymentCondition = Static<typeof DeploymentCondition>;
export type DeploymentStatus = Static<typeof DeploymentStatus>;
export type Deployment = Static<typeof Deployment>;
export type ReplicaSetSpec = Static<typeof ReplicaSetSpec>;
export type ReplicaSetCondition = Static<typeof ReplicaSetCondition>;
export type ReplicaSetStatus = Static<typeof ReplicaSetStatus>;
export type ReplicaSet = Static<typeof ReplicaSet>;
export type RollingUpdateDaemonSet = Static<typeof RollingUpdateDaemonSet>;
export type DaemonSetUpdateStrategy = Static<typeof DaemonSetUpdateStrategy>;
export type DaemonSetSpec = Static<typeof DaemonSetSpec>;
export type DaemonSetCondition = Static<typeof DaemonSetCondition>;
export type DaemonSetStatus = Static<typeof DaemonSetStatus>;
export type DaemonSet = Static<typeof DaemonSet>;
export type RollingUpdateStatefulSetStrategy = Static<typeof RollingUpdateStatefulSetStrategy>;
export type StatefulSetUpdateStrategy = Static<typeof StatefulSetUpdateStrategy>;
export type StatefulSetPersistentVolumeClaimRetentionPolicy = Static<typeof StatefulSetPersistentVolumeClaimRetentionPolicy>;
export type StatefulSetOrdinals = Static<typeof StatefulSetOrdinals>;
export type StatefulSetSpec = Static<typeof StatefulSetSpec>;
export type StatefulSetCondition = Static<typeof StatefulSetCondition>;
export type StatefulSetStatus = Static<typeof StatefulSetStatus>;
export type StatefulSet = Static<typeof StatefulSet>;
export type ControllerRevision = Static<typeof ControllerRevision>;
