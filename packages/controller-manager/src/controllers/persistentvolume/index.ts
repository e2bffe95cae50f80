/**
 * Finding a volume for a claim, as the persistentvolume binder does
 * (pkg/controller/volume/persistentvolume/index.go findByClaim and
 * k8s.io/component-helpers/storage/volume FindMatchingVolume, without a node):
 *
 * - a volume already pre-bound to the claim (its claimRef names the claim) wins
 *   outright if it is big enough, of the claim's volumeMode and not being
 *   deleted — class, selector and phase are not asked;
 * - otherwise, among Available volumes of the claim's class whose labels match
 *   the claim's selector, the smallest one with at least the requested
 *   capacity; with a WaitForFirstConsumer class none (the scheduler picks);
 * - volumes are searched by access-mode sets: first the volumes whose modes
 *   are the fewest that still hold every mode the claim asks for, then larger
 *   sets, as upstream's index by access modes does.
 */
import { selectorFromLabelSelector } from '@kubeling/apimachinery';
import { claimClass, claimKey, isVolumeBoundToClaim, storageBytes, volumeClass, type PersistentVolume, type PersistentVolumeClaim } from '../storage.js';

type ClaimSpec = PersistentVolumeClaim['spec'];
type VolumeSpec = PersistentVolume['spec'];

/** CheckVolumeModeMismatches: both default to Filesystem. */
export const volumeModeMismatch = (claim: ClaimSpec, volume: VolumeSpec): boolean =>
  (claim?.volumeMode || 'Filesystem') !== (volume?.volumeMode || 'Filesystem');

/** CheckAccessModes: every mode the claim asks for is one the volume has. */
export const accessModesSatisfied = (c: PersistentVolumeClaim, v: PersistentVolume): boolean =>
  (c.spec?.accessModes ?? []).every((m) => (v.spec?.accessModes ?? []).includes(m));

/**
 * FindMatchingVolume (node = nil): the pre-bound volume, else the smallest
 * fitting Available one; undefined when none. Throws on a claim selector that
 * does not parse.
 */
export function findMatchingVolume(claim: PersistentVolumeClaim, volumes: readonly PersistentVolume[], delayBinding: boolean): PersistentVolume | undefined {
  const requested = storageBytes(claim.spec?.resources?.requests);
  const requestedClass = claimClass(claim);
  let selector: ReturnType<typeof selectorFromLabelSelector> | undefined;
  if (claim.spec?.selector) {
    try {
      selector = selectorFromLabelSelector(claim.spec.selector);
    } catch (e) {
      throw new Error(`error creating internal label selector for claim: ${claimKey(claim)}: ${(e as Error).message}`);
    }
  }
  let smallest: PersistentVolume | undefined;
  let smallestSize = 0;
  for (const v of volumes) {
    if (v.spec?.claimRef && !isVolumeBoundToClaim(v, claim)) continue;
    const size = storageBytes(v.spec?.capacity);
    if (size < requested) continue;
    if (volumeModeMismatch(claim.spec, v.spec)) continue;
    if (v.metadata.deletionTimestamp) continue;
    if (isVolumeBoundToClaim(v, claim)) return v;
    // The scheduler binds unbound volumes of WaitForFirstConsumer classes.
    if (delayBinding) continue;
    if (v.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(v.metadata.labels ?? {})) continue;
    if (volumeClass(v) !== requestedClass) continue;
    if (!smallest || smallestSize > size) {
      smallest = v;
      smallestSize = size;
    }
  }
  return smallest;
}

/** The access-mode sets (as sorted keys) that hold every mode asked for, fewest modes first. */
function matchingModeSets(volumes: readonly PersistentVolume[], requested: readonly string[]): string[] {
  const sets = new Map<string, number>();
  for (const v of volumes) {
    const modes = [...new Set(v.spec?.accessModes ?? [])].sort();
    if (requested.every((m) => modes.includes(m))) sets.set(modes.join(','), modes.length);
  }
  return [...sets.entries()].sort(([ka, a], [kb, b]) => a - b || ka.localeCompare(kb)).map(([k]) => k);
}

/** persistentVolumeOrderedIndex.findByClaim: findMatchingVolume over each access-mode set in turn. */
export function findBestMatchForClaim(claim: PersistentVolumeClaim, volumes: readonly PersistentVolume[], delayBinding: boolean): PersistentVolume | undefined {
  const byModes = new Map<string, PersistentVolume[]>();
  for (const v of volumes) {
    const k = [...new Set(v.spec?.accessModes ?? [])].sort().join(',');
    byModes.set(k, [...(byModes.get(k) ?? []), v]);
  }
  for (const k of matchingModeSets(volumes, claim.spec?.accessModes ?? [])) {
    const found = findMatchingVolume(claim, byModes.get(k) ?? [], delayBinding);
    if (found) return found;
  }
  return undefined;
}

/** checkVolumeSatisfyClaim: why a volume the claim names cannot serve it, or undefined when it can. */
export function checkVolumeSatisfyClaim(v: PersistentVolume, c: PersistentVolumeClaim): string | undefined {
  if (v.metadata.deletionTimestamp) return `the volume is marked for deletion "${v.metadata.name}"`;
  if (storageBytes(v.spec?.capacity) < storageBytes(c.spec?.resources?.requests)) return 'requested PV is too small';
  if (volumeClass(v) !== claimClass(c)) return 'storageClassName does not match';
  if (volumeModeMismatch(c.spec, v.spec)) return 'incompatible volumeMode';
  if (!accessModesSatisfied(c, v)) return 'incompatible accessMode';
  return undefined;
}
