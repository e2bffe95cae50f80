/**
 * NodeVolumeLimits (upstream plugins/nodevolumelimits/csi.go, CSILimits).
 *
 * Counts the unique CSI volumes (driver + volumeHandle, through the PVs of
 * bound claims; an unbound claim counts once under its class's provisioner)
 * that the pods on the node use plus the new pod's, per driver, against the
 * node's limit: CSINode spec.drivers[].allocatable.count, or the node's
 * `attachable-volumes-csi-<driver>` allocatable. Over the limit the node is
 * Unschedulable. A new pod's claim that does not exist rejects it
 * everywhere. In-tree volume migration to CSI is not modelled.
 */
import { randomBytes } from 'node:crypto';
import {
  claimClass,
  ephemeralOwnerError,
  podClaims,
  type CSINode,
  type Handle,
  type HandlePlugin,
  type PersistentVolumeClaim,
  type StorageResource,
} from '../../framework/storage.js';
import {
  asError,
  unresolvable,
  unschedulable,
  type CycleState,
  type FilterPlugin,
  type NodeInfo,
  type Pod,
  type PodInfo,
  type PreFilterPlugin,
  type Status,
} from '../../framework/types.js';

export const NAME = 'NodeVolumeLimits';
export const ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = 'node(s) exceed max volume count';
const LIMIT_PREFIX = 'attachable-volumes-csi-';

class LookupError extends Error {
  constructor(
    message: string,
    readonly notFound: boolean,
  ) {
    super(message);
  }
}

export class NodeVolumeLimits implements PreFilterPlugin, FilterPlugin, HandlePlugin {
  readonly name = NAME;
  readonly needs: readonly StorageResource[] = ['persistentvolumeclaims', 'persistentvolumes', 'storageclasses', 'csinodes'];
  private h: Handle | undefined;
  /** Unbound claims get a made-up handle that cannot collide with a real one. */
  private readonly randomPrefix = randomBytes(16).toString('hex');

  setHandle(h: Handle): void {
    this.h = h;
  }

  preFilter(state: CycleState, pod: PodInfo): Status | null {
    if (podClaims(pod.pod).length) state.set(NAME, true);
    return null;
  }

  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    if (!state.get(NAME) || !this.h) return null;
    const csiNode = this.h.csiNodes.get(node.name);
    const fresh = new Map<string, string>();
    try {
      this.attachable(pod.pod, true, fresh);
    } catch (e) {
      if (e instanceof LookupError && e.notFound) return unresolvable(NAME, e.message);
      return asError(NAME, (e as Error).message);
    }
    if (!fresh.size) return null;
    const limits = volumeLimits(node, csiNode);
    if (!limits.size) return null;
    const attached = new Map<string, string>();
    for (const p of node.pods.values()) {
      try {
        this.attachable(p.pod, false, attached);
      } catch (e) {
        return asError(NAME, (e as Error).message);
      }
    }
    const attachedCount = new Map<string, number>();
    for (const [unique, key] of attached) {
      fresh.delete(unique);
      attachedCount.set(key, (attachedCount.get(key) ?? 0) + 1);
    }
    const freshCount = new Map<string, number>();
    for (const key of fresh.values()) freshCount.set(key, (freshCount.get(key) ?? 0) + 1);
    for (const [key, n] of freshCount) {
      const max = limits.get(key);
      if (max !== undefined && (attachedCount.get(key) ?? 0) + n > max) return unschedulable(NAME, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED);
    }
    return null;
  }

  /** filterAttachableVolumes: `driver/handle` → limit key for each CSI volume of the pod. */
  private attachable(pod: Pod, isNew: boolean, out: Map<string, string>): void {
    const ns = pod.metadata.namespace ?? '';
    for (const c of podClaims(pod)) {
      const pvc = this.h!.pvcs.get(`${ns}/${c.claim}`);
      if (!pvc) {
        if (isNew) throw new LookupError(`looking up PVC ${ns}/${c.claim}: persistentvolumeclaim "${c.claim}" not found`, true);
        continue;
      }
      if (c.ephemeral) {
        const err = ephemeralOwnerError(pod, pvc);
        if (err) throw new LookupError(err, false);
      }
      const [driver, handle] = this.driverInfo(pvc);
      if (!driver || !handle) continue;
      out.set(`${driver}/${handle}`, LIMIT_PREFIX + driver);
    }
  }

  /** getCSIDriverInfo: from the bound PV's csi source, else (no PV yet) from the class. */
  private driverInfo(pvc: PersistentVolumeClaim): [string, string] {
    const pvName = pvc.spec?.volumeName;
    const pv = pvName ? this.h!.pvs.get(pvName) : undefined;
    if (!pv) return this.driverInfoFromClass(pvc);
    const csi = pv.spec?.csi;
    return csi ? [csi.driver, csi.volumeHandle] : ['', ''];
  }

  private driverInfoFromClass(pvc: PersistentVolumeClaim): [string, string] {
    const name = claimClass(pvc);
    const sc = name ? this.h!.storageClasses.get(name) : undefined;
    if (!sc?.provisioner) return ['', ''];
    return [sc.provisioner, `${this.randomPrefix}-${pvc.metadata.namespace}/${pvc.metadata.name}`];
  }
}

/** getVolumeLimits: the node's attachable-volumes-csi-* allocatable, overridden by CSINode counts. */
export function volumeLimits(node: NodeInfo, csiNode: CSINode | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(node.allocatable)) if (k.startsWith(LIMIT_PREFIX)) out.set(k, v);
  for (const d of csiNode?.spec?.drivers ?? []) {
    const count = d.allocatable?.count;
    if (typeof count === 'number') out.set(LIMIT_PREFIX + d.name, count);
  }
  return out;
}
