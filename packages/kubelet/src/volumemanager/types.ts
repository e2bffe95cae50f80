/**
 * What the volume manager reads of the storage API (kubernetes
 * pkg/apis/core PersistentVolume/PersistentVolumeClaim, pkg/apis/storage
 * CSIDriver/VolumeAttachment), narrowed to the fields it uses, and the names
 * upstream gives on the node: the unique volume name reported in
 * `status.volumesInUse` (`kubernetes.io/csi/<driver>^<volumeHandle>`), the
 * VolumeAttachment name (`csi-` + sha256 of handle, driver and node), the
 * staging path (`plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount`)
 * and the publish path (`pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount`).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}

export interface ClaimCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface PersistentVolumeClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { volumeName?: string; volumeMode?: string; accessModes?: string[]; resources?: { requests?: Record<string, string> } };
  status?: {
    phase?: string;
    capacity?: Record<string, string>;
    conditions?: ClaimCondition[];
    allocatedResources?: Record<string, string>;
    allocatedResourceStatuses?: Record<string, string>;
  };
}

export interface SecretReference {
  name: string;
  namespace?: string;
}

export interface CSIPersistentVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly?: boolean;
  fsType?: string;
  volumeAttributes?: Record<string, string>;
  nodeStageSecretRef?: SecretReference;
  nodePublishSecretRef?: SecretReference;
  controllerExpandSecretRef?: SecretReference;
  nodeExpandSecretRef?: SecretReference;
}

export interface PersistentVolume {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    mountOptions?: string[];
    volumeMode?: string;
    claimRef?: { namespace?: string; name?: string; uid?: string };
    csi?: CSIPersistentVolumeSource;
    local?: { path: string; fsType?: string };
    hostPath?: { path: string; type?: string };
  };
}

export interface VolumeAttachment {
  metadata: ObjectMeta;
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached?: boolean; attachmentMetadata?: Record<string, string>; attachError?: { time?: string; message?: string } };
}

export interface CSIDriver {
  metadata: ObjectMeta;
  spec?: { attachRequired?: boolean; podInfoOnMount?: boolean; volumeLifecycleModes?: string[]; fsGroupPolicy?: string; requiresRepublish?: boolean };
}

/** The in-tree name of the CSI volume plugin. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const VOL_DATA_FILE = 'vol_data.json';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** GetVolumeName of the CSI plugin: `kubernetes.io/csi/<driver>^<volumeHandle>`. */
export const uniqueVolumeName = (driver: string, handle: string): string => `${CSI_PLUGIN_NAME}/${driver}^${handle}`;

/** getAttachmentName: `csi-` + sha256(volumeHandle + driver + node). */
export const attachmentName = (handle: string, driver: string, node: string): string => `csi-${sha256(handle + driver + node)}`;

/** The directory holding a pod's CSI volumes (`kubernetes.io~csi`, upstream's escaped plugin name). */
export const podCsiDir = (rootDir: string, uid: string): string => join(rootDir, 'pods', uid, 'volumes', 'kubernetes.io~csi');

/** Where NodePublishVolume puts a pod's volume. */
export const publishPath = (rootDir: string, uid: string, pvName: string): string => join(podCsiDir(rootDir, uid), pvName, 'mount');

/** The directory of a volume's staging path and its vol_data.json. */
export const stagingDir = (rootDir: string, driver: string, handle: string): string => join(rootDir, 'plugins', CSI_PLUGIN_NAME, driver, sha256(handle));

/** Where NodeStageVolume stages a volume for every pod of the node. */
export const stagingPath = (rootDir: string, driver: string, handle: string): string => join(stagingDir(rootDir, driver, handle), 'globalmount');

/** A volume of a pod that the volume manager sets up (claims and generic ephemeral volumes). */
export interface ClaimVolume {
  /** The pod's volume name (upstream's outer volume spec name). */
  name: string;
  claimName: string;
  /** Set for a generic ephemeral volume: the claim must be owned by the pod. */
  ephemeral: boolean;
  readOnly: boolean;
}
