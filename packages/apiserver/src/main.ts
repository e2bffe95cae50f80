/**
 * kubeling-apiserver: parses flags, builds the server, listens, and shuts down
 * cleanly on SIGTERM/SIGINT.
 *
 *   --etcd-servers=http://127.0.0.1:2379[,...]   (required)
 *   --etcd-prefix=/registry   (where the keys live in etcd: apiservers of different prefixes share one etcd)
 *   --bind-address=127.0.0.1  --secure-port=6443
 *   --etcd-compaction-interval=5m   --watch-cache-size=10000
 *   --tls-cert-file=PEM --tls-private-key-file=PEM   HTTPS (with --client-ca-file for x509 users)
 *   --client-ca-file=PEM  --token-auth-file=CSV  --enable-bootstrap-token-auth
 *   --service-account-signing-key-file=PEM --service-account-key-file=PEM (repeatable)
 *   --service-account-issuer=URL --api-audiences=a,b
 *   --audit-log-path=FILE|- --audit-log-level=info   (a JSON line per request, written
 *                                                    before its response: upstream's blocking mode)
 *   --enable-admission-plugins=A,B --disable-admission-plugins=C   (defaults: Priority,
 *     DefaultTolerationSeconds, LimitRanger, ResourceQuota; AlwaysPullImages is off)
 *   --admission-control-config-file=YAML   (an AdmissionConfiguration: each plugin's configuration)
 *   --authorization-mode=RBAC|AlwaysAllow   (RBAC when serving TLS)
 *   --kubelet-client-certificate=PEM --kubelet-client-key=PEM   HTTPS to kubelets as this client
 *   --kubelet-certificate-authority=PEM   (checks the kubelets' serving certificates)
 *   --enable-priority-and-fairness=true --max-requests-inflight=400 --max-mutating-requests-inflight=200
 *   --request-timeout=1m0s   (API Priority and Fairness: its seats, and how long a request may wait in a queue)
 *   --proxy-client-cert-file=PEM --proxy-client-key-file=PEM   the aggregation layer's client certificate to extension servers
 *   --requestheader-client-ca-file=PEM --requestheader-allowed-names=a,b   published for extension servers
 *   --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group
 *   --requestheader-extra-headers-prefix=X-Remote-Extra-
 *   --log-level=info
 */
import { readFileSync } from 'node:fs';
import { parseDuration } from '@kubeling/apimachinery';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApiServer } from './server.js';
import { readAdmissionConfigFile } from './admission/config.js';
import type { AggregationOptions } from './aggregator/index.js';

function authzMode(v: string): 'RBAC' | 'AlwaysAllow' {
  // Upstream takes a list (e.g. Node,RBAC). Node is accepted; until the Node
  // authorizer exists, kubelets are authorized by the system:node ClusterRole.
  const modes = v.split(',');
  if (modes.includes('AlwaysAllow')) return 'AlwaysAllow';
  if (modes.every((m) => m === 'RBAC' || m === 'Node')) return 'RBAC';
  throw new Error(`--authorization-mode: unsupported ${v} (RBAC, Node, AlwaysAllow)`);
}

const list = (v: string | undefined) => (v ?? '').split(',').filter(Boolean);

/** The aggregation layer's flags (kube-apiserver's --proxy-client-* and --requestheader-*). */
function aggregationFlags(values: Record<string, string | boolean | string[] | undefined>): AggregationOptions {
  const str = (k: string) => values[k] as string | undefined;
  const cert = str('proxy-client-cert-file');
  const key = str('proxy-client-key-file');
  const ca = str('requestheader-client-ca-file');
  return {
    ...(cert && key ? { proxyClient: { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') } } : {}),
    ...(ca
      ? {
          requestHeader: {
            clientCA: readFileSync(ca, 'utf8'),
            allowedNames: list(str('requestheader-allowed-names')),
            usernameHeaders: list(str('requestheader-username-headers')),
            groupHeaders: list(str('requestheader-group-headers')),
            extraHeadersPrefix: list(str('requestheader-extra-headers-prefix')),
          },
        }
      : {}),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'etcd-servers': { type: 'string' },
      'etcd-prefix': { type: 'string', default: '/registry' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'secure-port': { type: 'string', default: '6443' },
      'etcd-compaction-interval': { type: 'string', default: '5m' },
      'watch-cache-size': { type: 'string', default: '10000' },
      'log-level': { type: 'string', default: 'info' },
      'tls-cert-file': { type: 'string' },
      'tls-private-key-file': { type: 'string' },
      'client-ca-file': { type: 'string' },
      'token-auth-file': { type: 'string' },
      'enable-bootstrap-token-auth': { type: 'boolean', default: false },
      'authorization-mode': { type: 'string' },
      'kubelet-client-certificate': { type: 'string' },
      'kubelet-client-key': { type: 'string' },
      'kubelet-certificate-authority': { type: 'string' },
      'service-account-key-file': { type: 'string', multiple: true },
      'service-account-signing-key-file': { type: 'string' },
      'service-account-issuer': { type: 'string', default: 'https://kubernetes.default.svc.cluster.local' },
      'api-audiences': { type: 'string' },
      'enable-admission-plugins': { type: 'string' },
      'audit-log-path': { type: 'string' },
      'audit-log-level': { type: 'string', default: 'info' },
      'disable-admission-plugins': { type: 'string' },
      'admission-control-config-file': { type: 'string' },
      'enable-priority-and-fairness': { type: 'string', default: 'true' },
      'max-requests-inflight': { type: 'string', default: '400' },
      'max-mutating-requests-inflight': { type: 'string', default: '200' },
      'request-timeout': { type: 'string', default: '1m0s' },
      'proxy-client-cert-file': { type: 'string' },
      'proxy-client-key-file': { type: 'string' },
      'requestheader-client-ca-file': { type: 'string' },
      'requestheader-allowed-names': { type: 'string', default: '' },
      'requestheader-username-headers': { type: 'string', default: 'X-Remote-User' },
      'requestheader-group-headers': { type: 'string', default: 'X-Remote-Group' },
      'requestheader-extra-headers-prefix': { type: 'string', default: 'X-Remote-Extra-' },
    },
    strict: true,
  });
  if (!values['etcd-servers']) {
    process.stderr.write('error: --etcd-servers is required\n');
    process.exit(2);
  }
  const logger = pino({ level: values['log-level'], base: { component: 'apiserver' } });
  const port = Number(values['secure-port']);
  const host = values['bind-address']!;
  const server = await buildApiServer({
    etcdServers: values['etcd-servers'].split(','),
    etcdPrefix: values['etcd-prefix']!,
    logger,
    compactionIntervalMs: parseDuration(values['etcd-compaction-interval']!),
    watchCacheSize: Number(values['watch-cache-size']),
    advertiseAddress: `${host}:${port}`,
    ...(values['tls-cert-file'] && values['tls-private-key-file']
      ? {
          tls: {
            cert: readFileSync(values['tls-cert-file'], 'utf8'),
            key: readFileSync(values['tls-private-key-file'], 'utf8'),
            ...(values['client-ca-file'] ? { clientCA: readFileSync(values['client-ca-file'], 'utf8') } : {}),
          },
        }
      : {}),
    ...(values['token-auth-file'] ? { tokenFile: values['token-auth-file'] } : {}),
    ...(values['enable-bootstrap-token-auth'] ? { enableBootstrapTokenAuth: true } : {}),
    ...(values['audit-log-path']
      ? {
          audit: pino(
            { level: values['audit-log-level']!, base: { component: 'audit' } },
            values['audit-log-path'] === '-' ? process.stdout : pino.destination({ dest: values['audit-log-path'], mkdir: true, sync: true }),
          ),
        }
      : {}),
    enablePriorityAndFairness: values['enable-priority-and-fairness'] !== 'false',
    maxRequestsInflight: Number(values['max-requests-inflight']),
    maxMutatingRequestsInflight: Number(values['max-mutating-requests-inflight']),
    requestTimeoutSeconds: parseDuration(values['request-timeout']!) / 1000,
    admission: {
      enable: (values['enable-admission-plugins'] ?? '').split(',').filter(Boolean),
      disable: (values['disable-admission-plugins'] ?? '').split(',').filter(Boolean),
    },
    ...(values['admission-control-config-file'] ? { admissionConfig: readAdmissionConfigFile(values['admission-control-config-file']) } : {}),
    ...(values['service-account-signing-key-file']
      ? {
          serviceAccount: {
            signingKeyPem: readFileSync(values['service-account-signing-key-file'], 'utf8'),
            publicKeyPems: (values['service-account-key-file'] ?? []).map((f) => readFileSync(f, 'utf8')),
            issuer: values['service-account-issuer']!,
            audiences: values['api-audiences'] ? values['api-audiences'].split(',') : [values['service-account-issuer']!],
          },
        }
      : {}),
    ...(values['authorization-mode'] ? { authorizationMode: authzMode(values['authorization-mode']) } : {}),
    ...(values['kubelet-client-certificate'] && values['kubelet-client-key']
      ? {
          kubeletClient: {
            cert: readFileSync(values['kubelet-client-certificate'], 'utf8'),
            key: readFileSync(values['kubelet-client-key'], 'utf8'),
            ...(values['kubelet-certificate-authority'] ? { ca: readFileSync(values['kubelet-certificate-authority'], 'utf8') } : {}),
          },
        }
      : {}),
    aggregation: aggregationFlags(values),
  });
  await server.app.listen({ host, port });
  logger.info({ host, port }, 'apiserver listening');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await server.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`apiserver: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
