/**
 * The aggregation layer's state inside the apiserver (kube-aggregator
 * pkg/apiserver apiservice_controller.go, pkg/controllers/status and
 * autoregister): it follows APIServices, their Services and EndpointSlices;
 * keeps each APIService's `Available` condition (checked on every change and
 * every 30 s, failures again after 5 s); keeps the discovery document of each
 * available remote group-version for the merged discovery; and registers a
 * Local APIService for every group-version this server serves itself, built-in
 * or from a CRD, as kube-apiserver's autoregister and CRD registration
 * controllers do.
 */
import type { Logger } from 'pino';
import type { GroupVersion, KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import { compareKubeAwareVersions, type ResourceCatalog } from '../apiextensions/catalog.js';
import { SerialQueue } from '../registry/serial-queue.js';
import type { Store } from '../registry/store.js';
import { type APIService, checkAvailable, type Condition, LOCAL, type ProxyClient } from './availability.js';
import type { RemoteGroup, RemoteResource } from './discovery.js';

export interface AggregatorOptions {
  apiServices: Store;
  services: Store;
  endpointSlices: Store;
  catalog: ResourceCatalog;
  proxyClient?: ProxyClient;
  logger?: Logger;
  /** How often every remote APIService is checked again (upstream's resync: 30 s). */
  resyncMs?: number;
  /** The discovery check's timeout (upstream: 5 s per attempt). */
  checkTimeoutMs?: number;
}

export const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** kube-apiserver's apiVersionPriorities (cmd/kube-apiserver/app/aggregator.go) for the groups kubeling serves. */
const PRIORITIES: Record<string, [number, number]> = {
  '/v1': [18000, 1],
  'apiregistration.k8s.io/v1': [18000, 15],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'authentication.k8s.io/v1': [17700, 15],
  'authorization.k8s.io/v1': [17600, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'batch/v1': [17400, 15],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'discovery.k8s.io/v1': [16200, 15],
  'flowcontrol.apiserver.k8s.io/v1': [16100, 21],
};
/** CRD group-versions (crdregistration_controller.go): low priority, ordered by kube-aware version. */
const CRD_PRIORITY: [number, number] = [1000, 100];

export const apiServiceName = (gv: GroupVersion) => `${gv.version}.${gv.group}`;

export class Aggregator {
  private readonly latest = new Map<string, APIService>();
  /** The discovery document of each available remote APIService, by name. */
  private readonly discovery = new Map<string, RemoteResource[]>();
  private readonly queue: SerialQueue;
  private readonly unsubscribe: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private registration: Promise<void> | undefined;
  private registerAgain = false;
  private stopped = false;
  private started = false;

  constructor(private readonly o: AggregatorOptions) {
    this.queue = new SerialQueue(
      (name) => this.reconcile(name),
      (name, err) => {
        if (!(err instanceof StatusError && ['NotFound', 'Conflict'].includes(err.status.reason ?? '')))
          this.o.logger?.warn({ err, apiService: name }, 'APIService check failed');
        this.queue.later(name);
      },
      5000,
    );
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.unsubscribe.push(
      this.o.apiServices.subscribe((type, obj) => {
        const name = obj.metadata.name!;
        if (type === 'DELETED') this.latest.delete(name);
        else this.latest.set(name, obj as unknown as APIService);
        this.queue.add(name);
      }),
    );
    // A Service or its endpoints changing re-checks the APIServices that name it.
    const byService = (ns: string | undefined, name: string | undefined) => {
      for (const [n, a] of this.latest) if (a.spec?.service?.namespace === ns && a.spec?.service?.name === name) this.queue.add(n);
    };
    this.unsubscribe.push(this.o.services.subscribe((_t, obj) => byService(obj.metadata.namespace, obj.metadata.name)));
    this.unsubscribe.push(this.o.endpointSlices.subscribe((_t, obj) => byService(obj.metadata.namespace, obj.metadata.labels?.['kubernetes.io/service-name'])));
    this.unsubscribe.push(this.o.catalog.onChange(() => void this.register()));
    this.timer = setInterval(() => {
      for (const [n, a] of this.latest) if (a.spec?.service) this.queue.add(n);
    }, this.o.resyncMs ?? 30_000);
    this.timer.unref();
    void this.register();
  }

  /** Stops following; resolves once no write of this controller is in flight, so that none lands after the server closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all([this.queue.stop(), this.registration]);
  }

  /** The remote APIService serving a group-version, if one does (a local one, or none, leaves it to this server). */
  remote(group: string, version: string): APIService | undefined {
    const a = this.latest.get(`${version}.${group}`);
    return a?.spec?.service ? a : undefined;
  }

  static available(a: APIService): boolean {
    return !!a.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
  }

  /**
   * The groups served by other servers, for the merged discovery: groups by
   * their highest groupPriorityMinimum then name, versions by versionPriority
   * (handler_apis.go, apiservice sort helpers). Groups this server serves
   * itself are left to its own discovery.
   */
  remoteGroups(): RemoteGroup[] {
    const local = new Set(this.o.catalog.groupVersions().map((gv) => gv.group));
    const by = new Map<string, APIService[]>();
    for (const a of this.latest.values()) {
      const g = a.spec?.group ?? '';
      if (!a.spec?.service || !g || local.has(g)) continue;
      by.set(g, [...(by.get(g) ?? []), a]);
    }
    const prio = (xs: APIService[]) => Math.max(...xs.map((a) => a.spec?.groupPriorityMinimum ?? 0));
    return [...by.entries()]
      .sort(([ga, a], [gb, b]) => prio(b) - prio(a) || (ga < gb ? -1 : ga > gb ? 1 : 0))
      .map(([group, xs]) => ({
        group,
        versions: xs
          .sort(
            (a, b) => (b.spec?.versionPriority ?? 0) - (a.spec?.versionPriority ?? 0) || compareKubeAwareVersions(a.spec?.version ?? '', b.spec?.version ?? ''),
          )
          .map((a) => {
            const resources = this.discovery.get(a.metadata!.name!);
            return { version: a.spec!.version!, available: Aggregator.available(a), ...(resources ? { resources } : {}) };
          }),
      }));
  }

  private async reconcile(name: string): Promise<void> {
    const a = this.latest.get(name);
    if (!a) {
      this.discovery.delete(name);
      return;
    }
    let condition: Condition = LOCAL;
    if (a.spec?.service) {
      const r = await checkAvailable(a, {
        services: this.o.services,
        endpointSlices: this.o.endpointSlices,
        client: this.o.proxyClient,
        timeoutMs: this.o.checkTimeoutMs ?? 5000,
      });
      condition = r.condition;
      if (r.discovery) {
        const resources = parseResourceList(r.discovery);
        if (resources) this.discovery.set(name, resources);
      }
    }
    await this.setAvailable(a, condition);
    // A failing backend is looked at again soon, not only at the next resync.
    if (condition.status === 'False') this.queue.later(name);
  }

  private async setAvailable(a: APIService, c: Condition): Promise<void> {
    const cur = (a.status?.conditions ?? []).find((x) => x.type === 'Available');
    if (cur && cur.status === c.status && cur.reason === c.reason && cur.message === c.message) return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const next = {
      type: 'Available',
      status: c.status,
      lastTransitionTime: cur && cur.status === c.status && cur.lastTransitionTime ? cur.lastTransitionTime : now,
      reason: c.reason,
      message: c.message,
    };
    await this.o.apiServices.guaranteedUpdate(
      undefined,
      a.metadata!.name!,
      (obj) => {
        if (obj.metadata.uid !== a.metadata?.uid) return obj;
        const s = obj as unknown as APIService;
        const others = (s.status?.conditions ?? []).filter((x) => x.type !== 'Available');
        return { ...obj, status: { ...(s.status ?? {}), conditions: [...others, next] } } as KubeObject;
      },
      { subresource: 'status' },
    );
  }

  /**
   * Local APIServices for what this server serves (autoregister): created
   * when missing, removed when their group-version goes (a CRD deleted).
   * Only those carrying the automanaged label are ever removed.
   */
  private register(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.registration) {
      this.registerAgain = true;
      return this.registration;
    }
    this.registration = this.registerOnce().finally(() => {
      this.registration = undefined;
      if (this.registerAgain && !this.stopped) {
        this.registerAgain = false;
        void this.register();
      }
    });
    return this.registration;
  }

  private async registerOnce(): Promise<void> {
    try {
      const wanted = new Map<string, GroupVersion>();
      for (const gv of this.o.catalog.groupVersions()) wanted.set(apiServiceName(gv), gv);
      const missing = [...wanted].filter(([name]) => !this.latest.has(name));
      // Each is a write of its own: all at once, not one after another.
      await Promise.all(
        missing.map(async ([name, gv]) => {
          if (this.stopped) return;
          const builtin = PRIORITIES[`${gv.group}/${gv.version}`];
          const [groupPriorityMinimum, versionPriority] = builtin ?? CRD_PRIORITY;
          const obj = {
            apiVersion: 'apiregistration.k8s.io/v1',
            kind: 'APIService',
            metadata: { name, labels: { [AUTOMANAGED]: builtin ? 'onstart' : 'true' } },
            spec: { group: gv.group, version: gv.version, groupPriorityMinimum, versionPriority },
          };
          await this.o.apiServices.create(undefined, obj as KubeObject).catch((e) => {
            if (!(e instanceof StatusError && e.status.reason === 'AlreadyExists')) throw e;
          });
        }),
      );
      for (const [name, a] of this.latest) {
        if (this.stopped) return;
        if (a.spec?.service || a.metadata?.labels?.[AUTOMANAGED] !== 'true' || wanted.has(name)) continue;
        await this.o.apiServices.delete(undefined, name, {}).catch(() => undefined);
      }
    } catch (err) {
      this.o.logger?.warn({ err }, 'registering local APIServices failed');
    }
  }
}

/** The resources of an APIResourceList body, or undefined when it is not one. */
export function parseResourceList(body: Buffer): RemoteResource[] | undefined {
  try {
    const doc = JSON.parse(body.toString('utf8')) as { kind?: string; resources?: RemoteResource[] };
    if (doc.kind !== 'APIResourceList' || !Array.isArray(doc.resources)) return undefined;
    return doc.resources.filter((r) => r && typeof r.name === 'string' && typeof r.kind === 'string');
  } catch {
    return undefined;
  }
}
