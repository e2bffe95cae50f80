/**
 * `npm run up`: starts a local cluster in the background — etcd, the
 * apiserver, the controller-manager, the scheduler, the metrics server (behind
 * the aggregation layer), and nodes (a runtime, a kubelet and a CSI driver each;
 * `-- --nodes N`, default 2) — with logs under .kubeling/logs/, and writes .kubeling/kubeconfig.
 * Idempotent: a cluster that is already up is left as it is.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { ensureClusterPKI, ensureFrontProxyPKI, ensureServingCert } from '@kubeling/pki';
import { RestClient } from '@kubeling/client';
import { applyObjects, CLUSTER_DNS_IP, DNS_USER, dnsObjects, METRICS_SERVER_USER, metricsServerObjects } from './addons.js';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { containerdUnavailable } from '@kubeling/testenv';
import { CSI_DRIVER_GROUP, csiDriverUser, storageObjects } from '@kubeling/testenv/storage';
import { PortReservations } from './ports.js';
import { KUBECONFIG, LOGS, ROOT, STATE, alive, healthy, readState, writeState, type Component } from './cluster.js';

const { values } = parseArgs({
  options: {
    'apiserver-port': { type: 'string', default: '6443' },
    'etcd-port': { type: 'string', default: '2379' },
    nodes: { type: 'string', default: '2' },
    ha: { type: 'boolean', default: false },
    runtime: { type: 'string', default: 'kubeling' },
  },
  strict: true,
});

/** Node's arguments to run a component's (or script's) compiled main; `npm run up` builds them first. */
function built(main: string, ...args: string[]): string[] {
  return ['--conditions=kubeling-dist', main, ...args];
}

function start(name: string, cmd: string, args: string[]): Component {
  const log = openSync(join(LOGS, `${name}.log`), 'a');
  const child = spawn(cmd, args, { cwd: ROOT, detached: true, stdio: ['ignore', log, log] });
  child.unref();
  if (!child.pid) throw new Error(`could not start ${name}`);
  return { name, pid: child.pid };
}

async function waitHealthy(c: Component, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(c.pid)) throw new Error(`${c.name} exited; see ${join(LOGS, `${c.name}.log`)}`);
    if (await healthy(url)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${c.name} did not become healthy in ${timeoutMs / 1000}s; see ${join(LOGS, `${c.name}.log`)}`);
}

/**
 * The cluster's EncryptionConfiguration (--encryption-provider-config): Secrets
 * encrypted with aescbc `key1`, plaintext ones still readable (identity). Made
 * once with a random key and kept (mode 0600): losing it loses every Secret.
 */
function ensureEncryptionConfig(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return file;
    throw e;
  }
  try {
    writeFileSync(
      fd,
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources:
  - secrets
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: ${randomBytes(32).toString('base64')}
  - identity: {}
`,
    );
  } finally {
    closeSync(fd);
  }
  return file;
}

/** A kubeconfig for one identity: the CA and a client certificate, all inline. */
function kubeconfig(server: string, caFile: string, client: { cert: string; key: string }, user: string): string {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
- name: kubeling
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(caFile)}
users:
- name: ${user}
  user:
    client-certificate-data: ${b64(client.cert)}
    client-key-data: ${b64(client.key)}
contexts:
- name: kubeling
  context:
    cluster: kubeling
    user: ${user}
    namespace: default
current-context: kubeling
`;
}

async function main(): Promise<void> {
  const existing = readState();
  if (existing?.complete && existing.components.every((c) => alive(c.pid)) && (await healthy(`${existing.apiserverURL}/readyz`))) {
    console.log(`kubeling is already up at ${existing.apiserverURL}`);
    printNext();
    return;
  }
  if (existing) {
    for (const c of existing.components) if (alive(c.pid)) process.kill(c.pid, 'SIGTERM');
  }
  mkdirSync(LOGS, { recursive: true });
  const components: Component[] = [];
  // Every port is taken once and held until its process starts (see ports.ts).
  const ports = new PortReservations();
  const pickPort = (preferred: number) => ports.take(preferred);
  // etcd: one member, or three with --ha.
  const members = values.ha ? 3 : 1;
  const etcdPorts: [number, number][] = [];
  for (let i = 0; i < members; i++) {
    const c = await pickPort(Number(values['etcd-port']) + 2 * i);
    etcdPorts.push([c, await pickPort(c + 1)]);
  }
  const names = etcdPorts.map((_, i) => (members === 1 ? 'kubeling' : `kubeling-${i + 1}`));
  const initialCluster = etcdPorts.map(([, peer], i) => `${names[i]}=http://127.0.0.1:${peer}`).join(',');
  const etcdURLs: string[] = [];
  for (const [i, [client, peer]] of etcdPorts.entries()) {
    const url = `http://127.0.0.1:${client}`;
    await ports.release(client, peer);
    const etcd = start(members === 1 ? 'etcd' : `etcd-${i + 1}`, 'etcd', [
      `--name=${names[i]}`,
      `--data-dir=${join(STATE, members === 1 ? 'etcd-data' : `etcd-data-${i + 1}`)}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=${initialCluster}`,
      ...(members > 1 ? ['--initial-cluster-token=kubeling-ha', '--initial-cluster-state=new'] : []),
      '--logger=zap',
    ]);
    etcd.health = `${url}/health`;
    components.push(etcd);
    etcdURLs.push(url);
  }
  const etcdURL = etcdURLs.join(',');
  writeState({ etcdEndpoint: etcdURL, apiserverURL: '', components });
  for (const c of components) await waitHealthy(c, c.health!, 30_000);
  console.log(`etcd          ready at ${etcdURL} (${members} member${members > 1 ? 's' : ''})`);

  if (values.runtime !== 'kubeling' && values.runtime !== 'containerd') throw new Error('--runtime must be kubeling or containerd');
  if (values.runtime === 'containerd') {
    const why = containerdUnavailable();
    if (why) throw new Error(`--runtime containerd: ${why}`);
  }
  const nodes = Number(values.nodes);
  if (!Number.isInteger(nodes) || nodes < 0 || nodes > 50) throw new Error('--nodes must be between 0 and 50');
  const nodeNames = Array.from({ length: nodes }, (_, i) => `kubeling-node-${i + 1}`);
  // PKI: the CA, the apiserver's certificate, a client certificate per component.
  const pki = await ensureClusterPKI(join(STATE, 'pki'), {
    admin: { cn: 'kubernetes-admin', orgs: ['system:masters'] },
    'controller-manager': { cn: 'system:kube-controller-manager' },
    scheduler: { cn: 'system:kube-scheduler' },
    proxy: { cn: 'system:kube-proxy' },
    'apiserver-kubelet-client': { cn: 'kube-apiserver-kubelet-client' },
    'metrics-server': { cn: METRICS_SERVER_USER },
    dns: { cn: DNS_USER },
    ...Object.fromEntries(nodeNames.map((n) => [`kubelet-${n}`, { cn: `system:node:${n}`, orgs: ['system:nodes'] }])),
    ...Object.fromEntries(nodeNames.map((n) => [`csi-${n}`, { cn: csiDriverUser(n), orgs: [CSI_DRIVER_GROUP] }])),
  });
  // The aggregation layer's own CA and client certificate (kubeadm's front-proxy-*).
  const frontProxy = await ensureFrontProxyPKI(join(STATE, 'pki'));
  const encryptionConfig = ensureEncryptionConfig(join(STATE, 'encryption-config.yaml'));
  const apiCount = values.ha ? 2 : 1;
  const apiURLs: string[] = [];
  for (let i = 0; i < apiCount; i++) apiURLs.push(`https://127.0.0.1:${await pickPort(Number(values['apiserver-port']) + i)}`);
  const apiURL = apiURLs[0]!;
  const kubeconfigFor = (name: string, user: string, server = apiURL, file = name) => {
    const f = join(STATE, 'kubeconfigs', `${file}.kubeconfig`);
    mkdirSync(join(STATE, 'kubeconfigs'), { recursive: true, mode: 0o700 });
    writeFileSync(f, kubeconfig(server, pki.ca, pki.clients[name]!, user), { mode: 0o600 });
    return f;
  };
  const adminClient = () =>
    new RestClient({
      server: apiURL,
      namespace: 'default',
      insecureSkipTLSVerify: false,
      ca: readFileSync(pki.ca),
      cert: readFileSync(pki.clients.admin!.cert),
      key: readFileSync(pki.clients.admin!.key),
    });
  for (const [i, url] of apiURLs.entries()) {
    await ports.release(Number(new URL(url).port));
    const apiserver = start(
      apiCount === 1 ? 'apiserver' : `apiserver-${i + 1}`,
      process.execPath,
      built(
        'packages/apiserver/dist/main.js',
        `--etcd-servers=${etcdURL}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${new URL(url).port}`,
        `--tls-cert-file=${pki.apiserverCert}`,
        `--tls-private-key-file=${pki.apiserverKey}`,
        `--client-ca-file=${pki.ca}`,
        '--authorization-mode=Node,RBAC',
        '--enable-bootstrap-token-auth',
        `--service-account-signing-key-file=${pki.saKey}`,
        `--service-account-key-file=${pki.saPub}`,
        `--audit-log-path=${join(LOGS, apiCount === 1 ? 'audit.log' : `audit-${i + 1}.log`)}`,
        // Kubelets serve HTTPS and ask who calls: the apiserver comes with a client certificate of its own.
        `--kubelet-client-certificate=${pki.clients['apiserver-kubelet-client']!.cert}`,
        `--kubelet-client-key=${pki.clients['apiserver-kubelet-client']!.key}`,
        `--kubelet-certificate-authority=${pki.ca}`,
        // Extension servers (the metrics server) are reached as the front proxy, and told to trust it.
        `--proxy-client-cert-file=${frontProxy.clientCert}`,
        `--proxy-client-key-file=${frontProxy.clientKey}`,
        `--requestheader-client-ca-file=${frontProxy.ca}`,
        '--requestheader-allowed-names=front-proxy-client',
        // Secrets are encrypted at rest; every apiserver of the cluster shares the key.
        `--encryption-provider-config=${encryptionConfig}`,
      ),
    );
    apiserver.health = `${url}/readyz`;
    components.push(apiserver);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(apiserver, apiserver.health, 60_000);
    console.log(`apiserver     ready at ${url} (pid ${apiserver.pid})`);
  }

  // Controller-managers and schedulers: one each, or two each with --ha (leader-elected, on different apiservers).
  for (const [kind, pkg, user, basePort] of [
    ['controller-manager', 'packages/controller-manager/dist/main.js', 'system:kube-controller-manager', 10257],
    ['scheduler', 'packages/scheduler/dist/main.js', 'system:kube-scheduler', 10259],
  ] as const) {
    for (let i = 0; i < apiCount; i++) {
      const port = await pickPort(basePort + 20 * i);
      const name = apiCount === 1 ? kind : `${kind}-${i + 1}`;
      await ports.release(port);
      const c = start(
        name,
        process.execPath,
        built(
          pkg,
          `--kubeconfig=${kubeconfigFor(kind, user, apiURLs[i], name)}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${port}`,
          // Legacy token Secrets are signed with the ServiceAccount key and carry the cluster CA.
          ...(kind === 'controller-manager'
            ? [
                `--service-account-private-key-file=${pki.saKey}`,
                `--root-ca-file=${pki.ca}`,
                // CertificateSigningRequests of the kubernetes.io signers are signed by the cluster CA.
                `--cluster-signing-cert-file=${pki.ca}`,
                `--cluster-signing-key-file=${pki.caKey}`,
                // The bootstrap-token controllers, off by default upstream, on as kubeadm runs them.
                '--controllers=*,bootstrapsigner,tokencleaner',
              ]
            : []),
        ),
      );
      c.health = `https://127.0.0.1:${port}/healthz`;
      components.push(c);
      writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
      await waitHealthy(c, c.health, 60_000);
      console.log(`${name.padEnd(13)} ready (pid ${c.pid}, health on ${port})`);
    }
  }

  // One proxy for the machine: Services' cluster IPs (inside 127.0.0.0/8) answer here.
  {
    const port = await pickPort(10256);
    await ports.release(port);
    const proxy = start(
      'proxy',
      process.execPath,
      built('packages/proxy/dist/main.js', `--kubeconfig=${kubeconfigFor('proxy', 'system:kube-proxy')}`, `--healthz-port=${port}`),
    );
    proxy.health = `http://127.0.0.1:${port}/healthz`;
    components.push(proxy);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(proxy, proxy.health, 60_000);
    console.log(`proxy         ready (pid ${proxy.pid}, health on ${port})`);
  }

  // Cluster DNS: kubeling-dns on a loopback port, behind the kube-dns Service's cluster IP (UDP and TCP 53, relayed by the proxy).
  {
    const dnsPort = await pickPort(10053);
    const metricsPort = await pickPort(9153);
    const admin = adminClient();
    try {
      // Applied before the server starts, so the DNS RBAC is in place when its informers list.
      await applyObjects(admin, dnsObjects('127.0.0.1', dnsPort, metricsPort));
    } finally {
      admin.close();
    }
    await ports.release(dnsPort);
    await ports.release(metricsPort);
    const dns = start(
      'dns',
      process.execPath,
      built('packages/dns/dist/main.js', `--kubeconfig=${kubeconfigFor('dns', DNS_USER)}`, `--listen=127.0.0.1:${dnsPort}`, `--healthz-port=${metricsPort}`),
    );
    dns.health = `http://127.0.0.1:${metricsPort}/healthz`;
    components.push(dns);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(dns, dns.health, 60_000);
    console.log(`dns           ready (pid ${dns.pid} on 127.0.0.1:${dnsPort}, Service kube-system/kube-dns at ${CLUSTER_DNS_IP}:53)`);
  }

  // The metrics server: scrapes the kubelets, serves metrics.k8s.io behind its APIService.
  {
    const port = await pickPort(4443);
    const serving = await ensureServingCert(join(STATE, 'pki'), 'metrics-server-serving', {
      commonName: 'metrics-server',
      ips: ['127.0.0.1'],
      dnsNames: ['metrics-server.kube-system.svc', 'localhost'],
    });
    // Its RBAC, Service, Endpoints and APIService first: it reads the authentication ConfigMap as it starts.
    const admin = adminClient();
    try {
      await applyObjects(admin, metricsServerObjects(readFileSync(pki.ca, 'utf8'), '127.0.0.1', port));
      // The storage add-on: the CSI driver's RBAC and CSIDriver object, the default StorageClass `standard`.
      await applyObjects(admin, storageObjects(), { createOnly: true });
    } finally {
      admin.close();
    }
    await ports.release(port);
    const ms = start(
      'metrics-server',
      process.execPath,
      built(
        'packages/metrics-server/dist/main.js',
        `--kubeconfig=${kubeconfigFor('metrics-server', METRICS_SERVER_USER)}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        `--tls-cert-file=${serving.cert}`,
        `--tls-private-key-file=${serving.key}`,
        `--kubelet-client-certificate=${pki.clients['metrics-server']!.cert}`,
        `--kubelet-client-key=${pki.clients['metrics-server']!.key}`,
        `--kubelet-certificate-authority=${pki.ca}`,
      ),
    );
    ms.health = `https://127.0.0.1:${port}/healthz`;
    components.push(ms);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(ms, ms.health, 60_000);
    console.log(`metrics-server ready (pid ${ms.pid} on ${port}, APIService v1beta1.metrics.k8s.io)`);
  }

  // Nodes: a runtime (CRI server) and a kubelet each, pod IPs in 127.2.<n>.0/24.
  mkdirSync(join(STATE, 'run'), { recursive: true });
  for (let i = 1; i <= nodes; i++) {
    const node = `kubeling-node-${i}`;
    let sock = `unix://${join(STATE, 'run', `${node}.sock`)}`;
    let podNet = `127.2.${i}.0/24`;
    let rt: Component;
    if (values.runtime === 'containerd') {
      // A containerd of the node's own, with a bridge network and a registry mirror for the built-in images.
      const dir = join(STATE, 'containerd', node);
      mkdirSync(dir, { recursive: true });
      podNet = `10.244.${50 + i}.0/24`;
      rt = start(`containerd-${i}`, process.execPath, built('scripts/dist/containerd-node.js', `--dir=${dir}`, `--subnet=${podNet}`));
      rt.health = `file://${join(dir, 'endpoint')}`;
      components.push(rt);
      writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
      await waitHealthy(rt, rt.health, 60_000);
      sock = readFileSync(join(dir, 'endpoint'), 'utf8');
    } else {
      rt = start(
        `runtime-${i}`,
        process.execPath,
        built('packages/runtime/dist/main.js', `--listen=${sock}`, `--root=${join(STATE, 'runtime', node)}`, `--pod-cidr=${podNet}`),
      );
      rt.health = sock;
      components.push(rt);
      writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
      await waitHealthy(rt, sock, 60_000);
    }
    const port = await pickPort(10250 + 10 * (i - 1));
    const serving = await ensureServingCert(join(STATE, 'pki'), `kubelet-${node}-serving`, {
      commonName: `${node}`,
      ips: ['127.0.0.1'],
      dnsNames: [node, 'localhost'],
    });
    await ports.release(port);
    const kubelet = start(
      `kubelet-${i}`,
      process.execPath,
      built(
        'packages/kubelet/dist/main.js',
        `--node-name=${node}`,
        `--kubeconfig=${kubeconfigFor(`kubelet-${node}`, `system:node:${node}`)}`,
        `--container-runtime-endpoint=${sock}`,
        `--root-dir=${join(STATE, 'kubelet', node)}`,
        `--port=${port}`,
        `--tls-cert-file=${serving.cert}`,
        `--tls-private-key-file=${serving.key}`,
        `--client-ca-file=${pki.ca}`,
        '--authorization-mode=Webhook',
        `--cluster-dns=${CLUSTER_DNS_IP}`,
        '--cluster-domain=cluster.local',
      ),
    );
    kubelet.health = `https://127.0.0.1:${port}/healthz`;
    components.push(kubelet);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(kubelet, kubelet.health, 60_000);
    // The node's CSI driver (hostpath.csi.kubeling.io with its sidecars), registered with the kubelet through its plugins_registry.
    const kubeletRoot = join(STATE, 'kubelet', node);
    const registrationDir = join(kubeletRoot, 'plugins_registry');
    const csi = start(
      `csi-${i}`,
      process.execPath,
      built(
        'packages/csi-driver/dist/main.js',
        `--kubeconfig=${kubeconfigFor(`csi-${node}`, csiDriverUser(node))}`,
        `--node-id=${node}`,
        `--endpoint=unix://${join(STATE, 'run', `csi-${node}.sock`)}`,
        `--state-dir=${join(STATE, 'csi', node)}`,
        `--registration-dir=${registrationDir}`,
      ),
    );
    csi.health = `unix://${join(registrationDir, 'hostpath.csi.kubeling.io-reg.sock')}`;
    components.push(csi);
    writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components });
    await waitHealthy(csi, csi.health, 60_000);
    console.log(`${node} ready (${values.runtime} pid ${rt.pid}, kubelet pid ${kubelet.pid} on ${port}, csi pid ${csi.pid}, pod IPs ${podNet})`);
  }

  writeFileSync(KUBECONFIG, kubeconfig(apiURL, pki.ca, pki.clients.admin!, 'kubernetes-admin'), { mode: 0o600 });
  if (nodes > 0) {
    const t0 = Date.now();
    await waitNodesReady(apiURL, pki, nodeNames, 60_000);
    console.log(`nodes         ${nodeNames.join(', ')} Ready (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  writeState({ etcdEndpoint: etcdURL, apiserverURL: apiURL, components, complete: true });
  console.log(`kubeconfig    written to ${KUBECONFIG}`);
  printNext();
}

/** Polls the Node objects (as the admin) until every one is Ready. */
async function waitNodesReady(
  apiURL: string,
  pki: { ca: string; clients: Record<string, { cert: string; key: string }> },
  names: string[],
  timeoutMs: number,
): Promise<void> {
  const get = (): Promise<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${apiURL}/api/v1/nodes`,
        { ca: readFileSync(pki.ca), cert: readFileSync(pki.clients.admin!.cert), key: readFileSync(pki.clients.admin!.key), timeout: 5000 },
        (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => {
            try {
              resolve(JSON.parse(b));
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const list = await get().catch(() => ({ items: [] }));
    const ready = new Set(list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata.name));
    if (names.every((n) => ready.has(n))) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`nodes did not become Ready in ${timeoutMs / 1000}s; see ${LOGS}`);
}

function printNext(): void {
  console.log(`
Next:
  export KUBECONFIG=${KUBECONFIG}
  kubectl get nodes
  npm run status        # health of each component
  npm run down          # stop (add -- --purge to delete .kubeling/)`);
}

let finished = false;
// Node exits on its own, status 0, when nothing is left to wait for: were that to happen before the cluster is
// whole, it would look like success. It is an error instead, and the next `npm run up` starts again.
process.on('beforeExit', () => {
  if (finished) return;
  console.error(`up: stopped before the cluster was whole (see ${LOGS}); run it again`);
  process.exit(1);
});
main().then(
  () => (finished = true),
  (e) => {
    console.error(`up: ${(e as Error).message}`);
    process.exit(1);
  },
);
