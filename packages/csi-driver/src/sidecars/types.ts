/**
 * What the sidecars read and write of the storage objects, as narrow views of
 * the API kinds (core/v1 PersistentVolume and PersistentVolumeClaim,
 * storage.k8s.io/v1 StorageClass, VolumeAttachment, CSINode and
 * CSIStorageCapacity), and the annotation, finalizer and label names the
 * kubernetes-csi sidecars use, spelled as upstream spells them.
 */
import type { KubeObject } from '@kubeling/api';

export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const ANN_STORAGE_RESIZER = 'volume.kubernetes.io/storage-resizer';
/** external-attacher records the CSI node ID on the VolumeAttachment for detach when the CSINode is gone. */
export const ANN_VA_NODE_ID = 'csi.alpha.kubernetes.io/node-id';
/** The volume attribute naming the provisioner instance that created a volume. */
export const PROVISIONER_ID_KEY = 'storage.kubernetes.io/csiProvisionerIdentity';
export const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';
export const LABEL_DRIVER_NAME = 'csi.storage.k8s.io/drivername';
export const LABEL_MANAGED_BY = 'csi.storage.k8s.io/managed-by';

export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values?: string[] }[];
}

export interface StorageClass extends KubeObject {
  provisioner: string;
  parameters?: Record<string, string>;
  reclaimPolicy?: string;
  mountOptions?: string[];
  allowVolumeExpansion?: boolean;
  volumeBindingMode?: string;
  allowedTopologies?: TopologySelectorTerm[];
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
}

export interface ClaimCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface PersistentVolumeClaim extends KubeObject {
  spec?: {
    accessModes?: string[];
    selector?: unknown;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
    volumeName?: string;
    storageClassName?: string | null;
    volumeMode?: string;
    dataSource?: { apiGroup?: string; kind: string; name: string } | null;
    dataSourceRef?: { apiGroup?: string; kind: string; name: string; namespace?: string } | null;
  };
  status?: {
    phase?: string;
    accessModes?: string[];
    capacity?: Record<string, string>;
    conditions?: ClaimCondition[];
    allocatedResources?: Record<string, string>;
    allocatedResourceStatuses?: Record<string, string>;
  };
}

export interface NodeSelectorTerm {
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
  matchFields?: { key: string; operator: string; values?: string[] }[];
}

export interface CSIVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly?: boolean;
  fsType?: string;
  volumeAttributes?: Record<string, string>;
}

export interface PersistentVolumeSpec {
  capacity?: Record<string, string>;
  accessModes?: string[];
  claimRef?: ObjectReference;
  persistentVolumeReclaimPolicy?: string;
  storageClassName?: string;
  mountOptions?: string[];
  volumeMode?: string;
  nodeAffinity?: { required?: { nodeSelectorTerms: NodeSelectorTerm[] } };
  csi?: CSIVolumeSource;
}

export interface PersistentVolume extends KubeObject {
  spec?: PersistentVolumeSpec;
  status?: { phase?: string; message?: string; reason?: string };
}

export interface VolumeError {
  time?: string;
  message?: string;
}

export interface VolumeAttachment extends KubeObject {
  spec: {
    attacher: string;
    nodeName: string;
    source: { persistentVolumeName?: string; inlineVolumeSpec?: PersistentVolumeSpec };
  };
  status?: {
    attached?: boolean;
    attachmentMetadata?: Record<string, string>;
    attachError?: VolumeError;
    detachError?: VolumeError;
  };
}

export interface CSINode extends KubeObject {
  spec?: { drivers?: { name: string; nodeID: string; topologyKeys?: string[] }[] };
}

export interface CSIStorageCapacity extends KubeObject {
  storageClassName: string;
  nodeTopology?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  capacity?: string;
  maximumVolumeSize?: string;
}

/** The claim's class: `spec.storageClassName`, else the beta annotation (util.GetPersistentVolumeClaimClass). */
export function claimClass(claim: PersistentVolumeClaim): string {
  const ann = claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return claim.spec?.storageClassName ?? '';
}

/** The provisioner a claim asks for: the GA annotation, else the beta one. */
export function claimProvisioner(claim: PersistentVolumeClaim): string | undefined {
  const a = claim.metadata.annotations ?? {};
  return a[ANN_STORAGE_PROVISIONER] ?? a[ANN_BETA_STORAGE_PROVISIONER];
}

export const hasFinalizer = (obj: KubeObject, f: string): boolean => (obj.metadata.finalizers ?? []).includes(f);

export const claimKey = (c: KubeObject): string => `${c.metadata.namespace}/${c.metadata.name}`;
