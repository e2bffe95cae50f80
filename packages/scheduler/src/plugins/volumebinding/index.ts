/**
 * VolumeBinding (upstream plugins/volumebinding/volume_binding.go).
 *
 * PreFilter reads the pod's claims (persistentVolumeClaim volumes and generic
 * ephemeral `<pod>-<volume>` claims): a missing or terminating claim, or an
 * unbound claim that binds Immediate, rejects the pod everywhere. Filter asks
 * per node whether bound claims' PVs may be used there and how unbound
 * WaitForFirstConsumer claims would be satisfied (binder.ts). Reserve assumes
 * the chosen node's decisions so the next pod does not take the same PV;
 * PreBind writes them and waits for the claims to be bound (bind.ts);
 * Unreserve reverts the assumptions. No Score: upstream scores only with
 * StorageCapacityScoring or static bindings and a shape, which is not the
 * default.
 */
import {
  claimFullyBound,
  claimNotFound,
  ephemeralOwnerError,
  podClaims,
  type Handle,
  type HandlePlugin,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageResource,
} from '../../framework/storage.js';
import {
  asError,
  unresolvable,
  type CycleState,
  type FilterPlugin,
  type NodeInfo,
  type PodInfo,
  type PreBindPlugin,
  type PreFilterPlugin,
  type ReservePlugin,
  type Status,
} from '../../framework/types.js';
import { AssumeCache } from './assume-cache.js';
import { assumePodVolumes, bindPodVolumes, revertAssumed } from './bind.js';
import { findPodVolumes, sortClaims, type Caches, type PodVolumeClaims, type PodVolumes } from './binder.js';

export const NAME = 'VolumeBinding';
export const ERR_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
const DEFAULT_BIND_TIMEOUT_SECONDS = 600;

/** VolumeBindingArgs as read here. */
export interface VolumeBindingArgs {
  bindTimeoutSeconds?: number;
}

interface StateData {
  claims: PodVolumeClaims;
  byNode: Map<string, PodVolumes>;
  /** What Reserve assumed for the chosen node; undefined when every claim was already bound. */
  reserved?: PodVolumes;
}

export class VolumeBinding implements PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, HandlePlugin {
  readonly name = NAME;
  readonly needs: readonly StorageResource[] = [
    'persistentvolumeclaims',
    'persistentvolumes',
    'storageclasses',
    'csinodes',
    'csidrivers',
    'csistoragecapacities',
  ];
  private h: Handle | undefined;
  private readonly caches: Caches;
  readonly bindTimeoutMs: number;

  constructor(args: VolumeBindingArgs = {}) {
    const t = args.bindTimeoutSeconds ?? DEFAULT_BIND_TIMEOUT_SECONDS;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) throw new Error('bindTimeoutSeconds: must be a non-negative number of seconds');
    this.bindTimeoutMs = t * 1000;
    const handle = () => {
      if (!this.h) throw new Error(`${NAME}: no framework handle`);
      return this.h;
    };
    this.caches = {
      handle,
      pvcs: new AssumeCache<PersistentVolumeClaim>(() => handle().pvcs, 'persistentvolumeclaim'),
      pvs: new AssumeCache<PersistentVolume>(() => handle().pvs, 'persistentvolume'),
    };
  }

  setHandle(h: Handle): void {
    this.h = h;
  }

  preFilter(state: CycleState, pod: PodInfo): Status | null {
    const ns = pod.pod.metadata.namespace ?? '';
    const seen = new Set<string>();
    const claims: PersistentVolumeClaim[] = [];
    for (const c of podClaims(pod.pod)) {
      if (seen.has(c.claim)) continue;
      seen.add(c.claim);
      const pvc = this.caches.pvcs.get(`${ns}/${c.claim}`);
      if (!pvc) {
        return unresolvable(
          NAME,
          c.ephemeral ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${c.claim}"` : claimNotFound(c.claim),
        );
      }
      if (pvc.status?.phase === 'Lost') {
        return unresolvable(NAME, `persistentvolumeclaim "${c.claim}" bound to non-existent persistentvolume "${pvc.spec?.volumeName ?? ''}"`);
      }
      if (pvc.metadata.deletionTimestamp) return unresolvable(NAME, `persistentvolumeclaim "${c.claim}" is being deleted`);
      const notOwner = c.ephemeral ? ephemeralOwnerError(pod.pod, pvc) : undefined;
      if (notOwner) return unresolvable(NAME, notOwner);
      claims.push(pvc);
    }
    if (!claims.length) return null;
    let sorted: PodVolumeClaims;
    try {
      sorted = sortClaims(claims, this.caches.handle().storageClasses);
    } catch (e) {
      return asError(NAME, (e as Error).message);
    }
    if (sorted.immediate.length) return unresolvable(NAME, ERR_UNBOUND_IMMEDIATE);
    state.set(NAME, { claims: sorted, byNode: new Map() } satisfies StateData);
    return null;
  }

  filter(state: CycleState, _pod: PodInfo, node: NodeInfo): Status | null {
    const s = state.get(NAME) as StateData | undefined;
    if (!s) return null;
    try {
      const r = findPodVolumes(this.caches, s.claims, node.name, node.node?.metadata.labels ?? {});
      if (r.reasons.length) return unresolvable(NAME, ...r.reasons);
      s.byNode.set(node.name, r.volumes);
      return null;
    } catch (e) {
      return asError(NAME, (e as Error).message);
    }
  }

  reserve(state: CycleState, _pod: PodInfo, node: string): Status | null {
    const s = state.get(NAME) as StateData | undefined;
    const v = s?.byNode.get(node);
    if (!s || !v) return null;
    // arePodVolumesBound: claims bound since the cycle began need nothing more.
    const allBound = s.claims.delayed.every((pvc) => {
      const now = this.caches.pvcs.get(`${pvc.metadata.namespace}/${pvc.metadata.name}`);
      return !!now && claimFullyBound(now);
    });
    if (allBound) return null;
    try {
      s.reserved = assumePodVolumes(this.caches, node, v);
      return null;
    } catch (e) {
      return asError(NAME, (e as Error).message);
    }
  }

  unreserve(state: CycleState): void {
    const s = state.get(NAME) as StateData | undefined;
    if (s?.reserved) revertAssumed(this.caches, s.reserved);
  }

  async preBind(state: CycleState, pod: PodInfo, node: string, signal: AbortSignal): Promise<Status | null> {
    const s = state.get(NAME) as StateData | undefined;
    if (!s?.reserved) return null;
    try {
      await bindPodVolumes(this.caches, pod.pod, node, s.reserved, this.bindTimeoutMs, signal);
      return null;
    } catch (e) {
      return asError(NAME, (e as Error).message);
    }
  }

  /** Decisions assumed and not yet written or confirmed (tests and figures). */
  get assumed(): number {
    return this.caches.pvcs.assumedCount + this.caches.pvs.assumedCount;
  }
}
