/**
 * `buildApiServer`: the apiserver as a fastify instance, not listening. It owns
 * the etcd storage, one watch cache per stored resource, one generic store per
 * served resource, and the HTTP surface (resources, discovery, health, version,
 * metrics). `main.ts` parses flags, listens and handles signals.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { resources } from '@kubeling/api';
import { StatusError, methodNotAllowed, notFoundPath } from '@kubeling/apimachinery';
import { EtcdStorage } from './storage/etcd.js';
import { bootstrap } from './bootstrap.js';
import { startCompaction } from './compaction.js';
import { MAX_HEADER_BYTES, clientErrorHandler, errorHandler, frameworkErrors, limitBodies, sendStatus } from './http/errors.js';
import { Cacher } from './storage/cacher.js';
import { Store, storagePrefix } from './registry/store.js';
import { strategyFor } from './registry/strategies/index.js';
import { parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { aggregatedDiscovery, aggregatedVersionWanted, AGGREGATED_V2, AGGREGATED_V2BETA1, apiGroup, apiGroupList, apiResourceList, apiVersions } from './http/discovery.js';
import { handleResource, type Registry } from './http/resource-handler.js';
import { upgrades } from './http/kubelet-proxy.js';
import { upgradeResponse } from '@kubeling/client/remotecommand';
import { ApiMetrics } from './metrics.js';
import { buildOpenAPIv3 } from './http/openapi.js';
import { VERSION_INFO } from './version.js';
import { PriorityAdmission } from './admission/priority.js';
import { AlwaysPullImages, DefaultTolerationSeconds, LimitRanger } from './admission/podplugins.js';
import { ResourceQuotaAdmission } from './admission/resourcequota.js';
import { MutatingWebhooks, ValidatingWebhooks } from './admission/webhook.js';
import { ServiceAccountAdmission } from './admission/serviceaccount.js';
import { NodeRestriction } from './admission/noderestriction.js';
import { OwnerReferencesPermissionEnforcement } from './admission/ownerreferences.js';
import { Authenticator, MastersAuthorizer, NodeAuthorizer, RbacAuthorizer, ServiceAccountTokens, StaticTokens, UnionAuthorizer, authHook, bootstrapPolicy, type Authorizer, type PolicyRule } from './auth/index.js';
import type { TokenAuthenticator } from './auth/authn.js';
import { NamespaceLifecycle } from './registry/namespaces.js';
import { AdmissionChain } from './admission/index.js';

export interface ApiServerOptions {
  etcdServers: string[];
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
  /** ServiceAccount tokens: the signing key, the keys that verify, the issuer and API audiences. */
  serviceAccount?: { signingKeyPem: string; publicKeyPems: string[]; issuer?: string; audiences?: string[] };
  /** Audit: a JSON line per request (who, verb, what, code, latency) — never bodies. */
  audit?: Logger;
  /** --enable-admission-plugins / --disable-admission-plugins on top of the defaults. */
  admission?: { enable?: string[]; disable?: string[] };
  /** AlwaysAllow (no authentication, the default without TLS) or RBAC (the default with TLS). */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /**
   * How the apiserver reaches kubelets (pods/log): HTTPS with this client
   * certificate (upstream's --kubelet-client-certificate/-key), checking their
   * serving certificates against `ca` when given. Plain HTTP without it.
   */
  kubeletClient?: { cert: string; key: string; ca?: string };
}

const notFoundAsUndefined = (e: unknown): undefined => {
  if (e instanceof StatusError && e.status.reason === 'NotFound') return undefined;
  throw e;
};

export interface ApiServer {
  app: FastifyInstance;
  storage: EtcdStorage;
  registry: Registry;
  metrics: ApiMetrics;
  /** Compacts etcd history up to the revision seen at the previous call. */
  compactOnce(): Promise<void>;
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    k8s?: RequestInfo;
    /** The name of the object a create made (for the audit record; the URL has none). */
    objectName?: string;
  }
}

export async function buildApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const metrics = new ApiMetrics();
  const storage = new EtcdStorage({ hosts: opts.etcdServers, dialTimeout: 5000, ...(opts.etcdMaxRequestBytes ? { maxRequestBytes: opts.etcdMaxRequestBytes } : {}) }, { observe: (op, s) => metrics.etcdLatency(op, s) });
  const maxBody = opts.maxRequestBodyBytes ?? 3 * 1024 * 1024;
  const app = Fastify({
    // Request line and headers up to 1 MiB, as kube-apiserver's MaxHeaderBytes.
    ...(opts.tls ? { https: { cert: opts.tls.cert, key: opts.tls.key, maxHeaderSize: MAX_HEADER_BYTES, ...(opts.tls.clientCA ? { ca: opts.tls.clientCA, requestCert: true, rejectUnauthorized: false } : {}) } } : { http: { maxHeaderSize: MAX_HEADER_BYTES } }),
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
  const registry: Registry = new Map();
  const nsLifecycle = new NamespaceLifecycle(storage, () => registry.get('/v1/namespaces')!);
  for (const def of resources) {
    if (def.virtual) continue;
    const prefix = storagePrefix(def);
    let cacher = cachers.get(prefix);
    if (!cacher) {
      cacher = new Cacher(storage, prefix, opts.watchCacheSize ?? 10_000);
      cachers.set(prefix, cacher);
    }
    registry.set(`${def.group}/${def.version}/${def.resource}`, new Store(def, strategyFor(def), storage, cacher, nsLifecycle, new AdmissionChain()));
  }
  // Each store's admission is a chain the plugins below are registered into.
  const chain = (st: Store) => st.admission as AdmissionChain;
  // Admission plugins, mutating then validating (NamespaceLifecycle is part of every store).
  const authzMode = opts.authorizationMode ?? (opts.tls ? 'RBAC' : 'AlwaysAllow');
  // With users to tell apart, what kubelets and owner references may do is restricted too.
  const restricting = authzMode === 'RBAC' ? ['NodeRestriction', 'OwnerReferencesPermissionEnforcement'] : [];
  const enabled = new Set(['Priority', 'DefaultTolerationSeconds', 'LimitRanger', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota', ...restricting, ...(opts.admission?.enable ?? [])]);
  for (const d of opts.admission?.disable ?? []) enabled.delete(d);
  let authorizer: Authorizer | undefined;
  const pods = registry.get('/v1/pods')!;
  // ServiceAccount needs token signing; clusters without it (the plain-HTTP
  // development mode) leave pods' service accounts alone.
  if (opts.serviceAccount && !(opts.admission?.disable ?? []).includes('ServiceAccount')) enabled.add('ServiceAccount');
  if (enabled.has('ServiceAccount')) chain(pods).mutating.push(new ServiceAccountAdmission(() => registry.get('/v1/serviceaccounts')!));
  if (enabled.has('NodeRestriction')) {
    const nr = new NodeRestriction({
      pod: (ns, name) => registry.get('/v1/pods')!.get(ns, name, '0').catch(notFoundAsUndefined),
      node: (name) => registry.get('/v1/nodes')!.get(undefined, name, '0').catch(notFoundAsUndefined),
      authorize: (a) => (authorizer ? authorizer.authorize(a) : { allowed: true, reason: '' }),
    });
    for (const r of ['/v1/pods', '/v1/nodes', '/v1/persistentvolumeclaims', '/v1/serviceaccounts', 'coordination.k8s.io/v1/leases', 'storage.k8s.io/v1/csinodes']) {
      const st = registry.get(r);
      if (!st) continue;
      chain(st).mutating.push(nr);
      chain(st).validating.push(nr);
    }
  }
  if (enabled.has('Priority')) chain(pods).mutating.push(new PriorityAdmission(() => registry.get('scheduling.k8s.io/v1/priorityclasses')!));
  if (enabled.has('DefaultTolerationSeconds')) chain(pods).mutating.push(new DefaultTolerationSeconds());
  if (enabled.has('AlwaysPullImages')) chain(pods).mutating.push(new AlwaysPullImages());
  if (enabled.has('LimitRanger')) {
    const lr = new LimitRanger(() => registry.get('/v1/limitranges')!);
    chain(pods).mutating.push(lr);
    chain(pods).validating.push(lr);
  }
  const webhookCtx = (resource: string) => ({
    configurations: () => registry.get(`admissionregistration.k8s.io/v1/${resource}`)!,
    namespaces: () => registry.get('/v1/namespaces')!,
    gvk: (r: string) => {
      const [g, res] = r.split('/');
      const st = [...registry.values()].find((x) => x.def.group === g && x.def.resource === res);
      return st ? { group: st.def.group, version: st.def.version, kind: st.def.kind } : undefined;
    },
  });
  if (enabled.has('MutatingAdmissionWebhook')) {
    const m = new MutatingWebhooks(webhookCtx('mutatingwebhookconfigurations'));
    for (const st of registry.values()) chain(st).mutating.push(m);
  }
  if (enabled.has('OwnerReferencesPermissionEnforcement')) {
    const mapper = (group: string, version: string, kind: string) =>
      resources.filter((d) => !d.virtual && d.group === group && d.version === version && d.kind === kind).map((d) => ({ group: d.group, resource: d.resource, namespaced: d.namespaced }));
    const gc = new OwnerReferencesPermissionEnforcement(() => authorizer ?? { authorize: () => ({ allowed: true, reason: '' }) }, mapper);
    for (const st of registry.values()) chain(st).validating.push(gc);
  }
  if (enabled.has('ValidatingAdmissionWebhook')) {
    const v = new ValidatingWebhooks(webhookCtx('validatingwebhookconfigurations'));
    for (const st of registry.values()) chain(st).validating.push(v);
  }
  if (enabled.has('ResourceQuota')) {
    const rq = new ResourceQuotaAdmission(() => registry.get('/v1/resourcequotas')!, (r) => {
      const [g, res] = r.split('/');
      return [...registry.entries()].find(([k, st]) => st.def.group === g && st.def.resource === res && k.endsWith(`/${res}`))?.[1];
    });
    for (const st of registry.values()) if (st.def.namespaced) chain(st).validating.push(rq);
  }
  const cached = async (resource: string, ns: string, name: string) => registry.get(resource)!.get(ns, name, '0').catch(() => undefined);
  const saTokens = opts.serviceAccount
    ? new ServiceAccountTokens({
        signingKeyPem: opts.serviceAccount.signingKeyPem,
        publicKeyPems: opts.serviceAccount.publicKeyPems,
        issuer: opts.serviceAccount.issuer ?? 'https://kubernetes.default.svc.cluster.local',
        audiences: opts.serviceAccount.audiences ?? [opts.serviceAccount.issuer ?? 'https://kubernetes.default.svc.cluster.local'],
        lookup: { serviceAccount: (ns, n) => cached('/v1/serviceaccounts', ns, n), pod: (ns, n) => cached('/v1/pods', ns, n) },
      })
    : undefined;
  const upgradedHooks: ((req: FastifyRequest) => void)[] = [];
  let authenticator: Authenticator | undefined;
  let rbac: RbacAuthorizer | undefined;
  const unsubscribe: (() => void)[] = [];
  if (authzMode === 'RBAC') {
    const r = new RbacAuthorizer();
    rbac = r;
    for (const kind of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const) {
      unsubscribe.push(registry.get(`rbac.authorization.k8s.io/v1/${kind}`)!.subscribe((type, obj) => r.apply(kind, type, obj)));
    }
    const nodeRules = (bootstrapPolicy().clusterRoles.find((x) => x.metadata.name === 'system:node') as unknown as { rules: PolicyRule[] }).rules;
    const nodes = new NodeAuthorizer(nodeRules);
    unsubscribe.push(registry.get('/v1/pods')!.subscribe((type, pod) => nodes.applyPod(type, pod)));
    authorizer = new UnionAuthorizer([new MastersAuthorizer(), nodes, r]);
    const tokenAuth: TokenAuthenticator[] = opts.tokenFile ? [StaticTokens.fromFile(opts.tokenFile)] : [];
    if (saTokens) tokenAuth.push(saTokens);
    authenticator = new Authenticator(tokenAuth);
    app.addHook('onRequest', authHook({ authenticator, authorizer }));
  }
  metrics.watchersGauge(() => [...cachers.values()].map((c) => ({ resource: c.prefix.split('/')[2] ?? '', count: c.watcherCount })));

  limitBodies(app, maxBody);

  app.setErrorHandler(errorHandler(maxBody));
  app.setNotFoundHandler((_req, reply) => sendStatus(reply, notFoundPath()));

  app.addHook('onResponse', async (req, reply) => {
    const info = req.k8s;
    if (info?.verb === 'watch') return;
    metrics.request(info?.verb ?? req.method.toLowerCase(), info?.resource ?? '', info?.subresource ?? '', reply.statusCode, reply.elapsedTime / 1000);
  });
  if (opts.audit) {
    const audit = opts.audit;
    const line = (req: FastifyRequest, code: number, stage: string, ms: number) => {
      const path = req.url.split('?')[0]!;
      const info = req.k8s ?? parseRequestInfo(req.method, path, req.query as Record<string, string>);
      const user = req.user;
      audit.info({
        stage,
        user: user?.name ?? (opts.authorizationMode === 'RBAC' || opts.tls ? 'system:anonymous' : 'system:admin'),
        ...(user?.groups?.length ? { groups: user.groups } : {}),
        verb: info.verb,
        ...(info.isResourceRequest ? { resource: info.resource, ...(info.subresource ? { subresource: info.subresource } : {}), ...(info.apiGroup ? { apiGroup: info.apiGroup } : {}), ...(info.namespace ? { namespace: info.namespace } : {}), ...(info.name || req.objectName ? { name: info.name || req.objectName } : {}) } : { path }),
        code,
        requestReceivedTimestamp: new Date(Date.now() - ms).toISOString(),
        stageTimestamp: new Date().toISOString(),
        latencyMs: Math.round(ms * 10) / 10,
        sourceIP: req.ip,
        userAgent: req.headers['user-agent'],
      }, 'audit');
    };
    // Blocking mode, as upstream's: the record is written when the response is about to go out,
    // so a client that hangs up after its request was carried out still leaves one.
    app.addHook('onSend', async (req, reply, payload) => {
      line(req, reply.statusCode, 'ResponseComplete', reply.elapsedTime);
      return payload;
    });
    upgradedHooks.push((req) => line(req, 101, 'ResponseStarted', 0));
  }
  upgradedHooks.push((req) => metrics.request(req.k8s?.verb ?? req.method.toLowerCase(), req.k8s?.resource ?? '', req.k8s?.subresource ?? '', 101, 0));

  // Upgrade requests (exec) go through the same routing, hooks and handlers; a
  // response bound to their socket carries any refusal as an ordinary answer.
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrades.set(req, { socket, head });
    app.routing(req, upgradeResponse(req, socket));
  });

  // ---- health, version, metrics ----------------------------------------------
  const healthz = async (_req: FastifyRequest, reply: FastifyReply) => {
    reply.type('text/plain; charset=utf-8');
    return 'ok';
  };
  app.get('/healthz', healthz);
  app.get('/livez', healthz);
  app.get('/readyz', async (req, reply) => {
    try {
      await storage.currentRevision();
    } catch {
      reply.code(500).type('text/plain; charset=utf-8');
      return '[-]etcd failed: reason withheld\nreadyz check failed';
    }
    reply.type('text/plain; charset=utf-8');
    return (req.query as Record<string, string>).verbose !== undefined ? '[+]ping ok\n[+]etcd ok\nreadyz check passed' : 'ok';
  });
  app.get('/version', async () => VERSION_INFO);
  app.get('/metrics', async (_req, reply) => {
    reply.type(metrics.contentType);
    return metrics.render();
  });

  // ---- discovery ---------------------------------------------------------------
  const advertise = opts.advertiseAddress ?? '127.0.0.1:6443';
  app.get('/api', async (req, reply) => {
    const v = aggregatedVersionWanted(req.headers.accept);
    if (v) return sendAggregated(reply, v, aggregatedDiscovery('core', v));
    return apiVersions(advertise);
  });
  app.get('/apis', async (req, reply) => {
    const v = aggregatedVersionWanted(req.headers.accept);
    if (v) return sendAggregated(reply, v, aggregatedDiscovery('groups', v));
    return apiGroupList();
  });
  app.get('/api/v1', async () => apiResourceList('', 'v1'));
  app.get('/apis/:group', async (req) => {
    const g = apiGroup((req.params as { group: string }).group);
    if (!g) throw notFoundPath();
    return g;
  });
  app.get('/apis/:group/:version', async (req) => {
    const { group, version } = req.params as { group: string; version: string };
    const list = apiResourceList(group, version);
    if (!list) throw notFoundPath();
    return list;
  });

  // ---- OpenAPI ---------------------------------------------------------------------
  let openapi: ReturnType<typeof buildOpenAPIv3> | undefined;
  const docs = () => (openapi ??= buildOpenAPIv3());
  app.get('/openapi/v3', async () => docs().index);
  app.get('/openapi/v3/*', async (req, reply) => {
    const key = (req.params as { '*': string })['*'].replace(/\/$/, '');
    const doc = docs().documents.get(key);
    if (!doc) throw notFoundPath();
    const hash = (req.query as { hash?: string }).hash;
    reply.header('Cache-Control', hash === doc.hash ? 'public, immutable' : 'no-cache, private').header('Etag', `"${doc.hash}"`);
    reply.type('application/json');
    return doc.body;
  });
  // kubectl probes the protobuf OpenAPI v2; a 404 makes it use what it knows.
  app.get('/openapi/v2', async () => {
    throw notFoundPath();
  });

  // ---- resources ---------------------------------------------------------------
  const resourceRoute = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    const info = parseRequestInfo(req.method, path, req.query as Record<string, string>);
    req.k8s = info;
    if (!info.isResourceRequest) throw notFoundPath();
    const def = resources.find((r) => r.group === info.apiGroup && r.version === info.apiVersion && r.resource === info.resource);
    if (!def) throw notFoundPath();
    return handleResource({ req, reply, info, def, registry, storage, ...(authorizer ? { authorizer } : {}), ...(rbac ? { rbac } : {}), ...(saTokens ? { saTokens } : {}), ...(authenticator ? { authenticator } : {}), opts: { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000, minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds ?? 1800, ...(opts.kubeletClient ? { kubeletClient: opts.kubeletClient } : {}), upgraded: (r) => upgradedHooks.forEach((h) => h(r)) } });
  };
  for (const prefix of ['/api/v1/*', '/apis/:group/:version/*']) {
    app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: prefix, handler: resourceRoute });
    app.route({ method: ['OPTIONS'], url: prefix, handler: async () => { throw methodNotAllowed(); } });
  }

  // ---- lifecycle -----------------------------------------------------------------
  const compaction = startCompaction(storage, () => cachers.values(), opts.compactionIntervalMs ?? 5 * 60_000, (err) => opts.logger && opts.logger.warn({ err }, 'compaction failed'));

  app.addHook('onReady', async () => {
    await Promise.all([...cachers.values()].map((c) => c.ready()));
    await bootstrap(registry, storage, { advertiseAddress: opts.advertiseAddress ?? '127.0.0.1:6443', scheme: opts.tls ? 'https' : 'http', rbac: authzMode === 'RBAC', ...(opts.logger ? { logger: opts.logger } : {}) });
  });
  app.addHook('preClose', async () => {
    for (const u of unsubscribe) u();
    compaction.stop();
    await Promise.all([...cachers.values()].map((c) => c.stop()));
  });
  app.addHook('onClose', async () => {
    storage.close();
  });

  return {
    app,
    storage,
    registry,
    metrics,
    compactOnce: compaction.compactOnce,
    close: () => app.close(),
  };
}

/**
 * Aggregated discovery must go out with its media-type parameters exactly as
 * written (kubectl switches decoders on them), so it bypasses fastify's
 * content-type normalisation.
 */
function sendAggregated(reply: FastifyReply, v: 'v2' | 'v2beta1', body: unknown): FastifyReply {
  const payload = JSON.stringify(body);
  reply.hijack();
  reply.raw.writeHead(200, {
    'Content-Type': v === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1,
    'Content-Length': Buffer.byteLength(payload),
    Vary: 'Accept',
  });
  reply.raw.end(payload);
  return reply;
}
