/**
 * The aggregation layer as the apiserver wires it: the Aggregator (APIService
 * availability, local registration, remote discovery), the proxy's
 * dependencies, the discovery view that merges extension servers' groups, and
 * the `kube-system/extension-apiserver-authentication` ConfigMap through which
 * extension servers learn which client CA and which front-proxy CA and header
 * names to trust (upstream's cluster authentication trust controller).
 */
import type { Logger } from 'pino';
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { ResourceCatalog } from '../apiextensions/catalog.js';
import type { Catalog } from '../http/discovery.js';
import type { Registry } from '../http/resource-handler.js';
import type { ProxyClient } from './availability.js';
import { Aggregator } from './controller.js';
import type { ProxyDeps } from './proxy.js';

/** The request-header authentication extension servers are told to trust (--requestheader-* flags). */
export interface RequestHeaderConfig {
  clientCA: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeadersPrefix: string[];
}

export interface AggregationOptions {
  /** --proxy-client-cert-file / --proxy-client-key-file (PEM). */
  proxyClient?: ProxyClient;
  requestHeader?: RequestHeaderConfig;
  /** How often remote APIServices are checked again (30 s). */
  resyncMs?: number;
}

export function setupAggregation(registry: Registry, catalog: ResourceCatalog, o: AggregationOptions, logger: Logger | undefined) {
  const services = registry.get('/v1/services')!;
  const endpointSlices = registry.get('discovery.k8s.io/v1/endpointslices')!;
  const aggregator = new Aggregator({
    apiServices: registry.get('apiregistration.k8s.io/v1/apiservices')!,
    services,
    endpointSlices,
    catalog,
    ...(o.proxyClient ? { proxyClient: o.proxyClient } : {}),
    ...(logger ? { logger } : {}),
    ...(o.resyncMs ? { resyncMs: o.resyncMs } : {}),
  });
  const proxy: { aggregator: Aggregator } & ProxyDeps = { aggregator, services, endpointSlices, client: o.proxyClient };
  const discovery: Catalog = {
    resources: () => catalog.resources(),
    groupVersions: () => catalog.groupVersions(),
    remoteGroups: () => aggregator.remoteGroups(),
  };
  return { aggregator, proxy, discovery };
}

/**
 * Writes kube-system/extension-apiserver-authentication (keys as upstream:
 * client-ca-file, requestheader-client-ca-file and the JSON lists of the
 * request-header settings). Kept as configured at every start.
 */
export async function publishAuthentication(registry: Registry, clientCA: string | undefined, rh: RequestHeaderConfig | undefined): Promise<void> {
  const data: Record<string, string> = {};
  if (clientCA) data['client-ca-file'] = clientCA;
  if (rh) {
    data['requestheader-client-ca-file'] = rh.clientCA;
    data['requestheader-allowed-names'] = JSON.stringify(rh.allowedNames);
    data['requestheader-username-headers'] = JSON.stringify(rh.usernameHeaders);
    data['requestheader-group-headers'] = JSON.stringify(rh.groupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(rh.extraHeadersPrefix);
  }
  if (!Object.keys(data).length) return;
  // Who may read it: the bootstrap Role extension servers are bound to (rbac bootstrappolicy namespace_policy.go).
  await registry
    .get('rbac.authorization.k8s.io/v1/roles')!
    .create('kube-system', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: {
        name: 'extension-apiserver-authentication-reader',
        namespace: 'kube-system',
        labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
      },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['extension-apiserver-authentication'], verbs: ['get', 'list', 'watch'] }],
    } as KubeObject)
    .catch((e) => {
      if (!(e instanceof StatusError && e.status.reason === 'AlreadyExists')) throw e;
    });
  const configMaps = registry.get('/v1/configmaps')!;
  const name = 'extension-apiserver-authentication';
  await configMaps
    .guaranteedUpdate(
      'kube-system',
      name,
      (cur) => ({ ...(cur ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' } }), data }) as KubeObject,
      { createIfMissing: true },
    )
    .catch((e) => {
      if (!(e instanceof StatusError && e.status.reason === 'AlreadyExists')) throw e;
    });
}
