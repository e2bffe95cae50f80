/**
 * external-resizer for this node's volumes (kubernetes-csi/external-resizer
 * pkg/controller/controller.go, expand_and_recover.go, resize_status.go, with
 * RecoverVolumeExpansionFailure on as in Kubernetes 1.32): a Bound claim
 * whose storage request exceeds its capacity, on a PV of this driver bound to
 * it and accessible on this node, in a class that allows expansion.
 *
 * `reconcileClaim("ns/name")` works out the size to expand to (the request,
 * or the size an unfinished expansion recorded in `allocatedResources`), marks
 * the claim Resizing with `allocatedResourceStatuses.storage:
 * ControllerResizeInProgress`, records a Resizing event, calls
 * ControllerExpandVolume and records the PV's new capacity. When the driver
 * says node expansion is needed the claim gets FileSystemResizePending and
 * NodeResizePending (the kubelet finishes it), else `status.capacity` and the
 * end of the resize conditions, with VolumeResizeSuccessful. Failures record
 * VolumeResizeFailed and a ControllerResizeError condition (infeasible sizes
 * are marked ControllerResizeInfeasible) and throw, so the queue retries.
 */
import type { Logger } from 'pino';
import { rfc3339 } from '@kubeling/apimachinery';
import type { CsiCall, DriverInfo, KubeApi, Lister, Recorder } from './deps.js';
import { claimClass, type ClaimCondition, type PersistentVolume, type PersistentVolumeClaim, type StorageClass } from './types.js';
import {
  bytesToQuantity,
  errorText,
  GRPC,
  grpcCode,
  mayBeInProgress,
  mergeResizeConditions,
  pvVolumeCapability,
  quantityBytes,
  volumeIsAccessible,
} from './util.js';

export const FS_RESIZE_PENDING_MESSAGE = 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.';

export interface ResizerDeps {
  driver: DriverInfo;
  csi: CsiCall;
  api: Pick<KubeApi, 'patchPV' | 'patchClaimStatus'>;
  claims: Lister<PersistentVolumeClaim>;
  volumes: Lister<PersistentVolume>;
  classes: Lister<StorageClass>;
  event: Recorder;
  log: Logger;
}

/** Whether an informer update of a claim is worth a look (updatePVC): a larger request, a new resizer, or a resync. */
export function claimUpdateMatters(oldC: PersistentVolumeClaim, newC: PersistentVolumeClaim): boolean {
  const size = (c: PersistentVolumeClaim) => quantityBytes(c.spec?.resources?.requests?.storage);
  const resizer = (c: PersistentVolumeClaim) => c.metadata.annotations?.['volume.kubernetes.io/storage-resizer'];
  return size(newC) > size(oldC) || resizer(newC) !== resizer(oldC) || newC.metadata.resourceVersion === oldC.metadata.resourceVersion;
}

export class Resizer {
  /** Claims whose last controller expansion failed for good (finalErrorPVCs). */
  private readonly finalErrors = new Set<string>();

  constructor(private readonly d: ResizerDeps) {}

  async reconcileClaim(key: string): Promise<void> {
    const pvc = this.d.claims.get(key);
    if (pvc?.status?.phase !== 'Bound' || !pvc.spec?.volumeName) return;
    const request = quantityBytes(pvc.spec.resources?.requests?.storage);
    if (!(request > quantityBytes(pvc.status.capacity?.storage))) return;
    const pv = this.d.volumes.get(pvc.spec.volumeName);
    if (!pv || !this.canExpand(pv, pvc)) return;
    const newSize = this.targetSize(pvc, pv, key);
    if (newSize === undefined) return;
    await this.expand(pvc, pv, newSize, key);
  }

  /** CanSupport + bound to this claim + on this node + the class allows expansion. */
  private canExpand(pv: PersistentVolume, pvc: PersistentVolumeClaim): boolean {
    if (pv.spec?.csi?.driver !== this.d.driver.name) return false;
    const ref = pv.spec.claimRef;
    if (!ref || ref.namespace !== pvc.metadata.namespace || ref.uid !== pvc.metadata.uid) return false;
    if (!volumeIsAccessible(pv.spec.nodeAffinity, this.d.driver.topology ?? {})) return false;
    const sc = this.d.classes.get(claimClass(pvc));
    if (sc && sc.allowVolumeExpansion !== true) {
      this.d.log.debug({ claim: `${pvc.metadata.namespace}/${pvc.metadata.name}` }, 'class does not allow expansion');
      return false;
    }
    return true;
  }

  /** expandAndRecover's choice of size, in bytes; undefined when there is nothing to do now. */
  private targetSize(pvc: PersistentVolumeClaim, pv: PersistentVolume, key: string): number | undefined {
    const spec = quantityBytes(pvc.spec?.resources?.requests?.storage);
    const pvSize = quantityBytes(pv.spec?.capacity?.storage);
    const status = pvc.status?.allocatedResourceStatuses?.storage ?? '';
    const allocatedQ = pvc.status?.allocatedResources?.storage;
    const allocated = allocatedQ === undefined ? undefined : quantityBytes(allocatedQ);
    if (pvSize < spec) {
      switch (status) {
        case 'NodeResizeInfeasible':
          return allocated ?? spec;
        case 'NodeResizePending':
        case 'NodeResizeInProgress': {
          const size = allocated ?? spec;
          return pvSize >= size ? undefined : size;
        }
        case 'ControllerResizeInProgress':
          return this.finalErrors.has(key) ? spec : (allocated ?? spec);
        default:
          return spec;
      }
    }
    switch (status) {
      case 'NodeResizeInProgress':
      case 'NodeResizePending':
        return undefined;
      case 'NodeResizeInfeasible':
        return allocated ?? spec;
      case 'ControllerResizeInProgress':
      case 'ControllerResizeInfeasible':
        return allocated ?? spec;
      default:
        if (status === '' && allocated !== undefined) return allocated;
        if ((pvc.status?.conditions ?? []).some((c) => c.type === 'FileSystemResizePending' && c.status === 'True')) return undefined;
        return spec;
    }
  }

  private patchStatus(pvc: PersistentVolumeClaim, status: Record<string, unknown>, checkVersion = true): Promise<PersistentVolumeClaim> {
    const patch = { ...(checkVersion ? { metadata: { resourceVersion: pvc.metadata.resourceVersion } } : {}), status };
    return this.d.api.patchClaimStatus(pvc.metadata.namespace!, pvc.metadata.name!, patch);
  }

  private condition(type: string, message?: string): ClaimCondition {
    return { type, status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(), ...(message ? { message } : {}) };
  }

  private async expand(pvc: PersistentVolumeClaim, pv: PersistentVolume, newSize: number, key: string): Promise<void> {
    const pvName = pv.metadata.name!;
    const allocated = pvc.status?.allocatedResources?.storage;
    const unchanged =
      allocated !== undefined && quantityBytes(allocated) === newSize && pvc.status?.allocatedResourceStatuses?.storage === 'ControllerResizeInProgress';
    if (!unchanged) {
      pvc = await this.patchStatus(pvc, {
        conditions: mergeResizeConditions(pvc.status?.conditions, [this.condition('Resizing')]),
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
        allocatedResources: { storage: bytesToQuantity(newSize) },
      }).catch((e) => {
        throw new Error(`marking pvc "${key}" as resizing failed: ${errorText(e)}`);
      });
    }
    this.d.event(pvc, 'Normal', 'Resizing', `External resizer is resizing volume ${pvName}`);
    let resp: { capacity_bytes?: string | number; node_expansion_required?: boolean };
    try {
      resp = await this.d.csi('Controller', 'ControllerExpandVolume', {
        volume_id: pv.spec!.csi!.volumeHandle,
        capacity_range: { required_bytes: String(newSize) },
        volume_capability: pvVolumeCapability(pv.spec!, this.d.driver.controller.has('SINGLE_NODE_MULTI_WRITER')),
        secrets: {},
      });
    } catch (e) {
      const err = new Error(`resize volume "${pvName}" by resizer "${this.d.driver.name}" failed: ${errorText(e)}`);
      await this.markFailed(pvc, e, key).catch((me) => {
        err.message = `resizing failed in controller with ${errorText(e)} but failed to update PVC ${key} with: ${errorText(me)}`;
      });
      this.d.event(pvc, 'Warning', 'VolumeResizeFailed', err.message);
      throw err;
    }
    this.finalErrors.delete(key);
    const got = Number(resp.capacity_bytes ?? 0) || newSize;
    try {
      await this.d.api.patchPV(pvName, { spec: { capacity: { storage: bytesToQuantity(got) } } });
      if (resp.node_expansion_required) await this.markNodePending(pvc);
      else await this.markFinished(pvc, got);
    } catch (e) {
      this.d.event(pvc, 'Warning', 'VolumeResizeFailed', errorText(e));
      throw e;
    }
  }

  /** A final error marks the claim (infeasible sizes ControllerResizeInfeasible); a possibly running one leaves it as it is. */
  private async markFailed(pvc: PersistentVolumeClaim, e: unknown, key: string): Promise<void> {
    if (mayBeInProgress(e)) {
      this.finalErrors.delete(key);
      return;
    }
    this.finalErrors.add(key);
    const code = grpcCode(e);
    const infeasible = code === GRPC.INVALID_ARGUMENT || code === GRPC.OUT_OF_RANGE || code === GRPC.RESOURCE_EXHAUSTED;
    const status: Record<string, unknown> = {
      conditions: mergeResizeConditions(pvc.status?.conditions, [this.condition('ControllerResizeError', errorText(e))]),
    };
    if (infeasible) status.allocatedResourceStatuses = { storage: 'ControllerResizeInfeasible' };
    await this.patchStatus(pvc, status, false);
  }

  private async markNodePending(pvc: PersistentVolumeClaim): Promise<void> {
    await this.patchStatus(pvc, {
      conditions: mergeResizeConditions(pvc.status?.conditions, [this.condition('FileSystemResizePending', FS_RESIZE_PENDING_MESSAGE)]),
      allocatedResourceStatuses: { storage: 'NodeResizePending' },
    }).catch((e) => {
      throw new Error(`mark PVC "${pvc.metadata.namespace}/${pvc.metadata.name}" as node expansion required failed: ${errorText(e)}`);
    });
    this.d.event(pvc, 'Normal', 'FileSystemResizeRequired', 'Require file system resize of volume on node');
  }

  private async markFinished(pvc: PersistentVolumeClaim, size: number): Promise<void> {
    await this.patchStatus(pvc, {
      capacity: { storage: bytesToQuantity(size) },
      conditions: mergeResizeConditions(pvc.status?.conditions, []),
      allocatedResourceStatuses: { storage: null },
    }).catch((e) => {
      throw new Error(`mark PVC "${pvc.metadata.namespace}/${pvc.metadata.name}" as resize finished failed: ${errorText(e)}`);
    });
    this.d.event(pvc, 'Normal', 'VolumeResizeSuccessful', 'Resize volume succeeded');
  }
}
