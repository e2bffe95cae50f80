/**
 * `buildApiServer`: the apiserver as a fastify instance, not listening. It owns
 * the etcd storage, one watch cache per stored resource, one generic store per
 * served resource with its admission chain, and the HTTP surface as plugins:
 * the request filters (root plugins, in the order of kube-apiserver's handler
 * chain), then the routes (encapsulated: system endpoints, discovery, OpenAPI,
 * one plugin per group-version). `main.ts` parses flags, listens and handles
 * signals.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ResourceDef } from '@kubeling/api';
import { EtcdStorage } from './storage/etcd.js';
import type { EncryptionConfiguration } from './storage/encryption/index.js';
import { bootstrap } from './bootstrap.js';
import { startCompaction } from './compaction.js';
import { Cacher } from './storage/cacher.js';
import { Store, storagePrefix } from './registry/store.js';
import { strategyFor } from './registry/strategies/index.js';
import { NamespaceLifecycle } from './registry/namespaces.js';
import { ApiMetrics } from './metrics.js';
import { AdmissionChain } from './admission/index.js';
import { setupAdmission } from './admission/setup.js';
import { inlineAdmissionConfig } from './admission/config.js';
import { type AggregationOptions, publishAuthentication, setupAggregation } from './aggregator/index.js';
import { buildAuth } from './auth/setup.js';
import { type AuthenticationConfiguration, authenticationOptions, type TokenWebhookOptions } from './auth/authn-config.js';
import { authorizerTypes, resolveAuthorization, type AuthorizationFlags } from './auth/authz-config.js';
import { MAX_HEADER_BYTES, clientErrorHandler, frameworkErrors, statusErrors } from './http/errors.js';
import type { Registry } from './http/resource-handler.js';
import { upgradeRouting } from './http/upgrade.js';
import { authentication } from './http/filters/authentication.js';
import { audit } from './http/filters/audit.js';
import { impersonation } from './http/filters/impersonation.js';
import { authorization } from './http/filters/authorization.js';
import { requestMetrics } from './http/filters/metrics.js';
import { systemRoutes } from './http/routes/system.js';
import { discoveryRoutes } from './http/routes/discovery.js';
import { openapiRoutes } from './http/routes/openapi.js';
import { apiRoutes } from './http/routes/group-version.js';
import { apfDebugRoutes, priorityAndFairness } from './http/filters/priority-and-fairness.js';
import { type FlowControl, setupFlowControl } from './flowcontrol/index.js';
import { ResourceCatalog } from './apiextensions/catalog.js';
import { CrdController } from './apiextensions/crd-controller.js';
import type { Strategy } from './registry/strategy.js';
import { DEFAULT_COMPONENT_PROBES, componentProbes, type ComponentProbe } from './registry/core/componentstatuses.js';

export interface ApiServerOptions {
  etcdServers: string[];
  /** --etcd-prefix: where this apiserver's keys live in etcd (`/registry`). */
  etcdPrefix?: string;
  logger?: Logger | false;
  /** How often etcd history is compacted (ms); 0 disables. Upstream default 5 min. */
  compactionIntervalMs?: number;
  /** Events kept per resource in the watch cache window. */
  watchCacheSize?: number;
  /** Interval of BOOKMARK events on watches that allow them. */
  bookmarkIntervalMs?: number;
  /** Watches without timeoutSeconds end after a random time in [min, 2*min). */
  minRequestTimeoutSeconds?: number;
  /** The etcd servers' --max-request-bytes (default 1.5 MiB, etcd's): larger objects are 413. */
  etcdMaxRequestBytes?: number;
  /** Request body limit (bytes); upstream is 3 MiB. */
  maxRequestBodyBytes?: number;
  /** host:port advertised in /api. */
  advertiseAddress?: string;
  /** Serve HTTPS with these PEMs; client certificates are verified against `clientCA`. */
  tls?: { cert: string; key: string; clientCA?: string };
  /** Static bearer tokens (the --token-auth-file format). */
  tokenFile?: string;
  /** --enable-bootstrap-token-auth. */
  enableBootstrapTokenAuth?: boolean;
  /** ServiceAccount tokens: the signing key, the keys that verify, the issuer and API audiences. */
  serviceAccount?: { signingKeyPem: string; publicKeyPems: string[]; issuer?: string; audiences?: string[] };
  /** Audit: a JSON line per request (who, verb, what, code, latency) — never bodies. */
  audit?: Logger;
  /** --enable-admission-plugins / --disable-admission-plugins on top of the defaults. */
  admission?: { enable?: string[]; disable?: string[] };
  /**
   * Plugin configurations, by plugin name, as an AdmissionConfiguration's
   * `plugins[].configuration` (main.ts reads --admission-control-config-file into this).
   */
  admissionConfig?: Record<string, Record<string, unknown>>;
  /**
   * --authorization-mode: the authorizers in order ('Node,RBAC' or a list of AlwaysAllow,
   * AlwaysDeny, ABAC, Webhook, Node, RBAC). Default: Node,RBAC with TLS, else AlwaysAllow, which
   * alone means no authentication either.
   */
  authorizationMode?: string | readonly string[];
  /** The other --authorization-* flags: ABAC's policy file, the webhook's, or --authorization-config. */
  authorization?: AuthorizationFlags;
  /**
   * How the apiserver reaches kubelets (pods/log): HTTPS with this client
   * certificate (upstream's --kubelet-client-certificate/-key), checking their
   * serving certificates against `ca` when given. Plain HTTP without it.
   */
  kubeletClient?: { cert: string; key: string; ca?: string };
  /** Health URLs ComponentStatus probes (default: the scheduler's and controller-manager's default ports on loopback). */
  componentProbes?: ComponentProbe[];
  /** API Priority and Fairness (upstream --enable-priority-and-fairness, default true). */
  enablePriorityAndFairness?: boolean;
  /** --max-requests-inflight and --max-mutating-requests-inflight (400, 200): APF shares out their sum. */
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  /** --request-timeout in seconds (60): a request waits in an APF queue a quarter of it at most. */
  requestTimeoutSeconds?: number;
  /** The aggregation layer: the front-proxy client certificate and the request-header settings extension servers trust (and this server too). */
  aggregation?: AggregationOptions;
  /** --authentication-config (parsed), or the --oidc-* flags as one: JWT issuers authenticating bearer tokens. */
  authenticationConfig?: AuthenticationConfiguration;
  /** --oidc-signing-algs (with the --oidc-* flags); every algorithm upstream allows otherwise. */
  oidcSigningAlgs?: string[];
  /** --authentication-token-webhook-config-file, -cache-ttl, -version. */
  authenticationTokenWebhook?: TokenWebhookOptions;
  /** --encryption-provider-config (parsed): which resources are encrypted at rest, and how. */
  encryptionConfig?: EncryptionConfiguration;
}

export interface ApiServer {
  app: FastifyInstance;
  storage: EtcdStorage;
  registry: Registry;
  metrics: ApiMetrics;
  /** What is served now: the built-in resources and those of CustomResourceDefinitions. */
  catalog: ResourceCatalog;
  /** API Priority and Fairness, unless disabled. */
  flowControl: FlowControl | undefined;
  /** Compacts etcd history up to the revision seen at the previous call. */
  compactOnce(): Promise<void>;
  /** Stops serving; `deleteStorage` then removes every key under the etcd prefix (a throwaway control plane). */
  close(o?: { deleteStorage?: boolean }): Promise<void>;
}

export async function buildApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const metrics = new ApiMetrics();
  const storage = new EtcdStorage(
    {
      hosts: opts.etcdServers,
      dialTimeout: 5000,
      ...(opts.etcdMaxRequestBytes ? { maxRequestBytes: opts.etcdMaxRequestBytes } : {}),
      ...(opts.etcdPrefix ? { prefix: opts.etcdPrefix } : {}),
      ...(opts.encryptionConfig ? { encryptionConfig: opts.encryptionConfig, ...(opts.logger ? { logger: opts.logger } : {}) } : {}),
    },
    { observe: (op, s) => metrics.etcdLatency(op, s) },
  );
  const maxBody = opts.maxRequestBodyBytes ?? 3 * 1024 * 1024;
  const app = Fastify({
    // Request line and headers up to 1 MiB, as kube-apiserver's MaxHeaderBytes.
    ...(opts.tls
      ? {
          https: {
            cert: opts.tls.cert,
            key: opts.tls.key,
            maxHeaderSize: MAX_HEADER_BYTES,
            // Both CAs are asked for; each authenticator then checks which one signed (auth/requestheader.ts).
            ...(opts.tls.clientCA || opts.aggregation?.requestHeader
              ? {
                  ca: [opts.tls.clientCA, opts.aggregation?.requestHeader?.clientCA].filter((c): c is string => !!c),
                  requestCert: true,
                  rejectUnauthorized: false,
                }
              : {}),
          },
        }
      : { http: { maxHeaderSize: MAX_HEADER_BYTES } }),
    clientErrorHandler,
    // Paths the router cannot take apart: a bad escape is 400, a segment longer than any name 404.
    frameworkErrors,
    // Per-request lines are the audit log's job; fastify's own logger reports only problems.
    ...(opts.logger ? { loggerInstance: opts.logger.child({}, { level: 'warn' }) as unknown as FastifyBaseLogger } : { logger: false }),
    bodyLimit: maxBody,
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 75_000,
    return503OnClosing: false,
    forceCloseConnections: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
  });

  // Caches are per storage location (events.k8s.io shares core events').
  const cachers = new Map<string, Cacher>();
  const cacherOf = (prefix: string) => {
    let cacher = cachers.get(prefix);
    if (!cacher) {
      cacher = new Cacher(storage, prefix, opts.watchCacheSize ?? 10_000);
      cachers.set(prefix, cacher);
    }
    return cacher;
  };
  const registry: Registry = new Map();
  const catalog = new ResourceCatalog();
  const nsLifecycle = new NamespaceLifecycle(storage, () => registry.get('/v1/namespaces')!);
  for (const def of catalog.resources()) {
    if (def.virtual) continue;
    registry.set(
      `${def.group}/${def.version}/${def.resource}`,
      new Store(def, strategyFor(def), storage, cacherOf(storagePrefix(def)), nsLifecycle, new AdmissionChain()),
    );
  }
  const authzPlan = resolveAuthorization(opts.authorizationMode, opts.authorization, opts.tls ? ['Node', 'RBAC'] : ['AlwaysAllow']);
  const authzModes = authorizerTypes(authzPlan);
  const { unsubscribe, ...credentials } = buildAuth(registry, {
    authorization: authzPlan,
    ...(opts.tokenFile ? { tokenFile: opts.tokenFile } : {}),
    ...(opts.enableBootstrapTokenAuth ? { bootstrapTokens: true } : {}),
    ...(opts.serviceAccount ? { serviceAccount: opts.serviceAccount } : {}),
    authentication: authenticationOptions(opts),
  });
  const { authenticator, authorizer } = credentials;

  const everyResource = setupAdmission(app, registry, catalog, authorizer, {
    authzModes,
    ...(opts.admission ? { admission: opts.admission } : {}),
    ...(opts.admissionConfig ? { pluginConfig: inlineAdmissionConfig(opts.admissionConfig) } : {}),
    serviceAccounts: !!opts.serviceAccount,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const crdController = new CrdController({
    crds: registry.get('apiextensions.k8s.io/v1/customresourcedefinitions')!,
    catalog,
    registry,
    cachers,
    newCacher: cacherOf,
    newStore: (def: ResourceDef, strategy: Strategy, cacher: Cacher) => {
      const st = new Store(def, strategy, storage, cacher, nsLifecycle, new AdmissionChain());
      for (const attach of everyResource) attach(st);
      return st;
    },
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const aggregation = setupAggregation(registry, catalog, opts.aggregation ?? {}, opts.logger || undefined);
  metrics.watchersGauge(() => [...cachers.values()].map((c) => ({ resource: c.prefix.split('/')[2] ?? '', count: c.watcherCount })));

  // ---- request filters -----------------------------------------------------------
  // Root plugins, so that their hooks apply to every route and to the 404 handler;
  // the error handlers and upgrade routing come first, as everything else uses them.
  // Then the order of kube-apiserver's DefaultBuildHandlerChain: authentication,
  // audit (which records refused logins too), impersonation, priority and fairness, authorization.
  const apf =
    opts.enablePriorityAndFairness === false
      ? undefined
      : setupFlowControl(registry, {
          serverConcurrencyLimit: (opts.maxRequestsInflight ?? 400) + (opts.maxMutatingRequestsInflight ?? 200),
          metrics: metrics.registry,
          ...(opts.logger ? { logger: opts.logger } : {}),
        });
  app.register(statusErrors, { maxBody });
  app.register(upgradeRouting);
  if (authenticator) app.register(authentication, { authenticator });
  if (opts.audit) app.register(audit, { logger: opts.audit, unauthenticatedUser: authenticator || opts.tls ? 'system:anonymous' : 'system:admin' });
  if (authorizer) app.register(impersonation, { authorizer });
  if (apf) app.register(priorityAndFairness, { flowControl: apf.flowControl, requestTimeoutSeconds: opts.requestTimeoutSeconds ?? 60 });
  if (authorizer) app.register(authorization, { authorizer });
  app.register(requestMetrics, { metrics });

  // ---- routes: encapsulated plugins ----------------------------------------------
  const advertiseAddress = opts.advertiseAddress ?? '127.0.0.1:6443';
  app.register(systemRoutes, { storage, metrics });
  app.register(discoveryRoutes, { advertiseAddress, catalog: aggregation.discovery });
  app.register(openapiRoutes, { catalog });
  if (apf) app.register(apfDebugRoutes, { flowControl: apf.flowControl });
  app.register(apiRoutes, {
    catalog,
    aggregation: aggregation.proxy,
    deps: {
      registry,
      storage,
      ...credentials,
      opts: {
        bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
        minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds ?? 1800,
        ...(opts.kubeletClient ? { kubeletClient: opts.kubeletClient } : {}),
        componentProbes: componentProbes(opts.componentProbes ?? DEFAULT_COMPONENT_PROBES, opts.etcdServers),
        crdTerminating: (name: string) => crdController.terminating(name),
      },
    },
  });

  // ---- lifecycle -----------------------------------------------------------------
  const compaction = startCompaction(
    storage,
    () => cachers.values(),
    opts.compactionIntervalMs ?? 5 * 60_000,
    (err) => {
      if (opts.logger) opts.logger.warn({ err }, 'compaction failed');
    },
  );

  app.addHook('onReady', async () => {
    await Promise.all([...cachers.values()].map((c) => c.ready()));
    await bootstrap(registry, storage, {
      advertiseAddress,
      scheme: opts.tls ? 'https' : 'http',
      rbac: authzModes.includes('RBAC'),
      flowControl: apf !== undefined,
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
    crdController.start();
    await publishAuthentication(registry, opts.tls?.clientCA, opts.aggregation?.requestHeader);
    aggregation.aggregator.start();
  });
  app.addHook('preClose', async () => {
    await aggregation.aggregator.stop();
    await crdController.stop();
    for (const u of unsubscribe) u();
    apf?.stop();
    compaction.stop();
    await Promise.all([...cachers.values()].map((c) => c.stop()));
  });
  let purge = false;
  app.addHook('onClose', async () => {
    if (purge) await storage.deleteAll();
    storage.close();
  });
  const close = (o: { deleteStorage?: boolean } = {}) => {
    purge = !!o.deleteStorage;
    return app.close();
  };

  return { app, storage, registry, metrics, catalog, flowControl: apf?.flowControl, compactOnce: compaction.compactOnce, close };
}
