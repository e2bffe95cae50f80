/**
 * The quotable resources (resource_quota_controller.go GetQuotableResources):
 * the namespaced resources discovery lists, in their group's preferred
 * version, that support create, list, watch and delete. Read with aggregated
 * discovery (two requests: /api and /apis), or the per-group documents when
 * the server does not answer in the aggregated form. Refreshed at most every
 * `refreshMs` (upstream re-reads discovery every 30 s); a failed refresh keeps
 * the last answer and is retried a second later.
 */
import type { RestClient } from '@kubeling/client';

interface APIResource {
  name: string;
  namespaced: boolean;
  verbs?: string[];
}

interface AggregatedList {
  kind?: string;
  items?: { metadata?: { name?: string }; versions?: { version: string; resources?: { resource: string; scope?: string; verbs?: string[] }[] }[] }[];
}

interface APIGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string }; versions?: { groupVersion: string }[] }[];
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const NEEDED_VERBS = ['create', 'list', 'watch', 'delete'];

export class QuotableResources {
  /** `group/resource` → its list path across namespaces (`/api/v1/pods`, `/apis/apps/v1/deployments`). */
  private paths = new Map<string, string>();
  private fetchedAt = -Infinity;
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly client: RestClient,
    private readonly refreshMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The list path of a quotable resource, or undefined when it is not one. */
  async pathOf(resource: string): Promise<string | undefined> {
    await this.refresh();
    return this.paths.get(resource);
  }

  /** What the last discovery said (no request). */
  served(resource: string): boolean {
    return this.paths.has(resource);
  }

  async refresh(): Promise<void> {
    if (this.now() - this.fetchedAt < this.refreshMs) return;
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = undefined;
    });
    await this.inflight;
  }

  private async fetch(): Promise<void> {
    const next = new Map<string, string>();
    const add = (group: string, gvPath: string, name: string, namespaced: boolean, verbs: string[] | undefined) => {
      if (name.includes('/') || !namespaced || !NEEDED_VERBS.every((v) => verbs?.includes(v))) return;
      next.set(`${group}/${name}`, `${gvPath}/${name}`);
    };
    try {
      for (const root of ['/api', '/apis']) {
        const list = await this.client.request<AggregatedList>({ path: root, accept: AGGREGATED });
        if (list.kind !== 'APIGroupDiscoveryList') {
          await this.legacy(add);
          break;
        }
        for (const g of list.items ?? []) {
          const group = g.metadata?.name ?? '';
          // The first version listed is the preferred one.
          const v = g.versions?.[0];
          if (!v) continue;
          const gvPath = group ? `/apis/${group}/${v.version}` : `/api/${v.version}`;
          for (const r of v.resources ?? []) add(group, gvPath, r.resource, r.scope === 'Namespaced', r.verbs);
        }
      }
      this.paths = next;
      this.fetchedAt = this.now();
    } catch {
      this.fetchedAt = this.now() - this.refreshMs + 1000;
    }
  }

  /** The unaggregated documents: /api/v1, /apis, then each group's preferred version. */
  private async legacy(add: (group: string, gvPath: string, name: string, namespaced: boolean, verbs: string[] | undefined) => void): Promise<void> {
    const core = await this.client.get<{ resources?: APIResource[] }>('/api/v1');
    for (const r of core.resources ?? []) add('', '/api/v1', r.name, r.namespaced, r.verbs);
    const groups = await this.client.get<APIGroupList>('/apis');
    for (const g of groups.groups ?? []) {
      const gv = g.preferredVersion?.groupVersion ?? g.versions?.[0]?.groupVersion;
      if (!gv) continue;
      const list = await this.client.get<{ resources?: APIResource[] }>(`/apis/${gv}`);
      for (const r of list.resources ?? []) add(g.name, `/apis/${gv}`, r.name, r.namespaced, r.verbs);
    }
  }
}
