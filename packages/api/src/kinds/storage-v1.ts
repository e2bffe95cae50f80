/**
 * storage.k8s.io/v1 kinds, as upstream Kubernetes 1.33 (`k8s.io/api/storage/v1`):
 * StorageClass, CSIDriver, CSINode, VolumeAttachment and CSIStorageCapacity.
 * StorageClass and CSIStorageCapacity have no spec: their fields sit at the top level.
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, int32, int64, list, map, object, quantity, string, time, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';
import { PersistentVolumeSpec, TopologySelectorTerm } from './core-v1-storage.js';

const S = 'io.k8s.api.storage.v1.';

export const StorageClass = kindOf(
  S + 'StorageClass',
  'StorageClass describes the parameters for a class of storage for which PersistentVolumes can be dynamically provisioned.',
  {
    provisioner: string('provisioner indicates the type of the provisioner.'),
    parameters: map(Type.String(), 'parameters holds the parameters for the provisioner that should create volumes of this storage class.'),
    reclaimPolicy: string('reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.'),
    mountOptions: list(Type.String(), 'mountOptions controls the mountOptions for dynamically provisioned PersistentVolumes of this storage class.', {
      listType: 'atomic',
    }),
    allowVolumeExpansion: boolean('allowVolumeExpansion shows whether the storage class allow volume expand.'),
    volumeBindingMode: string(
      'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used.',
    ),
    allowedTopologies: list(TopologySelectorTerm, 'allowedTopologies restrict the node topologies where volumes can be dynamically provisioned.', {
      listType: 'atomic',
    }),
  },
);

export const TokenRequest = object(
  S + 'TokenRequest',
  'TokenRequest contains parameters of a service account token.',
  {
    audience: string('audience is the intended audience of the token in "TokenRequestSpec".'),
    expirationSeconds: int64('expirationSeconds is the duration of validity of the token in "TokenRequestSpec".'),
  },
  ['audience'],
);

export const CSIDriverSpec = object(S + 'CSIDriverSpec', 'CSIDriverSpec is the specification of a CSIDriver.', {
  attachRequired: boolean(
    'attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method).',
  ),
  podInfoOnMount: boolean(
    'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations.',
  ),
  volumeLifecycleModes: list(Type.String(), 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.', { listType: 'set' }),
  storageCapacity: boolean(
    'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.',
  ),
  fsGroupPolicy: string('fsGroupPolicy defines if the underlying volume supports changing ownership and permission of the volume before being mounted.'),
  tokenRequests: list(
    TokenRequest,
    "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication.",
    {
      listType: 'atomic',
    },
  ),
  requiresRepublish: boolean(
    'requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume.',
  ),
  seLinuxMount: boolean('seLinuxMount specifies if the CSI driver supports "-o context" mount option.'),
  nodeAllocatableUpdatePeriodSeconds: int64(
    'nodeAllocatableUpdatePeriodSeconds specifies the interval between periodic updates of the CSINode allocatable capacity for this driver.',
  ),
});

export const CSIDriver = kindOf(
  S + 'CSIDriver',
  'CSIDriver captures information about a Container Storage Interface (CSI) volume driver deployed on the cluster.',
  {
    spec: described(CSIDriverSpec, 'spec represents the specification of the CSI Driver.'),
  },
);

export const VolumeNodeResources = object(S + 'VolumeNodeResources', 'VolumeNodeResources is a set of resource limits for scheduling of volumes.', {
  count: int32('count indicates the maximum number of unique volumes managed by the CSI driver that can be used on a node.'),
});

export const CSINodeDriver = object(
  S + 'CSINodeDriver',
  'CSINodeDriver holds information about the specification of one CSI driver installed on a node',
  {
    name: string('name represents the name of the CSI driver that this object refers to.'),
    nodeID: string('nodeID of the node from the driver point of view.'),
    topologyKeys: list(Type.String(), 'topologyKeys is the list of keys supported by the driver.', { listType: 'atomic' }),
    allocatable: described(VolumeNodeResources, 'allocatable represents the volume resources of a node that are available for scheduling.'),
  },
  ['name', 'nodeID'],
);

export const CSINodeSpec = object(
  S + 'CSINodeSpec',
  'CSINodeSpec holds information about the specification of all CSI drivers installed on a node',
  {
    drivers: list(CSINodeDriver, 'drivers is a list of information of all CSI Drivers existing on a node.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
  },
  ['drivers'],
);

export const CSINode = kindOf(S + 'CSINode', 'CSINode holds information about all CSI drivers installed on a node.', {
  spec: described(CSINodeSpec, 'spec is the specification of CSINode'),
});

export const VolumeAttachmentSource = object(S + 'VolumeAttachmentSource', 'VolumeAttachmentSource represents a volume that should be attached.', {
  persistentVolumeName: string('persistentVolumeName represents the name of the persistent volume to attach.'),
  inlineVolumeSpec: described(
    PersistentVolumeSpec,
    "inlineVolumeSpec contains all the information necessary to attach a persistent volume defined by a pod's inline VolumeSource.",
  ),
});

export const VolumeAttachmentSpec = object(
  S + 'VolumeAttachmentSpec',
  'VolumeAttachmentSpec is the specification of a VolumeAttachment request.',
  {
    attacher: string('attacher indicates the name of the volume driver that MUST handle this request.'),
    source: described(VolumeAttachmentSource, 'source represents the volume that should be attached.'),
    nodeName: string('nodeName represents the node that the volume should be attached to.'),
  },
  ['attacher', 'source', 'nodeName'],
);

export const VolumeError = object(S + 'VolumeError', 'VolumeError captures an error encountered during a volume operation.', {
  time: time('time represents the time the error was encountered.'),
  message: string('message represents the error encountered during Attach or Detach operation.'),
  errorCode: int32('errorCode is a numeric gRPC code representing the error encountered during Attach or Detach operations.'),
});

export const VolumeAttachmentStatus = object(
  S + 'VolumeAttachmentStatus',
  'VolumeAttachmentStatus is the status of a VolumeAttachment request.',
  {
    attached: boolean('attached indicates the volume is successfully attached.'),
    attachmentMetadata: map(Type.String(), 'attachmentMetadata is populated with any information returned by the attach operation.'),
    attachError: described(VolumeError, 'attachError represents the last error encountered during attach operation, if any.'),
    detachError: described(VolumeError, 'detachError represents the last error encountered during detach operation, if any.'),
  },
  ['attached'],
);

export const VolumeAttachment = kindOf(
  S + 'VolumeAttachment',
  'VolumeAttachment captures the intent to attach or detach the specified volume to/from the specified node.',
  {
    spec: described(VolumeAttachmentSpec, 'spec represents specification of the desired attach/detach volume behavior.'),
    status: described(VolumeAttachmentStatus, 'status represents status of the VolumeAttachment request.'),
  },
);

export const CSIStorageCapacity = kindOf(S + 'CSIStorageCapacity', 'CSIStorageCapacity stores the result of one CSI GetCapacity call.', {
  nodeTopology: described(LabelSelector, 'nodeTopology defines which nodes have access to the storage for which capacity was reported.'),
  storageClassName: string('storageClassName represents the name of the StorageClass that the reported capacity applies to.'),
  capacity: quantity('capacity is the value reported by the CSI driver in its GetCapacityResponse.'),
  maximumVolumeSize: quantity('maximumVolumeSize is the value reported by the CSI driver in its GetCapacityResponse.'),
});

export type StorageClass = Static<typeof StorageClass>;
export type CSIDriver = Static<typeof CSIDriver>;
export type CSIDriverSpec = Static<typeof CSIDriverSpec>;
export type CSINode = Static<typeof CSINode>;
export type CSINodeDriver = Static<typeof CSINodeDriver>;
export type VolumeAttachment = Static<typeof VolumeAttachment>;
export type VolumeAttachmentSpec = Static<typeof VolumeAttachmentSpec>;
export type VolumeAttachmentStatus = Static<typeof VolumeAttachmentStatus>;
export type VolumeError = Static<typeof VolumeError>;
export type CSIStorageCapacity = Static<typeof CSIStorageCapacity>;
