/**
 * kubeling-kubelet.
 *
 *   --node-name=NAME            (default: the hostname)
 *   --kubeconfig=PATH | --master=URL
 *   --container-runtime-endpoint=unix:///path/runtime.sock
 *   --root-dir=DIR              pod directories, logs, CSI plugins (drivers register in DIR/plugins_registry/)
 *                               (default .kubeling/kubelet/<node>)
 *   --max-pods=110 --node-labels=k=v,... --register-with-taints=k=v:NoSchedule,...
 *   --node-ip=127.0.0.1 --address=127.0.0.1 --port=10250
 *   --capacity=cpu=4,memory=8Gi  (overrides what the machine reports)
 *   --node-lease-duration-seconds=40 (renewed every quarter of it) --node-status-update-frequency=10 (seconds)
 *   --tls-cert-file=PEM --tls-private-key-file=PEM --client-ca-file=PEM   HTTPS with client certificates
 *   --authorization-mode=AlwaysAllow|Webhook   (Webhook: a SubjectAccessReview per request, cached)
 *   --cluster-dns=IP,...        the DNS servers of pods with dnsPolicy ClusterFirst (none: the host's, with a MissingClusterDNS event)
 *   --cluster-domain=cluster.local --resolv-conf=/etc/resolv.conf
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import pino from 'pino';
import { loadKubeConfig, resolveClientConfig, stopOnSignals } from '@kubeling/client';
import { Kubelet } from './kubelet.js';
import { NodeManager } from './node.js';

function pairs(v: string | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of (v ?? '').split(',').filter(Boolean)) {
    const i = p.indexOf('=');
    if (i <= 0) throw new Error(`${what}: expected key=value, got "${p}"`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}

function taints(v: string | undefined): { key: string; value?: string; effect: string }[] {
  return (v ?? '')
    .split(',')
    .filter(Boolean)
    .map((t) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t);
      if (!m) throw new Error(`--register-with-taints: invalid taint "${t}" (want key[=value]:Effect)`);
      return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3]! };
    });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'node-name': { type: 'string' },
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      'container-runtime-endpoint': { type: 'string', default: 'unix:///run/kubeling/runtime.sock' },
      'root-dir': { type: 'string' },
      'max-pods': { type: 'string', default: '110' },
      'node-labels': { type: 'string' },
      'register-with-taints': { type: 'string' },
      'node-ip': { type: 'string', default: '127.0.0.1' },
      address: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '10250' },
      capacity: { type: 'string' },
      'node-lease-duration-seconds': { type: 'string', default: '40' },
      'node-status-update-frequency': { type: 'string', default: '10' },
      'kube-api-qps': { type: 'string', default: '50' },
      'kube-api-burst': { type: 'string', default: '100' },
      'tls-cert-file': { type: 'string' },
      'tls-private-key-file': { type: 'string' },
      'client-ca-file': { type: 'string' },
      'authorization-mode': { type: 'string', default: 'AlwaysAllow' },
      'cluster-dns': { type: 'string', default: '' },
      'cluster-domain': { type: 'string', default: 'cluster.local' },
      'resolv-conf': { type: 'string', default: '/etc/resolv.conf' },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
  });
  if (!['AlwaysAllow', 'Webhook'].includes(values['authorization-mode']!)) throw new Error('--authorization-mode must be AlwaysAllow or Webhook');
  const tlsFiles = [values['tls-cert-file'], values['tls-private-key-file'], values['client-ca-file']];
  if (tlsFiles.some(Boolean) && !tlsFiles.every(Boolean)) throw new Error('--tls-cert-file, --tls-private-key-file and --client-ca-file go together');
  const tls = tlsFiles.every(Boolean)
    ? {
        cert: readFileSync(values['tls-cert-file']!, 'utf8'),
        key: readFileSync(values['tls-private-key-file']!, 'utf8'),
        clientCA: readFileSync(values['client-ca-file']!, 'utf8'),
      }
    : undefined;
  const nodeName = values['node-name'] ?? NodeManager.defaultName();
  const log = pino({ level: values['log-level'], base: { component: 'kubelet', node: nodeName } });
  const kc = loadKubeConfig({ explicitPath: values.kubeconfig });
  const config = resolveClientConfig(kc, { server: values.master });
  const capacity = values.capacity
    ? { cpu: '4', memory: '8Gi', 'ephemeral-storage': '100Gi', ...pairs(values.capacity, '--capacity'), pods: values['max-pods']! }
    : undefined;
  const kubelet = new Kubelet({
    config,
    nodeName,
    nodeIP: values['node-ip']!,
    runtime: values['container-runtime-endpoint']!,
    rootDir: values['root-dir'] ?? join('.kubeling', 'kubelet', nodeName),
    maxPods: Number(values['max-pods']),
    labels: pairs(values['node-labels'], '--node-labels'),
    taints: taints(values['register-with-taints']),
    ...(capacity ? { capacity } : {}),
    leaseDurationSeconds: Number(values['node-lease-duration-seconds']),
    // Upstream renews the lease at a quarter of its duration.
    leaseRenewMs: Number(values['node-lease-duration-seconds']) * 250,
    statusUpdateMs: Number(values['node-status-update-frequency']) * 1000,
    address: values.address!,
    port: Number(values.port),
    ...(tls ? { tls } : {}),
    authorizationWebhook: values['authorization-mode'] === 'Webhook',
    clusterDNS: values['cluster-dns']!.split(',').filter(Boolean),
    clusterDomain: values['cluster-domain']!,
    resolvConf: values['resolv-conf']!,
    qps: Number(values['kube-api-qps']),
    burst: Number(values['kube-api-burst']),
    log,
  });
  await kubelet.start();
  stopOnSignals(() => kubelet.stop());
}

main().catch((e) => {
  process.stderr.write(`kubelet: ${(e as Error).message}\n`);
  process.exit(1);
});
