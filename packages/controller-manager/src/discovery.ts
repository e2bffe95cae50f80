/**
 * Discovery shared by the controllers of one process (kube-controller-manager
 * keeps one cached discovery client and a DeferredDiscoveryRESTMapper over it,
 * reset every 30 s), and the informers ("monitors") controllers start and stop
 * for the resources discovery finds (garbagecollector/graph_builder.go
 * syncMonitors, resourcequota/resource_quota_monitor.go SyncMonitors).
 *
 * A resource of the static table (@kubeling/api `resources`) is watched
 * through the shared informer factory, as the other controllers do; any other
 * (a custom resource) through an informer of its own, shared by the
 * controllers that monitor it and stopped when the last one lets it go.
 */
import { resources as staticTable } from '@kubeling/api';
import {
  DiscoveryClient,
  groupResourceKey,
  Informer,
  resourcePath,
  type DiscoveredResource,
  type EventHandlers,
  type InformerFactory,
  type RestClient,
} from '@kubeling/client';
import type { ControllerContext } from './context.js';

/** How often controllers read discovery again (upstream: the 30 s of garbagecollector.Sync and the quota controller's Sync). */
export const DISCOVERY_PERIOD_MS = 30_000;

const discoveries = new WeakMap<RestClient, DiscoveryClient>();

/** The one discovery client of a process's REST client. */
export function sharedDiscovery(client: RestClient): DiscoveryClient {
  let d = discoveries.get(client);
  if (!d) discoveries.set(client, (d = new DiscoveryClient(client)));
  return d;
}

const builtIn = new Set(staticTable.filter((r) => !r.virtual).map((r) => `${r.group}/${r.version}/${r.resource}`));

/** Whether the static table has the resource in this version. */
export const isBuiltIn = (r: Pick<DiscoveredResource, 'group' | 'version' | 'resource'>): boolean => builtIn.has(`${r.group}/${r.version}/${r.resource}`);

/** The static table's stored resources in discovery's shape: what controllers assume is served before discovery has answered. */
export function builtInResources(): DiscoveredResource[] {
  return staticTable
    .filter((r) => !r.virtual)
    .map((r) => ({
      group: r.group,
      version: r.version,
      resource: r.resource,
      kind: r.kind,
      namespaced: r.namespaced,
      verbs: r.verbs,
      subresources: Object.keys(r.subresources),
    }));
}

/** Informers of resources outside the static table, counted by their users. */
class OwnInformers {
  private readonly informers = new Map<string, { informer: Informer; users: number }>();

  acquire(ctx: ControllerContext, path: string): Informer {
    let e = this.informers.get(path);
    if (!e) {
      const informer = new Informer(ctx.client, { path }, { onError: (err) => ctx.log.debug({ err: String(err), path }, 'informer error') });
      this.informers.set(path, (e = { informer, users: 0 }));
    }
    e.users++;
    return e.informer;
  }

  release(path: string): void {
    const e = this.informers.get(path);
    if (!e || --e.users > 0) return;
    e.informer.stop();
    this.informers.delete(path);
  }
}

const ownInformers = new WeakMap<InformerFactory, OwnInformers>();

export interface Monitor {
  readonly resource: DiscoveredResource;
  readonly informer: Informer;
}

/**
 * One controller's monitors, by `group/resource`. The handlers a monitor gets
 * stop acting when it is removed (a shared informer keeps its other users).
 */
export class Monitors {
  private readonly active = new Map<string, Monitor>();
  private readonly own: OwnInformers;
  private running = false;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly handlers: (m: Monitor) => EventHandlers,
  ) {
    const own = ownInformers.get(ctx.informers) ?? new OwnInformers();
    ownInformers.set(ctx.informers, own);
    this.own = own;
  }

  get(key: string): Monitor | undefined {
    return this.active.get(key);
  }

  list(): Monitor[] {
    return [...this.active.values()];
  }

  /** The monitor of a resource, started the first time (or again when its version changed). */
  ensure(r: DiscoveredResource): Monitor {
    const key = groupResourceKey(r);
    const cur = this.active.get(key);
    if (cur && cur.resource.version === r.version && cur.resource.namespaced === r.namespaced) return cur;
    if (cur) this.remove(key);
    const path = resourcePath(r);
    const informer = isBuiltIn(r) ? this.ctx.informers.informer({ path }) : this.own.acquire(this.ctx, path);
    // Before `run` the factory starts its informers (and the manager waits for them); after, a new one starts here.
    if (this.running) informer.start();
    const m: Monitor = { resource: r, informer };
    this.active.set(key, m);
    const h = this.handlers(m);
    const live = () => this.active.get(key) === m;
    informer.addEventHandler({
      add: (o) => {
        if (live()) h.add?.(o);
      },
      update: (a, b) => {
        if (live()) h.update?.(a, b);
      },
      delete: (o) => {
        if (live()) h.delete?.(o);
      },
    });
    return m;
  }

  /** Starts every monitor's informer (those of the factory already run) and any added later. */
  run(): void {
    this.running = true;
    for (const m of this.active.values()) m.informer.start();
  }

  /** Stops monitoring a resource; answers the monitor that was removed. */
  remove(key: string): Monitor | undefined {
    const m = this.active.get(key);
    if (!m) return undefined;
    this.active.delete(key);
    if (!isBuiltIn(m.resource)) this.own.release(resourcePath(m.resource));
    return m;
  }

  /**
   * Monitors exactly `want`, except that a monitored resource `keep` says to
   * keep stays (its group could not be discovered this time). `removed` hears
   * of each monitor dropped before any is added (a resource whose version
   * changed is dropped, then added again).
   */
  sync(
    want: readonly DiscoveredResource[],
    keep: (key: string) => boolean = () => false,
    removed: (m: Monitor) => void = () => undefined,
  ): { added: Monitor[]; removed: Monitor[] } {
    const wanted = new Map(want.map((r) => [groupResourceKey(r), r]));
    const out: Monitor[] = [];
    for (const [key, m] of [...this.active]) {
      const w = wanted.get(key);
      if (w ? w.version === m.resource.version && w.namespaced === m.resource.namespaced : keep(key)) continue;
      this.remove(key);
      out.push(m);
      removed(m);
    }
    const added: Monitor[] = [];
    for (const [key, r] of wanted) if (!this.active.has(key)) added.push(this.ensure(r));
    return { added, removed: out };
  }

  /** Whether every monitor has listed once. */
  synced(): boolean {
    return this.list().every((m) => m.informer.hasSynced());
  }

  stopAll(): void {
    this.running = false;
    for (const key of [...this.active.keys()]) this.remove(key);
  }
}
