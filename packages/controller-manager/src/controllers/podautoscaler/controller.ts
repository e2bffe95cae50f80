/**
 * The horizontal pod autoscaler controller (kubernetes pkg/controller/podautoscaler
 * horizontal.go, kube-controller-manager's `horizontalpodautoscaling`): every
 * autoscaling/v2 HorizontalPodAutoscaler is synced once per sync period
 * (--horizontal-pod-autoscaler-sync-period, 15 s): a new or changed one after
 * a period too, as upstream's fixed-interval rate limiter queues them, and a
 * failed sync is not retried sooner. The sync itself is autoscaler.ts.
 *
 * Targets are any kind with a scale subresource, resolved through the
 * controller-manager's discovery; pods come from the shared informer; metrics
 * from `settings.metrics` (RestMetricsSource through the apiserver unless a
 * test injects its own).
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict } from '@kubeling/apimachinery';
import { type Informer, keyOf, parseGroupVersion, resourcePath, restMapping } from '@kubeling/client';
import type { ControllerContext } from '../../context.js';
import { DISCOVERY_PERIOD_MS, sharedDiscovery } from '../../discovery.js';
import type { Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { Autoscaler, type AutoscalerSettings, type HPA, type Scale } from './autoscaler.js';
import { type MetricsSource, type ObjectRef, RestMetricsSource } from './metrics.js';

export interface HPASettings extends AutoscalerSettings {
  /** --horizontal-pod-autoscaler-sync-period. */
  syncPeriodMs: number;
  /** Where metrics come from; the metrics APIs through the apiserver when unset. */
  metrics?: MetricsSource;
  /** The clock (ms since the epoch). */
  now?: () => number;
}

/** kube-controller-manager's defaults: 15 s sync, 10% tolerance, 5 min downscale stabilization and cpu initialization, 30 s readiness delay. */
export const HPA_DEFAULTS: HPASettings = {
  syncPeriodMs: 15_000,
  tolerance: 0.1,
  downscaleStabilizationMs: 300_000,
  cpuInitializationPeriodMs: 300_000,
  initialReadinessDelayMs: 30_000,
};

const HPA_PATH = '/apis/autoscaling/v2/horizontalpodautoscalers';
/** Attempts at writing a scale that keeps losing races (retry.DefaultRetry's 5 steps). */
const SCALE_UPDATE_ATTEMPTS = 5;

export class HorizontalPodAutoscalerController extends QueueController {
  readonly name = 'horizontalpodautoscaling';
  private hpas!: Informer<HPA & KubeObject>;
  private pods!: Informer<Pod>;
  private readonly settings: HPASettings;
  readonly autoscaler: Autoscaler;

  constructor(ctx: ControllerContext, settings: Partial<HPASettings> = {}) {
    super(ctx);
    this.settings = { ...HPA_DEFAULTS, ...settings };
    const now = this.settings.now ?? Date.now;
    const recorder = ctx.recorder('horizontal-pod-autoscaler');
    this.autoscaler = new Autoscaler({
      now,
      settings: this.settings,
      metrics: this.settings.metrics ?? new RestMetricsSource(ctx.client, (ref) => this.resourceOf(ref)),
      getScale: (ns, ref) => this.getScale(ns, ref),
      setScale: (ns, ref, scale, replicas) => this.setScale(ns, ref, scale, replicas),
      listPods: (ns, selector) => this.pods.store.byIndex('namespace', ns).filter((p) => selector.matches(p.metadata.labels)),
      updateStatus: async (hpa) => {
        await ctx.client.put(`/apis/autoscaling/v2/namespaces/${hpa.metadata.namespace}/horizontalpodautoscalers/${hpa.metadata.name}/status`, {
          ...hpa,
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
        });
      },
      event: (hpa, type, reason, message) =>
        void recorder.event({ ...(hpa as unknown as KubeObject), apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }, type, reason, message),
    });
  }

  init(): void {
    const f = this.ctx.informers;
    this.hpas = f.informer<HPA & KubeObject>({ path: HPA_PATH });
    this.pods = f.informer<Pod>({ path: '/api/v1/pods' });
    // Upstream's queue adds every HPA event rate-limited at the sync period; a pending add absorbs later ones.
    const later = (o: KubeObject) => this.queue.addAfter(keyOf(o), this.settings.syncPeriodMs);
    this.hpas.addEventHandler({ add: later, update: (_, o) => later(o), delete: (o) => this.autoscaler.forget(keyOf(o)) });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const hpa = this.hpas.store.get(key);
    if (!hpa) {
      this.autoscaler.forget(key);
      return;
    }
    try {
      await this.autoscaler.reconcile(hpa, key);
    } catch (e) {
      this.ctx.log.warn({ controller: this.name, key, err: String((e as Error)?.message ?? e) }, 'autoscaler sync failed');
    }
    return { requeueAfterMs: this.settings.syncPeriodMs };
  }

  /** The resource of a kind (the RESTMapper over discovery); a kind discovery does not know sends it to the server again first. */
  private async mapping(apiVersion: string | undefined, kind: string) {
    const gv = apiVersion ?? '';
    if (gv.split('/').length > 2) throw new Error(`unexpected GroupVersion string: ${gv}`);
    const { group, version } = parseGroupVersion(gv);
    const discovery = sharedDiscovery(this.ctx.client);
    const res =
      restMapping(await discovery.discover(DISCOVERY_PERIOD_MS), group, kind, version) ?? restMapping(await discovery.discover(1000), group, kind, version);
    if (!res) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
    return res;
  }

  private async resourceOf(ref: ObjectRef): Promise<string> {
    return (await this.mapping(ref.apiVersion, ref.kind)).resource;
  }

  private async scalePath(ns: string, ref: { apiVersion?: string; kind: string; name: string }): Promise<string> {
    const res = await this.mapping(ref.apiVersion, ref.kind);
    return `${resourcePath(res, ns)}/${encodeURIComponent(ref.name)}/scale`;
  }

  private async getScale(ns: string, ref: { apiVersion?: string; kind: string; name: string }): Promise<Scale> {
    return this.ctx.client.get<Scale>(await this.scalePath(ns, ref));
  }

  /** Updates the scale; on a conflict reads it again and retries (upstream's RetryOnConflict around the scale update). */
  private async setScale(ns: string, ref: { apiVersion?: string; kind: string; name: string }, scale: Scale, replicas: number): Promise<void> {
    const path = await this.scalePath(ns, ref);
    let cur = scale;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.ctx.client.put(path, { ...cur, apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { ...cur.spec, replicas } });
        return;
      } catch (e) {
        if (!isConflict(e) || attempt >= SCALE_UPDATE_ATTEMPTS) throw e;
        cur = await this.ctx.client.get<Scale>(path);
      }
    }
  }
}
