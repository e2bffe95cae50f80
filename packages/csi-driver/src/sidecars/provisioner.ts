/**
 * external-provisioner in node-deployment mode (kubernetes-csi/external-provisioner
 * with --node-deployment, over sig-storage-lib-external-provisioner's
 * ProvisionController): one instance per node provisions the claims of its
 * driver whose `volume.kubernetes.io/selected-node` is this node, and deletes
 * the Released volumes it made on this node.
 *
 * Claims (`reconcileClaim("ns/name")`): a claim of this driver (the
 * storage-provisioner annotation) that is not bound yet and is either
 * WaitForFirstConsumer with this node selected, or Immediate with no node
 * selected — then this instance first tries to become its owner by writing
 * selected-node with an optimistic-concurrency update, after a jittered delay
 * that grows on conflicts, and only if GetCapacity says the volume fits.
 * Provisioning records a Provisioning event, calls CreateVolume, creates the
 * PV (with claimRef, the provisioned-by annotation and the provisioner's
 * finalizer) and records ProvisioningSucceeded; failures record
 * ProvisioningFailed and throw, so the queue retries with backoff. Out of
 * space with a selected node removes the annotation so the scheduler picks
 * again. A PV the API refused is kept and created again on the next attempt,
 * without a second CreateVolume.
 *
 * Volumes (`reconcileVolume(name)`): the finalizer is kept in line with the
 * reclaim policy; a Released volume with policy Delete whose node affinity is
 * this node is deleted in the driver (refused while a VolumeAttachment still
 * names it), then the PV is deleted and the finalizer removed.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound } from '@kubeling/apimachinery';
import type { CsiCall, DriverInfo, KubeApi, Lister, Recorder } from './deps.js';
import { buildPersistentVolume, type CreatedVolume, createdCapacity, type Prepared, pvNameFor, prepareProvision, provisionFailureState } from './provision.js';
import {
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  claimClass,
  claimKey,
  claimProvisioner,
  hasFinalizer,
  PROVISIONER_FINALIZER,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
  type VolumeAttachment,
} from './types.js';
import { errorText, GRPC, grpcCode, quantityBytes, volumeIsAccessible } from './util.js';

export interface ProvisionerDeps {
  driver: DriverInfo;
  /** This instance's identity, recorded in every PV's volume attributes. */
  identity: string;
  csi: CsiCall;
  api: Pick<KubeApi, 'createPV' | 'deletePV' | 'patchPV' | 'updateClaim'>;
  claims: Lister<PersistentVolumeClaim>;
  volumes: Lister<PersistentVolume>;
  classes: Lister<StorageClass>;
  attachments: Lister<VolumeAttachment>;
  event: Recorder;
  log: Logger;
  /** Claims with Immediate binding are taken by the first instance that writes its node (default true). */
  immediateBinding?: boolean;
  /** The delay before trying to become owner: jittered, doubling on each conflict up to `ownerMaxDelayMs`. */
  ownerBaseDelayMs?: number;
  ownerMaxDelayMs?: number;
  defaultFsType?: string;
  /** Called after a volume was created or deleted (the capacity publisher refreshes). */
  onCapacityChange?: () => void;
  now?: () => number;
  random?: () => number;
}

type Result = { requeueAfterMs?: number } | void;

export class Provisioner {
  /** PVs whose volume exists but whose API object could not be created yet, by name. */
  private readonly unsaved = new Map<string, PersistentVolume>();
  /** Claims (by UID) waiting to try to become owner: when, and how many attempts lost. */
  private readonly ownerWait = new Map<string, { due: number; attempts: number }>();

  constructor(private readonly d: ProvisionerDeps) {}

  private get node(): string {
    return this.d.driver.nodeName;
  }

  /** Forget a deleted claim's pending ownership attempt. */
  claimDeleted(claim: PersistentVolumeClaim): void {
    this.ownerWait.delete(claim.metadata.uid ?? '');
  }

  async reconcileClaim(key: string): Promise<Result> {
    const claim = this.d.claims.get(key);
    if (!claim || claim.spec?.volumeName) return;
    if (claimProvisioner(claim) !== this.d.driver.name) return;
    const className = claimClass(claim);
    const sc = this.d.classes.get(className);
    if (!sc) throw new Error(`storageClass "${className}" not found`);
    if (sc.provisioner !== this.d.driver.name) return;
    const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? '';
    if (!selected) {
      if (sc.volumeBindingMode === 'WaitForFirstConsumer' || this.d.immediateBinding === false) return;
      return this.becomeOwner(claim, sc);
    }
    if (selected !== this.node) return;
    return this.provision(claim, sc);
  }

  /**
   * checkNode + becomeOwner for Immediate binding: wait a jittered delay (so that
   * one of many nodes wins without a thundering herd), check capacity, then
   * write this node as selected-node; a conflict means another write won and
   * the claim comes back with that node (or none) to look at again.
   */
  private async becomeOwner(claim: PersistentVolumeClaim, sc: StorageClass): Promise<Result> {
    const uid = claim.metadata.uid ?? '';
    const now = (this.d.now ?? Date.now)();
    let wait = this.ownerWait.get(uid);
    if (!wait) {
      wait = { due: now + this.ownerDelay(0), attempts: 0 };
      this.ownerWait.set(uid, wait);
    }
    if (now < wait.due) return { requeueAfterMs: wait.due - now };
    const prepared = this.tryPrepare(claim, sc);
    if (prepared && !(await this.hasCapacity(claim, prepared))) {
      this.ownerWait.delete(uid);
      this.d.log.debug({ claim: claimKey(claim) }, 'not enough capacity to become owner');
      return;
    }
    const updated = structuredClone(claim);
    updated.metadata.annotations = { ...(updated.metadata.annotations ?? {}), [ANN_SELECTED_NODE]: this.node };
    try {
      await this.d.api.updateClaim(updated);
      this.ownerWait.delete(uid);
      this.d.log.info({ claim: claimKey(claim) }, 'became owner of claim');
    } catch (e) {
      if (!isConflict(e)) throw new Error(`PVC ${claimKey(claim)}: selecting node "${this.node}" for PVC failed: ${errorText(e)}`);
      wait.attempts++;
      wait.due = now + this.ownerDelay(wait.attempts);
      return { requeueAfterMs: wait.due - now };
    }
  }

  /** rateLimiterWithJitter.When: base·2^n capped at max, minus up to one base delay of jitter. */
  private ownerDelay(attempts: number): number {
    const base = this.d.ownerBaseDelayMs ?? 20_000;
    const max = this.d.ownerMaxDelayMs ?? 60_000;
    const delay = Math.min(base * 2 ** attempts, max);
    return Math.max(0, delay - base * (this.d.random ?? Math.random)());
  }

  private tryPrepare(claim: PersistentVolumeClaim, sc: StorageClass): Prepared | undefined {
    try {
      const p = prepareProvision(claim, sc, this.d.driver, this.d.defaultFsType);
      return 'ignored' in p ? undefined : p;
    } catch {
      // As upstream: become owner anyway, so that provisioning fails with an event the user sees.
      return undefined;
    }
  }

  /** checkCapacity: GetCapacity for this node's topology covers the request. */
  private async hasCapacity(claim: PersistentVolumeClaim, p: Prepared): Promise<boolean> {
    const size = quantityBytes(claim.spec?.resources?.requests?.storage);
    if (size === 0 || !this.d.driver.controller.has('GET_CAPACITY')) return true;
    try {
      const topo = p.req.accessibility_requirements?.requisite[0];
      const resp = await this.d.csi<{ available_capacity?: string | number }>('Controller', 'GetCapacity', {
        volume_capabilities: p.req.volume_capabilities,
        parameters: p.req.parameters,
        ...(topo ? { accessible_topology: topo } : {}),
      });
      return size <= Number(resp.available_capacity ?? 0);
    } catch (e) {
      this.d.log.debug({ claim: claimKey(claim), err: errorText(e) }, 'capacity check failed; becoming owner anyway');
      return true;
    }
  }

  /** provisionClaimOperation: CreateVolume, then the PV. */
  private async provision(claim: PersistentVolumeClaim, sc: StorageClass): Promise<Result> {
    const pvName = pvNameFor(claim);
    if (this.d.volumes.get(pvName)) {
      this.unsaved.delete(pvName);
      return;
    }
    const pending = this.unsaved.get(pvName);
    if (pending) return this.savePV(claim, pending);
    let prepared: ReturnType<typeof prepareProvision>;
    try {
      prepared = prepareProvision(claim, sc, this.d.driver, this.d.defaultFsType);
    } catch (e) {
      this.d.event(claim, 'Warning', 'ProvisioningFailed', (e as Error).message);
      throw e;
    }
    if ('ignored' in prepared) {
      this.d.event(claim, 'Normal', 'Provisioning', 'Assuming an external populator will provision the volume');
      this.d.log.debug({ claim: claimKey(claim), reason: prepared.ignored }, 'provisioning ignored');
      return;
    }
    this.d.event(claim, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${claimKey(claim)}"`);
    let vol: CreatedVolume;
    try {
      vol = (await this.d.csi<{ volume: CreatedVolume }>('Controller', 'CreateVolume', prepared.req)).volume;
    } catch (e) {
      return this.createFailed(claim, e);
    }
    const requested = Number(prepared.req.capacity_range.required_bytes);
    let capacity: number;
    try {
      capacity = createdCapacity(vol, requested);
    } catch (e) {
      let msg = (e as Error).message;
      try {
        await this.d.csi('Controller', 'DeleteVolume', { volume_id: vol.volume_id });
      } catch (de) {
        msg = `${msg}. Cleanup of volume ${pvName} failed, volume is orphaned: ${errorText(de)}`;
      }
      this.d.event(claim, 'Warning', 'ProvisioningFailed', msg);
      throw new Error(msg);
    }
    const pv = buildPersistentVolume(claim, sc, this.d.driver, this.d.identity, prepared, vol, capacity);
    this.d.log.info({ claim: claimKey(claim), pv: pvName, volumeHandle: vol.volume_id }, 'volume created');
    this.d.onCapacityChange?.();
    return this.savePV(claim, pv);
  }

  /** The error handling of a failed CreateVolume (provisionVolumeErrorHandling). */
  private async createFailed(claim: PersistentVolumeClaim, e: unknown): Promise<Result> {
    const msg = errorText(e);
    this.d.event(claim, 'Warning', 'ProvisioningFailed', msg);
    const mayReschedule = this.d.driver.plugin.has('VOLUME_ACCESSIBILITY_CONSTRAINTS');
    if (provisionFailureState(e, mayReschedule) === 'reschedule' && claim.metadata.annotations?.[ANN_SELECTED_NODE] !== undefined) {
      const updated = structuredClone(claim);
      delete updated.metadata.annotations![ANN_SELECTED_NODE];
      try {
        await this.d.api.updateClaim(updated);
        this.d.log.info({ claim: claimKey(claim), err: msg }, 'volume rescheduled');
        return;
      } catch (ue) {
        this.d.log.info({ claim: claimKey(claim), err: errorText(ue) }, 'volume rescheduling failed');
      }
    }
    throw new Error(msg);
  }

  /** The queue store's save: created (or already there) → ProvisioningSucceeded; refused → kept and retried. */
  private async savePV(claim: PersistentVolumeClaim, pv: PersistentVolume): Promise<Result> {
    const name = pv.metadata.name!;
    try {
      await this.d.api.createPV(pv);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        this.unsaved.set(name, pv);
        throw new Error(`error saving volume ${name}: ${errorText(e)}`);
      }
    }
    this.unsaved.delete(name);
    this.d.event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
  }

  /** isProvisionerForVolume, on this node only (VolumeIsAccessible with this node's topology). */
  private ours(pv: PersistentVolume): boolean {
    const by = pv.metadata.annotations?.[ANN_PROVISIONED_BY];
    if (by !== undefined ? by !== this.d.driver.name : pv.spec?.csi?.driver !== this.d.driver.name) return false;
    return volumeIsAccessible(pv.spec?.nodeAffinity, this.d.driver.topology ?? {});
  }

  async reconcileVolume(name: string): Promise<Result> {
    let pv = this.d.volumes.get(name);
    if (!pv || !this.ours(pv)) return;
    pv = await this.syncFinalizer(pv);
    if (!this.shouldDelete(pv)) return;
    await this.deleteVolume(pv);
  }

  /** handleProtectionFinalizer: on Bound volumes with policy Delete; off with Retain or Recycle. */
  private async syncFinalizer(pv: PersistentVolume): Promise<PersistentVolume> {
    const policy = pv.spec?.persistentVolumeReclaimPolicy;
    const has = hasFinalizer(pv, PROVISIONER_FINALIZER);
    let finalizers: string[] | undefined;
    if (policy === 'Delete' && !pv.metadata.deletionTimestamp && pv.status?.phase === 'Bound' && !has)
      finalizers = [...(pv.metadata.finalizers ?? []), PROVISIONER_FINALIZER];
    if ((policy === 'Retain' || policy === 'Recycle') && has) finalizers = (pv.metadata.finalizers ?? []).filter((f) => f !== PROVISIONER_FINALIZER);
    if (!finalizers) return pv;
    try {
      return await this.d.api.patchPV(pv.metadata.name!, { metadata: { finalizers, resourceVersion: pv.metadata.resourceVersion } });
    } catch (e) {
      throw new Error(`failed to modify finalizers to [${finalizers.join(' ')}] on volume ${pv.metadata.name} err: ${errorText(e)}`);
    }
  }

  private shouldDelete(pv: PersistentVolume): boolean {
    if (pv.metadata.deletionTimestamp && !hasFinalizer(pv, PROVISIONER_FINALIZER)) return false;
    return pv.status?.phase === 'Released' && pv.spec?.persistentVolumeReclaimPolicy === 'Delete';
  }

  /** deleteVolumeOperation: DeleteVolume, delete the PV, then drop the finalizer from what the delete left. */
  private async deleteVolume(pv: PersistentVolume): Promise<void> {
    const name = pv.metadata.name!;
    const va = this.d.attachments.list().find((a) => a.spec.source.persistentVolumeName === name);
    try {
      if (va) throw new Error(`persistentvolume ${name} is still attached to node ${va.spec.nodeName}`);
      if (!pv.spec?.csi) throw new Error('invalid CSI PV');
      await this.d.csi('Controller', 'DeleteVolume', { volume_id: pv.spec.csi.volumeHandle }).catch((e) => {
        // Already gone in the driver: nothing left to delete there.
        if (grpcCode(e) !== GRPC.NOT_FOUND) throw e;
      });
    } catch (e) {
      this.d.event(pv, 'Warning', 'VolumeFailedDelete', errorText(e));
      throw e;
    }
    this.d.log.info({ pv: name }, 'volume deleted');
    this.d.onCapacityChange?.();
    let left: PersistentVolume | undefined;
    try {
      left = await this.d.api.deletePV(name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return;
    }
    if (!left || !hasFinalizer(left, PROVISIONER_FINALIZER)) return;
    const finalizers = (left.metadata.finalizers ?? []).filter((f) => f !== PROVISIONER_FINALIZER);
    try {
      await this.d.api.patchPV(name, { metadata: { finalizers, resourceVersion: left.metadata.resourceVersion } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
