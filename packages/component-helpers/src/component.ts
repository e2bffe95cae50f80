/**
 * The shell a control-plane component runs in (k8s.io/component-base and the
 * `app.Run` that kube-scheduler and kube-controller-manager share): the common
 * flags, the client built from a kubeconfig, /healthz, /livez, /readyz and
 * /metrics on the component's own port, leader election on the Lease
 * `kube-system/<name>`, and a clean stop on SIGTERM/SIGINT.
 *
 * The component's work runs only while this process holds the Lease (at once
 * when leader election is off). Losing the Lease stops the work and nothing
 * else: the process keeps serving health and campaigning, and starts the work
 * again if it wins the Lease back. It does not exit, unlike upstream.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createCA, issue } from '@kubeling/pki';
import { hostname } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { parseBool, parseDuration } from '@kubeling/apimachinery';
import { LeaderElector, loadKubeConfig, resolveClientConfig, RestClient, serveHealth, stopOnSignals, type ClientConfig } from '@kubeling/client';

/** What every component is configured with: from the common flags, or by a caller that embeds the component. */
export interface ComponentOptions {
  config: ClientConfig;
  leaderElect: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  qps?: number;
  burst?: number;
  /** The Lease holder identity; `<hostname>_<pid>` when left out. */
  identity?: string;
  log: Logger;
  bindAddress?: string;
  /** Health and metrics port (0: any free port); no server when left out. */
  port?: number;
  /**
   * Serve health and metrics over HTTPS with this certificate, or with a
   * self-signed one made at start (upstream's default for the secure port
   * without --tls-cert-file); plain HTTP when left out.
   */
  tls?: { certPem: string; keyPem: string } | 'self-signed';
}

/** The component's work, run while this process leads. */
export interface LeaderWork {
  /** Starts the work; resolves once it is running. */
  start(): Promise<void>;
  /** Stops the work: on losing the Lease and on stop. */
  stop(): void | Promise<void>;
}

export interface ShellOptions extends ComponentOptions {
  /** The Lease name in kube-system and the `name` label of leader_election_master_status (`kube-scheduler`). */
  name: string;
  userAgent: string;
  /** Client rate when `qps` / `burst` are left out. */
  defaultQps: number;
  defaultBurst: number;
}

/**
 * One component process: its client, its metrics registry (process metrics and
 * leader_election_master_status registered first), its health server and its
 * leader elector. The component registers its own metrics on `metrics` and
 * reaches the API through `client`, which `stop` closes.
 */
export class ComponentShell {
  readonly client: RestClient;
  readonly metrics = new Registry();
  readonly identity: string;
  /** Whether the work is running (this process leads, or leader election is off). */
  leading = false;
  private elector: LeaderElector | undefined;
  private server: Server | undefined;

  constructor(
    private readonly o: ShellOptions,
    private readonly work: LeaderWork,
  ) {
    this.client = new RestClient(o.config, { qps: o.qps ?? o.defaultQps, burst: o.burst ?? o.defaultBurst, userAgent: o.userAgent });
    this.identity = o.identity ?? `${hostname()}_${process.pid}`;
    collectDefaultMetrics({ register: this.metrics });
    const self = this;
    new Gauge({
      name: 'leader_election_master_status',
      help: 'Whether this process is the leader (1) or not (0).',
      labelNames: ['name'],
      registers: [this.metrics],
      collect() {
        this.set({ name: o.name }, self.leading ? 1 : 0);
      },
    });
  }

  /**
   * Serves health and metrics, then either starts the work (leader election
   * off: resolves once it runs) or starts campaigning (resolves at once; the
   * work starts when the Lease is won).
   */
  async start(): Promise<void> {
    if (this.o.port !== undefined) {
      const tls = this.o.tls === 'self-signed' ? await selfSignedServing(this.o.bindAddress ?? '127.0.0.1') : this.o.tls;
      this.server = await serveHealth(this.metrics, this.o.port, this.o.bindAddress, tls);
    }
    if (!this.o.leaderElect) return this.startWork();
    this.elector = new LeaderElector(this.client, {
      namespace: 'kube-system',
      name: this.o.name,
      identity: this.identity,
      ...(this.o.leaseDurationMs ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
      ...(this.o.renewDeadlineMs ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
      ...(this.o.retryPeriodMs ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
      onStartedLeading: () => {
        this.o.log.info({ identity: this.identity }, 'became leader');
        void this.startWork();
      },
      onStoppedLeading: () => {
        this.o.log.warn({ identity: this.identity }, 'lost leadership');
        void this.stopWork();
      },
    });
    this.elector.start();
  }

  private startWork(): Promise<void> {
    this.leading = true;
    return this.work.start();
  }

  private async stopWork(): Promise<void> {
    this.leading = false;
    await this.work.stop();
  }

  get address(): { port: number } | undefined {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { port: a.port } : undefined;
  }

  /** Stops the work, releases the Lease if held, closes the health server and the client. */
  async stop(): Promise<void> {
    await this.stopWork();
    await this.elector?.stop();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.client.close();
  }
}

// ---- the command line -----------------------------------------------------------

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** Per-component defaults of the common flags. */
export interface FlagDefaults {
  securePort: number;
  qps: number;
  burst: number;
}

/** The flags every component takes (values are parsed by `parseComponentArgs`). */
export function componentFlags(d: FlagDefaults) {
  return {
    kubeconfig: { type: 'string' },
    master: { type: 'string' },
    'leader-elect': { type: 'string', default: 'true' },
    'leader-elect-lease-duration': { type: 'string', default: '15s' },
    'leader-elect-renew-deadline': { type: 'string', default: '10s' },
    'leader-elect-retry-period': { type: 'string', default: '2s' },
    'bind-address': { type: 'string', default: '127.0.0.1' },
    'secure-port': { type: 'string', default: String(d.securePort) },
    'kube-api-qps': { type: 'string', default: String(d.qps) },
    'kube-api-burst': { type: 'string', default: String(d.burst) },
    'log-level': { type: 'string', default: 'info' },
    'tls-cert-file': { type: 'string' },
    'tls-private-key-file': { type: 'string' },
  } satisfies ParseArgsOptionsConfig;
}

/** The values `parseArgs` gives for a set of flags. */
export type FlagValues<F extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: F; strict: true }>>['values'];

/** A running component, as `runComponent` starts and stops it. */
export interface Component {
  readonly identity: string;
  readonly address: { port: number } | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ComponentCommand<F extends ParseArgsOptionsConfig> {
  /** The process name: the logger's `component`, the prefix of a fatal error, "<name> started". */
  name: string;
  defaults: FlagDefaults;
  /** This component's own flags; the common ones are added. */
  flags: F;
  /** Builds the component from the common options and its own flag values. */
  create(options: ComponentOptions, values: FlagValues<F>): Component;
  /** A fatal error is reported with its stack rather than its message alone. */
  errorStack?: boolean;
}

/**
 * Parses the common flags and the component's own (unknown flags throw),
 * builds the logger and resolves the client configuration from the kubeconfig
 * (`--kubeconfig`, else $KUBECONFIG, else ~/.kube/config) and `--master`.
 */
export function parseComponentArgs<F extends ParseArgsOptionsConfig>(
  cmd: Pick<ComponentCommand<F>, 'name' | 'defaults' | 'flags'>,
  args?: string[],
): { options: ComponentOptions; values: FlagValues<F> } {
  const common = componentFlags(cmd.defaults);
  const parsed = parseArgs({ options: { ...cmd.flags, ...common }, strict: true, ...(args ? { args } : {}) });
  const v = parsed.values as FlagValues<typeof common>;
  const log = pino({ level: v['log-level'], base: { component: cmd.name } });
  const kc = loadKubeConfig({ explicitPath: v.kubeconfig });
  const config = resolveClientConfig(kc, { server: v.master });
  const options: ComponentOptions = {
    config,
    leaderElect: parseBool(v['leader-elect']) ?? true,
    leaseDurationMs: parseDuration(v['leader-elect-lease-duration']),
    renewDeadlineMs: parseDuration(v['leader-elect-renew-deadline']),
    retryPeriodMs: parseDuration(v['leader-elect-retry-period']),
    qps: Number(v['kube-api-qps']),
    burst: Number(v['kube-api-burst']),
    bindAddress: v['bind-address'],
    port: Number(v['secure-port']),
    // The secure port is HTTPS: with the given certificate, else a self-signed one.
    tls:
      v['tls-cert-file'] && v['tls-private-key-file']
        ? { certPem: readFileSync(v['tls-cert-file'], 'utf8'), keyPem: readFileSync(v['tls-private-key-file'], 'utf8') }
        : 'self-signed',
    log,
  };
  return { options, values: parsed.values as FlagValues<F> };
}

/**
 * A component's `main`: parses the flags, builds and starts the component,
 * logs "<name> started" with its identity and port, and stops it on SIGTERM or
 * SIGINT (then exits). An error before that is written to stderr as
 * "<name>: <message>" and the process exits with 1.
 */
export function runComponent<F extends ParseArgsOptionsConfig>(cmd: ComponentCommand<F>): void {
  const run = async () => {
    const { options, values } = parseComponentArgs(cmd);
    const component = cmd.create(options, values);
    await component.start();
    options.log.info({ identity: component.identity, port: component.address?.port }, `${cmd.name} started`);
    stopOnSignals(() => component.stop());
  };
  run().catch((e) => {
    process.stderr.write(`${cmd.name}: ${cmd.errorStack ? ((e as Error).stack ?? String(e)) : (e as Error).message}\n`);
    process.exit(1);
  });
}

/**
 * A serving certificate for the secure port when none is given: signed by a
 * throwaway CA, for `localhost` and the bind address, as upstream's
 * GenerateSelfSignedCertKey. Clients probing health do not verify it.
 */
async function selfSignedServing(bindAddress: string): Promise<{ certPem: string; keyPem: string }> {
  const ca = await createCA(`${hostname()}-ca@${Math.floor(Date.now() / 1000)}`);
  const ips = [...new Set(['127.0.0.1', bindAddress].filter((a) => a !== '0.0.0.0' && a !== '::'))];
  return issue(ca, { commonName: `${hostname()}@${Math.floor(Date.now() / 1000)}`, dnsNames: ['localhost'], ips, usage: 'server' });
}
