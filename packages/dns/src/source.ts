/**
 * The zone's source from informers: Services and EndpointSlices of every
 * namespace, indexed by the lookups DNS makes (a Service by name, slices by
 * their Service, objects by address), as CoreDNS's kubernetes plugin indexes its caches.
 */
import type { InformerFactory } from '@kubeling/client';
import { canonicalIPv6, type EndpointSlice, type Service, type ZoneSource } from './zone.js';

const SERVICE_NAME = 'kubernetes.io/service-name';
const norm = (ip: string) => (ip.includes(':') ? canonicalIPv6(ip) : ip);

export function informerSource(informers: InformerFactory): { source: ZoneSource; synced(): Promise<void> } {
  const services = informers.informer<Service>({ path: '/api/v1/services' });
  const slices = informers.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices' });
  services.store.addIndexer('ip', (o) => {
    const s = o as Service;
    return [...new Set([...(s.spec?.clusterIPs ?? []), s.spec?.clusterIP ?? ''])].filter((ip) => ip && ip !== 'None').map(norm);
  });
  slices.store.addIndexer('service', (o) => {
    const name = o.metadata.labels?.[SERVICE_NAME];
    return name ? [`${o.metadata.namespace}/${name}`] : [];
  });
  slices.store.addIndexer('ip', (o) => ((o as EndpointSlice).endpoints ?? []).flatMap((e) => (e.addresses ?? []).map(norm)));
  const source: ZoneSource = {
    service: (ns, name) => services.store.get(`${ns}/${name}`),
    slices: (ns, svc) => slices.store.byIndex('service', `${ns}/${svc}`),
    namespaceExists: (ns) => services.store.byIndex('namespace', ns).length > 0,
    servicesByIP: (ip) => services.store.byIndex('ip', norm(ip)),
    endpointsByIP: (ip) => {
      const want = norm(ip);
      const out: ReturnType<ZoneSource['endpointsByIP']> = [];
      for (const slice of slices.store.byIndex('ip', want)) {
        // Only headless Services' endpoints have names of their own.
        const svc = services.store.get(`${slice.metadata.namespace}/${slice.metadata.labels?.[SERVICE_NAME]}`);
        if (svc?.spec?.clusterIP !== 'None') continue;
        for (const endpoint of slice.endpoints ?? []) if ((endpoint.addresses ?? []).some((a) => norm(a) === want)) out.push({ slice, endpoint });
      }
      return out;
    },
  };
  return { source, synced: async () => void (await Promise.all([services.synced(), slices.synced()])) };
}
