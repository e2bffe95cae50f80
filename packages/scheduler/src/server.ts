/**
 * The kube-scheduler process: the scheduler run while this process holds the
 * `kube-system/kube-scheduler` Lease (when leader election is on), with
 * /healthz, /readyz and /metrics on its own port (the component shell of
 * @kubeling/component-helpers).
 */
import type { Registry } from 'prom-client';
import { InformerFactory, RestClient } from '@kubeling/client';
import { ComponentShell, type ComponentOptions } from '@kubeling/component-helpers';
import type { SchedulerConfig } from './framework/profile.js';
import { Scheduler } from './scheduler.js';

const USER_AGENT = 'kube-scheduler/v1.32.0 (kubeling)';

export interface SchedulerServerOptions extends ComponentOptions {
  scheduler: SchedulerConfig;
}

export class SchedulerServer {
  private readonly shell: ComponentShell;
  readonly client: RestClient;
  private readonly eventClient: RestClient;
  readonly metrics: Registry;
  readonly identity: string;
  scheduler: Scheduler | undefined;
  private informers: InformerFactory | undefined;

  constructor(private readonly o: SchedulerServerOptions) {
    this.shell = new ComponentShell(
      { ...o, name: 'kube-scheduler', userAgent: USER_AGENT, defaultQps: 50, defaultBurst: 100 },
      { start: () => this.startScheduling(), stop: () => this.stopScheduling() },
    );
    this.client = this.shell.client;
    this.eventClient = new RestClient(o.config, { qps: o.qps ?? 50, burst: o.burst ?? 100, userAgent: USER_AGENT });
    this.metrics = this.shell.metrics;
    this.identity = this.shell.identity;
  }

  /** Whether the scheduler runs (this process leads, or leader election is off). */
  get leading(): boolean {
    return this.shell.leading;
  }

  /** Serves health and metrics, then schedules now (no leader election) or once the Lease is won. */
  start(): Promise<void> {
    return this.shell.start();
  }

  private async startScheduling(): Promise<void> {
    this.informers = new InformerFactory(this.client, { onError: (e) => this.o.log.debug({ err: String(e) }, 'informer error') });
    // One metrics registry across leadership terms: metrics register once.
    const first = !this.scheduler;
    const s = new Scheduler({
      client: this.client,
      eventClient: this.eventClient,
      informers: this.informers,
      config: this.o.scheduler,
      log: this.o.log,
      ...(first ? { metrics: this.metrics } : {}),
    });
    this.scheduler = s;
    s.init();
    this.informers.start();
    await s.run();
    this.o.log.info({ profiles: this.o.scheduler.profiles.map((p) => p.schedulerName) }, 'scheduling');
  }

  private async stopScheduling(): Promise<void> {
    this.informers?.stop();
    await this.scheduler?.stop();
  }

  get address(): { port: number } | undefined {
    return this.shell.address;
  }

  /** Stops scheduling, releases the Lease if held, closes the health server and both clients. */
  async stop(): Promise<void> {
    await this.shell.stop();
    this.eventClient.close();
  }
}
