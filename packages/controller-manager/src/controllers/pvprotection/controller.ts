/**
 * PV protection controller (pkg/controller/volume/pvprotection): a volume
 * being deleted keeps its `kubernetes.io/pv-protection` finalizer while it is
 * Bound (the binder's phase says a claim uses it) and loses it otherwise; a
 * live volume without the finalizer gets it (volumes made before the admission
 * plugin ran).
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { PV_PROTECTION_FINALIZER, type PersistentVolume } from '../storage.js';

const hasFinalizer = (v: PersistentVolume) => (v.metadata.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);

/** What the volume's finalizers should become, or undefined when they stand. */
export function protectedFinalizers(v: PersistentVolume): string[] | undefined {
  const finalizers = v.metadata.finalizers ?? [];
  if (v.metadata.deletionTimestamp) {
    if (!hasFinalizer(v) || v.status?.phase === 'Bound') return undefined;
    return finalizers.filter((f) => f !== PV_PROTECTION_FINALIZER);
  }
  return hasFinalizer(v) ? undefined : [...finalizers, PV_PROTECTION_FINALIZER];
}

export class PVProtectionController extends QueueController {
  readonly name = 'pv-protection';
  private volumes!: Informer<PersistentVolume>;

  init(): void {
    this.volumes = this.ctx.informers.informer<PersistentVolume>({ path: '/api/v1/persistentvolumes' });
    const onVolume = (v: PersistentVolume) => {
      if (protectedFinalizers(v)) this.queue.add(v.metadata.name!);
    };
    this.volumes.addEventHandler({ add: onVolume, update: (_, v) => onVolume(v) });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const v = this.volumes.store.get(key);
    const finalizers = v && protectedFinalizers(v);
    if (!v || !finalizers) return;
    const next = structuredClone(v);
    next.metadata.finalizers = finalizers;
    try {
      await this.ctx.client.put(`/api/v1/persistentvolumes/${key}`, next);
    } catch (e) {
      if (isNotFound(e)) return;
      if (isConflict(e)) return { requeueAfterMs: 100 };
      throw e;
    }
  }
}
