/**
 * The sidecars' controllers as running loops: the informers they read, the
 * events that put keys on their work queues (with the upstream filters that
 * keep status writes from re-queueing at once), the workers, and a periodic
 * capacity refresh. `stop()` shuts the queues and the timer down; the
 * informers are the caller's.
 */
import type { Logger } from 'pino';
import { type Informer, keyOf, runWorkers, WorkQueue } from '@kubeling/client';
import type { Attacher } from './attacher.js';
import type { CapacityPublisher } from './capacity.js';
import type { Provisioner } from './provisioner.js';
import { claimUpdateMatters, type Resizer } from './resizer.js';
import type { CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeAttachment } from './types.js';
import { errorText } from './util.js';

export interface LoopInformers {
  claims: Informer<PersistentVolumeClaim>;
  volumes: Informer<PersistentVolume>;
  classes: Informer<StorageClass>;
  attachments: Informer<VolumeAttachment>;
  capacities: Informer<CSIStorageCapacity>;
}

export interface Sidecars {
  provisioner: Provisioner;
  attacher: Attacher;
  resizer: Resizer;
  capacity: CapacityPublisher;
}

const CAPACITY_KEY = 'capacity';

/**
 * shouldEnqueueVAChange (external-attacher): an update that only records an
 * attach or detach error, or only moves the resourceVersion, is the
 * attacher's own write and must not bypass the retry backoff.
 */
export function attachmentUpdateMatters(oldVA: VolumeAttachment, newVA: VolumeAttachment): boolean {
  if (oldVA.metadata.resourceVersion === newVA.metadata.resourceVersion) return true;
  const strip = (va: VolumeAttachment) => {
    const { attachError: _a, detachError: _d, ...status } = va.status ?? {};
    const { resourceVersion: _r, managedFields: _m, ...metadata } = va.metadata;
    return JSON.stringify({ metadata, spec: va.spec, status });
  };
  return strip(oldVA) !== strip(newVA);
}

export class SidecarLoops {
  readonly claimQueue = new WorkQueue<string>();
  readonly volumeQueue = new WorkQueue<string>();
  readonly attachQueue = new WorkQueue<string>();
  readonly pvFinalizerQueue = new WorkQueue<string>();
  readonly resizeQueue = new WorkQueue<string>();
  readonly capacityQueue = new WorkQueue<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly s: Sidecars,
    private readonly inf: LoopInformers,
    private readonly log: Logger,
  ) {}

  /** Registers the informer handlers; call before the informers start. */
  wire(): void {
    const { claims, volumes, classes, attachments, capacities } = this.inf;
    claims.addEventHandler({
      add: (c) => {
        this.claimQueue.add(keyOf(c));
        this.resizeQueue.add(keyOf(c));
      },
      update: (o, c) => {
        this.claimQueue.add(keyOf(c));
        if (claimUpdateMatters(o, c)) this.resizeQueue.add(keyOf(c));
      },
      delete: (c) => {
        this.s.provisioner.claimDeleted(c);
        this.resizeQueue.forget(keyOf(c));
      },
    });
    volumes.addEventHandler({
      add: (v) => this.onVolume(v),
      update: (_o, v) => this.onVolume(v),
    });
    attachments.addEventHandler({
      add: (va) => this.attachQueue.add(keyOf(va)),
      update: (o, va) => {
        if (attachmentUpdateMatters(o, va)) this.attachQueue.add(keyOf(va));
      },
      delete: (va) => {
        if (va.spec?.source?.persistentVolumeName) this.pvFinalizerQueue.add(va.spec.source.persistentVolumeName);
      },
    });
    const capacityChanged = () => this.refreshCapacity();
    classes.addEventHandler({
      add: capacityChanged,
      update: (o, n) => o.metadata.resourceVersion !== n.metadata.resourceVersion && capacityChanged(),
      delete: capacityChanged,
    });
    capacities.addEventHandler({ delete: capacityChanged });
  }

  private onVolume(v: PersistentVolume): void {
    this.volumeQueue.add(v.metadata.name!);
    this.pvFinalizerQueue.add(v.metadata.name!);
  }

  /** Queues a capacity sync (coalesced: one runs at a time, one more after it at most). */
  refreshCapacity(): void {
    this.capacityQueue.add(CAPACITY_KEY);
  }

  /** Starts the workers and the periodic capacity refresh; returns at once. */
  run(o: { workers?: number; capacityPollMs?: number } = {}): void {
    const workers = o.workers ?? 4;
    const onError = (loop: string) => (key: string, err: unknown) => this.log.warn({ loop, key, err: errorText(err) }, 'sync failed; will retry');
    this.running = Promise.all([
      runWorkers(this.claimQueue, workers, (k) => this.s.provisioner.reconcileClaim(k), onError('provisioner')),
      runWorkers(this.volumeQueue, workers, (k) => this.s.provisioner.reconcileVolume(k), onError('provisioner-volumes')),
      runWorkers(this.attachQueue, workers, (k) => this.s.attacher.reconcileAttachment(k), onError('attacher')),
      runWorkers(this.pvFinalizerQueue, 1, (k) => this.s.attacher.reconcileVolume(k), onError('attacher-volumes')),
      runWorkers(this.resizeQueue, workers, (k) => this.s.resizer.reconcileClaim(k), onError('resizer')),
      runWorkers(this.capacityQueue, 1, () => this.s.capacity.sync(), onError('capacity')),
    ]);
    this.refreshCapacity();
    const poll = o.capacityPollMs ?? 60_000;
    if (poll > 0) {
      this.timer = setInterval(() => this.refreshCapacity(), poll);
      this.timer.unref();
    }
  }

  /** Shuts the queues down and waits for the workers to finish what they hold. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const q of [this.claimQueue, this.volumeQueue, this.attachQueue, this.pvFinalizerQueue, this.resizeQueue, this.capacityQueue]) q.shutdown();
    await this.running;
  }
}
