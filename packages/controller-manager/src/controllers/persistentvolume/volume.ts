/**
 * syncVolume of the persistentvolume binder (pv_controller.go) and the
 * reclaim of released volumes.
 *
 * A volume without a claimRef, or reserved for a claim not yet bound (no
 * UID), is Available. One whose claim is gone is Released and reclaimed by its
 * policy: Retain keeps it Released; Delete leaves volumes of external
 * provisioners (and CSI volumes) to those provisioners, deletes host path
 * volumes under /tmp as upstream's host path deleter does, and fails the rest
 * (Failed, VolumeFailedDelete); Recycle fails with upstream's message, as no
 * recycler runs here. A volume whose claim is bound elsewhere is unbound (or,
 * dynamically provisioned with Delete, released). Failed volumes are retried
 * on every sync, as upstream retries.
 */
import { posix } from 'node:path';
import { isNotFound } from '@kubeling/apimachinery';
import type { Binder } from './binder.js';
import { volumeModeMismatch } from './index.js';
import { ANN_DYNAMICALLY_PROVISIONED, claimKey, claimRefKey, isPodTerminated, type PersistentVolume, type PersistentVolumeClaim } from '../storage.js';

const settled = (v: PersistentVolume) => v.status?.phase === 'Released' || v.status?.phase === 'Failed';

export async function syncVolume(b: Binder, volume: PersistentVolume): Promise<void> {
  const ref = volume.spec?.claimRef;
  if (!ref?.uid) {
    await b.updateVolumePhase(volume, 'Available');
    return;
  }
  let claim: PersistentVolumeClaim | undefined = b.d.claim(claimRefKey(ref));
  // A claim the cache has not seen yet (made by a provisioner, bound by the scheduler) is asked for before reclaiming.
  if (!claim && !settled(volume)) claim = await b.d.api.getClaim(ref.namespace!, ref.name!);
  if (claim && claim.metadata.uid !== ref.uid) {
    claim = await b.d.api.getClaim(ref.namespace!, ref.name!);
    if (claim && claim.metadata.uid !== ref.uid) claim = undefined;
  }
  if (!claim) {
    let v = volume;
    if (!settled(v)) v = await b.updateVolumePhase(v, 'Released');
    await reclaimVolume(b, v);
    return;
  }
  if (!claim.spec?.volumeName) {
    if (volumeModeMismatch(claim.spec, volume.spec)) {
      b.volumeEvent(
        volume,
        'Warning',
        'VolumeMismatch',
        `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata.name}" due to incompatible volumeMode.`,
      );
      b.claimEvent(
        claim,
        'Warning',
        'VolumeMismatch',
        `Cannot bind PersistentVolume "${volume.metadata.name}" to requested PersistentVolumeClaim due to incompatible volumeMode.`,
      );
      return;
    }
    // Half a binding (ours, or a provisioner's or the scheduler's): the claim's sync completes it.
    b.d.enqueueClaim(claimKey(claim));
    return;
  }
  if (claim.spec.volumeName === volume.metadata.name) {
    await b.updateVolumePhase(volume, 'Bound');
    return;
  }
  // The claim is bound to another volume.
  if (volume.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== undefined && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
    let v = volume;
    if (!settled(v)) v = await b.updateVolumePhase(v, 'Released');
    await reclaimVolume(b, v);
    return;
  }
  // Bound by the controller: undo it; pre-bound by a user: keep the reservation, drop the UID.
  await b.unbindVolume(volume);
}

/** reclaimVolume: what the policy says once the claim is gone (Retain when unset, as the API defaults it). */
export async function reclaimVolume(b: Binder, volume: PersistentVolume): Promise<void> {
  switch (volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain') {
    case 'Retain':
      return;
    case 'Recycle':
      return recycleVolumeOperation(b, volume);
    case 'Delete':
      return deleteVolumeOperation(b, volume);
    default:
      await b.updateVolumePhaseWithEvent(volume, 'Failed', 'Warning', 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy');
  }
}

/** isVolumeReleased: bound (with a UID) to a claim that is gone, replaced, or bound to another volume. */
function isVolumeReleased(b: Binder, v: PersistentVolume): boolean {
  const ref = v.spec?.claimRef;
  if (!ref?.uid) return false;
  const claim = b.d.claim(claimRefKey(ref));
  if (claim && claim.metadata.uid === ref.uid) return !!claim.spec?.volumeName && claim.spec.volumeName !== v.metadata.name;
  return true;
}

async function recycleVolumeOperation(b: Binder, volume: PersistentVolume): Promise<void> {
  const fresh = await b.d.api.getVolume(volume.metadata.name!);
  if (!fresh || !isVolumeReleased(b, fresh)) return;
  const key = claimRefKey(fresh.spec!.claimRef!);
  const used = [
    ...new Set(
      b.d
        .podsUsingClaim(key)
        .filter((p) => !isPodTerminated(p))
        .map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    ),
  ].sort();
  if (used.length && !b.d.claim(key)) {
    b.volumeEvent(fresh, 'Normal', 'VolumeFailedRecycle', `Volume is used by pods: ${used.join(',')}`);
    return;
  }
  await b.updateVolumePhaseWithEvent(fresh, 'Failed', 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
}

/**
 * The in-tree host path deleter: only directories under /tmp, as upstream
 * allows. Stricter than upstream's unanchored `/tmp/.+`, since here the
 * controller-manager runs as the user on the host: the path must be
 * `/tmp/<name>...` in normal form, and the deleter never goes through a
 * symbolic link out of /tmp (`removeAll` checks the real path).
 */
export function hostPathDeletable(path: string): boolean {
  return /^\/tmp\/[^/]/.test(path) && posix.normalize(path) === path && !path.endsWith('/');
}

async function deleteHostPath(b: Binder, path: string): Promise<void> {
  if (!hostPathDeletable(path)) throw new Error(`host_path deleter only supports /tmp/.+ but received provided ${path}`);
  await b.d.removeAll(path);
}

/**
 * doDeleteVolume: true when the volume was deleted here, false when an
 * external deleter owns it; throws with upstream's message when no deleter can.
 */
async function doDeleteVolume(b: Binder, v: PersistentVolume): Promise<boolean> {
  const name = v.metadata.name!;
  const provisionedBy = v.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED];
  if (provisionedBy) {
    if (!provisionedBy.startsWith('kubernetes.io/')) return false;
    if (provisionedBy !== 'kubernetes.io/host-path') throw new Error(`no volume plugin matched name: ${provisionedBy}`);
    if (!v.spec?.hostPath) throw new Error(`failed to create deleter for volume "${name}": spec.PersistentVolumeSource.HostPath is nil`);
    await deleteHostPath(b, v.spec.hostPath.path);
    return true;
  }
  if (v.spec?.csi) return false;
  if (v.spec?.hostPath) {
    await deleteHostPath(b, v.spec.hostPath.path);
    return true;
  }
  // Plugins that know the source but cannot delete (local, nfs), or none that knows it.
  const known = v.spec?.local || v.spec?.nfs;
  throw new Error(`error getting deleter volume plugin for volume "${name}": ${known ? 'no deletable volume plugin matched' : 'no volume plugin matched'}`);
}

async function deleteVolumeOperation(b: Binder, volume: PersistentVolume): Promise<void> {
  const fresh = await b.d.api.getVolume(volume.metadata.name!);
  if (!fresh || !isVolumeReleased(b, fresh)) return;
  let deleted: boolean;
  try {
    deleted = await doDeleteVolume(b, fresh);
  } catch (e) {
    // Failed, and tried again on every sync.
    await b.updateVolumePhaseWithEvent(fresh, 'Failed', 'Warning', 'VolumeFailedDelete', (e as Error).message);
    return;
  }
  if (!deleted) return;
  try {
    await b.d.api.deleteVolume(fresh.metadata.name!);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
