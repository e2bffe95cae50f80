/**
 * The controller-manager: one process, many controllers over one shared informer
 * factory, run only while this process holds the leader lease (when leader
 * election is on), with /healthz and /metrics on its own port.
 */
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics, Gauge } from 'prom-client';
import { EventRecorder, InformerFactory, LeaderElector, RestClient, type ClientConfig, serveHealth } from '@kubeling/client';
import type { Controller, PodGCSettings } from './context.js';
import { selectControllers } from './controllers/index.js';

export interface ManagerOptions {
  config: ClientConfig;
  controllers: string[];
  leaderElect: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  qps?: number;
  burst?: number;
  workers?: number;
  nodeMonitorGracePeriodMs?: number;
  nodeMonitorPeriodMs?: number;
  podGC?: Partial<PodGCSettings>;
  identity?: string;
  log: Logger;
  bindAddress?: string;
  port?: number;
}

export class ControllerManager {
  readonly client: RestClient;
  private informers: InformerFactory | undefined;
  private running: Controller[] = [];
  private abort: AbortController | undefined;
  private elector: LeaderElector | undefined;
  private server: Server | undefined;
  readonly metrics = new Registry();
  readonly identity: string;
  leading = false;

  constructor(private readonly o: ManagerOptions) {
    this.client = new RestClient(o.config, { qps: o.qps ?? 20, burst: o.burst ?? 30, userAgent: 'kube-controller-manager/v1.32.0 (kubeling)' });
    this.identity = o.identity ?? `${hostname()}_${process.pid}`;
    collectDefaultMetrics({ register: this.metrics });
    const self = this;
    new Gauge({ name: 'leader_election_master_status', help: 'Whether this process is the leader (1) or not (0).', labelNames: ['name'], registers: [this.metrics], collect() { this.set({ name: 'kube-controller-manager' }, self.leading ? 1 : 0); } });
    new Gauge({ name: 'rest_client_requests_total', help: 'Requests this process sent to the apiserver.', registers: [this.metrics], collect() { this.set(self.client.requestCount); } });
  }

  async start(): Promise<void> {
    await this.serve();
    if (!this.o.leaderElect) return this.startControllers();
    this.elector = new LeaderElector(this.client, {
      namespace: 'kube-system',
      name: 'kube-controller-manager',
      identity: this.identity,
      ...(this.o.leaseDurationMs ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
      ...(this.o.renewDeadlineMs ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
      ...(this.o.retryPeriodMs ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
      onStartedLeading: () => {
        this.o.log.info({ identity: this.identity }, 'became leader');
        void this.startControllers();
      },
      onStoppedLeading: () => {
        this.o.log.warn({ identity: this.identity }, 'lost leadership');
        this.stopControllers();
      },
    });
    this.elector.start();
  }

  private async startControllers(): Promise<void> {
    this.leading = true;
    this.abort = new AbortController();
    // Every controller waits on this one signal (a listener each, some for a periodic wait too): more than
    // EventTarget's default of 10 is expected here, not a leak.
    setMaxListeners(4 * selectControllers(this.o.controllers).length + 10, this.abort.signal);
    this.informers = new InformerFactory(this.client, { onError: (e) => this.o.log.debug({ err: String(e) }, 'informer error') });
    const recorders = new Map<string, EventRecorder>();
    const recorder = (component: string) => recorders.get(component) ?? recorders.set(component, new EventRecorder(this.client, { component })).get(component)!;
    const ctx = {
      client: this.client,
      informers: this.informers,
      log: this.o.log,
      workers: this.o.workers ?? 5,
      recorder,
      ...(this.o.nodeMonitorGracePeriodMs ? { nodeMonitorGracePeriodMs: this.o.nodeMonitorGracePeriodMs } : {}),
      ...(this.o.nodeMonitorPeriodMs ? { nodeMonitorPeriodMs: this.o.nodeMonitorPeriodMs } : {}),
      ...(this.o.podGC ? { podGC: this.o.podGC } : {}),
    };
    this.running = selectControllers(this.o.controllers).map((d) => d.create(ctx));
    for (const c of this.running) c.init();
    this.informers.start();
    await this.informers.waitForSync();
    if (this.abort.signal.aborted) return;
    this.o.log.info({ controllers: this.running.map((c) => c.name) }, 'controllers started');
    for (const c of this.running) void c.run(this.abort.signal);
  }

  private stopControllers(): void {
    this.leading = false;
    this.abort?.abort();
    this.informers?.stop();
    this.running = [];
  }

  private async serve(): Promise<void> {
    if (this.o.port === undefined) return;
    this.server = await serveHealth(this.metrics, this.o.port, this.o.bindAddress);
  }

  get address(): { port: number } | undefined {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { port: a.port } : undefined;
  }

  async stop(): Promise<void> {
    this.stopControllers();
    await this.elector?.stop();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.client.close();
  }
}
