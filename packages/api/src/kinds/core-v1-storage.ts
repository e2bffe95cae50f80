/**
 * core/v1 storage kinds, as upstream Kubernetes 1.33 (`k8s.io/api/core/v1`
 * types.go): PersistentVolume and PersistentVolumeClaim with their specs and
 * statuses, the PV sources kubeling's volumes use (csi, local, hostPath, nfs;
 * the cloud and legacy sources are kept opaque), node affinity, and the
 * topology terms StorageClasses restrict provisioning with.
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, list, map, object, opaque, quantity, string, time, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';
import { C, ObjectReference, resourceMap } from './core-v1-pod.js';

export const SecretReference = object(
  C + 'SecretReference',
  'SecretReference represents a Secret Reference. It has enough information to retrieve secret in any namespace',
  {
    name: string('name is unique within a namespace to reference a secret resource.'),
    namespace: string('namespace defines the space within which the secret name must be unique.'),
  },
);

export const CSIPersistentVolumeSource = object(
  C + 'CSIPersistentVolumeSource',
  'Represents storage that is managed by an external CSI volume driver',
  {
    driver: string('driver is the name of the driver to use for this volume. Required.'),
    volumeHandle: string(
      'volumeHandle is the unique volume name returned by the CSI volume plugin’s CreateVolume to refer to the volume on all subsequent calls. Required.',
    ),
    readOnly: boolean('readOnly value to pass to ControllerPublishVolumeRequest. Defaults to false (read/write).'),
    fsType: string('fsType to mount. Must be a filesystem type supported by the host operating system. Ex. "ext4", "xfs", "ntfs".'),
    volumeAttributes: map(Type.String(), 'volumeAttributes of the volume to publish.'),
    controllerPublishSecretRef: SecretReference,
    nodeStageSecretRef: SecretReference,
    nodePublishSecretRef: SecretReference,
    controllerExpandSecretRef: SecretReference,
    nodeExpandSecretRef: SecretReference,
  },
  ['driver', 'volumeHandle'],
);

export const LocalVolumeSource = object(
  C + 'LocalVolumeSource',
  'Local represents directly-attached storage with node affinity',
  {
    path: string('path of the full path to the volume on the node. It can be either a directory or block device (disk, partition, ...).'),
    fsType: string('fsType is the filesystem type to mount. It applies only when the Path is a block device.'),
  },
  ['path'],
);

export const HostPathVolumeSource = object(
  C + 'HostPathVolumeSource',
  'Represents a host path mapped into a pod. Host path volumes do not support ownership management or SELinux relabeling.',
  {
    path: string('path of the directory on the host. If the path is a symlink, it will follow the link to the real path.'),
    type: string('type for HostPath Volume Defaults to ""'),
  },
  ['path'],
);

export const NFSVolumeSource = object(
  C + 'NFSVolumeSource',
  'Represents an NFS mount that lasts the lifetime of a pod. NFS volumes do not support ownership management or SELinux relabeling.',
  {
    server: string('server is the hostname or IP address of the NFS server.'),
    path: string('path that is exported by the NFS server.'),
    readOnly: boolean('readOnly here will force the NFS export to be mounted with read-only permissions. Defaults to false.'),
  },
  ['server', 'path'],
);

export const NodeSelectorRequirement = object(
  C + 'NodeSelectorRequirement',
  'A node selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
  {
    key: string('The label key that the selector applies to.'),
    operator: string("Represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists, DoesNotExist. Gt, and Lt."),
    values: list(Type.String(), 'An array of string values.', { listType: 'atomic' }),
  },
  ['key', 'operator'],
);
export const NodeSelectorTerm = object(
  C + 'NodeSelectorTerm',
  'A null or empty node selector term matches no objects. The requirements of them are ANDed. The TopologySelectorTerm type implements a subset of the NodeSelectorTerm.',
  {
    matchExpressions: list(NodeSelectorRequirement, "A list of node selector requirements by node's labels.", { listType: 'atomic' }),
    matchFields: list(NodeSelectorRequirement, "A list of node selector requirements by node's fields.", { listType: 'atomic' }),
  },
);
export const NodeSelector = object(
  C + 'NodeSelector',
  'A node selector represents the union of the results of one or more label queries over a set of nodes; that is, it represents the OR of the selectors represented by the node selector terms.',
  { nodeSelectorTerms: list(NodeSelectorTerm, 'Required. A list of node selector terms. The terms are ORed.', { listType: 'atomic' }) },
  ['nodeSelectorTerms'],
);
export const VolumeNodeAffinity = object(
  C + 'VolumeNodeAffinity',
  'VolumeNodeAffinity defines constraints that limit what nodes this volume can be accessed from.',
  {
    required: NodeSelector,
  },
);

export const TopologySelectorLabelRequirement = object(
  C + 'TopologySelectorLabelRequirement',
  'A topology selector requirement is a selector that matches given label.',
  {
    key: string('The label key that the selector applies to.'),
    values: list(Type.String(), 'An array of string values. One value must match the label to be selected.', { listType: 'atomic' }),
  },
  ['key', 'values'],
);
export const TopologySelectorTerm = object(
  C + 'TopologySelectorTerm',
  'A topology selector term represents the result of label queries. A null or empty topology selector term matches no objects.',
  { matchLabelExpressions: list(TopologySelectorLabelRequirement, 'A list of topology selector requirements by labels.', { listType: 'atomic' }) },
);

/** The PV sources kubeling does not look into: kept as given. */
const OPAQUE_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'rbd',
  'iscsi',
  'cinder',
  'cephfs',
  'fc',
  'flocker',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
] as const;
const opaqueSources = Object.fromEntries(OPAQUE_SOURCES.map((k) => [k, opaque(`${k} volume source.`)])) as Record<
  (typeof OPAQUE_SOURCES)[number],
  ReturnType<typeof opaque>
>;

export const PersistentVolumeSpec = object(C + 'PersistentVolumeSpec', 'PersistentVolumeSpec is the specification of a persistent volume.', {
  capacity: resourceMap("capacity is the description of the persistent volume's resources and capacity."),
  ...opaqueSources,
  hostPath: HostPathVolumeSource,
  nfs: NFSVolumeSource,
  local: LocalVolumeSource,
  csi: CSIPersistentVolumeSource,
  accessModes: list(Type.String(), 'accessModes contains all ways the volume can be mounted.', { listType: 'atomic' }),
  claimRef: described(ObjectReference, 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
  persistentVolumeReclaimPolicy: string(
    'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated).',
  ),
  storageClassName: string('storageClassName is the name of StorageClass to which this persistent volume belongs.'),
  mountOptions: list(
    Type.String(),
    'mountOptions is the list of mount options, e.g. ["ro", "soft"]. Not validated - mount will simply fail if one is invalid.',
    {
      listType: 'atomic',
    },
  ),
  volumeMode: string('volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.'),
  nodeAffinity: VolumeNodeAffinity,
  volumeAttributesClassName: string('Name of VolumeAttributesClass to which this persistent volume belongs.'),
});

export const PersistentVolumeStatus = object(C + 'PersistentVolumeStatus', 'PersistentVolumeStatus is the current status of a persistent volume.', {
  phase: string('phase indicates if a volume is available, bound to a claim, or released by a claim.'),
  message: string('message is a human-readable message indicating details about why the volume is in this state.'),
  reason: string('reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.'),
  lastPhaseTransitionTime: time('lastPhaseTransitionTime is the time the phase transitioned from one to another.'),
});

export const PersistentVolume = kindOf(
  C + 'PersistentVolume',
  'PersistentVolume (PV) is a storage resource provisioned by an administrator. It is analogous to a node.',
  {
    spec: PersistentVolumeSpec,
    status: PersistentVolumeStatus,
  },
);

export const TypedLocalObjectReference = object(
  C + 'TypedLocalObjectReference',
  'TypedLocalObjectReference contains enough information to let you locate the typed referenced object inside the same namespace.',
  {
    apiGroup: string('APIGroup is the group for the resource being referenced.'),
    kind: string('Kind is the type of resource being referenced'),
    name: string('Name is the name of resource being referenced'),
  },
  ['kind', 'name'],
);
export const TypedObjectReference = object(
  C + 'TypedObjectReference',
  'TypedObjectReference contains enough information to let you locate the typed referenced object',
  {
    apiGroup: string('APIGroup is the group for the resource being referenced.'),
    kind: string('Kind is the type of resource being referenced'),
    name: string('Name is the name of resource being referenced'),
    namespace: string('Namespace is the namespace of resource being referenced'),
  },
  ['kind', 'name'],
);
export const VolumeResourceRequirements = object(
  C + 'VolumeResourceRequirements',
  'VolumeResourceRequirements describes the storage resource requirements for a volume.',
  {
    limits: resourceMap('Limits describes the maximum amount of compute resources allowed.'),
    requests: resourceMap('Requests describes the minimum amount of compute resources required.'),
  },
);

export const PersistentVolumeClaimSpec = object(
  C + 'PersistentVolumeClaimSpec',
  'PersistentVolumeClaimSpec describes the common attributes of storage devices and allows a Source for provider-specific attributes',
  {
    accessModes: list(Type.String(), 'accessModes contains the desired access modes the volume should have.', { listType: 'atomic' }),
    selector: described(LabelSelector, 'selector is a label query over volumes to consider for binding.'),
    resources: VolumeResourceRequirements,
    volumeName: string('volumeName is the binding reference to the PersistentVolume backing this claim.'),
    storageClassName: string('storageClassName is the name of the StorageClass required by the claim.'),
    volumeMode: string('volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.'),
    dataSource: TypedLocalObjectReference,
    dataSourceRef: TypedObjectReference,
    volumeAttributesClassName: string('volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.'),
  },
);

export const PersistentVolumeClaimCondition = object(
  C + 'PersistentVolumeClaimCondition',
  'PersistentVolumeClaimCondition contains details about state of pvc',
  {
    type: string('Type of the condition: Resizing, FileSystemResizePending, ModifyVolumeError, ModifyingVolume.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastProbeTime: time('lastProbeTime is the time we probed the condition.'),
    lastTransitionTime: time('lastTransitionTime is the time the condition transitioned from one status to another.'),
    reason: string("reason is a unique, this should be a short, machine understandable string that gives the reason for condition's last transition."),
    message: string('message is the human-readable message indicating details about last transition.'),
  },
  ['type', 'status'],
);
export const ModifyVolumeStatus = object(
  C + 'ModifyVolumeStatus',
  'ModifyVolumeStatus represents the status object of ControllerModifyVolume operation',
  {
    targetVolumeAttributesClassName: string('targetVolumeAttributesClassName is the name of the VolumeAttributesClass the PVC currently being reconciled'),
    status: string('status is the status of the ControllerModifyVolume operation: Pending, InProgress or Infeasible.'),
  },
  ['status'],
);

export const PersistentVolumeClaimStatus = object(
  C + 'PersistentVolumeClaimStatus',
  'PersistentVolumeClaimStatus is the current status of a persistent volume claim.',
  {
    phase: string('phase represents the current phase of PersistentVolumeClaim.'),
    accessModes: list(Type.String(), 'accessModes contains the actual access modes the volume backing the PVC has.', { listType: 'atomic' }),
    capacity: resourceMap('capacity represents the actual resources of the underlying volume.'),
    conditions: list(PersistentVolumeClaimCondition, 'conditions is the current Condition of persistent volume claim.', {
      mergeKey: 'type',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['type'],
    }),
    allocatedResources: map(quantity(), 'allocatedResources tracks the resources allocated to a PVC including its capacity.'),
    allocatedResourceStatuses: map(Type.String(), 'allocatedResourceStatuses stores status of resource being resized for the given PVC.'),
    currentVolumeAttributesClassName: string('currentVolumeAttributesClassName is the current name of the VolumeAttributesClass the PVC is using.'),
    modifyVolumeStatus: ModifyVolumeStatus,
  },
);

export const PersistentVolumeClaim = kindOf(C + 'PersistentVolumeClaim', "PersistentVolumeClaim is a user's request for and claim to a persistent volume", {
  spec: PersistentVolumeClaimSpec,
  status: PersistentVolumeClaimStatus,
});

export type PersistentVolume = Static<typeof PersistentVolume>;
export type PersistentVolumeSpec = Static<typeof PersistentVolumeSpec>;
export type PersistentVolumeStatus = Static<typeof PersistentVolumeStatus>;
export type PersistentVolumeClaim = Static<typeof PersistentVolumeClaim>;
export type PersistentVolumeClaimSpec = Static<typeof PersistentVolumeClaimSpec>;
export type PersistentVolumeClaimStatus = Static<typeof PersistentVolumeClaimStatus>;
export type PersistentVolumeClaimCondition = Static<typeof PersistentVolumeClaimCondition>;
export type NodeSelector = Static<typeof NodeSelector>;
export type NodeSelectorTerm = Static<typeof NodeSelectorTerm>;
export type NodeSelectorRequirement = Static<typeof NodeSelectorRequirement>;
export type TopologySelectorTerm = Static<typeof TopologySelectorTerm>;
export type CSIPersistentVolumeSource = Static<typeof CSIPersistentVolumeSource>;
export type SecretReference = Static<typeof SecretReference>;
