/**
 * Discovery for controllers (k8s.io/client-go discovery and restmapper): what
 * the apiserver serves, read from `/api` and `/apis` in the aggregated form
 * (apidiscovery.k8s.io/v2, two requests) or, from a server that does not
 * answer in it, from the legacy documents (`/api`, `/api/v1`, `/apis`, then
 * `/apis/<group>/<version>` for every version of every group).
 *
 * A snapshot holds every served resource with its verbs, scope and kind, its
 * subresources folded into it (client-go's helpers filter `a/b` names out),
 * and the group versions that could not be read (ErrGroupDiscoveryFailed:
 * a failing `/apis/<g>/<v>`, or a version the aggregated document marks
 * `Stale`). `preferred` is ServerPreferredResources: each group/resource once,
 * in its group's preferred version when served there. `restMapping` maps a
 * kind to its resource as the DeferredDiscoveryRESTMapper does.
 *
 * A DiscoveryClient keeps the last snapshot; `discover(maxAgeMs)` reads again
 * when it is older, and concurrent callers share one read.
 */
import type { RestClient } from './rest.js';

export interface DiscoveredResource {
  group: string;
  version: string;
  /** The plural, lower case: the URL segment. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: readonly string[];
  /** The names of its subresources (`status`, `scale`). */
  subresources: readonly string[];
}

export interface DiscoveredGroup {
  /** '' for the core group. */
  name: string;
  /** Served versions, the preferred one first. */
  versions: readonly string[];
}

export interface DiscoverySnapshot {
  groups: readonly DiscoveredGroup[];
  /** The resources of every version that could be read. */
  resources: readonly DiscoveredResource[];
  /** ServerPreferredResources. */
  preferred: readonly DiscoveredResource[];
  /** `group/version` (`v1` for core) → why its resources could not be read. */
  failed: ReadonlyMap<string, string>;
  fetchedAt: number;
}

/** discovery.ErrGroupDiscoveryFailed, with its message. */
export class GroupDiscoveryFailedError extends Error {
  constructor(readonly groups: ReadonlyMap<string, string>) {
    const parts = [...groups].map(([gv, why]) => `${gv}: ${why}`).sort();
    super(`unable to retrieve the complete list of server APIs: ${parts.join(', ')}`);
    this.name = 'GroupDiscoveryFailedError';
  }
}

/** The error of a snapshot with failed group versions, else undefined. */
export const discoveryError = (s: DiscoverySnapshot): GroupDiscoveryFailedError | undefined =>
  s.failed.size ? new GroupDiscoveryFailedError(s.failed) : undefined;

export const groupVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

/** discovery.SupportsAllVerbs. */
export const supportsAllVerbs = (r: DiscoveredResource, verbs: readonly string[]): boolean => verbs.every((v) => r.verbs.includes(v));

/** `group/resource`, the key controllers index resources by (`/pods` for core). */
export const groupResourceKey = (r: { group: string; resource: string }): string => `${r.group}/${r.resource}`;

/** The collection path of a resource, in one namespace or across all of them. */
export function resourcePath(r: Pick<DiscoveredResource, 'group' | 'version' | 'resource' | 'namespaced'>, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${namespace}/${r.resource}` : `${base}/${r.resource}`;
}

/** `apps/v1` → { group: 'apps', version: 'v1' }; `v1` → core. */
export function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/**
 * The resource of a kind (RESTMapper.RESTMapping): in `version` when served
 * there, else in its group's preferred version (as the lenient lookups of the
 * static table did), else in any served version; undefined when no served
 * resource has the kind. Subresources never match.
 */
export function restMapping(s: DiscoverySnapshot, group: string, kind: string, version?: string): DiscoveredResource | undefined {
  const candidates = s.resources.filter((r) => r.group === group && r.kind === kind);
  if (!candidates.length) return undefined;
  const preferred = s.groups.find((g) => g.name === group)?.versions[0];
  return candidates.find((r) => r.version === version) ?? candidates.find((r) => r.version === preferred) ?? candidates[0];
}

/** ServerPreferredResources over the resources of every version: the preferred version wins, else the first version listing it. */
export function preferredResources(groups: readonly DiscoveredGroup[], all: readonly DiscoveredResource[]): DiscoveredResource[] {
  const chosen = new Map<string, DiscoveredResource>();
  for (const g of groups) {
    for (const v of g.versions) {
      for (const r of all) {
        if (r.group !== g.name || r.version !== v) continue;
        const key = groupResourceKey(r);
        if (chosen.has(key) && v !== g.versions[0]) continue;
        chosen.set(key, r);
      }
    }
  }
  return [...chosen.values()];
}

const AGGREGATED_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      freshness?: string;
      resources?: { resource: string; responseKind?: { kind?: string }; scope?: string; verbs?: string[]; subresources?: { subresource: string }[] }[];
    }[];
  }[];
}

interface APIResourceList {
  resources?: { name: string; namespaced?: boolean; kind?: string; verbs?: string[] }[];
}

interface APIVersions {
  kind?: string;
  versions?: string[];
}

interface APIGroupList {
  groups?: { name: string; preferredVersion?: { version: string }; versions?: { version: string }[] }[];
}

/** An APIResourceList's entries as resources, each `a/b` entry folded into `a` as a subresource. */
function fromResourceList(group: string, version: string, list: APIResourceList): DiscoveredResource[] {
  const out = new Map<string, DiscoveredResource & { subresources: string[] }>();
  const subs: [string, string][] = [];
  for (const r of list.resources ?? []) {
    const slash = r.name.indexOf('/');
    if (slash >= 0) {
      subs.push([r.name.slice(0, slash), r.name.slice(slash + 1)]);
      continue;
    }
    out.set(r.name, { group, version, resource: r.name, kind: r.kind ?? '', namespaced: !!r.namespaced, verbs: r.verbs ?? [], subresources: [] });
  }
  for (const [parent, sub] of subs) out.get(parent)?.subresources.push(sub);
  return [...out.values()];
}

const messageOf = (e: unknown): string => String((e as Error)?.message ?? e);

export class DiscoveryClient {
  private snapshot: DiscoverySnapshot | undefined;
  private inflight: Promise<DiscoverySnapshot> | undefined;
  /** Reads done (for tests and figures). */
  reads = 0;

  constructor(
    private readonly client: RestClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last snapshot, without a request. */
  get last(): DiscoverySnapshot | undefined {
    return this.snapshot;
  }

  /**
   * The last snapshot when read less than `maxAgeMs` ago, else a new one. A
   * failure to read `/api` or `/apis` rejects (the last snapshot is kept); a
   * failing group version is only recorded in `failed`.
   */
  async discover(maxAgeMs = 0): Promise<DiscoverySnapshot> {
    if (this.snapshot && this.now() - this.snapshot.fetchedAt < maxAgeMs) return this.snapshot;
    this.inflight ??= this.read().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Makes the next `discover` read again, whatever its maxAge (RESTMapper.Reset). */
  invalidate(): void {
    if (this.snapshot) this.snapshot = { ...this.snapshot, fetchedAt: -Infinity };
  }

  private async read(): Promise<DiscoverySnapshot> {
    this.reads++;
    const groups: DiscoveredGroup[] = [];
    const all: DiscoveredResource[] = [];
    const failed = new Map<string, string>();
    const aggregated = await this.aggregated(groups, all, failed);
    if (aggregated !== true) {
      groups.length = 0;
      all.length = 0;
      failed.clear();
      await this.legacy(groups, all, failed, aggregated);
    }
    const snapshot: DiscoverySnapshot = { groups, resources: all, preferred: preferredResources(groups, all), failed, fetchedAt: this.now() };
    this.snapshot = snapshot;
    return snapshot;
  }

  /**
   * Reads the aggregated documents; when the server answers in another form,
   * answers what `/api` said then (the APIVersions document) or false.
   */
  private async aggregated(groups: DiscoveredGroup[], all: DiscoveredResource[], failed: Map<string, string>): Promise<true | false | APIVersions> {
    for (const root of ['/api', '/apis']) {
      const list = await this.client.request<AggregatedList & APIVersions>({ path: root, accept: AGGREGATED_ACCEPT });
      if (list?.kind !== 'APIGroupDiscoveryList') return root === '/api' && list?.kind === 'APIVersions' ? list : false;
      for (const g of list.items ?? []) {
        const name = g.metadata?.name ?? '';
        const versions = g.versions ?? [];
        if (!versions.length) continue;
        // The versions are listed in order of preference.
        groups.push({ name, versions: versions.map((v) => v.version) });
        for (const v of versions) {
          if (v.freshness === 'Stale') {
            failed.set(groupVersionOf(name, v.version), `stale GroupVersion discovery: ${groupVersionOf(name, v.version)}`);
            continue;
          }
          for (const r of v.resources ?? []) {
            all.push({
              group: name,
              version: v.version,
              resource: r.resource,
              kind: r.responseKind?.kind ?? '',
              namespaced: r.scope === 'Namespaced',
              verbs: r.verbs ?? [],
              subresources: (r.subresources ?? []).map((s) => s.subresource),
            });
          }
        }
      }
    }
    return true;
  }

  /** The legacy documents; every group version is read side by side, and one failing is recorded, not thrown. */
  private async legacy(groups: DiscoveredGroup[], all: DiscoveredResource[], failed: Map<string, string>, api: APIVersions | false): Promise<void> {
    const core = api || (await this.client.get<APIVersions>('/api'));
    if (core.versions?.length) groups.push({ name: '', versions: core.versions });
    const named = await this.client.get<APIGroupList>('/apis');
    for (const g of named.groups ?? []) {
      const versions = (g.versions ?? []).map((v) => v.version);
      const pv = g.preferredVersion?.version;
      if (!versions.length) continue;
      groups.push({ name: g.name, versions: pv && versions.includes(pv) ? [pv, ...versions.filter((v) => v !== pv)] : versions });
    }
    const reads = groups.flatMap((g) =>
      g.versions.map(async (v) => {
        const gv = groupVersionOf(g.name, v);
        try {
          const list = await this.client.get<APIResourceList>(g.name ? `/apis/${gv}` : `/api/${v}`);
          return fromResourceList(g.name, v, list);
        } catch (e) {
          failed.set(gv, messageOf(e));
          return [];
        }
      }),
    );
    for (const rs of await Promise.all(reads)) all.push(...rs);
  }
}
