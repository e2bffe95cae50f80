/**
 * kubeling-metrics-server: scrapes every kubelet's /metrics/resource and
 * serves metrics.k8s.io/v1beta1 behind the apiserver's aggregation layer
 * (APIService v1beta1.metrics.k8s.io → Service kube-system/metrics-server).
 *
 *   --kubeconfig=PATH                      the apiserver and this server's identity
 *   --bind-address=127.0.0.1 --secure-port=4443
 *   --tls-cert-file --tls-private-key-file serving certificate (self-signed without)
 *   --kubelet-client-certificate --kubelet-client-key
 *   --kubelet-certificate-authority        verifies kubelets; without it they are not verified
 *   --kubelet-insecure-tls                 do not verify kubelets' serving certificates
 *   --kubelet-scheme=https                 http for kubelets without TLS
 *   --metric-resolution=15s
 *   --requestheader-client-ca-file --requestheader-allowed-names=a,b
 *   --client-ca-file                       else both from kube-system/extension-apiserver-authentication
 *   --log-level=info
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { parseBool, parseDuration } from '@kubeling/apimachinery';
import { loadKubeConfig, resolveClientConfig, stopOnSignals } from '@kubeling/client';
import { MetricsServer, REQUEST_HEADER_DEFAULTS } from './server.js';

async function main(): Promise<void> {
  // Go's boolean flags take `--flag` and `--flag=true|false`; parseArgs only the first.
  const args = process.argv.slice(2).flatMap((a) => {
    const m = /^--(kubelet-insecure-tls)=(.*)$/.exec(a);
    if (!m) return [a];
    const b = parseBool(m[2]);
    if (b === undefined) throw new Error(`invalid value ${JSON.stringify(m[2])} for --${m[1]}`);
    return b ? [`--${m[1]}`] : [];
  });
  const { values: v } = parseArgs({
    args,
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'secure-port': { type: 'string', default: '4443' },
      'tls-cert-file': { type: 'string' },
      'tls-private-key-file': { type: 'string' },
      'kubelet-client-certificate': { type: 'string' },
      'kubelet-client-key': { type: 'string' },
      'kubelet-certificate-authority': { type: 'string' },
      'kubelet-insecure-tls': { type: 'boolean', default: false },
      'kubelet-scheme': { type: 'string', default: 'https' },
      'metric-resolution': { type: 'string', default: '15s' },
      'requestheader-client-ca-file': { type: 'string' },
      'requestheader-allowed-names': { type: 'string', default: '' },
      'client-ca-file': { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
    },
  });
  const log = pino({ level: v['log-level'], base: { component: 'metrics-server' } });
  const read = (f: string | undefined) => (f ? readFileSync(f, 'utf8') : undefined);
  const port = Number(v['secure-port']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --secure-port ${v['secure-port']}`);
  const resolutionMs = parseDuration(v['metric-resolution']);
  if (!(resolutionMs > 0)) throw new Error('--metric-resolution must be positive');
  const scheme = v['kubelet-scheme'];
  if (scheme !== 'https' && scheme !== 'http') throw new Error('--kubelet-scheme must be https or http');
  if (!!v['tls-cert-file'] !== !!v['tls-private-key-file']) throw new Error('--tls-cert-file and --tls-private-key-file go together');
  const rhCA = read(v['requestheader-client-ca-file']);
  const server = new MetricsServer({
    config: resolveClientConfig(loadKubeConfig({ explicitPath: v.kubeconfig })),
    bindAddress: v['bind-address'],
    port,
    tls: v['tls-cert-file'] ? { certPem: read(v['tls-cert-file'])!, keyPem: read(v['tls-private-key-file'])! } : undefined,
    resolutionMs,
    kubelet: {
      scheme,
      cert: read(v['kubelet-client-certificate']),
      key: read(v['kubelet-client-key']),
      ca: read(v['kubelet-certificate-authority']),
      insecureSkipVerify: v['kubelet-insecure-tls'],
    },
    requestHeader: rhCA
      ? {
          clientCA: rhCA,
          allowedNames: v['requestheader-allowed-names'].split(',').filter(Boolean),
          ...REQUEST_HEADER_DEFAULTS,
        }
      : undefined,
    clientCA: read(v['client-ca-file']),
    log,
  });
  stopOnSignals(() => server.stop());
  await server.start();
  log.info({ identity: server.identity, port: server.address?.port }, 'metrics-server started');
}

main().catch((e) => {
  process.stderr.write(`metrics-server: ${(e as Error).message}\n`);
  process.exit(1);
});
