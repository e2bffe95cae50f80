/**
 * The desired state of the attach/detach controller for one node
 * (pkg/controller/volume/attachdetach/populator and util.ProcessPodVolumes):
 * the CSI volumes the node's pods use that their driver wants attached.
 *
 * A pod counts while it is not terminated (util.IsPodTerminated). Its volumes'
 * claims — `persistentVolumeClaim.claimName`, or the `<pod>-<volume>` claim of a
 * generic ephemeral volume when the pod owns it — must be Bound to a volume
 * whose claimRef carries the claim's UID. A volume is attachable when it is a
 * CSI volume whose CSIDriver asks for attach; a missing CSIDriver object means
 * attach is required, as upstream's csi plugin CanAttach answers.
 */
import { createHash } from 'node:crypto';
import type { Pod } from '../kinds.js';
import { claimNameOf, isClaimForPod, isPodTerminated, podVolumes, type CSIDriver, type PersistentVolume, type PersistentVolumeClaim } from '../storage.js';

export interface DesiredVolume {
  /** The unique volume name nodes report: `kubernetes.io/csi/<driver>^<volumeHandle>`. */
  uniqueName: string;
  /** The VolumeAttachment's name (csi attacher getAttachmentName). */
  attachmentName: string;
  pvName: string;
  driver: string;
  /** The claim the volume is bound to, `ns/name`. */
  claimKey: string;
  /** isMultiAttachAllowed: the volume may be attached to several nodes (ReadWriteMany or ReadOnlyMany). */
  multiAttach: boolean;
  /** The node's pods that use it. */
  pods: Pod[];
}

export interface DesiredInput {
  /** The node's pods. */
  pods: readonly Pod[];
  claim(key: string): PersistentVolumeClaim | undefined;
  volume(name: string): PersistentVolume | undefined;
  driver(name: string): CSIDriver | undefined;
}

/** getAttachmentName: `csi-` + sha256 of volume handle, driver and node. */
export const attachmentName = (volumeHandle: string, driver: string, node: string): string =>
  `csi-${createHash('sha256').update(`${volumeHandle}${driver}${node}`).digest('hex')}`;

/** The unique name of a CSI volume (plugin name `kubernetes.io/csi`, volume name `<driver>^<handle>`). */
export const csiUniqueName = (driver: string, handle: string): string => `kubernetes.io/csi/${driver}^${handle}`;

/** The CSI driver asks for attach: attachRequired unset or true, or no CSIDriver object at all. */
export const attachRequired = (d: CSIDriver | undefined): boolean => d?.spec?.attachRequired !== false;

const multiAttachAllowed = (pv: PersistentVolume): boolean => (pv.spec?.accessModes ?? []).some((m) => m === 'ReadWriteMany' || m === 'ReadOnlyMany');

/** The volume a pod's volume resolves to through its bound claim, or undefined. */
function boundVolume(pod: Pod, claimName: string, ephemeral: boolean, input: DesiredInput): { pv: PersistentVolume; claimKey: string } | undefined {
  const key = `${pod.metadata.namespace}/${claimName}`;
  const claim = input.claim(key);
  if (!claim || (ephemeral && !isClaimForPod(pod, claim))) return undefined;
  if (claim.status?.phase !== 'Bound' || !claim.spec?.volumeName) return undefined;
  const pv = input.volume(claim.spec.volumeName);
  if (!pv || pv.spec?.claimRef?.uid !== claim.metadata.uid) return undefined;
  return { pv, claimKey: key };
}

/** The attachable volumes the node's pods need, by VolumeAttachment name. */
export function desiredVolumes(nodeName: string, input: DesiredInput): Map<string, DesiredVolume> {
  const out = new Map<string, DesiredVolume>();
  for (const pod of input.pods) {
    if (isPodTerminated(pod)) continue;
    for (const v of podVolumes(pod)) {
      const claimName = claimNameOf(pod, v);
      if (!claimName) continue;
      const bound = boundVolume(pod, claimName, !v.persistentVolumeClaim, input);
      const csi = bound?.pv.spec?.csi;
      if (!bound || !csi || !attachRequired(input.driver(csi.driver))) continue;
      const name = attachmentName(csi.volumeHandle, csi.driver, nodeName);
      const cur = out.get(name);
      if (cur) {
        if (!cur.pods.includes(pod)) cur.pods.push(pod);
        continue;
      }
      out.set(name, {
        uniqueName: csiUniqueName(csi.driver, csi.volumeHandle),
        attachmentName: name,
        pvName: bound.pv.metadata.name!,
        driver: csi.driver,
        claimKey: bound.claimKey,
        multiAttach: multiAttachAllowed(bound.pv),
        pods: [pod],
      });
    }
  }
  return out;
}
