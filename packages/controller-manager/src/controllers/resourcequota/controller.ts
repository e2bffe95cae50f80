/**
 * ResourceQuota controller (kubernetes pkg/controller/resourcequota): keeps
 * every quota's `status.hard` (= `spec.hard`) and `status.used` (what the
 * objects of its namespace use, counted by the evaluators admission uses,
 * @kubeling/component-helpers quota.ts).
 *
 * A quota is recalculated in full when it appears, when what it counts
 * changes, and every `resyncPeriodMs` (upstream's --resource-quota-sync-period,
 * 5 min). Creates are charged by admission; what releases usage — an object
 * deleted, a pod turning terminal, a service changing type — recalculates the
 * quotas of its namespace that count it at once (replenishment).
 *
 * The objects are read from informers started for the resources quotas
 * actually track (upstream monitors every quotable resource; the counting is
 * the same). A resource whose informer has not synced keeps its previous usage
 * and the quota is retried with backoff.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { trackedResources } from '@kubeling/component-helpers';
import type { ControllerContext } from '../../context.js';
import { enqueueOn } from '../handlers.js';
import { runEvery } from '../periodic.js';
import { QueueController } from '../queue-controller.js';
import { QuotableResources } from './discovery.js';
import { planQuotaStatus, quotasCounting, quotaSpecChanged, specOf, updateReleasesUsage } from './reconcile.js';

export interface ResourceQuotaSettings {
  /** Full recalculation of every quota (upstream: 5 min). */
  resyncPeriodMs: number;
  /** How often discovery is read again for the resources `count/` names may name (upstream: 30 s). */
  discoveryRefreshMs: number;
  /** How long a reconcile waits for a new resource's informer to sync. */
  syncTimeoutMs: number;
}

export const RESOURCEQUOTA_DEFAULTS: ResourceQuotaSettings = { resyncPeriodMs: 5 * 60_000, discoveryRefreshMs: 30_000, syncTimeoutMs: 10_000 };

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;

export class ResourceQuotaController extends QueueController {
  readonly name = 'resourcequota';
  private quotas!: Informer;
  /** Informers of the resources quotas count, by `group/resource`. */
  private readonly monitors = new Map<string, Informer>();
  private readonly discovery: QuotableResources;
  private signal: AbortSignal | undefined;

  constructor(
    ctx: ControllerContext,
    private readonly o: ResourceQuotaSettings = RESOURCEQUOTA_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {
    super(ctx);
    this.discovery = new QuotableResources(ctx.client, o.discoveryRefreshMs);
  }

  init(): void {
    this.quotas = this.ctx.informers.informer({ path: '/api/v1/resourcequotas' });
    enqueueOn(this.quotas, this.queue, { on: ['add', 'update'], updateIf: quotaSpecChanged });
  }

  override async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const log = this.ctx.log.child({ controller: this.name });
    const resync = runEvery(
      signal,
      this.o.resyncPeriodMs,
      async () => {
        for (const q of this.quotas.store.list()) this.queue.add(keyOf(q));
      },
      (e) => log.warn({ err: String(e) }, 'quota resync failed'),
    );
    await Promise.all([super.run(signal), resync]);
  }

  /** What the last discovery said (pods, services and the other core kinds quotas name are counted regardless). */
  private served = (resource: string) => this.discovery.served(resource);

  async reconcile(key: string): Promise<void> {
    const quota = this.quotas.store.get(key);
    if (!quota || quota.metadata.deletionTimestamp) return;
    const ns = quota.metadata.namespace!;
    await this.discovery.refresh();
    const lists = new Map<string, readonly KubeObject[]>();
    // New resources' informers start (and sync) side by side.
    const tracked = trackedResources(Object.keys(specOf(quota)?.hard ?? {}), this.served);
    const informers = await Promise.all(tracked.map((r) => this.monitor(r)));
    tracked.forEach((r, i) => {
      const inf = informers[i];
      if (inf) lists.set(r, inf.store.byIndex('namespace', ns));
    });
    const { status, failed } = planQuotaStatus(quota, (r) => lists.get(r), this.served, this.now());
    if (status) {
      try {
        await this.ctx.client.put(`/api/v1/namespaces/${ns}/resourcequotas/${quota.metadata.name}/status`, { ...quota, status });
      } catch (e) {
        // A lost race (admission charged the quota meanwhile) is retried from the newer quota the informer brings.
        if (isNotFound(e)) return;
        if (!isConflict(e)) throw e;
        throw new Error(`quota ${key} changed while it was recalculated`);
      }
    }
    if (failed.length) throw new Error(`could not count ${failed.join(', ')} for quota ${key}`);
  }

  /** The informer of a counted resource, started (with its replenishment handlers) the first time; undefined until it has synced. */
  private async monitor(resource: string): Promise<Informer | undefined> {
    let inf = this.monitors.get(resource);
    if (!inf) {
      if (this.signal?.aborted) return undefined;
      const [group, res] = [resource.slice(0, resource.indexOf('/')), resource.slice(resource.indexOf('/') + 1)];
      // The core kinds with legacy quota names are counted even when discovery could not be read.
      const path = (await this.discovery.pathOf(resource)) ?? (group === '' ? `/api/v1/${res}` : undefined);
      if (!path) return undefined;
      inf = this.monitors.get(resource) ?? this.ctx.informers.informer({ path });
      if (!this.monitors.has(resource)) {
        this.monitors.set(resource, inf);
        this.replenishOn(resource, inf);
        inf.start();
      }
    }
    if (!inf.hasSynced()) await Promise.race([inf.synced(), sleep(this.o.syncTimeoutMs, undefined, { ref: false })]);
    return inf.hasSynced() ? inf : undefined;
  }

  /** Deletions (and updates that release usage) recalculate the quotas of the namespace that count the resource. */
  private replenishOn(resource: string, inf: Informer): void {
    const replenish = (o: KubeObject) => {
      const ns = o.metadata.namespace;
      if (!ns) return;
      for (const q of quotasCounting(resource, this.quotas.store.byIndex('namespace', ns))) this.queue.add(keyOf(q));
    };
    inf.addEventHandler({
      update: (old, cur) => {
        if (updateReleasesUsage(resource, old, cur, this.now())) replenish(cur);
      },
      delete: replenish,
    });
  }
}
