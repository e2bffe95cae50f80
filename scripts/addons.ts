/**
 * The cluster add-ons `npm run up` and compose install as the admin, as a
 * cluster's add-on manifests would: the metrics server's RBAC (upstream
 * metrics-server's components.yaml), its Service with the Endpoints of the
 * process that serves it, and the APIService that puts metrics.k8s.io behind
 * the aggregation layer. Applied create-or-replace, so that a restart with a
 * new port updates them. The storage add-on (the CSI driver's objects and the
 * default StorageClass) is created once and then left as the user keeps it.
 *
 *   node scripts/dist/addons.js --kubeconfig=FILE --ca=FILE --metrics-server=HOST:PORT
 */
import { readFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadKubeConfig, RestClient, resolveClientConfig } from '@kubeling/client';
import { storageObjects } from '@kubeling/testenv/storage';

/** The user the metrics server's client certificate names. */
export const METRICS_SERVER_USER = 'system:metrics-server';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<string, unknown>;

const rbac = 'rbac.authorization.k8s.io/v1';
const user = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: METRICS_SERVER_USER };

export function metricsServerObjects(caPem: string, ip: string, port: number): Obj[] {
  return [
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: {
        name: 'system:aggregated-metrics-reader',
        labels: {
          'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
          'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
          'rbac.authorization.k8s.io/aggregate-to-view': 'true',
        },
      },
      rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'system:metrics-server' },
      rules: [
        { apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] },
        { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: 'metrics-server-auth-reader', namespace: 'kube-system' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' },
      subjects: [user],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'metrics-server:system:auth-delegator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [user],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:metrics-server' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:metrics-server' },
      subjects: [user],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'metrics-server', namespace: 'kube-system', labels: { 'k8s-app': 'metrics-server' } },
      spec: { ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'metrics-server', namespace: 'kube-system', labels: { 'k8s-app': 'metrics-server' } },
      subsets: [{ addresses: [{ ip }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io', labels: { 'k8s-app': 'metrics-server' } },
      spec: {
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        groupPriorityMinimum: 100,
        versionPriority: 100,
        caBundle: Buffer.from(caPem).toString('base64'),
        service: { namespace: 'kube-system', name: 'metrics-server', port: 443 },
      },
    },
  ];
}

/** The user the cluster DNS server's client certificate names. */
export const DNS_USER = 'system:kube-dns';
/** The kube-dns Service's cluster IP: the tenth address of the Service range, as kubeadm picks it. */
export const CLUSTER_DNS_IP = '127.1.0.10';

/**
 * The cluster DNS add-on as kubeadm installs CoreDNS: the `system:coredns`
 * ClusterRole (bound here to the DNS server's user), and the `kube-dns` Service
 * in kube-system on its well-known cluster IP with the dns (UDP), dns-tcp and
 * metrics ports, whose Endpoints name the process that serves them.
 */
export function dnsObjects(ip: string, dnsPort: number, metricsPort: number): Obj[] {
  const labels = { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS' };
  return [
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: DNS_USER }],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels },
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: dnsPort },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: dnsPort },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: metricsPort },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kube-dns', namespace: 'kube-system', labels },
      subsets: [
        {
          addresses: [{ ip }],
          ports: [
            { name: 'dns', port: dnsPort, protocol: 'UDP' },
            { name: 'dns-tcp', port: dnsPort, protocol: 'TCP' },
            { name: 'metrics', port: metricsPort, protocol: 'TCP' },
          ],
        },
      ],
    },
  ];
}

function pathOf(o: Obj, named: boolean): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const k = o.kind.toLowerCase();
  // Endpoints is its own plural; StorageClass → storageclasses.
  const plural = k.endsWith('ss') ? `${k}es` : k.endsWith('s') ? k : `${k}s`;
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `${base}${ns}/${plural}${named ? `/${o.metadata.name}` : ''}`;
}

/** Create, or replace what is there (keeping its resourceVersion); with `createOnly`, what is there stays as the user left it. */
export async function applyObjects(client: RestClient, objects: Obj[], o2: { createOnly?: boolean } = {}): Promise<void> {
  for (const o of objects) {
    const cur = await client.request<Obj>({ path: pathOf(o, true) }).catch(() => undefined);
    if (!cur) await client.request({ method: 'POST', path: pathOf(o, false), body: o });
    else if (!o2.createOnly) {
      const meta = cur.metadata as { resourceVersion?: string };
      await client.request({ method: 'PUT', path: pathOf(o, true), body: { ...o, metadata: { ...o.metadata, resourceVersion: meta.resourceVersion } } });
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { kubeconfig: { type: 'string' }, ca: { type: 'string' }, 'metrics-server': { type: 'string' } },
    strict: true,
  });
  const [host, port] = (values['metrics-server'] ?? '').split(':');
  if (!host || !port || !values.ca) throw new Error('usage: addons --kubeconfig=FILE --ca=FILE --metrics-server=HOST:PORT');
  // Endpoints hold IPs: a name (a compose service) is looked up first.
  const ip = isIP(host) ? host : (await lookup(host, { family: 4 })).address;
  const client = new RestClient(resolveClientConfig(loadKubeConfig({ explicitPath: values.kubeconfig })));
  try {
    await applyObjects(client, metricsServerObjects(readFileSync(values.ca, 'utf8'), ip, Number(port)));
    // The storage add-on: the CSI driver's RBAC and CSIDriver object, the default StorageClass.
    await applyObjects(client, storageObjects(), { createOnly: true });
  } finally {
    client.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: Error) => {
    console.error(`addons: ${e.message}`);
    process.exit(1);
  });
}
