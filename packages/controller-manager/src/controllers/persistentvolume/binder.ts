/**
 * The persistentvolume binder's writes (pv_controller.go): phases of volumes
 * and claims, the two halves of a binding and their undoing. Each write is a
 * full update with the object's resourceVersion, so a stale read loses with a
 * Conflict instead of overwriting someone else's change; each returns the
 * object the server stored, and the next write of the same sync builds on it.
 * Nothing is written when nothing would change.
 *
 * What the binder reads (listers) and how it writes (the API) are injected, so
 * the sync logic runs against plain functions in tests.
 */
import type { KubeObject } from '@kubeling/api';
import { jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import type { Pod } from '../kinds.js';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  isVolumeBoundToClaim,
  storageBytes,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../storage.js';

/** pkg/volume/util AnnPreResizeCapacity: the capacity a claim reports while its volume's filesystem waits to grow. */
const ANN_PRE_RESIZE_CAPACITY = 'volume.alpha.kubernetes.io/pre-resize-capacity';

export interface BinderApi {
  getVolume(name: string): Promise<PersistentVolume | undefined>;
  getClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  updateVolume(v: PersistentVolume): Promise<PersistentVolume>;
  updateVolumeStatus(v: PersistentVolume): Promise<PersistentVolume>;
  deleteVolume(name: string): Promise<void>;
  updateClaim(c: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  updateClaimStatus(c: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
}

export interface BinderDeps {
  volumes(): readonly PersistentVolume[];
  volume(name: string): PersistentVolume | undefined;
  /** A claim by `ns/name`. */
  claim(key: string): PersistentVolumeClaim | undefined;
  storageClass(name: string): StorageClass | undefined;
  storageClasses(): readonly StorageClass[];
  /** The pods whose volumes name the claim `ns/name`. */
  podsUsingClaim(key: string): readonly Pod[];
  api: BinderApi;
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Syncs the claim `ns/name` soon. */
  enqueueClaim(key: string): void;
  /** The host path deleter's removal of a directory tree. */
  removeAll(path: string): Promise<void>;
  now(): Date;
}

export type EventType = 'Normal' | 'Warning';

const hasAnn = (o: KubeObject, k: string) => o.metadata.annotations?.[k] !== undefined;
const withAnn = (o: KubeObject, k: string, v: string) => {
  o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [k]: v };
};

export class Binder {
  constructor(readonly d: BinderDeps) {}

  volumeEvent(v: PersistentVolume, type: EventType, reason: string, message: string): void {
    this.d.event({ ...v, apiVersion: 'v1', kind: 'PersistentVolume' }, type, reason, message);
  }

  claimEvent(c: PersistentVolumeClaim, type: EventType, reason: string, message: string): void {
    this.d.event({ ...c, apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, type, reason, message);
  }

  /** updateVolumePhase: a new phase (and its message) with the time it was entered. */
  async updateVolumePhase(v: PersistentVolume, phase: string, message = ''): Promise<PersistentVolume> {
    if (v.status?.phase === phase) return v;
    const next = structuredClone(v);
    const { message: _old, ...status } = next.status ?? {};
    next.status = { ...status, phase, lastPhaseTransitionTime: rfc3339(this.d.now()), ...(message ? { message } : {}) };
    return this.d.api.updateVolumeStatus(next);
  }

  /** updateVolumePhaseWithEvent: the event goes out only when the phase changes. */
  async updateVolumePhaseWithEvent(v: PersistentVolume, phase: string, type: EventType, reason: string, message: string): Promise<PersistentVolume> {
    if (v.status?.phase === phase) return v;
    const next = await this.updateVolumePhase(v, phase, message);
    this.volumeEvent(next, type, reason, message);
    return next;
  }

  /**
   * updateClaimStatus: the phase, and the access modes and capacity of the
   * volume (cleared without one). Capacity is copied only as the claim becomes
   * bound: a later difference may be a resize in progress.
   */
  async updateClaimStatus(c: PersistentVolumeClaim, phase: string, v?: PersistentVolume): Promise<PersistentVolumeClaim> {
    const next = structuredClone(c);
    const status = (next.status ??= {});
    let dirty = false;
    if (c.status?.phase !== phase) {
      status.phase = phase;
      dirty = true;
    }
    if (!v) {
      for (const k of ['accessModes', 'capacity'] as const) {
        if (status[k] !== undefined) {
          delete status[k];
          dirty = true;
        }
      }
    } else {
      if (!jsonEqual(c.status?.accessModes, v.spec?.accessModes)) {
        if (v.spec?.accessModes) status.accessModes = v.spec.accessModes;
        else delete status.accessModes;
        dirty = true;
      }
      if (c.status?.phase !== phase) {
        const volumeCap = v.spec?.capacity?.storage;
        if (volumeCap === undefined) throw new Error(`PersistentVolume "${v.metadata.name}" is without a storage capacity`);
        const pre = v.metadata.annotations?.[ANN_PRE_RESIZE_CAPACITY];
        const claimCap = c.status?.capacity?.storage;
        if (pre !== undefined) {
          status.capacity = { ...(status.capacity ?? {}), storage: pre };
          dirty = true;
        } else if (claimCap === undefined || storageBytes({ storage: claimCap }) !== storageBytes(v.spec?.capacity)) {
          status.capacity = { ...(v.spec?.capacity ?? {}) };
          dirty = true;
        }
      }
    }
    return dirty ? this.d.api.updateClaimStatus(next) : c;
  }

  /** updateClaimStatusWithEvent: status and event only when the phase changes. */
  async updateClaimStatusWithEvent(c: PersistentVolumeClaim, phase: string, type: EventType, reason: string, message: string): Promise<PersistentVolumeClaim> {
    if (c.status?.phase === phase) return c;
    const next = await this.updateClaimStatus(c, phase);
    this.claimEvent(next, type, reason, message);
    return next;
  }

  /** GetBindVolumeToClaim: claimRef to the claim (with its UID); bound-by-controller when the controller made the choice. */
  async bindVolumeToClaim(v: PersistentVolume, c: PersistentVolumeClaim): Promise<PersistentVolume> {
    const next = structuredClone(v);
    const byController = !isVolumeBoundToClaim(v, c);
    let dirty = false;
    const ref = v.spec?.claimRef;
    if (!ref || ref.name !== c.metadata.name || ref.namespace !== c.metadata.namespace || ref.uid !== c.metadata.uid) {
      next.spec = {
        ...(next.spec ?? {}),
        claimRef: {
          kind: 'PersistentVolumeClaim',
          namespace: c.metadata.namespace!,
          name: c.metadata.name!,
          uid: c.metadata.uid!,
          apiVersion: 'v1',
          resourceVersion: c.metadata.resourceVersion!,
        },
      };
      dirty = true;
    }
    if (byController && !hasAnn(next, ANN_BOUND_BY_CONTROLLER)) {
      withAnn(next, ANN_BOUND_BY_CONTROLLER, 'yes');
      dirty = true;
    }
    return dirty ? this.d.api.updateVolume(next) : v;
  }

  /** bindClaimToVolume: volumeName (bound-by-controller when the controller chose it) and bind-completed. */
  async bindClaimToVolume(c: PersistentVolumeClaim, v: PersistentVolume): Promise<PersistentVolumeClaim> {
    const next = structuredClone(c);
    let dirty = false;
    if (c.spec?.volumeName !== v.metadata.name) {
      next.spec = { ...(next.spec ?? {}), volumeName: v.metadata.name! };
      if (!hasAnn(next, ANN_BOUND_BY_CONTROLLER)) withAnn(next, ANN_BOUND_BY_CONTROLLER, 'yes');
      dirty = true;
    }
    if (!hasAnn(next, ANN_BIND_COMPLETED)) {
      withAnn(next, ANN_BIND_COMPLETED, 'yes');
      dirty = true;
    }
    return dirty ? this.d.api.updateClaim(next) : c;
  }

  /** bind: the volume first (claimRef, then Bound), then the claim (volumeName, then Bound). Stops at the first failure. */
  async bind(v: PersistentVolume, c: PersistentVolumeClaim): Promise<void> {
    let volume = await this.bindVolumeToClaim(v, c);
    volume = await this.updateVolumePhase(volume, 'Bound');
    const claim = await this.bindClaimToVolume(c, volume);
    await this.updateClaimStatus(claim, 'Bound', volume);
  }

  /**
   * unbindVolume: a binding the controller made is undone (claimRef and the
   * annotation go); one a user made keeps its claimRef without the UID, so
   * the volume stays reserved for a claim of that name. Then Available.
   */
  async unbindVolume(v: PersistentVolume): Promise<PersistentVolume> {
    const next = structuredClone(v);
    if (hasAnn(v, ANN_BOUND_BY_CONTROLLER)) {
      if (next.spec) delete next.spec.claimRef;
      const { [ANN_BOUND_BY_CONTROLLER]: _gone, ...rest } = next.metadata.annotations ?? {};
      if (Object.keys(rest).length) next.metadata.annotations = rest;
      else delete next.metadata.annotations;
    } else if (next.spec?.claimRef) {
      delete next.spec.claimRef.uid;
    }
    const updated = await this.d.api.updateVolume(next);
    return this.updateVolumePhase(updated, 'Available');
  }
}
