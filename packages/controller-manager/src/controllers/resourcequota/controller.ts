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
 *
 * Which resources exist comes from discovery, so `count/<plural>.<group>`
 * counts custom resources too (upstream builds an object-count evaluator per
 * discovered resource). Discovery is read again every `discoveryRefreshMs`
 * (upstream's quota Sync, 30 s): when the quotable resources changed, the
 * monitors of resources gone stop and every quota is recalculated, so a quota
 * naming a resource that appears later starts counting it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { DiscoveredResource, EventHandlers, Informer } from '@kubeling/client';
import { trackedResources } from '@kubeling/component-helpers';
import type { ControllerContext } from '../../context.js';
import { Monitors } from '../../discovery.js';
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
  private monitors!: Monitors;
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
    this.monitors = new Monitors(this.ctx, (m) => this.replenishOn(`${m.resource.group}/${m.resource.resource}`));
  }

  /** The resources monitored, as `group/resource`. */
  monitored(): string[] {
    return this.monitors.list().map((m) => `${m.resource.group}/${m.resource.resource}`);
  }

  override async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const log = this.ctx.log.child({ controller: this.name });
    this.monitors.run();
    signal.addEventListener('abort', () => this.monitors.stopAll(), { once: true });
    const rediscover = runEvery(
      signal,
      this.o.discoveryRefreshMs,
      () => this.syncWithDiscovery(log),
      (e) => log.warn({ err: String(e) }, 'quota sync with discovery failed'),
    );
    const resync = runEvery(
      signal,
      this.o.resyncPeriodMs,
      async () => {
        for (const q of this.quotas.store.list()) this.queue.add(keyOf(q));
      },
      (e) => log.warn({ err: String(e) }, 'quota resync failed'),
    );
    await Promise.all([super.run(signal), resync, rediscover]);
  }

  /** Sync: when the quotable resources changed, stops the monitors of those gone and recalculates every quota. */
  private async syncWithDiscovery(log: ControllerContext['log']): Promise<void> {
    if (!(await this.discovery.refresh(true))) return;
    // Core resources are always served (and monitored without discovery when it could not be read).
    const gone = this.monitored().filter((r) => !r.startsWith('/') && !this.discovery.served(r));
    for (const r of gone) this.monitors.remove(r);
    // A resource now preferred in another version is watched there.
    for (const r of this.monitored()) {
      const d = this.discovery.get(r);
      if (d) this.monitors.ensure(d);
    }
    log.info({ quotable: this.discovery.keys().length, stopped: gone }, 'quotable resources changed');
    for (const q of this.quotas.store.list()) this.queue.add(keyOf(q));
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
    let inf = this.monitors.get(resource)?.informer;
    if (!inf) {
      if (this.signal?.aborted) return undefined;
      const res = resource.slice(resource.indexOf('/') + 1);
      // The core kinds with legacy quota names are counted even when discovery could not be read.
      const fallback: DiscoveredResource | undefined = resource.startsWith('/')
        ? { group: '', version: 'v1', resource: res, kind: '', namespaced: true, verbs: [], subresources: [] }
        : undefined;
      const r = (await this.discovery.resourceOf(resource)) ?? fallback;
      if (!r || this.signal?.aborted) return undefined;
      inf = this.monitors.get(resource)?.informer ?? this.monitors.ensure(r).informer;
    }
    if (!inf.hasSynced()) await Promise.race([inf.synced(), sleep(this.o.syncTimeoutMs, undefined, { ref: false })]);
    return inf.hasSynced() ? inf : undefined;
  }

  /** Deletions (and updates that release usage) recalculate the quotas of the namespace that count the resource. */
  private replenishOn(resource: string): EventHandlers {
    const replenish = (o: KubeObject) => {
      const ns = o.metadata.namespace;
      if (!ns) return;
      for (const q of quotasCounting(resource, this.quotas.store.byIndex('namespace', ns))) this.queue.add(keyOf(q));
    };
    return {
      update: (old, cur) => {
        if (updateReleasesUsage(resource, old, cur, this.now())) replenish(cur);
      },
      delete: replenish,
    };
  }
}
