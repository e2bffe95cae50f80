/**
 * What every controller gets: the shared REST client and informer factory, and a
 * logger. Controllers read from informer stores (read-only objects) and write
 * through the REST client.
 */
import type { Logger } from 'pino';
import type { EventRecorder, InformerFactory, RestClient } from '@kubeling/client';
import type { HPASettings } from './controllers/podautoscaler/controller.js';

export interface ControllerContext {
  client: RestClient;
  informers: InformerFactory;
  log: Logger;
  /** Records Events about objects (source component `<controller>-controller`). */
  recorder(component: string): EventRecorder;
  /** Worker loops per controller. */
  workers: number;
  /** Node lifecycle timing (upstream: 50 s grace, 5 s period). */
  nodeMonitorGracePeriodMs?: number;
  nodeMonitorPeriodMs?: number;
  /** Pod GC: period, terminated-pod threshold, quarantine of missing nodes (upstream: 20 s, 12,500, 40 s). */
  podGC?: Partial<PodGCSettings>;
  /** The CSR signer's CA and longest validity (upstream --cluster-signing-cert-file/-key-file/-duration). */
  csrSigning?: CSRSigningSettings;
  /** CSR cleaner timing (upstream: a pass an hour; approved/denied/failed kept 1 h, pending 24 h). */
  csrCleaner?: Partial<CSRCleanerSettings>;
  /** The ServiceAccount signing key (PEM), for legacy token Secrets. */
  serviceAccountKeyPem?: string;
  /** The cluster CA (PEM) token Secrets carry; the client's CA when absent. */
  rootCAPem?: string;
  /** The horizontal pod autoscaler's timing and tolerance (--horizontal-pod-autoscaler-*), and an injected metrics source for tests. */
  hpa?: Partial<HPASettings>;
}

export interface CSRSigningSettings {
  certPem: string;
  keyPem: string;
  /** Default 1 year (8760h). */
  durationMs?: number;
}

export interface CSRCleanerSettings {
  periodMs: number;
  approvedMs: number;
  deniedMs: number;
  pendingMs: number;
  /** The cleaner's clock (ms since the epoch). */
  now: () => number;
}

export interface PodGCSettings {
  periodMs: number;
  terminatedThreshold: number;
  quarantineMs: number;
}

export interface Controller {
  readonly name: string;
  /** Registers informers and handlers; called before the factory starts. */
  init(): void;
  /** Runs the workers until the signal aborts. */
  run(signal: AbortSignal): Promise<void>;
}

export interface ControllerDescriptor {
  name: string;
  /** Controllers off unless named explicitly in --controllers. */
  disabledByDefault?: boolean;
  create(ctx: ControllerContext): Controller;
}
