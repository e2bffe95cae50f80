/**
 * The kubelet: registers its Node, keeps the Lease and status fresh, watches
 * only its pods (`spec.nodeName=<node>`), runs a worker per pod, and relists
 * the runtime every second (a polling PLEG) so container exits reach the pods'
 * workers. CSI drivers register through `<root-dir>/plugins_registry/`; the
 * node's CSINode is made at start; the volume manager mounts the pods' claim
 * volumes, and its volumes in use reach the node's status. It talks to the
 * runtime only through CRI: over gRPC to the endpoint it is given, or to a
 * runtime its caller built in the same process (the hollow kubelets of the
 * scale benchmark).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { EventRecorder, Informer, RestClient, type ClientConfig } from '@kubeling/client';
import { GrpcRuntime, type CriRuntime } from '@kubeling/cri';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { defaultCapacity, NodeManager } from './node.js';
import { LABEL_POD_UID, PodManager } from './pods.js';
import type { Taint } from './kinds.js';
import { KubeletServer } from './server.js';
import { StatsProvider, type RuntimeLists } from './stats.js';
import { DriverRegistry } from './csi/drivers.js';
import { NodeInfoManager } from './csi/nodeinfo.js';
import { PluginWatcher } from './csi/plugin-watcher.js';
import { CSI_PLUGIN_TYPE, CsiPluginHandler } from './csi/registration.js';
import { volumeApi } from './volumemanager/api.js';
import { VolumeManager } from './volumemanager/volume-manager.js';

export interface KubeletOptions {
  config: ClientConfig;
  nodeName: string;
  nodeIP?: string;
  /** The CRI runtime: `unix:///path` of a CRI server, or a runtime in this process, owned by the caller. */
  runtime: string | CriRuntime;
  rootDir: string;
  maxPods?: number;
  labels?: Record<string, string>;
  taints?: Taint[];
  capacity?: Record<string, string>;
  address?: string;
  port?: number;
  /** HTTPS for the kubelet's server with client certificates, and webhook authorization through the apiserver. */
  tls?: { cert: string; key: string; clientCA: string };
  authorizationWebhook?: boolean;
  qps?: number;
  burst?: number;
  log: Logger;
  leaseDurationSeconds?: number;
  /** The cluster DNS servers pods of dnsPolicy ClusterFirst use (`--cluster-dns`), the cluster domain, and the host's resolv.conf. */
  clusterDNS?: string[];
  clusterDomain?: string;
  resolvConf?: string;
  /** Test knobs: lease renew and status intervals, crash back-off. */
  leaseRenewMs?: number;
  statusUpdateMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  plegPeriodMs?: number;
  /** Test knobs of the volume manager: how long a pod waits for its volumes before a FailedMount event, how often expansions are checked. */
  volumeMountTimeoutMs?: number;
  resizeCheckMs?: number;
  pluginScanMs?: number;
}

export class Kubelet {
  readonly client: RestClient;
  readonly runtime: CriRuntime;
  readonly metrics = new Registry();
  readonly node: NodeManager;
  readonly pods: PodManager;
  readonly stats: StatsProvider;
  readonly drivers = new DriverRegistry();
  readonly volumes: VolumeManager;
  private readonly nodeInfo: NodeInfoManager;
  private readonly plugins: PluginWatcher;
  private readonly server: KubeletServer;
  private informer: Informer | undefined;
  /** This node's own Node object. */
  private nodeInformer: Informer | undefined;
  private plegTimer: NodeJS.Timeout | undefined;
  private housekeepingTimer: NodeJS.Timeout | undefined;
  private lastStates = new Map<string, string>();
  private stopped = false;
  port = 0;

  constructor(private readonly o: KubeletOptions) {
    this.client = new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: `kubelet/v1.32.0 (kubeling) ${o.nodeName}` });
    this.runtime = typeof o.runtime === 'string' ? new GrpcRuntime(o.runtime) : o.runtime;
    const nodeIP = o.nodeIP ?? '127.0.0.1';
    mkdirSync(o.rootDir, { recursive: true });
    this.node = new NodeManager({
      nodeName: o.nodeName,
      nodeIP,
      labels: o.labels ?? {},
      taints: o.taints ?? [],
      capacity: o.capacity ?? defaultCapacity(o.maxPods ?? 110),
      kubeletPort: () => this.port,
      client: this.client,
      runtime: this.runtime,
      log: o.log,
      ...(o.leaseRenewMs ? { renewIntervalMs: o.leaseRenewMs } : {}),
      ...(o.leaseDurationSeconds ? { leaseDurationSeconds: o.leaseDurationSeconds } : {}),
      ...(o.statusUpdateMs ? { statusUpdateMs: o.statusUpdateMs } : {}),
      volumesInUse: () => this.volumes.volumesInUse(),
    });
    const recorder = new EventRecorder(
      new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: `kubelet/v1.32.0 (kubeling) ${o.nodeName}` }),
      { component: 'kubelet', host: o.nodeName },
    );
    this.volumes = new VolumeManager({
      nodeName: o.nodeName,
      rootDir: o.rootDir,
      drivers: this.drivers,
      api: volumeApi(this.client, recorder),
      log: o.log,
      trigger: (uid, delayMs) => this.pods.trigger(uid, delayMs),
      reportedInUse: () => this.node.reportedVolumesInUse(),
      requestStatusUpdate: () => this.node.requestStatusUpdate(),
      ...(o.volumeMountTimeoutMs ? { mountTimeoutMs: o.volumeMountTimeoutMs } : {}),
      ...(o.resizeCheckMs ? { resizeCheckMs: o.resizeCheckMs } : {}),
    });
    this.nodeInfo = new NodeInfoManager(this.client, o.nodeName);
    this.plugins = new PluginWatcher({
      dir: join(o.rootDir, 'plugins_registry'),
      handlers: { [CSI_PLUGIN_TYPE]: new CsiPluginHandler(this.drivers, this.nodeInfo, o.log) },
      log: o.log,
      ...(o.pluginScanMs ? { scanIntervalMs: o.pluginScanMs } : {}),
    });
    this.pods = new PodManager({
      nodeName: o.nodeName,
      nodeIP,
      rootDir: o.rootDir,
      client: this.client,
      runtime: this.runtime,
      recorder,
      log: o.log,
      allocatable: () => this.node.allocatable(),
      // The Node as the API has it (labels others set count, as upstream's node lister gives them), else our own.
      nodeLabels: () => this.nodeInformer?.store.list()[0]?.metadata.labels ?? this.node.labels(),
      volumes: this.volumes,
      ...(o.backoffInitialMs ? { backoffInitialMs: o.backoffInitialMs } : {}),
      ...(o.backoffMaxMs ? { backoffMaxMs: o.backoffMaxMs } : {}),
      clusterDNS: o.clusterDNS ?? [],
      clusterDomain: o.clusterDomain ?? 'cluster.local',
      resolvConf: o.resolvConf ?? '/etc/resolv.conf',
    });
    collectDefaultMetrics({ register: this.metrics });
    const self = this;
    new Gauge({
      name: 'kubelet_running_pods',
      help: 'Number of pods that have a running pod sandbox',
      registers: [this.metrics],
      collect() {
        this.set(self.pods.podCount);
      },
    });
    this.plegRelist = new Counter({
      name: 'kubelet_pleg_relist_total',
      help: 'Relists of the runtime by the pod lifecycle event generator.',
      registers: [this.metrics],
    });
    this.stats = new StatsProvider({ nodeName: o.nodeName, runtime: this.runtime, lists: () => this.relisted });
    this.server = new KubeletServer({
      pods: this.pods,
      runtime: this.runtime,
      metrics: this.metrics,
      stats: this.stats,
      address: o.address ?? '127.0.0.1',
      port: o.port ?? 10250,
      ...(o.tls ? { tls: o.tls } : {}),
      ...(o.authorizationWebhook ? { authorizer: { client: this.client, nodeName: o.nodeName } } : {}),
    });
  }

  private readonly plegRelist: Counter;
  /** The runtime's lists as the last relist saw them, for the stats. */
  private relisted: RuntimeLists | undefined;

  async start(): Promise<void> {
    await this.pods.init();
    this.port = await this.server.start();
    await this.node.register();
    this.node.start();
    this.volumes.start();
    void this.initCSINode();
    this.plugins.start();
    this.nodeInformer = new Informer(
      this.client,
      { path: '/api/v1/nodes', fieldSelector: `metadata.name=${this.o.nodeName}` },
      { onError: (e) => this.o.log.debug({ err: String(e) }, 'node watch error') },
    );
    this.nodeInformer.start();
    await this.nodeInformer.synced();
    this.informer = new Informer(
      this.client,
      { path: '/api/v1/pods', fieldSelector: `spec.nodeName=${this.o.nodeName}` },
      { onError: (e) => this.o.log.debug({ err: String(e) }, 'pod watch error') },
    );
    this.informer.addEventHandler({
      add: (p) => this.pods.upsert(p),
      update: (_o, p) => this.pods.upsert(p),
      delete: (p) => this.pods.remove(p as KubeObject),
    });
    this.informer.start();
    await this.informer.synced();
    this.startPleg();
    this.o.log.info({ node: this.o.nodeName, port: this.port }, 'kubelet started');
  }

  private startPleg(): void {
    const period = this.o.plegPeriodMs ?? 1000;
    const tick = async () => {
      this.plegRelist.inc();
      const next = new Map<string, string>();
      const changed = new Set<string>();
      const containers = await this.runtime.listContainers();
      for (const c of containers) {
        const uid = c.labels?.[LABEL_POD_UID];
        if (!uid) continue;
        next.set(c.id, `${uid}|${c.state}`);
        if (this.lastStates.get(c.id) !== `${uid}|${c.state}`) changed.add(uid);
      }
      for (const [id, v] of this.lastStates) if (!next.has(id)) changed.add(v.split('|')[0]!);
      const sandboxes = await this.runtime.listPodSandbox();
      this.relisted = { sandboxes, containers };
      for (const sb of sandboxes) {
        const uid = sb.labels?.[LABEL_POD_UID];
        const key = `sandbox:${sb.id}`;
        if (!uid) continue;
        next.set(key, `${uid}|${sb.state}`);
        if (this.lastStates.get(key) !== `${uid}|${sb.state}`) changed.add(uid);
      }
      this.lastStates = next;
      for (const uid of changed) this.pods.trigger(uid);
    };
    const loop = () => {
      void tick()
        .catch((e) => this.o.log.warn({ err: (e as Error).message }, 'runtime relist failed'))
        .finally(() => {
          if (!this.stopped) this.plegTimer = setTimeout(loop, period);
        });
    };
    loop();
    this.housekeepingTimer = setInterval(() => void this.pods.housekeeping().catch(() => undefined), 5000);
    this.housekeepingTimer.unref();
  }

  /**
   * The node's CSINode, made at start even with no driver (initializeCSINode):
   * tried a few times with a growing delay, as upstream's backoff does; a
   * driver's registration makes it later if it is still missing.
   */
  private async initCSINode(): Promise<void> {
    for (let attempt = 0, delay = 250; !this.stopped; attempt++, delay *= 3) {
      try {
        await this.nodeInfo.initialize();
        return;
      } catch (e) {
        if (attempt >= 5) {
          this.o.log.warn({ err: (e as Error).message }, 'failed to initialize CSINode');
          return;
        }
      }
      await new Promise((r) => setTimeout(r, delay).unref());
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.plegTimer) clearTimeout(this.plegTimer);
    if (this.housekeepingTimer) clearInterval(this.housekeepingTimer);
    this.informer?.stop();
    this.nodeInformer?.stop();
    this.node.stop();
    await this.plugins.stop();
    this.volumes.stop();
    this.drivers.close();
    this.pods.close();
    await this.server.stop();
    this.client.close();
    // A runtime given as an object is its caller's to stop.
    if (typeof this.o.runtime === 'string') this.runtime.close?.();
  }
}
