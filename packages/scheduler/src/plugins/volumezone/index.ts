/**
 * VolumeZone (upstream plugins/volumezone/volume_zone.go): the zone and region
 * labels of the PVs bound to the pod's claims (topology.kubernetes.io/zone and
 * region, and their failure-domain.beta forms; several zones as `a__b`) must
 * match the node's. A node without any such label accepts everything (a
 * single-zone cluster). Unbound WaitForFirstConsumer claims are left to
 * VolumeBinding.
 */
import { claimClass, claimNotFound, type Handle, type HandlePlugin, type StorageResource } from '../../framework/storage.js';
import { unresolvable, type CycleState, type FilterPlugin, type NodeInfo, type PodInfo, type PreFilterPlugin, type Status } from '../../framework/types.js';

export const NAME = 'VolumeZone';
export const ERR_REASON_CONFLICT = 'node(s) had no available volume zone';

const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
const ZONE = 'topology.kubernetes.io/zone';
const REGION = 'topology.kubernetes.io/region';
const TOPOLOGY_LABELS = [BETA_ZONE, BETA_REGION, ZONE, REGION];

const toGA = (label: string) => (label === BETA_REGION ? REGION : label === BETA_ZONE ? ZONE : label);

interface PvTopology {
  pv: string;
  key: string;
  values: Set<string>;
}

/** LabelZonesToSet: `a__b` → {a, b}; an empty zone makes the label unusable. */
function zones(value: string): Set<string> | undefined {
  const parts = value.split('__');
  return parts.some((p) => p.trim() === '') ? undefined : new Set(parts.map((p) => p.trim()));
}

interface VolumeRef {
  persistentVolumeClaim?: { claimName: string };
}

export class VolumeZone implements PreFilterPlugin, FilterPlugin, HandlePlugin {
  readonly name = NAME;
  readonly needs: readonly StorageResource[] = ['persistentvolumeclaims', 'persistentvolumes', 'storageclasses'];
  private h: Handle | undefined;

  setHandle(h: Handle): void {
    this.h = h;
  }

  preFilter(state: CycleState, pod: PodInfo): Status | null {
    if (!this.h) return null;
    const ns = pod.pod.metadata.namespace ?? '';
    const topologies: PvTopology[] = [];
    for (const v of (pod.pod.spec?.volumes ?? []) as VolumeRef[]) {
      if (!v.persistentVolumeClaim) continue;
      const name = v.persistentVolumeClaim.claimName;
      if (!name) return unresolvable(NAME, 'PersistentVolumeClaim had no name');
      const pvc = this.h.pvcs.get(`${ns}/${name}`);
      if (!pvc) return unresolvable(NAME, claimNotFound(name));
      const pvName = pvc.spec?.volumeName;
      if (!pvName) {
        const scName = claimClass(pvc);
        if (!scName) return unresolvable(NAME, 'PersistentVolumeClaim had no pv name and storageClass name');
        const sc = this.h.storageClasses.get(scName);
        if (!sc) return unresolvable(NAME, `storageclass.storage.k8s.io "${scName}" not found`);
        if (!sc.volumeBindingMode) return unresolvable(NAME, `VolumeBindingMode not set for StorageClass "${scName}"`);
        if (sc.volumeBindingMode === 'WaitForFirstConsumer') continue;
        return unresolvable(NAME, 'PersistentVolume had no name');
      }
      const pv = this.h.pvs.get(pvName);
      if (!pv) return unresolvable(NAME, `persistentvolume "${pvName}" not found`);
      for (const key of TOPOLOGY_LABELS) {
        const value = pv.metadata.labels?.[key];
        const set = value === undefined ? undefined : zones(value);
        if (set) topologies.push({ pv: pvName, key, values: set });
      }
    }
    if (topologies.length) state.set(NAME, topologies);
    return null;
  }

  filter(state: CycleState, _pod: PodInfo, node: NodeInfo): Status | null {
    const topologies = state.get(NAME) as PvTopology[] | undefined;
    if (!topologies) return null;
    const labels = node.node?.metadata.labels ?? {};
    if (!TOPOLOGY_LABELS.some((l) => Object.hasOwn(labels, l))) return null;
    for (const t of topologies) {
      const v = Object.hasOwn(labels, t.key) ? labels[t.key] : labels[toGA(t.key)];
      if (v === undefined || !t.values.has(v)) return unresolvable(NAME, ERR_REASON_CONFLICT);
    }
    return null;
  }
}
