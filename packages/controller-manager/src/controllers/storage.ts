/**
 * The storage kinds the volume controllers read — PersistentVolume and its
 * claim, StorageClass, CSIDriver, VolumeAttachment — as the narrow shapes they
 * use, and the helpers upstream shares between those controllers
 * (k8s.io/component-helpers/storage/volume, pkg/controller/volume/common,
 * pkg/volume/util): classes of claims and volumes, the claims a pod uses, and
 * whether a pod is done with its volumes.
 */
import type { KubeObject } from '@kubeling/api';
import { intValue, type LabelSelectorObject } from '@kubeling/apimachinery';
import { podPhase, type Pod } from './kinds.js';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
export const ANN_CONTROLLER_MANAGED_ATTACH = 'volumes.kubernetes.io/controller-managed-attach-detach';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface PersistentVolume extends KubeObject {
  spec?: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    claimRef?: ObjectReference | null;
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string;
    volumeMode?: string;
    csi?: { driver: string; volumeHandle: string; [field: string]: unknown };
    hostPath?: { path: string; type?: string };
    local?: { path: string };
    [field: string]: unknown;
  };
  status?: { phase?: string; message?: string; reason?: string; lastPhaseTransitionTime?: string };
}

export interface PersistentVolumeClaim extends KubeObject {
  spec?: {
    accessModes?: string[];
    selector?: LabelSelectorObject | null;
    resources?: { requests?: Record<string, string> };
    volumeName?: string;
    storageClassName?: string | null;
    volumeMode?: string;
    [field: string]: unknown;
  };
  status?: { phase?: string; accessModes?: string[]; capacity?: Record<string, string>; [field: string]: unknown };
}

export interface StorageClass extends KubeObject {
  provisioner: string;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
}

export interface CSIDriver extends KubeObject {
  spec?: { attachRequired?: boolean };
}

export interface VolumeError {
  message?: string;
  time?: string;
}

export interface VolumeAttachment extends KubeObject {
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached?: boolean; attachError?: VolumeError; detachError?: VolumeError };
}

/** A pod volume, as far as the volume controllers look at it. */
export interface PodVolume {
  name: string;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  ephemeral?: { volumeClaimTemplate?: unknown };
}

export const podVolumes = (pod: Pod): PodVolume[] => ((pod.spec as { volumes?: PodVolume[] } | undefined)?.volumes ?? []) as PodVolume[];

/** ephemeral.VolumeClaimName: the claim of a generic ephemeral volume is `<pod>-<volume>`. */
export const ephemeralClaimName = (pod: Pod, v: PodVolume): string => `${pod.metadata.name}-${v.name}`;

/** The claim a pod volume uses (its own, or its ephemeral one), if any. */
export function claimNameOf(pod: Pod, v: PodVolume): string | undefined {
  if (v.persistentVolumeClaim) return v.persistentVolumeClaim.claimName;
  if (v.ephemeral) return ephemeralClaimName(pod, v);
  return undefined;
}

/** common.PodPVCIndexFunc: the `ns/claim` keys of the claims a pod uses, generic ephemeral ones included. */
export const podClaimKeys = (pod: KubeObject): string[] => {
  const p = pod as Pod;
  return podVolumes(p).flatMap((v) => {
    const c = claimNameOf(p, v);
    return c ? [`${p.metadata.namespace}/${c}`] : [];
  });
};
export const POD_PVC_INDEX = 'pod-pvc';

/** ephemeral.VolumeIsForPod: the claim is controlled by the pod. */
export const isClaimForPod = (pod: Pod, claim: KubeObject): boolean =>
  (claim.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata.uid);

/**
 * util.IsPodTerminated: Failed or Succeeded, or being deleted with no
 * container running any more.
 */
export function isPodTerminated(pod: Pod): boolean {
  const phase = podPhase(pod);
  if (phase === 'Failed' || phase === 'Succeeded') return true;
  if (!pod.metadata.deletionTimestamp) return false;
  const statuses = (pod.status?.containerStatuses ?? []) as { state?: { running?: unknown } }[];
  return statuses.every((s) => !s.state?.running);
}

/** GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName, else "". */
export const claimClass = (c: PersistentVolumeClaim): string => c.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? c.spec?.storageClassName ?? '';

/** PersistentVolumeClaimHasClass: a class is asked for (the annotation or a non-nil storageClassName, "" included). */
export const claimHasClass = (c: PersistentVolumeClaim): boolean =>
  c.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] !== undefined || (c.spec?.storageClassName !== undefined && c.spec.storageClassName !== null);

/** GetPersistentVolumeClass. */
export const volumeClass = (v: PersistentVolume): string => v.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? v.spec?.storageClassName ?? '';

/** `ns/name` of a claim, and of the claim a volume's claimRef names. */
export const claimKey = (c: KubeObject): string => `${c.metadata.namespace}/${c.metadata.name}`;
export const claimRefKey = (r: ObjectReference): string => `${r.namespace}/${r.name}`;

/** IsVolumeBoundToClaim: the claimRef names the claim (and its UID, when the ref has one). */
export function isVolumeBoundToClaim(v: PersistentVolume, c: PersistentVolumeClaim): boolean {
  const ref = v.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== c.metadata.name || ref.namespace !== c.metadata.namespace) return false;
  return !ref.uid || ref.uid === c.metadata.uid;
}

/** The `storage` of a capacity or request map, in bytes; 0 when absent or not a quantity. */
export function storageBytes(m: Record<string, string> | undefined): number {
  try {
    return intValue(m?.storage ?? '0');
  } catch {
    return 0;
  }
}

/** Whether a class is the default one (either annotation "true"). */
export const isDefaultClass = (sc: KubeObject): boolean =>
  sc.metadata.annotations?.[ANN_DEFAULT_CLASS] === 'true' || sc.metadata.annotations?.[ANN_BETA_DEFAULT_CLASS] === 'true';

/** util.GetDefaultClass: the newest default class, by name when created at the same time. */
export function defaultClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const defaults = classes.filter(isDefaultClass);
  defaults.sort((a, b) => {
    const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
    return ta === tb ? (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '') : tb - ta;
  });
  return defaults[0];
}
