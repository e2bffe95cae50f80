/**
 * VolumeRestrictions (upstream plugins/volumerestrictions/volume_restrictions.go).
 *
 * Disk conflicts with the pods already on the node: the same GCE PD unless every
 * mount is read-only, the same AWS EBS volume ID, the same iSCSI IQN or RBD
 * image (a shared monitor, pool and image) unless all read-only. And the
 * ReadWriteOncePod access mode: a claim with it that a scheduled pod anywhere
 * already uses makes the pod Unschedulable (preemption may free it). PreFilter
 * needs every persistentVolumeClaim the pod names to exist.
 */
import { claimNotFound, type Handle, type HandlePlugin, type StorageResource } from '../../framework/storage.js';
import {
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

export const NAME = 'VolumeRestrictions';
export const ERR_REASON_DISK_CONFLICT = 'node(s) had no available disk';
export const ERR_REASON_RWOP_CONFLICT = 'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode';

interface DiskVolume {
  gcePersistentDisk?: { pdName?: string; readOnly?: boolean };
  awsElasticBlockStore?: { volumeID?: string };
  iscsi?: { iqn?: string; readOnly?: boolean };
  rbd?: { monitors?: string[]; pool?: string; image?: string; readOnly?: boolean };
  persistentVolumeClaim?: { claimName: string };
}

const volumesOf = (pod: Pod) => (pod.spec?.volumes ?? []) as DiskVolume[];

const needsRestrictionsCheck = (v: DiskVolume) => !!(v.gcePersistentDisk || v.awsElasticBlockStore || v.rbd || v.iscsi);

const overlap = (a: readonly string[] = [], b: readonly string[] = []) => a.some((x) => b.includes(x));

/** isVolumeConflict: whether `v` conflicts with any volume of `pod`. */
export function isVolumeConflict(v: DiskVolume, pod: Pod): boolean {
  for (const e of volumesOf(pod)) {
    if (v.gcePersistentDisk && e.gcePersistentDisk) {
      if (v.gcePersistentDisk.pdName === e.gcePersistentDisk.pdName && !(v.gcePersistentDisk.readOnly && e.gcePersistentDisk.readOnly)) return true;
    }
    if (v.awsElasticBlockStore && e.awsElasticBlockStore && v.awsElasticBlockStore.volumeID === e.awsElasticBlockStore.volumeID) return true;
    if (v.iscsi && e.iscsi && v.iscsi.iqn === e.iscsi.iqn && !(v.iscsi.readOnly && e.iscsi.readOnly)) return true;
    if (v.rbd && e.rbd) {
      const [a, b] = [v.rbd, e.rbd];
      if (overlap(a.monitors, b.monitors) && (a.pool ?? 'rbd') === (b.pool ?? 'rbd') && a.image === b.image && !(a.readOnly && b.readOnly)) return true;
    }
  }
  return false;
}

interface StateData {
  diskCheck: boolean;
  /** How many of the pod's ReadWriteOncePod claims scheduled pods already use. */
  conflicts: number;
}

export class VolumeRestrictions implements PreFilterPlugin, FilterPlugin, HandlePlugin {
  readonly name = NAME;
  readonly needs: readonly StorageResource[] = ['persistentvolumeclaims'];
  private h: Handle | undefined;

  setHandle(h: Handle): void {
    this.h = h;
  }

  preFilter(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | null {
    const ns = pod.pod.metadata.namespace ?? '';
    const diskCheck = volumesOf(pod.pod).some(needsRestrictionsCheck);
    const rwop = new Set<string>();
    for (const v of volumesOf(pod.pod)) {
      if (!v.persistentVolumeClaim) continue;
      const name = v.persistentVolumeClaim.claimName;
      const pvc = this.h?.pvcs.get(`${ns}/${name}`);
      if (!pvc) return unresolvable(NAME, claimNotFound(name));
      if (pvc.spec?.accessModes?.includes('ReadWriteOncePod')) rwop.add(name);
    }
    let conflicts = 0;
    if (rwop.size) {
      const used = new Set<string>();
      for (const n of nodes) {
        for (const p of n.pods.values()) {
          if (p.pod.metadata.namespace !== ns) continue;
          for (const v of volumesOf(p.pod))
            if (v.persistentVolumeClaim && rwop.has(v.persistentVolumeClaim.claimName)) used.add(v.persistentVolumeClaim.claimName);
        }
      }
      conflicts = used.size;
    }
    if (diskCheck || conflicts) state.set(NAME, { diskCheck, conflicts } satisfies StateData);
    return null;
  }

  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const s = state.get(NAME) as StateData | undefined;
    if (!s) return null;
    if (s.diskCheck) {
      for (const v of volumesOf(pod.pod)) {
        if (!needsRestrictionsCheck(v)) continue;
        for (const e of node.pods.values()) if (isVolumeConflict(v, e.pod)) return unschedulable(NAME, ERR_REASON_DISK_CONFLICT);
      }
    }
    return s.conflicts > 0 ? unschedulable(NAME, ERR_REASON_RWOP_CONFLICT) : null;
  }
}
