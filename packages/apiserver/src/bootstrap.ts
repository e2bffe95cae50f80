/**
 * What the apiserver makes when it starts (upstream's bootstrap controllers
 * and post-start hooks): the system namespaces and priority classes, the
 * `kubernetes` Service with its Endpoints and EndpointSlice, the cluster IPs
 * of Services stored before IPs were recorded, the API Priority and Fairness
 * configuration objects, and the default RBAC policy.
 */
import type { Logger } from 'pino';
import { StatusError } from '@kubeling/apimachinery';
import { ensureSystemPriorityClasses } from './admission/priority.js';
import { reconcileBootstrapPolicy } from './auth/index.js';
import type { Registry } from './http/context.js';
import { ensureSystemNamespaces } from './registry/namespaces.js';
import { repairServiceIPs } from './registry/core/services.js';
import { ensureFlowControlConfiguration } from './registry/flowcontrol/ensurer.js';
import type { EtcdStorage } from './storage/etcd.js';

export async function bootstrap(
  registry: Registry,
  storage: EtcdStorage,
  o: { advertiseAddress: string; scheme: string; rbac: boolean; flowControl: boolean; logger?: Logger },
): Promise<void> {
  // The groups are independent of each other (the kubernetes Service needs only its namespace): all at once.
  await Promise.all([
    (async () => {
      await ensureSystemNamespaces(registry.get('/v1/namespaces')!);
      await ensureKubernetesService(registry, o.advertiseAddress, o.scheme);
      const repaired = await repairServiceIPs(storage, (await registry.get('/v1/services')!.list(undefined, {})).items);
      if (repaired.length && o.logger) o.logger.info({ ips: repaired }, 'recorded cluster IPs of Services that held no IPAddress');
    })(),
    ensureSystemPriorityClasses(registry.get('scheduling.k8s.io/v1/priorityclasses')!),
    // API Priority and Fairness, when on: the mandatory and suggested FlowSchemas and priority levels
    // (upstream's config-producer post-start hook, which runs only with APF).
    o.flowControl
      ? ensureFlowControlConfiguration(
          registry.get('flowcontrol.apiserver.k8s.io/v1/flowschemas')!,
          registry.get('flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations')!,
        )
      : undefined,
    o.rbac
      ? reconcileBootstrapPolicy(registry.get('rbac.authorization.k8s.io/v1/clusterroles')!, registry.get('rbac.authorization.k8s.io/v1/clusterrolebindings')!)
      : undefined,
  ]);
}

/** The first IP of the service range: the `kubernetes` Service's, in the serving certificate. */
export const KUBERNETES_SERVICE_IP = `${process.env.KUBELING_SERVICE_CIDR_PREFIX ?? '127.1'}.0.1`;

/** default/kubernetes, the Service clients inside the cluster find the apiserver by (upstream's bootstrap controller). */
async function ensureKubernetesService(registry: Registry, advertise: string, scheme: string): Promise<void> {
  const i = advertise.lastIndexOf(':');
  const ip = advertise.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(advertise.slice(i + 1));
  const create = async (resource: string, obj: Record<string, unknown>) => {
    const store = registry.get(resource)!;
    const exists = async () => {
      try {
        await store.get('default', 'kubernetes');
        return true;
      } catch (e) {
        if (!(e instanceof StatusError) || e.status.reason !== 'NotFound') throw e;
        return false;
      }
    };
    // Another apiserver (or an earlier start) may have made it, and then holds its cluster IP: look first.
    if (await exists()) return;
    try {
      await store.create('default', obj as never, { fieldManager: 'kube-apiserver' });
    } catch (e) {
      // Two apiservers starting together: the loser sees AlreadyExists or the IP taken.
      if (!(e instanceof StatusError) || !(await exists())) throw e;
    }
  };
  await Promise.all([
    create('/v1/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: {
        clusterIP: KUBERNETES_SERVICE_IP,
        ports: [{ name: scheme, protocol: 'TCP', port: scheme === 'https' ? 443 : 80, targetPort: port }],
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
    }),
    create('/v1/endpoints', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip }], ports: [{ name: scheme, port, protocol: 'TCP' }] }],
    }),
    create('discovery.k8s.io/v1/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: ip.includes(':') ? 'IPv6' : 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: scheme, port, protocol: 'TCP' }],
    }),
  ]);
}
