/**
 * Groups served by extension servers in this server's discovery
 * (kube-aggregator handler_apis.go and the aggregated-discovery manager,
 * handler_discovery.go): every group with an APIService is listed in
 * `/apis` and answers `/apis/<group>`, available or not; the aggregated form
 * carries each version's resources from the last discovery document fetched,
 * `Stale` while the backend is unavailable, and leaves out versions whose
 * document was never fetched.
 */

/** One entry of an extension server's APIResourceList. */
export interface RemoteResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

export interface RemoteGroup {
  group: string;
  /** In preference order. */
  versions: { version: string; available: boolean; resources?: RemoteResource[] }[];
}

/** The APIGroup of legacy discovery. */
export function remoteAPIGroup(g: RemoteGroup) {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.group}/${v.version}`, version: v.version }));
  return { name: g.group, versions, preferredVersion: versions[0]! };
}

/** The APIGroupDiscovery of aggregated discovery (apidiscovery.k8s.io), or undefined when no version has a document yet. */
export function remoteGroupDiscovery(g: RemoteGroup) {
  const versions = g.versions
    .filter((v) => v.resources)
    .map((v) => {
      const top = v.resources!.filter((r) => !r.name.includes('/'));
      return {
        version: v.version,
        freshness: v.available ? 'Current' : 'Stale',
        resources: top.map((r) => {
          const subs = v.resources!.filter((s) => s.name.startsWith(`${r.name}/`));
          return {
            resource: r.name,
            responseKind: { group: r.group ?? g.group, version: r.version ?? v.version, kind: r.kind },
            scope: r.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: r.singularName ?? '',
            verbs: [...(r.verbs ?? [])],
            ...(r.shortNames?.length ? { shortNames: [...r.shortNames] } : {}),
            ...(r.categories?.length ? { categories: [...r.categories] } : {}),
            ...(subs.length
              ? {
                  subresources: subs.map((s) => ({
                    subresource: s.name.slice(r.name.length + 1),
                    responseKind: { group: s.group ?? g.group, version: s.version ?? v.version, kind: s.kind },
                    verbs: [...(s.verbs ?? [])],
                  })),
                }
              : {}),
          };
        }),
      };
    });
  return versions.length ? { metadata: { name: g.group }, versions } : undefined;
}
