/**
 * Discovery documents, all generated from the resource catalogue: legacy
 * (`APIVersions`, `APIGroupList`, `APIGroup`, `APIResourceList`) and aggregated
 * (`apidiscovery.k8s.io` v2 and v2beta1, whose response media-type parameters are
 * what make kubectl read them as aggregated).
 */
import { apiVersionOf, type ResourceDef } from '@kubeling/api';
import type { ResourceCatalog } from '../apiextensions/catalog.js';
import { type RemoteGroup, remoteAPIGroup, remoteGroupDiscovery } from '../aggregator/discovery.js';

/** What discovery reads: the resources served now, and the groups extension servers serve (the aggregation layer). */
export type Catalog = Pick<ResourceCatalog, 'resources' | 'groupVersions'> & { remoteGroups?: () => RemoteGroup[] };

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** Which aggregated version the Accept header asks for, in the client's order of preference. */
export function aggregatedVersionWanted(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (!params.includes('as=APIGroupDiscoveryList') || !params.includes('g=apidiscovery.k8s.io')) continue;
    if (params.includes('v=v2')) return 'v2';
    if (params.includes('v=v2beta1')) return 'v2beta1';
  }
  return undefined;
}

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(cat: Catalog, group: string) {
  const versions = cat
    .groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: apiVersionOf(gv.group, gv.version), version: gv.version }));
  return { name: group, versions, preferredVersion: versions[0]! };
}

const namedGroups = (cat: Catalog) => [...new Set(cat.groupVersions().map((gv) => gv.group))].filter((g) => g !== '');

export function apiGroupList(cat: Catalog) {
  const remote = (cat.remoteGroups?.() ?? []).map(remoteAPIGroup);
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...namedGroups(cat).map((g) => groupEntry(cat, g)), ...remote] };
}

export function apiGroup(cat: Catalog, group: string) {
  if (!namedGroups(cat).includes(group)) {
    const remote = cat.remoteGroups?.().find((g) => g.group === group);
    return remote ? { kind: 'APIGroup', apiVersion: 'v1', ...remoteAPIGroup(remote) } : undefined;
  }
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(cat, group) };
}

export function apiResourceList(cat: Catalog, group: string, version: string) {
  const defs = cat.resources().filter((r) => r.group === group && r.version === version);
  if (!defs.length) return undefined;
  const out: Record<string, unknown>[] = [];
  for (const r of defs) {
    out.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: [...r.verbs],
      ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
      ...(r.categories.length ? { categories: [...r.categories] } : {}),
    });
    for (const [sub, s] of Object.entries(r.subresources)) {
      out.push({
        name: `${r.resource}/${sub}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(s.kind && (s.kind.group !== r.group || s.kind.version !== r.version) ? { group: s.kind.group, version: s.kind.version } : {}),
        kind: s.kind?.kind ?? r.kind,
        verbs: [...s.verbs],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources: out };
}

function discoveryResource(r: ResourceDef) {
  return {
    resource: r.resource,
    responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: [...r.verbs],
    ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
    ...(r.categories.length ? { categories: [...r.categories] } : {}),
    ...(Object.keys(r.subresources).length
      ? {
          subresources: Object.entries(r.subresources).map(([sub, s]) => ({
            subresource: sub,
            responseKind: s.kind ?? { group: r.group, version: r.version, kind: r.kind },
            verbs: [...s.verbs],
          })),
        }
      : {}),
  };
}

/** `/api` (core only) or `/apis` (named groups) in aggregated form. */
export function aggregatedDiscovery(cat: Catalog, which: 'core' | 'groups', version: 'v2' | 'v2beta1') {
  const groups = which === 'core' ? [''] : namedGroups(cat);
  const remote = which === 'core' ? [] : (cat.remoteGroups?.() ?? []).map(remoteGroupDiscovery).filter((g) => g !== undefined);
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: [
      ...groups.map((g) => ({
        metadata: g ? { name: g } : {},
        versions: cat
          .groupVersions()
          .filter((gv) => gv.group === g)
          .map((gv) => ({
            version: gv.version,
            freshness: 'Current',
            resources: cat
              .resources()
              .filter((r) => r.group === g && r.version === gv.version)
              .map(discoveryResource),
          })),
      })),
      ...remote,
    ],
  };
}
