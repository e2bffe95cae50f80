/**
 * The persistentvolume-binder controller (pkg/controller/volume/persistentvolume
 * pv_controller_base.go): volumes and claims from their informers, each synced
 * on its own key (`pv:<name>`, `pvc:<ns>/<name>`) by claim.ts and volume.ts. A
 * deleted claim syncs its volume at once (Released without waiting for the
 * resync), a deleted volume its claim (Lost), and a volume that becomes free
 * the claims still unbound. Everything is synced again every 15 s (upstream's
 * --pvclaimbinder-sync-period), which is also how waiting claims retry and
 * failed reclaims are tried again. Events come from `persistentvolume-controller`.
 */
import { realpath, rm } from 'node:fs/promises';
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { ControllerContext } from '../../context.js';
import type { Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { ANN_BIND_COMPLETED, POD_PVC_INDEX, podClaimKeys, type PersistentVolume, type PersistentVolumeClaim, type StorageClass } from '../storage.js';
import { Binder, type BinderApi } from './binder.js';
import { syncClaim } from './claim.js';
import { syncVolume } from './volume.js';

export const PV_RESYNC_MS = 15_000;

const PV = 'pv:';
const PVC = 'pvc:';

export class PersistentVolumeBinderController extends QueueController {
  readonly name = 'persistentvolume-binder';
  private volumes!: Informer<PersistentVolume>;
  private claims!: Informer<PersistentVolumeClaim>;
  private classes!: Informer<StorageClass>;
  private pods!: Informer<Pod>;
  private binder!: Binder;

  constructor(
    ctx: ControllerContext,
    private readonly resyncMs = PV_RESYNC_MS,
  ) {
    super(ctx);
  }

  init(): void {
    const inf = this.ctx.informers;
    this.volumes = inf.informer<PersistentVolume>({ path: '/api/v1/persistentvolumes' });
    this.claims = inf.informer<PersistentVolumeClaim>({ path: '/api/v1/persistentvolumeclaims' });
    this.classes = inf.informer<StorageClass>({ path: '/apis/storage.k8s.io/v1/storageclasses' });
    this.pods = inf.informer<Pod>({ path: '/api/v1/pods' });
    this.pods.store.addIndexer(POD_PVC_INDEX, podClaimKeys);
    const onVolume = (v: PersistentVolume) => {
      this.queue.add(PV + v.metadata.name);
      // A volume free to bind: waiting claims look at once rather than at the next resync.
      if (v.status?.phase === 'Available' && !v.spec?.claimRef?.uid) this.enqueueUnboundClaims();
    };
    this.volumes.addEventHandler({
      add: onVolume,
      update: (_, v) => onVolume(v),
      delete: (v) => {
        const ref = v.spec?.claimRef;
        if (ref?.name) this.queue.add(`${PVC}${ref.namespace}/${ref.name}`);
      },
    });
    this.claims.addEventHandler({
      add: (c) => this.queue.add(`${PVC}${c.metadata.namespace}/${c.metadata.name}`),
      update: (_, c) => this.queue.add(`${PVC}${c.metadata.namespace}/${c.metadata.name}`),
      delete: (c) => {
        if (c.spec?.volumeName) this.queue.add(PV + c.spec.volumeName);
      },
    });
    this.binder = new Binder({
      volumes: () => this.volumes.store.list(),
      volume: (name) => this.volumes.store.get(name),
      claim: (key) => this.claims.store.get(key),
      storageClass: (name) => this.classes.store.get(name),
      storageClasses: () => this.classes.store.list(),
      podsUsingClaim: (key) => this.pods.store.byIndex(POD_PVC_INDEX, key),
      api: this.api(),
      event: (obj: KubeObject, type, reason, message) => void this.ctx.recorder('persistentvolume-controller').event(obj, type, reason, message),
      enqueueClaim: (key) => this.queue.add(PVC + key),
      removeAll: (path) => removeUnderTmp(path),
      now: () => new Date(),
    });
  }

  private api(): BinderApi {
    const c = this.ctx.client;
    const pv = (name: string) => `/api/v1/persistentvolumes/${name}`;
    const pvc = (o: KubeObject) => `/api/v1/namespaces/${o.metadata.namespace}/persistentvolumeclaims/${o.metadata.name}`;
    const orUndefined = <T>(p: Promise<T>) =>
      p.catch((e) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
    return {
      getVolume: (name) => orUndefined(c.get<PersistentVolume>(pv(name))),
      getClaim: (namespace, name) => orUndefined(c.get<PersistentVolumeClaim>(`/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`)),
      updateVolume: (v) => c.put<PersistentVolume>(pv(v.metadata.name!), v),
      updateVolumeStatus: (v) => c.put<PersistentVolume>(`${pv(v.metadata.name!)}/status`, v),
      deleteVolume: async (name) => {
        await c.delete(pv(name));
      },
      updateClaim: (o) => c.put<PersistentVolumeClaim>(pvc(o), o),
      updateClaimStatus: (o) => c.put<PersistentVolumeClaim>(`${pvc(o)}/status`, o),
    };
  }

  override async run(signal: AbortSignal): Promise<void> {
    const timer = setInterval(() => this.resync(), this.resyncMs);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    await super.run(signal);
  }

  private enqueueUnboundClaims(): void {
    for (const c of this.claims.store.list()) {
      if (c.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) this.queue.add(`${PVC}${c.metadata.namespace}/${c.metadata.name}`);
    }
  }

  /** Every claim and volume again, as upstream's resync. */
  resync(): void {
    for (const key of this.claims.store.keys()) this.queue.add(PVC + key);
    for (const key of this.volumes.store.keys()) this.queue.add(PV + key);
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    try {
      if (key.startsWith(PV)) {
        const v = this.volumes.store.get(key.slice(PV.length));
        if (v) await syncVolume(this.binder, v);
      } else if (key.startsWith(PVC)) {
        const c = this.claims.store.get(key.slice(PVC.length));
        if (c) await syncClaim(this.binder, c);
      }
    } catch (e) {
      // A write based on an older read (or on an object since deleted): the informer brings the news, and the sync runs on it.
      if (isConflict(e) || isNotFound(e)) return { requeueAfterMs: 100 };
      throw e;
    }
  }
}

/** Removes a /tmp directory tree, unless its real path (through any symbolic link) leaves /tmp. */
async function removeUnderTmp(path: string): Promise<void> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const tmp = await realpath('/tmp');
  if (!real.startsWith(`${tmp}/`)) throw new Error(`host_path deleter only supports /tmp/.+ but ${path} resolves to ${real}`);
  await rm(real, { recursive: true, force: true });
}
