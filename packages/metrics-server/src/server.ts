/**
 * The metrics server process as one object: its client to the apiserver,
 * node and pod informers, the scrape loop and store, the delegated
 * authentication configuration (kube-system/extension-apiserver-authentication
 * unless given), and the HTTPS server of metrics.k8s.io/v1beta1.
 *
 * `start()` serves at once (health answers while the informers sync; /readyz
 * waits for them and for the first usable points), reads the authentication
 * ConfigMap, then starts scraping once the informers have synced. `stop()` ends the loop, the informers, the server
 * and the client. Tests run it in-process on port 0.
 */
import { hostname } from 'node:os';
import { createServer, type Server } from 'node:https';
import type { Logger } from 'pino';
import type { KubeObject } from '@kubeling/api';
import { isNotFound } from '@kubeling/apimachinery';
import { type ClientConfig, type Informer, InformerFactory, RestClient } from '@kubeling/client';
import { createCA, issue } from '@kubeling/pki';
import type { Listers } from './api.js';
import { type AuthConfig, Authenticator, Authorizer, type RequestHeaderConfig } from './auth.js';
import { createHandler, type HealthCheck } from './handler.js';
import { type KubeletClientOptions, Scraper } from './scraper.js';
import { MetricsStorage } from './storage.js';

export const AUTH_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

export interface MetricsServerOptions {
  /** How to reach the apiserver (its identity needs the RBAC of metrics-server's ClusterRole). */
  config: ClientConfig;
  /** A client to use instead of one built from `config` (not closed by stop). */
  client?: RestClient;
  bindAddress?: string;
  /** The HTTPS port (4443; 0 for any free port). */
  port?: number;
  /** Serving certificate; a self-signed one is made at start without it. */
  tls?: { certPem: string; keyPem: string } | undefined;
  /** The scrape period in ms (15 s). */
  resolutionMs?: number;
  /** Kubelets scraped at once (20). */
  concurrency?: number;
  kubelet: KubeletClientOptions;
  /** The request-header settings (--requestheader-client-ca-file…); read from the ConfigMap when left out. */
  requestHeader?: RequestHeaderConfig | undefined;
  /** The client CA bundle (--client-ca-file); read from the ConfigMap when left out. */
  clientCA?: string | undefined;
  qps?: number;
  burst?: number;
  log: Logger;
}

/** Upstream's request-header defaults (DelegatingAuthenticationOptions). */
export const REQUEST_HEADER_DEFAULTS = { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefix: ['X-Remote-Extra-'] };

/** A JSON list of strings from the ConfigMap, [] when absent or malformed. */
function jsonList(v: string | undefined): string[] {
  if (!v) return [];
  try {
    const a: unknown = JSON.parse(v);
    return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** The authentication settings extension-apiserver-authentication carries (cluster authentication trust controller). */
export function authConfigFromConfigMap(data: Record<string, string> | undefined): AuthConfig {
  const d = data ?? {};
  const cfg: AuthConfig = {};
  if (d['client-ca-file']) cfg.clientCA = d['client-ca-file'];
  if (d['requestheader-client-ca-file']) {
    cfg.requestHeader = {
      clientCA: d['requestheader-client-ca-file'],
      allowedNames: jsonList(d['requestheader-allowed-names']),
      usernameHeaders: jsonList(d['requestheader-username-headers']),
      groupHeaders: jsonList(d['requestheader-group-headers']),
      extraHeadersPrefix: jsonList(d['requestheader-extra-headers-prefix']),
    };
  }
  return cfg;
}

/** A serving certificate signed by a throwaway CA, for localhost and the bind address (GenerateSelfSignedCertKey). */
async function selfSigned(bindAddress: string): Promise<{ certPem: string; keyPem: string }> {
  const now = Math.floor(Date.now() / 1000);
  const ca = await createCA(`${hostname()}-ca@${now}`);
  const ips = [...new Set(['127.0.0.1', bindAddress].filter((a) => a !== '0.0.0.0' && a !== '::'))];
  return issue(ca, { commonName: `${hostname()}@${now}`, dnsNames: ['localhost'], ips, usage: 'server' });
}

export class MetricsServer {
  readonly client: RestClient;
  readonly storage: MetricsStorage;
  readonly scraper: Scraper;
  readonly authn: Authenticator;
  private readonly informers: InformerFactory;
  private readonly nodes: Informer;
  private readonly pods: Informer;
  private authInformer: Informer | undefined;
  private server: Server | undefined;
  private serving: { certPem: string; keyPem: string } | undefined;
  private readonly resolutionMs: number;
  private synced = false;
  private stopped = false;

  constructor(private readonly o: MetricsServerOptions) {
    this.client = o.client ?? new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: 'kubeling-metrics-server' });
    this.resolutionMs = o.resolutionMs ?? 15_000;
    this.storage = new MetricsStorage(this.resolutionMs, o.log);
    this.informers = new InformerFactory(this.client, { onError: (e) => o.log.warn({ err: (e as Error).message }, 'informer error') });
    this.nodes = this.informers.informer({ path: '/api/v1/nodes' });
    this.pods = this.informers.informer({ path: '/api/v1/pods' });
    this.scraper = new Scraper({
      nodes: () => this.nodes.store.list(),
      storage: this.storage,
      resolutionMs: this.resolutionMs,
      ...(o.concurrency ? { concurrency: o.concurrency } : {}),
      kubelet: o.kubelet,
      log: o.log,
    });
    this.authn = new Authenticator(this.client);
    this.authn.setConfig({ requestHeader: o.requestHeader, clientCA: o.clientCA });
  }

  /** Reads nodes and pods from the informers' stores. */
  get listers(): Listers {
    const nodes = this.nodes.store;
    const pods = this.pods.store;
    return {
      node: (name) => nodes.get(name),
      nodes: () => nodes.list(),
      pod: (ns, name) => pods.get(`${ns}/${name}`),
      pods: (ns) => (ns === undefined ? pods.list() : pods.byIndex('namespace', ns)),
    };
  }

  async start(): Promise<void> {
    const o = this.o;
    this.serving = o.tls ?? (await selfSigned(o.bindAddress ?? '127.0.0.1'));
    const live: HealthCheck[] = [
      {
        name: 'metric-collection-timely',
        // A cycle that has not started for 1.5 resolutions means the loop is stuck (server.go probeMetricCollectionTimely).
        check: () => {
          const last = this.scraper.lastCycleStartMs;
          return last && Date.now() - last > this.resolutionMs * 1.5 ? `last scrape started ${Date.now() - last} ms ago` : undefined;
        },
      },
    ];
    const ready: HealthCheck[] = [
      { name: 'informer-sync', check: () => (this.synced ? undefined : 'informers not synced') },
      { name: 'metric-storage-ready', check: () => (this.storage.ready() ? undefined : 'no metrics to serve') },
    ];
    const handler = createHandler({
      authn: this.authn,
      authz: new Authorizer(this.client),
      listers: this.listers,
      storage: this.storage,
      live,
      ready,
      log: o.log,
    });
    this.server = createServer({ ...this.secureContext(), requestCert: true, rejectUnauthorized: false }, handler);
    this.server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(o.port ?? 4443, o.bindAddress ?? '127.0.0.1', () => {
        this.server!.off('error', reject);
        resolve();
      });
    });
    // Serving first (health answers while the apiserver is slow), then the trust it delegates.
    await this.loadAuthConfig();
    this.informers.start();
    void this.informers.waitForSync().then(() => {
      if (this.stopped) return;
      this.synced = true;
      this.scraper.start();
    });
  }

  /** Resolves once the informers have synced and the scrape loop runs. */
  async waitForSync(): Promise<void> {
    await this.informers.waitForSync();
  }

  private secureContext() {
    const cas = this.authn.trustedCAs();
    return { cert: this.serving!.certPem, key: this.serving!.keyPem, ...(cas.length ? { ca: cas } : {}) };
  }

  /**
   * What the flags did not give comes from the ConfigMap, read once now and
   * then followed by an informer (a rotated CA is trusted without a restart).
   * A ConfigMap that cannot be read is tolerated: certificate authentication
   * stays off until it can be.
   */
  private async loadAuthConfig(): Promise<void> {
    const o = this.o;
    if (o.requestHeader && o.clientCA) return;
    const apply = (cm: KubeObject | undefined) => {
      const fromCM = authConfigFromConfigMap(cm?.data as Record<string, string> | undefined);
      this.authn.setConfig({ requestHeader: o.requestHeader ?? fromCM.requestHeader, clientCA: o.clientCA ?? fromCM.clientCA });
      if (this.server && this.serving) this.server.setSecureContext(this.secureContext());
    };
    const path = `/api/v1/namespaces/${AUTH_CONFIGMAP.namespace}/configmaps/${AUTH_CONFIGMAP.name}`;
    try {
      apply(await this.client.get<KubeObject>(path));
    } catch (e) {
      if (!isNotFound(e))
        o.log.warn(
          { configMap: `${AUTH_CONFIGMAP.namespace}/${AUTH_CONFIGMAP.name}`, err: (e as Error).message },
          'unable to read the authentication ConfigMap',
        );
    }
    this.authInformer = new InformerFactory(this.client, {
      onError: (e) => o.log.debug({ err: (e as Error).message }, 'authentication ConfigMap watch'),
    }).informer({
      path: `/api/v1/namespaces/${AUTH_CONFIGMAP.namespace}/configmaps`,
      fieldSelector: `metadata.name=${AUTH_CONFIGMAP.name}`,
    });
    this.authInformer.addEventHandler({ add: apply, update: (_a, b) => apply(b), delete: () => apply(undefined) });
    this.authInformer.start();
  }

  /** The port the server listens on. */
  get address(): { port: number } | undefined {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { port: a.port } : undefined;
  }

  get identity(): string {
    return `${hostname()}_${process.pid}`;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.scraper.stop();
    this.informers.stop();
    this.authInformer?.stop();
    await new Promise<void>((r) => {
      if (!this.server) return r();
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
    if (!this.o.client) this.client.close();
  }
}
