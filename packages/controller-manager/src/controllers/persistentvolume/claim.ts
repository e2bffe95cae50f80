/**
 * syncClaim of the persistentvolume binder (pv_controller.go): what to do with
 * a claim, from what the listers hold.
 *
 * An unbound claim (no bind-completed annotation) that names no volume gets
 * the best matching one; without one it is given the default class if it has
 * none (retroactive default StorageClass assignment), waits for a consumer
 * under WaitForFirstConsumer (event WaitForFirstConsumer / WaitForPodScheduled),
 * or, with a class, is handed to the class's external provisioner (the
 * storage-provisioner annotations and an ExternalProvisioning event); a claim
 * naming a volume is bound to it when the volume can serve it. A bound claim
 * whose volume is gone, or names another claim, is Lost; otherwise the binding
 * is completed where half of it is missing.
 */
import type { Binder } from './binder.js';
import { checkVolumeSatisfyClaim, findBestMatchForClaim } from './index.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
  claimHasClass,
  claimKey,
  claimRefKey,
  defaultClass,
  isPodTerminated,
  isVolumeBoundToClaim,
  type PersistentVolume,
  type PersistentVolumeClaim,
} from '../storage.js';

export async function syncClaim(b: Binder, claim: PersistentVolumeClaim): Promise<void> {
  if (claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) return syncUnboundClaim(b, claim);
  return syncBoundClaim(b, claim);
}

/** IsDelayBindingMode: the claim's class exists and binds on first consumer. */
function isDelayBindingMode(b: Binder, claim: PersistentVolumeClaim): boolean {
  const name = claimClass(claim);
  if (!name) return false;
  return b.d.storageClass(name)?.volumeBindingMode === 'WaitForFirstConsumer';
}

async function syncUnboundClaim(b: Binder, claim: PersistentVolumeClaim): Promise<void> {
  const wanted = claim.spec?.volumeName;
  if (!wanted) {
    const delayBinding = isDelayBindingMode(b, claim);
    let volume: PersistentVolume | undefined;
    try {
      volume = findBestMatchForClaim(claim, b.d.volumes(), delayBinding);
    } catch (e) {
      throw new Error(`error finding PV for claim "${claimKey(claim)}": ${(e as Error).message}`);
    }
    if (volume) {
      await b.bind(volume, claim);
      return;
    }
    if (await assignDefaultStorageClass(b, claim)) return;
    if (delayBinding && claim.metadata.annotations?.[ANN_SELECTED_NODE] === undefined) {
      emitEventForUnboundDelayBindingClaim(b, claim);
    } else if (claimClass(claim) !== '') {
      // The provisioner (or an administrator) makes the volume; the next sync binds it.
      await provisionClaim(b, claim);
      return;
    } else {
      b.claimEvent(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
    }
    await b.updateClaimStatus(claim, 'Pending');
    return;
  }
  const volume = b.d.volume(wanted);
  if (!volume) {
    // The claim asks for a volume that does not exist (yet): Pending, tried again later.
    await b.updateClaimStatus(claim, 'Pending');
    return;
  }
  if (!volume.spec?.claimRef) {
    const why = checkVolumeSatisfyClaim(volume, claim);
    if (why) {
      b.claimEvent(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volume.metadata.name}": ${why}`);
      await b.updateClaimStatus(claim, 'Pending');
      return;
    }
    await b.bind(volume, claim);
    return;
  }
  if (isVolumeBoundToClaim(volume, claim)) {
    await b.bind(volume, claim);
    return;
  }
  b.claimEvent(claim, 'Warning', 'FailedBinding', `volume "${volume.metadata.name}" already bound to a different claim.`);
  if (claim.metadata.annotations?.[ANN_BOUND_BY_CONTROLLER] === undefined) {
    await b.updateClaimStatus(claim, 'Pending');
    return;
  }
  throw new Error(`invalid binding of claim "${claimKey(claim)}" to volume "${wanted}": volume already claimed by "${claimRefKey(volume.spec.claimRef)}"`);
}

async function syncBoundClaim(b: Binder, claim: PersistentVolumeClaim): Promise<void> {
  const name = claim.spec?.volumeName;
  if (!name) {
    await b.updateClaimStatusWithEvent(
      claim,
      'Lost',
      'Warning',
      'ClaimLost',
      'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
    );
    return;
  }
  const volume = b.d.volume(name);
  if (!volume) {
    await b.updateClaimStatusWithEvent(claim, 'Lost', 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
    return;
  }
  const ref = volume.spec?.claimRef;
  // Unbound volume (or the cache has not seen the binding yet), or all is well: bind() sets what is missing.
  if (!ref || ref.uid === claim.metadata.uid) {
    await b.bind(volume, claim);
    return;
  }
  await b.updateClaimStatusWithEvent(claim, 'Lost', 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
}

/** assignDefaultStorageClass: a claim with no class at all gets the default one; true when it was updated. */
async function assignDefaultStorageClass(b: Binder, claim: PersistentVolumeClaim): Promise<boolean> {
  if (claimHasClass(claim)) return false;
  const sc = defaultClass(b.d.storageClasses());
  if (!sc) return false;
  const next = structuredClone(claim);
  next.spec = { ...(next.spec ?? {}), storageClassName: sc.metadata.name! };
  await b.d.api.updateClaim(next);
  return true;
}

/** emitEventForUnboundDelayBindingClaim: who the claim waits for. */
function emitEventForUnboundDelayBindingClaim(b: Binder, claim: PersistentVolumeClaim): void {
  const pods = b.d
    .podsUsingClaim(claimKey(claim))
    .filter((p) => !isPodTerminated(p) && !p.spec?.nodeName)
    .map((p) => p.metadata.name!);
  if (pods.length === 0) {
    b.claimEvent(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
  } else if (pods.length === 1) {
    b.claimEvent(claim, 'Normal', 'WaitForPodScheduled', `waiting for pod ${pods[0]} to be scheduled`);
  } else {
    b.claimEvent(claim, 'Normal', 'WaitForPodScheduled', `waiting for pods ${pods.join(',')} to be scheduled`);
  }
}

/**
 * provisionClaim: the class's provisioner is told through the claim's
 * storage-provisioner annotations (both, beta included). No in-tree plugin
 * provisions here: a `kubernetes.io/` provisioner fails as upstream's plugin
 * lookup does, and a missing class fails as the class lister does.
 */
async function provisionClaim(b: Binder, claim: PersistentVolumeClaim): Promise<void> {
  const name = claimClass(claim);
  const sc = b.d.storageClass(name);
  if (!sc) {
    b.claimEvent(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${name}" not found`);
    return;
  }
  if (sc.provisioner.startsWith('kubernetes.io/')) {
    b.claimEvent(claim, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${sc.provisioner}`);
    return;
  }
  let current = claim;
  if (claim.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== sc.provisioner) {
    const next = structuredClone(claim);
    next.metadata.annotations = {
      ...(next.metadata.annotations ?? {}),
      [ANN_BETA_STORAGE_PROVISIONER]: sc.provisioner,
      [ANN_STORAGE_PROVISIONER]: sc.provisioner,
    };
    try {
      current = await b.d.api.updateClaim(next);
    } catch (e) {
      b.claimEvent(claim, 'Warning', 'ProvisioningFailed', `Error saving claim: ${(e as Error).message}`);
      throw e;
    }
  }
  b.claimEvent(
    current,
    'Normal',
    'ExternalProvisioning',
    `Waiting for a volume to be created either by the external provisioner '${sc.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
  );
}
