/**
 * kubeling-apiserver's flags: one table that `main.ts` parses and `--help`
 * prints, grouped in sections with the names and words kube-apiserver's
 * `--help` uses (k8s.io/component-base cli/flag NamedFlagSets). The admission
 * section lists every plugin and the default-on ones from the catalogue, so
 * the help cannot drift from what the server registers.
 */
import type { ParseArgsConfig } from 'node:util';
import { admissionFlagsHelp } from './admission/catalogue.js';

export interface Flag {
  name: string;
  type: 'string' | 'strings' | 'boolean' | 'int' | 'duration';
  default?: string;
  /** Given more than once (kept as a list). */
  multiple?: boolean;
  usage: string;
}

const admission = admissionFlagsHelp();

/** Sections in the order `--help` prints them. */
export const FLAG_SECTIONS: { title: string; flags: Flag[] }[] = [
  {
    title: 'Etcd flags',
    flags: [
      { name: 'etcd-servers', type: 'strings', usage: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Required.' },
      { name: 'etcd-prefix', type: 'string', default: '/registry', usage: 'The prefix to prepend to all resource paths in etcd.' },
      {
        name: 'etcd-compaction-interval',
        type: 'duration',
        default: '5m',
        usage: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.',
      },
      { name: 'watch-cache-size', type: 'int', default: '10000', usage: 'Events kept per resource in the watch cache window.' },
      {
        name: 'encryption-provider-config',
        type: 'string',
        usage:
          'The file containing configuration for encryption providers to be used for storing secrets in etcd (EncryptionConfiguration: identity, aescbc, aesgcm, secretbox, kms v2).',
      },
    ],
  },
  {
    title: 'Secure serving flags',
    flags: [
      { name: 'bind-address', type: 'string', default: '127.0.0.1', usage: 'The IP address on which to listen for the --secure-port port.' },
      {
        name: 'secure-port',
        type: 'int',
        default: '6443',
        usage: 'The port on which to serve HTTPS with authentication and authorization (HTTP when no certificate is given).',
      },
      { name: 'tls-cert-file', type: 'string', usage: 'File containing the default x509 Certificate for HTTPS.' },
      { name: 'tls-private-key-file', type: 'string', usage: 'File containing the default x509 private key matching --tls-cert-file.' },
    ],
  },
  {
    title: 'Authentication flags',
    flags: [
      {
        name: 'client-ca-file',
        type: 'string',
        usage:
          'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
      },
      {
        name: 'token-auth-file',
        type: 'string',
        usage: 'If set, the file that will be used to secure the secure port of the API server via token authentication.',
      },
      {
        name: 'enable-bootstrap-token-auth',
        type: 'boolean',
        usage:
          "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS bootstrapping authentication.",
      },
      {
        name: 'authentication-config',
        type: 'string',
        usage: 'File with Authentication Configuration to configure the JWT Token authenticator. Mutually exclusive with the --oidc-* flags.',
      },
      { name: 'oidc-issuer-url', type: 'string', usage: 'The URL of the OpenID issuer, only HTTPS scheme will be accepted.' },
      { name: 'oidc-client-id', type: 'string', usage: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.' },
      {
        name: 'oidc-ca-file',
        type: 'string',
        usage: "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file.",
      },
      { name: 'oidc-username-claim', type: 'string', usage: 'The OpenID claim to use as the user name (default "sub").' },
      {
        name: 'oidc-username-prefix',
        type: 'string',
        usage: "If provided, all usernames will be prefixed with this value. The value '-' disables all prefixing.",
      },
      {
        name: 'oidc-groups-claim',
        type: 'string',
        usage: 'If provided, the name of a custom OpenID Connect claim for specifying user groups (a string or array of strings).',
      },
      { name: 'oidc-groups-prefix', type: 'string', usage: 'If provided, all groups will be prefixed with this value.' },
      { name: 'oidc-signing-algs', type: 'strings', usage: 'Comma-separated list of allowed JOSE asymmetric signing algorithms (default RS256).' },
      {
        name: 'oidc-required-claim',
        type: 'string',
        multiple: true,
        usage: 'A key=value pair that describes a required claim in the ID Token. Repeat for several.',
      },
      {
        name: 'authentication-token-webhook-config-file',
        type: 'string',
        usage: 'File with webhook configuration for token authentication in kubeconfig format.',
      },
      {
        name: 'authentication-token-webhook-cache-ttl',
        type: 'duration',
        default: '2m0s',
        usage: 'The duration to cache responses from the webhook token authenticator.',
      },
      {
        name: 'authentication-token-webhook-version',
        type: 'string',
        default: 'v1beta1',
        usage: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.',
      },
      {
        name: 'service-account-key-file',
        type: 'string',
        multiple: true,
        usage: 'File containing PEM-encoded public keys used to verify ServiceAccount tokens. Repeatable.',
      },
      {
        name: 'service-account-signing-key-file',
        type: 'string',
        usage: 'Path to the file that contains the current private key of the service account token issuer.',
      },
      {
        name: 'service-account-issuer',
        type: 'string',
        default: 'https://kubernetes.default.svc.cluster.local',
        usage: 'Identifier of the service account token issuer.',
      },
      {
        name: 'api-audiences',
        type: 'strings',
        usage:
          'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences.',
      },
      {
        name: 'requestheader-client-ca-file',
        type: 'string',
        usage:
          'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.',
      },
      {
        name: 'requestheader-allowed-names',
        type: 'strings',
        default: '',
        usage:
          'List of client certificate common names to allow to provide usernames in headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
      },
      { name: 'requestheader-username-headers', type: 'strings', default: 'X-Remote-User', usage: 'List of request headers to inspect for usernames.' },
      { name: 'requestheader-group-headers', type: 'strings', default: 'X-Remote-Group', usage: 'List of request headers to inspect for groups.' },
      { name: 'requestheader-extra-headers-prefix', type: 'strings', default: 'X-Remote-Extra-', usage: 'List of request header prefixes to inspect.' },
    ],
  },
  {
    title: 'Authorization flags',
    flags: [
      {
        name: 'authorization-mode',
        type: 'strings',
        usage:
          'Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow if --authorization-config is not used (Node,RBAC when serving TLS). Comma-delimited list of: AlwaysAllow,AlwaysDeny,ABAC,Webhook,RBAC,Node.',
      },
      {
        name: 'authorization-policy-file',
        type: 'string',
        usage: 'File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.',
      },
      {
        name: 'authorization-webhook-config-file',
        type: 'string',
        usage: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook.',
      },
      {
        name: 'authorization-webhook-version',
        type: 'string',
        usage: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook (default v1beta1).',
      },
      {
        name: 'authorization-webhook-cache-authorized-ttl',
        type: 'duration',
        usage: "The duration to cache 'authorized' responses from the webhook authorizer (default 5m0s).",
      },
      {
        name: 'authorization-webhook-cache-unauthorized-ttl',
        type: 'duration',
        usage: "The duration to cache 'unauthorized' responses from the webhook authorizer (default 30s).",
      },
      {
        name: 'authorization-config',
        type: 'string',
        usage:
          'File with Authorization Configuration to configure the authorizer chain. Mutually exclusive with --authorization-mode and --authorization-webhook-* flags.',
      },
    ],
  },
  {
    title: 'Admission flags',
    flags: [
      { name: 'admission-control-config-file', type: 'string', usage: 'File with admission control configuration.' },
      { name: 'disable-admission-plugins', type: 'strings', usage: admission.disable },
      { name: 'enable-admission-plugins', type: 'strings', usage: admission.enable },
    ],
  },
  {
    title: 'Auditing flags',
    flags: [
      {
        name: 'audit-log-path',
        type: 'string',
        usage: "If set, all requests coming to the apiserver will be logged to this file (a JSON line each; '-' means standard out).",
      },
      { name: 'audit-log-level', type: 'string', default: 'info', usage: 'The level of the audit log lines.' },
    ],
  },
  {
    title: 'Generic flags',
    flags: [
      {
        name: 'enable-priority-and-fairness',
        type: 'boolean',
        default: 'true',
        usage: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness.',
      },
      {
        name: 'max-requests-inflight',
        type: 'int',
        default: '400',
        usage: "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit.",
      },
      {
        name: 'max-mutating-requests-inflight',
        type: 'int',
        default: '200',
        usage: "This and --max-requests-inflight are summed to determine the server's total concurrency limit.",
      },
      {
        name: 'request-timeout',
        type: 'duration',
        default: '1m0s',
        usage: 'An optional field indicating the duration a handler must keep a request open before timing it out.',
      },
      { name: 'log-level', type: 'string', default: 'info', usage: 'The level of the apiserver log (pino levels).' },
    ],
  },
  {
    title: 'Kubelet and aggregation flags',
    flags: [
      { name: 'kubelet-client-certificate', type: 'string', usage: 'Path to a client cert file for TLS.' },
      { name: 'kubelet-client-key', type: 'string', usage: 'Path to a client key file for TLS.' },
      { name: 'kubelet-certificate-authority', type: 'string', usage: 'Path to a cert file for the certificate authority.' },
      {
        name: 'proxy-client-cert-file',
        type: 'string',
        usage: 'Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.',
      },
      {
        name: 'proxy-client-key-file',
        type: 'string',
        usage: 'Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.',
      },
    ],
  },
];

/** node:util parseArgs options for every flag (plus --help): values stay strings, as main.ts converts them. */
export function parseArgsOptions(): NonNullable<ParseArgsConfig['options']> {
  const out: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const s of FLAG_SECTIONS)
    for (const f of s.flags) {
      // enable-priority-and-fairness takes `=false`, so it is parsed as a string.
      const bool = f.type === 'boolean' && f.default === undefined;
      out[f.name] = {
        type: bool ? 'boolean' : 'string',
        ...(f.multiple ? { multiple: true } : {}),
        ...(f.default !== undefined && !bool ? { default: f.default } : {}),
      };
    }
  return out;
}

/** What `--help` prints: cobra's layout, a section per flag set. */
export function usage(): string {
  const lines = [
    'The Kubernetes API server validates and configures data for the api objects which include',
    'pods, services, replicationcontrollers, and others.',
    '',
    'Usage:',
    '  kubeling-apiserver [flags]',
    '',
  ];
  for (const s of FLAG_SECTIONS) {
    lines.push(`${s.title}:`, '');
    const heads = s.flags.map((f) => `      --${f.name}${f.type === 'boolean' ? '' : ` ${f.type}`}`);
    const width = Math.max(...heads.map((h) => h.length)) + 3;
    s.flags.forEach((f, i) => {
      const def = f.default !== undefined && f.default !== '' ? ` (default ${f.type === 'string' ? JSON.stringify(f.default) : f.default})` : '';
      lines.push(heads[i]!.padEnd(width) + f.usage + def);
    });
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
