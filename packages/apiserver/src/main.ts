/**
 * kubeling-apiserver: parses flags, builds the server, listens, and shuts down
 * cleanly on SIGTERM/SIGINT. The flags, with kube-apiserver's names and
 * meanings, are listed in flags.ts and printed by `--help`.
 */
import { readFileSync } from 'node:fs';
import { parseDuration } from '@kubeling/apimachinery';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApiServer } from './server.js';
import { readAdmissionConfigFile } from './admission/config.js';
import { readEncryptionConfigFile } from './storage/encryption/index.js';
import type { AggregationOptions } from './aggregator/index.js';
import { resolveAuthorization, type AuthorizationFlags } from './auth/authz-config.js';
import { authenticationFlags } from './auth/authn-config.js';
import { parseArgsOptions, usage } from './flags.js';

/**
 * The --authorization-* flags (upstream's BuiltInAuthorizationOptions), checked
 * before anything starts: a mistake ends the process with upstream's messages.
 */
function authzMode(values: Record<string, string | boolean | string[] | undefined>, tls: boolean) {
  const str = (k: string) => (values[k] as string | undefined) || undefined;
  try {
    const ttl = (k: string) => {
      const v = str(k);
      if (v === undefined) return undefined;
      try {
        return parseDuration(v);
      } catch {
        throw new Error(`invalid argument ${JSON.stringify(v)} for "--${k}" flag: time: invalid duration ${JSON.stringify(v)}`);
      }
    };
    const authorizedTTL = ttl('authorization-webhook-cache-authorized-ttl');
    const unauthorizedTTL = ttl('authorization-webhook-cache-unauthorized-ttl');
    const f = {
      policyFile: str('authorization-policy-file'),
      webhookConfigFile: str('authorization-webhook-config-file'),
      webhookVersion: str('authorization-webhook-version'),
      webhookCacheAuthorizedTTLMs: authorizedTTL,
      webhookCacheUnauthorizedTTLMs: unauthorizedTTL,
      configFile: str('authorization-config'),
    };
    const authorization = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as AuthorizationFlags;
    const mode = str('authorization-mode');
    resolveAuthorization(mode, authorization, tls ? ['Node', 'RBAC'] : ['AlwaysAllow']);
    return { ...(mode ? { authorizationMode: mode } : {}), authorization };
  } catch (e) {
    process.stderr.write(`Error: ${(e as Error).message}\n`);
    process.exit(1);
  }
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
  const { values: raw } = parseArgs({ options: parseArgsOptions(), strict: true });
  if (raw.help) {
    process.stdout.write(usage());
    return;
  }
  const values = raw as Record<string, string | undefined> & { 'service-account-key-file'?: string[]; 'enable-bootstrap-token-auth'?: boolean };
  if (!values['etcd-servers']) {
    process.stderr.write('error: --etcd-servers is required\n');
    process.exit(2);
  }
  const logger = pino({ level: values['log-level'] ?? 'info', base: { component: 'apiserver' } });
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
    ...(values['encryption-provider-config'] ? { encryptionConfig: readEncryptionConfigFile(values['encryption-provider-config']) } : {}),
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
    ...authzMode(values, !!(values['tls-cert-file'] && values['tls-private-key-file'])),
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
    ...authenticationFlags(values),
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
