/**
 * The volume binder's decisions (upstream volumebinding/binder.go and
 * component-helpers/storage/volume/pv_helpers.go): a pod's claims sorted into
 * bound, delayed (WaitForFirstConsumer) and immediate ones; per node, whether
 * bound claims' volumes may be used there and how each delayed claim would be
 * satisfied — the smallest fitting Available PV (FindMatchingVolume), or
 * dynamic provisioning where the class's allowedTopologies and the driver's
 * published capacity allow it.
 */
import { selectorFromLabelSelector } from '@kubeling/apimachinery';
import {
  ANN_SELECTED_NODE,
  NOT_SUPPORTED_PROVISIONER,
  capacityReachable,
  claimClass,
  claimFullyBound,
  claimRequest,
  storageBytes,
  topologyMatches,
  volumeClass,
  volumeNodeAffinityMatches,
  type CSIStorageCapacity,
  type Handle,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../../framework/storage.js';
import type { AssumeCache } from './assume-cache.js';

export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_REASON_NOT_ENOUGH_SPACE = 'node(s) did not have enough free storage';
export const ERR_REASON_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';

export interface BindingInfo {
  pvc: PersistentVolumeClaim;
  pv: PersistentVolume;
}

/** How a pod's unbound claims would be satisfied on one node. */
export interface PodVolumes {
  staticBindings: BindingInfo[];
  provisions: PersistentVolumeClaim[];
}

export interface PodVolumeClaims {
  bound: PersistentVolumeClaim[];
  delayed: PersistentVolumeClaim[];
  immediate: PersistentVolumeClaim[];
}

export interface Caches {
  handle(): Handle;
  pvcs: AssumeCache<PersistentVolumeClaim>;
  pvs: AssumeCache<PersistentVolume>;
}

const claimKey = (pvc: PersistentVolumeClaim) => `${pvc.metadata.namespace}/${pvc.metadata.name}`;

/** IsDelayBindingMode: the class exists and binds WaitForFirstConsumer; throws when the class has no mode. */
export function isDelayBinding(pvc: PersistentVolumeClaim, classes: Handle['storageClasses']): boolean {
  const name = claimClass(pvc);
  if (!name) return false;
  const sc = classes.get(name);
  if (!sc) return false;
  if (!sc.volumeBindingMode) throw new Error(`VolumeBindingMode not set for StorageClass "${name}"`);
  return sc.volumeBindingMode === 'WaitForFirstConsumer';
}

/** GetPodVolumeClaims: prebound claims (a volumeName, not yet bound) count as immediate. */
export function sortClaims(claims: readonly PersistentVolumeClaim[], classes: Handle['storageClasses']): PodVolumeClaims {
  const out: PodVolumeClaims = { bound: [], delayed: [], immediate: [] };
  for (const pvc of claims) {
    if (claimFullyBound(pvc)) out.bound.push(pvc);
    else if (isDelayBinding(pvc, classes) && !pvc.spec?.volumeName) out.delayed.push(pvc);
    else out.immediate.push(pvc);
  }
  return out;
}

/** IsVolumeBoundToClaim: same name and namespace, and the same UID when the reference has one. */
export function volumeBoundToClaim(pv: PersistentVolume, pvc: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== pvc.metadata.name || ref.namespace !== pvc.metadata.namespace) return false;
  return !ref.uid || ref.uid === pvc.metadata.uid;
}

const accessModesFit = (pvc: PersistentVolumeClaim, pv: PersistentVolume) =>
  (pvc.spec?.accessModes ?? []).every((m) => (pv.spec?.accessModes ?? []).includes(m));

/** FindMatchingVolume (scheduler path): a volume pre-bound to the claim, else the smallest Available one that fits the node. */
export function findMatchingVolume(
  pvc: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  nodeLabels: Record<string, string>,
  excluded: ReadonlySet<string>,
): PersistentVolume | undefined {
  const requested = claimRequest(pvc);
  const wantClass = claimClass(pvc);
  const selector = pvc.spec?.selector ? selectorFromLabelSelector(pvc.spec.selector) : undefined;
  const wantMode = pvc.spec?.volumeMode ?? 'Filesystem';
  let smallest: PersistentVolume | undefined;
  let smallestQty = 0;
  for (const pv of volumes) {
    if (excluded.has(pv.metadata.name ?? '')) continue;
    if (pv.spec?.claimRef && !volumeBoundToClaim(pv, pvc)) continue;
    const qty = storageBytes(pv.spec?.capacity?.storage);
    if (qty < requested) continue;
    if ((pv.spec?.volumeMode ?? 'Filesystem') !== wantMode) continue;
    if (pv.metadata.deletionTimestamp) continue;
    const affinityOk = volumeNodeAffinityMatches(pv, nodeLabels);
    if (volumeBoundToClaim(pv, pvc)) return affinityOk ? pv : undefined;
    if (pv.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(pv.metadata.labels ?? {})) continue;
    if (volumeClass(pv) !== wantClass) continue;
    if (!affinityOk || !accessModesFit(pvc, pv)) continue;
    if (!smallest || smallestQty > qty) {
      smallest = pv;
      smallestQty = qty;
    }
  }
  return smallest;
}

function capacitySufficient(c: CSIStorageCapacity, size: number): boolean {
  const limit = c.maximumVolumeSize ?? c.capacity;
  return limit !== undefined && storageBytes(limit) >= size;
}

/** hasEnoughCapacity: only for CSI drivers with storageCapacity; some capacity of the class reachable from the node must fit. */
export function hasEnoughCapacity(h: Handle, provisioner: string, pvc: PersistentVolumeClaim, sc: StorageClass, labels: Record<string, string>): boolean {
  if (pvc.spec?.resources?.requests?.storage === undefined) return true;
  const driver = h.csiDrivers.get(provisioner);
  if (!driver?.spec?.storageCapacity) return true;
  const size = claimRequest(pvc);
  return h.capacities.list().some((c) => c.storageClassName === sc.metadata.name && capacitySufficient(c, size) && capacityReachable(c, labels));
}

interface ProvisionCheck {
  satisfied: boolean;
  sufficient: boolean;
  provisions: PersistentVolumeClaim[];
}

/** checkVolumeProvisions: whether every claim left can be provisioned for the node; throws for a claim without a usable class. */
export function checkVolumeProvisions(h: Handle, claims: readonly PersistentVolumeClaim[], labels: Record<string, string>): ProvisionCheck {
  const provisions: PersistentVolumeClaim[] = [];
  for (const pvc of claims) {
    const name = claimClass(pvc);
    if (!name) throw new Error(`no class for claim "${claimKey(pvc)}"`);
    const sc = h.storageClasses.get(name);
    if (!sc) throw new Error(`failed to find storage class "${name}"`);
    const provisioner = sc.provisioner ?? '';
    if (!provisioner || provisioner === NOT_SUPPORTED_PROVISIONER) return { satisfied: false, sufficient: true, provisions: [] };
    if (!topologyMatches(sc.allowedTopologies, labels)) return { satisfied: false, sufficient: true, provisions: [] };
    if (!hasEnoughCapacity(h, provisioner, pvc, sc, labels)) return { satisfied: true, sufficient: false, provisions: [] };
    provisions.push(pvc);
  }
  return { satisfied: true, sufficient: true, provisions };
}

export interface FindResult {
  volumes: PodVolumes;
  reasons: string[];
}

/** FindPodVolumes: the reasons the node cannot serve the claims, or how it would; throws on internal errors. */
export function findPodVolumes(c: Caches, claims: PodVolumeClaims, node: string, labels: Record<string, string>): FindResult {
  let boundOk = true;
  let pvsFound = true;
  let unboundOk = true;
  let sufficient = true;
  const volumes: PodVolumes = { staticBindings: [], provisions: [] };
  const result = (): FindResult => {
    const reasons: string[] = [];
    if (!boundOk) reasons.push(ERR_REASON_NODE_CONFLICT);
    if (!unboundOk) reasons.push(ERR_REASON_BIND_CONFLICT);
    if (!sufficient) reasons.push(ERR_REASON_NOT_ENOUGH_SPACE);
    if (!pvsFound) reasons.push(ERR_REASON_PV_NOT_EXIST);
    return { volumes, reasons };
  };
  for (const pvc of claims.bound) {
    const pv = c.pvs.get(pvc.spec?.volumeName ?? '');
    if (!pv) {
      pvsFound = false;
      break;
    }
    if (!volumeNodeAffinityMatches(pv, labels)) {
      boundOk = false;
      break;
    }
  }
  if (!claims.delayed.length) return result();
  const toMatch: PersistentVolumeClaim[] = [];
  const toProvision: PersistentVolumeClaim[] = [];
  for (const pvc of claims.delayed) {
    const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    if (selected === undefined) toMatch.push(pvc);
    else if (selected !== node) {
      unboundOk = false;
      return result();
    } else toProvision.push(pvc);
  }
  if (toMatch.length) {
    const chosen = new Set<string>();
    const sorted = [...toMatch].sort((a, b) => claimRequest(a) - claimRequest(b));
    for (const pvc of sorted) {
      const cls = claimClass(pvc);
      const pv = findMatchingVolume(
        pvc,
        c.pvs.list().filter((v) => volumeClass(v) === cls),
        labels,
        chosen,
      );
      if (!pv) {
        unboundOk = false;
        toProvision.push(pvc);
        continue;
      }
      chosen.add(pv.metadata.name ?? '');
      volumes.staticBindings.push({ pvc, pv });
    }
  }
  if (toProvision.length) {
    const p = checkVolumeProvisions(c.handle(), toProvision, labels);
    unboundOk = p.satisfied;
    sufficient = p.sufficient;
    volumes.provisions = p.provisions;
  }
  return result();
}
