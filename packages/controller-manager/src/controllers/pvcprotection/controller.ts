/**
 * PVC protection controller (pkg/controller/volume/pvcprotection): a claim
 * being deleted keeps its `kubernetes.io/pvc-protection` finalizer while a
 * scheduled pod uses it — through `persistentVolumeClaim.claimName`, or as the
 * `<pod>-<volume>` claim of a generic ephemeral volume the pod owns and has not
 * shut down (deleted with a zero grace period) — and loses it otherwise. As
 * upstream, a pod counts until it is gone, terminated or not. The informer's
 * pods are asked first; only when none uses the claim is the namespace listed
 * live, so a pod the cache has not seen yet still protects it. A live claim
 * without the finalizer gets it (claims made before the admission plugin ran).
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import {
  POD_PVC_INDEX,
  PVC_PROTECTION_FINALIZER,
  ephemeralClaimName,
  isClaimForPod,
  isPodTerminated,
  podClaimKeys,
  podVolumes,
  type PersistentVolumeClaim,
} from '../storage.js';

const hasFinalizer = (c: PersistentVolumeClaim) => (c.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
/** protectionutil.IsDeletionCandidate / NeedToAddFinalizer. */
export const isDeletionCandidate = (c: PersistentVolumeClaim): boolean => !!c.metadata.deletionTimestamp && hasFinalizer(c);
export const needToAddFinalizer = (c: PersistentVolumeClaim): boolean => !c.metadata.deletionTimestamp && !hasFinalizer(c);

/** podIsShutDown: deleted with a zero grace period (done on its node, or force-deleted). */
const podIsShutDown = (p: Pod) => !!p.metadata.deletionTimestamp && p.metadata.deletionGracePeriodSeconds === 0;

/** podUsesPVC: only scheduled pods count, as the kubelet refuses to start a pod on a claim being deleted. */
export function podUsesClaim(pod: Pod, claim: PersistentVolumeClaim): boolean {
  if (!pod.spec?.nodeName || pod.metadata.namespace !== claim.metadata.namespace) return false;
  return podVolumes(pod).some(
    (v) =>
      v.persistentVolumeClaim?.claimName === claim.metadata.name ||
      (!podIsShutDown(pod) && !!v.ephemeral && ephemeralClaimName(pod, v) === claim.metadata.name && isClaimForPod(pod, claim)),
  );
}

export interface ProtectionDeps {
  /** The informer's pods that name the claim `ns/name`. */
  cachedPods(key: string): readonly Pod[];
  /** A live list of the namespace's pods. */
  listPods(namespace: string): Promise<readonly Pod[]>;
  updateClaim(c: PersistentVolumeClaim): Promise<unknown>;
}

/** processPVC: the finalizer goes when nothing uses a deleting claim, and is added to a live claim without it. */
export async function processClaim(claim: PersistentVolumeClaim, d: ProtectionDeps): Promise<'removed' | 'added' | 'kept' | 'none'> {
  if (isDeletionCandidate(claim)) {
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    const used = d.cachedPods(key).some((p) => podUsesClaim(p, claim)) || (await d.listPods(claim.metadata.namespace!)).some((p) => podUsesClaim(p, claim));
    if (!used) {
      const next = structuredClone(claim);
      next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== PVC_PROTECTION_FINALIZER);
      await d.updateClaim(next);
      return 'removed';
    }
    return 'kept';
  }
  if (needToAddFinalizer(claim)) {
    const next = structuredClone(claim);
    next.metadata.finalizers = [...(next.metadata.finalizers ?? []), PVC_PROTECTION_FINALIZER];
    await d.updateClaim(next);
    return 'added';
  }
  return 'none';
}

export class PVCProtectionController extends QueueController {
  readonly name = 'pvc-protection';
  private claims!: Informer<PersistentVolumeClaim>;
  private pods!: Informer<Pod>;

  init(): void {
    this.claims = this.ctx.informers.informer<PersistentVolumeClaim>({ path: '/api/v1/persistentvolumeclaims' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.pods.store.addIndexer(POD_PVC_INDEX, podClaimKeys);
    const onClaim = (c: PersistentVolumeClaim) => {
      if (needToAddFinalizer(c) || isDeletionCandidate(c)) this.queue.add(`${c.metadata.namespace}/${c.metadata.name}`);
    };
    this.claims.addEventHandler({ add: onClaim, update: (_, c) => onClaim(c) });
    this.pods.addEventHandler({
      add: (p) => this.enqueueClaims(p, false),
      update: (old, p) => {
        this.enqueueClaims(p, false);
        // A pod replaced by another of the same name: the old one may have held a claim the new one does not use.
        if (old.metadata.uid !== p.metadata.uid) this.enqueueClaims(old, true);
      },
      delete: (p) => this.enqueueClaims(p, true),
    });
  }

  /** Only pods that can let a claim go: deleted, terminated, or not scheduled. */
  private enqueueClaims(pod: Pod, deleted: boolean): void {
    if (!deleted && !isPodTerminated(pod) && pod.spec?.nodeName) return;
    for (const key of podClaimKeys(pod)) this.queue.add(key);
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const claim = this.claims.store.get(key);
    if (!claim) return;
    try {
      await processClaim(claim, {
        cachedPods: (k) => this.pods.store.byIndex(POD_PVC_INDEX, k),
        listPods: async (ns) => (await this.ctx.client.get<{ items: Pod[] }>(`/api/v1/namespaces/${ns}/pods`)).items,
        updateClaim: (c) => this.ctx.client.put(`/api/v1/namespaces/${c.metadata.namespace}/persistentvolumeclaims/${c.metadata.name}`, c),
      });
    } catch (e) {
      if (isNotFound(e)) return;
      if (isConflict(e)) return { requeueAfterMs: 100 };
      throw e;
    }
  }
}
