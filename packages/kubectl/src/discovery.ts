/**
 * Discovery and REST mapping as kubectl does them: the aggregated discovery
 * documents (`/api`, `/apis` as apidiscovery.k8s.io/v2), cached under
 * `<cache-dir>/discovery/<host_port>/` and refreshed when a name is not found.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RestClient } from '@kubeling/client';

export interface Mapping {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  singular: string;
  shortNames: string[];
  verbs: string[];
  categories: string[];
}

const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

type Obj = Record<string, any>;

function fromAggregated(doc: Obj): Mapping[] {
  const out: Mapping[] = [];
  for (const g of (doc.items ?? []) as Obj[]) {
    const group = g.metadata?.name ?? '';
    const v = ((g.versions ?? []) as Obj[])[0];
    if (!v) continue;
    for (const r of (v.resources ?? []) as Obj[]) {
      out.push({
        group,
        version: v.version,
        resource: r.resource,
        kind: r.responseKind?.kind ?? '',
        namespaced: r.scope === 'Namespaced',
        singular: r.singularResource ?? '',
        shortNames: r.shortNames ?? [],
        verbs: r.verbs ?? [],
        categories: r.categories ?? [],
      });
    }
  }
  return out;
}

export class Discovery {
  private mappings: Mapping[] | undefined;

  constructor(
    private readonly client: RestClient,
    private readonly cacheDir: string | undefined,
  ) {}

  private cacheFile(): string | undefined {
    if (!this.cacheDir) return undefined;
    const u = new URL(this.client.config.server);
    const host = `${u.hostname.replace(/[^a-zA-Z0-9.]/g, '_')}_${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
    return join(this.cacheDir, 'discovery', host, `kubeling-${createHash('sha256').update(this.client.config.server).digest('hex').slice(0, 8)}.json`);
  }

  async all(refresh = false): Promise<Mapping[]> {
    if (this.mappings && !refresh) return this.mappings;
    const file = this.cacheFile();
    if (!refresh && file && existsSync(file)) {
      try {
        this.mappings = JSON.parse(readFileSync(file, 'utf8')) as Mapping[];
        return this.mappings;
      } catch {
        // refetch
      }
    }
    const [core, groups] = await Promise.all([this.client.request<Obj>({ path: '/api', accept: AGG }), this.client.request<Obj>({ path: '/apis', accept: AGG })]);
    this.mappings = [...fromAggregated(core), ...fromAggregated(groups)];
    if (file) {
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, JSON.stringify(this.mappings));
    }
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
    const match = (list: Mapping[]) => list.find((m) => m.group === group && m.version === version && m.kind === kind);
    return match(await this.all()) ?? match(await this.all(true));
  }
}

/** The collection or object path of a mapping. */
export function resourcePath(m: Mapping, namespace: string | undefined, name?: string): string {
  const base = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
  const ns = m.namespaced && namespace ? `/namespaces/${namespace}` : '';
  return `${base}${ns}/${m.resource}${name ? `/${name}` : ''}`;
}
