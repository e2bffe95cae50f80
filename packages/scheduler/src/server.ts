/**
 * The kube-scheduler process: the scheduler run while this process holds the
 * `kube-system/kube-scheduler` Lease (when leader election is on), with
 * /healthz, /readyz and /metrics on its own port.
 */
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { InformerFactory, LeaderElector, RestClient, type ClientConfig, serveHealth } from '@kubeling/client';
import type { SchedulerConfig } from './framework/profile.js';
import { Scheduler } from './scheduler.js';

export interface SchedulerServerOptions {
  config: ClientConfig;
  scheduler: SchedulerConfig;
  leaderElect: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  qps?: number;
  burst?: number;
  identity?: string;
  log: Logger;
  bindAddress?: string;
  port?: number;
}

export class SchedulerServer {
  readonly client: RestClient;
  private readonly eventClient: RestClient;
  readonly metrics = new Registry();
  readonly identity: string;
  scheduler: Scheduler | undefined;
  private informers: InformerFactory | undefined;
  private elector: LeaderElector | undefined;
  private server: Server | undefined;
  leading = false;

  constructor(private readonly o: SchedulerServerOptions) {
    const ua = 'kube-scheduler/v1.32.0 (kubeling)';
    this.client = new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: ua });
    this.eventClient = new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: ua });
    this.identity = o.identity ?? `${hostname()}_${process.pid}`;
    collectDefaultMetrics({ register: this.metrics });
    const self = this;
    new Gauge({ name: 'leader_election_master_status', help: 'Whether this process is the leader (1) or not (0).', labelNames: ['name'], registers: [this.metrics], collect() { this.set({ name: 'kube-scheduler' }, self.leading ? 1 : 0); } });
  }

  async start(): Promise<void> {
    await this.serve();
    if (!this.o.leaderElect) return this.startScheduling();
    this.elector = new LeaderElector(this.client, {
      namespace: 'kube-system',
      name: 'kube-scheduler',
      identity: this.identity,
      ...(this.o.leaseDurationMs ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
      ...(this.o.renewDeadlineMs ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
      ...(this.o.retryPeriodMs ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
      onStartedLeading: () => {
        this.o.log.info({ identity: this.identity }, 'became leader');
        void this.startScheduling();
      },
      onStoppedLeading: () => {
        this.o.log.warn({ identity: this.identity }, 'lost leadership');
        void this.stopScheduling();
      },
    });
    this.elector.start();
  }

  private async startScheduling(): Promise<void> {
    this.leading = true;
    this.informers = new InformerFactory(this.client, { onError: (e) => this.o.log.debug({ err: String(e) }, 'informer error') });
    // One metrics registry across leadership terms: metrics register once.
    const first = !this.scheduler;
    const s = new Scheduler({ client: this.client, eventClient: this.eventClient, informers: this.informers, config: this.o.scheduler, log: this.o.log, ...(first ? { metrics: this.metrics } : {}) });
    this.scheduler = s;
    s.init();
    this.informers.start();
    await s.run();
    this.o.log.info({ profiles: this.o.scheduler.profiles.map((p) => p.schedulerName) }, 'scheduling');
  }

  private async stopScheduling(): Promise<void> {
    this.leading = false;
    this.informers?.stop();
    await this.scheduler?.stop();
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
    await this.stopScheduling();
    await this.elector?.stop();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.client.close();
    this.eventClient.close();
  }
}
