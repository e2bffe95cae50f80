/**
 * The controller-manager: one process, many controllers over one shared informer
 * factory, run only while this process holds the leader lease (when leader
 * election is on), with /healthz and /metrics on its own port (the component
 * shell of @kubeling/component-helpers).
 */
import { setMaxListeners } from 'node:events';
import { Gauge, type Registry } from 'prom-client';
import { EventRecorder, InformerFactory, type RestClient } from '@kubeling/client';
import { ComponentShell, type ComponentOptions } from '@kubeling/component-helpers';
import type { Controller, CSRCleanerSettings, CSRSigningSettings, PodGCSettings } from './context.js';
import type { HPASettings } from './controllers/podautoscaler/controller.js';
import { selectControllers } from './controllers/index.js';

export interface ManagerOptions extends ComponentOptions {
  controllers: string[];
  workers?: number;
  nodeMonitorGracePeriodMs?: number;
  nodeMonitorPeriodMs?: number;
  podGC?: Partial<PodGCSettings>;
  csrSigning?: CSRSigningSettings;
  csrCleaner?: Partial<CSRCleanerSettings>;
  /** PEM of the ServiceAccount signing key (--service-account-private-key-file): legacy token Secrets are filled with tokens it signs. */
  serviceAccountKeyPem?: string;
  /** PEM of the cluster CA put in token Secrets (--root-ca-file); the client's CA when left out. */
  rootCAPem?: string;
  /** The horizontal pod autoscaler's settings (--horizontal-pod-autoscaler-*); tests also inject its metrics source. */
  hpa?: Partial<HPASettings>;
}

export class ControllerManager {
  private readonly shell: ComponentShell;
  readonly client: RestClient;
  readonly metrics: Registry;
  readonly identity: string;
  private informers: InformerFactory | undefined;
  private running: Controller[] = [];
  private abort: AbortController | undefined;

  constructor(private readonly o: ManagerOptions) {
    this.shell = new ComponentShell(
      { ...o, name: 'kube-controller-manager', userAgent: 'kube-controller-manager/v1.32.0 (kubeling)', defaultQps: 20, defaultBurst: 30 },
      { start: () => this.startControllers(), stop: () => this.stopControllers() },
    );
    this.client = this.shell.client;
    this.metrics = this.shell.metrics;
    this.identity = this.shell.identity;
    const client = this.client;
    new Gauge({
      name: 'rest_client_requests_total',
      help: 'Requests this process sent to the apiserver.',
      registers: [this.metrics],
      collect() {
        this.set(client.requestCount);
      },
    });
  }

  /** Whether the controllers run (this process leads, or leader election is off). */
  get leading(): boolean {
    return this.shell.leading;
  }

  /** Serves health and metrics, then runs the controllers now (no leader election) or once the lease is won. */
  start(): Promise<void> {
    return this.shell.start();
  }

  private async startControllers(): Promise<void> {
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
      ...(this.o.csrSigning ? { csrSigning: this.o.csrSigning } : {}),
      ...(this.o.csrCleaner ? { csrCleaner: this.o.csrCleaner } : {}),
      ...(this.o.serviceAccountKeyPem ? { serviceAccountKeyPem: this.o.serviceAccountKeyPem } : {}),
      ...(this.o.rootCAPem ? { rootCAPem: this.o.rootCAPem } : {}),
      ...(this.o.hpa ? { hpa: this.o.hpa } : {}),
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
    this.abort?.abort();
    this.informers?.stop();
    this.running = [];
  }

  get address(): { port: number } | undefined {
    return this.shell.address;
  }

  /** Stops the controllers, releases the lease if held, closes the health server and the client. */
  stop(): Promise<void> {
    return this.shell.stop();
  }
}
