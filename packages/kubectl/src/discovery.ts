/**
 * Discovery and REST mapping as kubectl does them: the aggregated discovery
 * documents (`/api`, `/apis` as apidiscovery.k8s.io/v2), cached in kubectl's
 * own layout — `<cache-dir>/discovery/<host_port>/servergroups.json` and
 * `<group>/<version>/serverresources.json` — so the real kubectl and this one
 * share a cache; entries older than kubectl's six hours, or a name that is
 * not found, send it to the server again.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RestClient } from '@kubeling/client';

export interface Mapping {
  group: string;
  version: string;
  /** Plural; `deployments/scale` for a subresource. */
  resource: string;
  kind: string;
  namespaced: boolean;
  singular: string;
  shortNames: string[];
  verbs: string[];
  categories: string[];
  /** The group and version of what a subresource answers with, when not the parent's. */
  responseGroup?: string;
  responseVersion?: string;
}

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
const TTL_MS = 6 * 3600_000;

/** apidiscovery.k8s.io/v2 APIGroupDiscoveryList, as far as kubectl reads it (the first version of a group is its preferred one). */
interface APIGroupDiscoveryList {
  items?: { metadata?: { name?: string }; versions?: APIVersionDiscovery[] }[];
}
interface APIVersionDiscovery {
  version: string;
  resources?: APIResourceDiscovery[];
}
interface ResponseKind {
  group?: string;
  version?: string;
  kind?: string;
}
interface APIResourceDiscovery {
  resource: string;
  responseKind?: ResponseKind;
  scope?: string;
  singularResource?: string;
  shortNames?: string[];
  verbs?: string[];
  categories?: string[];
  subresources?: { subresource: string; responseKind?: ResponseKind; verbs?: string[] }[];
}

/** v1 APIGroup and APIResourceList: the layout of kubectl's discovery cache. */
interface GroupVersion {
  groupVersion: string;
  version: string;
}
interface APIGroup {
  name: string;
  versions: GroupVersion[];
  preferredVersion: GroupVersion;
}
interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}
interface APIResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

function fromAggregated(doc: APIGroupDiscoveryList): { groups: APIGroup[]; mappings: Mapping[] } {
  const mappings: Mapping[] = [];
  const groups: APIGroup[] = [];
  for (const g of doc.items ?? []) {
    const group = g.metadata?.name ?? '';
    const versions = g.versions ?? [];
    if (!versions.length) continue;
    const gv = (v: string) => (group ? `${group}/${v}` : v);
    groups.push({
      name: group,
      versions: versions.map((v) => ({ groupVersion: gv(v.version), version: v.version })),
      preferredVersion: { groupVersion: gv(versions[0]!.version), version: versions[0]!.version },
    });
    const v = versions[0]!;
    for (const r of v.resources ?? []) {
      const base: Mapping = {
        group,
        version: v.version,
        resource: r.resource,
        kind: r.responseKind?.kind ?? '',
        namespaced: r.scope === 'Namespaced',
        singular: r.singularResource ?? '',
        shortNames: r.shortNames ?? [],
        verbs: r.verbs ?? [],
        categories: r.categories ?? [],
      };
      mappings.push(base);
      for (const sub of r.subresources ?? []) {
        mappings.push({
          ...base,
          resource: `${r.resource}/${sub.subresource}`,
          kind: sub.responseKind?.kind ?? base.kind,
          verbs: sub.verbs ?? [],
          shortNames: [],
          categories: [],
          ...(sub.responseKind?.group !== undefined ? { responseGroup: sub.responseKind.group } : {}),
          ...(sub.responseKind?.version !== undefined ? { responseVersion: sub.responseKind.version } : {}),
        });
      }
    }
  }
  return { groups, mappings };
}

/** kubectl's cache folder for a server: the host without its scheme, odd characters as `_`. */
export function cacheHostDir(server: string): string {
  return server
    .replace('https://', '')
    .replace('http://', '')
    .replace(/[^(\w/.)]/g, '_');
}

function toResourceList(groupVersion: string, ms: Mapping[]): APIResourceList {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion,
    resources: ms.map((m) => ({
      name: m.resource,
      singularName: m.singular,
      namespaced: m.namespaced,
      group: m.responseGroup ?? m.group,
      version: m.responseVersion ?? m.version,
      kind: m.kind,
      verbs: m.verbs,
      ...(m.shortNames.length ? { shortNames: m.shortNames } : {}),
      ...(m.categories.length ? { categories: m.categories } : {}),
    })),
  };
}

function fromResourceList(group: string, version: string, list: Partial<APIResourceList>): Mapping[] {
  return (list.resources ?? []).map((r) => ({
    group,
    version,
    resource: r.name,
    kind: r.kind,
    namespaced: !!r.namespaced,
    singular: r.singularName ?? '',
    shortNames: r.shortNames ?? [],
    verbs: r.verbs ?? [],
    categories: r.categories ?? [],
    ...(r.group !== undefined && r.group !== group ? { responseGroup: r.group } : {}),
    ...(r.version !== undefined && r.version !== version ? { responseVersion: r.version } : {}),
  }));
}

export class Discovery {
  private mappings: Mapping[] | undefined;

  constructor(
    private readonly client: RestClient,
    private readonly cacheDir: string | undefined,
  ) {}

  private dir(): string | undefined {
    return this.cacheDir ? join(this.cacheDir, 'discovery', cacheHostDir(this.client.config.server)) : undefined;
  }

  /** The cached mappings, when every file is there and fresh. */
  private readCache(): Mapping[] | undefined {
    const dir = this.dir();
    if (!dir) return undefined;
    try {
      const groupsFile = join(dir, 'servergroups.json');
      if (Date.now() - statSync(groupsFile).mtimeMs > TTL_MS) return undefined;
      // The cache is kubectl's too: its files are read as the layout they should have, any failure a miss.
      const groups = JSON.parse(readFileSync(groupsFile, 'utf8')) as { groups?: Partial<APIGroup>[] };
      const out: Mapping[] = [];
      for (const g of groups.groups ?? []) {
        const pv = g.preferredVersion ?? g.versions?.[0];
        if (!pv) continue;
        const f = join(dir, ...String(pv.groupVersion).split('/'), 'serverresources.json');
        if (Date.now() - statSync(f).mtimeMs > TTL_MS) return undefined;
        out.push(...fromResourceList(g.name ?? '', pv.version, JSON.parse(readFileSync(f, 'utf8')) as Partial<APIResourceList>));
      }
      return out.length ? out : undefined;
    } catch {
      return undefined;
    }
  }

  private writeCache(groups: APIGroup[], mappings: Mapping[]): void {
    const dir = this.dir();
    if (!dir) return;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o750 });
      writeFileSync(join(dir, 'servergroups.json'), JSON.stringify({ kind: 'APIGroupList', apiVersion: 'v1', groups }), { mode: 0o660 });
      for (const g of groups) {
        const pv = g.preferredVersion;
        const gvDir = join(dir, ...String(pv.groupVersion).split('/'));
        mkdirSync(gvDir, { recursive: true, mode: 0o750 });
        writeFileSync(
          join(gvDir, 'serverresources.json'),
          JSON.stringify(
            toResourceList(
              pv.groupVersion,
              mappings.filter((m) => m.group === g.name && m.version === pv.version),
            ),
          ),
          { mode: 0o660 },
        );
      }
    } catch {
      // A cache that cannot be written only costs a request next time, as in kubectl.
    }
  }

  async all(refresh = false): Promise<Mapping[]> {
    if (this.mappings && !refresh) return this.mappings;
    if (!refresh) {
      const cached = this.readCache();
      if (cached) return (this.mappings = cached);
    }
    const [core, groups] = await Promise.all([
      this.client.request<APIGroupDiscoveryList>({ path: '/api', accept: AGG }),
      this.client.request<APIGroupDiscoveryList>({ path: '/apis', accept: AGG }),
    ]);
    const a = fromAggregated(core);
    const b = fromAggregated(groups);
    this.mappings = [...a.mappings, ...b.mappings];
    this.writeCache([...a.groups, ...b.groups], this.mappings);
    return this.mappings;
  }

  /** `pods`, `po`, `pod`, `deployments.apps`, `Deployment`: the mapping kubectl would pick. */
  async find(name: string): Promise<Mapping | undefined> {
    const match = (list: Mapping[]) => {
      const [res, ...g] = name.split('.');
      const group = g.join('.');
      const lower = res!.toLowerCase();
      return list.find(
        (m) =>
          (!group || m.group === group) &&
          (m.resource === lower || m.singular === lower || m.shortNames.includes(lower) || m.kind.toLowerCase() === lower) &&
          !m.resource.includes('/'),
      );
    };
    return match(await this.all()) ?? match(await this.all(true));
  }

  async forKind(apiVersion: string, kind: string): Promise<Mapping | undefined> {
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    const match = (list: Mapping[]) => list.find((m) => m.group === group && m.version === version && m.kind === kind && !m.resource.includes('/'));
    return match(await this.all()) ?? match(await this.all(true));
  }
}

/** A name or namespace as one path segment, refused as client-go refuses it (`..`, `/`, `%`). */
export function pathSegment(value: string, what = 'resource name'): string {
  if (value === '.' || value === '..') throw new PathSegmentError(`invalid ${what} "${value}": [may not be '${value}']`);
  for (const bad of ['/', '%']) if (value.includes(bad)) throw new PathSegmentError(`invalid ${what} "${value}": [may not contain '${bad}']`);
  return encodeURIComponent(value);
}

export class PathSegmentError extends Error {}

/** The collection or object path of a mapping. */
export function resourcePath(m: Mapping, namespace: string | undefined, name?: string): string {
  const base = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
  const ns = m.namespaced && namespace ? `/namespaces/${pathSegment(namespace, 'namespace')}` : '';
  return `${base}${ns}/${m.resource}${name ? `/${pathSegment(name)}` : ''}`;
}
