/**
 * foo-operator: kubeling's sample-controller, run as its own process.
 *
 *   node --import tsx examples/foo-operator/main.ts --kubeconfig .kubeling/kubeconfig
 *
 *   --kubeconfig=PATH | --master=URL   (else $KUBECONFIG, else ~/.kube/config)
 *   --namespace=NS                     watch one namespace (default: all)
 *   --workers=2                        sample-controller's threadiness
 *   --resync-period=30s                informers' resync
 *   --leader-elect=true                on the Lease --leader-elect-resource-namespace/--leader-elect-resource-name
 *   --leader-elect-resource-namespace=default --leader-elect-resource-name=foo-operator
 *   --leader-elect-lease-duration=15s --leader-elect-renew-deadline=10s --leader-elect-retry-period=2s
 *   --kube-api-qps=20 --kube-api-burst=30 --log-level=info
 *
 * The shape is sample-controller main.go's: build the client from the
 * kubeconfig, make the controller, run it until SIGTERM/SIGINT. Added to it is
 * leader election (client-go tools/leaderelection, as controller-manager
 * replicas use it): only the holder of the Lease runs the controller, so two
 * replicas of the operator never both write. Losing the Lease ends the process
 * (exit 1), as kube-controller-manager does, so that whatever restarts it starts
 * it clean as a candidate again.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { isNotFound, parseBool, parseDuration, rfc3339Micro } from '@kubeling/apimachinery';
import { EventRecorder, LeaderElector, loadKubeConfig, resolveClientConfig, RestClient, stopOnSignals } from '@kubeling/client';
import { FooController } from './controller.js';

const NAME = 'foo-operator';

interface Lease {
  metadata: { name: string; resourceVersion?: string };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/**
 * Makes sure the Lease is not left held by `identity` after LeaderElector.stop():
 * a renewal already in flight when stop() runs can land after its release (its
 * write then fails on the resourceVersion, and the standby would wait out the
 * lease duration). Once that renewal is done nothing renews any more, so a
 * few bounded tries give the Lease back, as client-go's release() writes it
 * (no holder, a lease of 1 s).
 */
async function ensureReleased(client: RestClient, path: string, identity: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    try {
      const lease = await client.get<Lease>(path);
      if (lease.spec?.holderIdentity !== identity) return;
      await client.put(path, { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: rfc3339Micro() } });
      return;
    } catch (e) {
      if (isNotFound(e)) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      namespace: { type: 'string' },
      workers: { type: 'string', default: '2' },
      'resync-period': { type: 'string', default: '30s' },
      'leader-elect': { type: 'string', default: 'true' },
      'leader-elect-resource-namespace': { type: 'string', default: 'default' },
      'leader-elect-resource-name': { type: 'string', default: NAME },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'kube-api-qps': { type: 'string', default: '20' },
      'kube-api-burst': { type: 'string', default: '30' },
      'log-level': { type: 'string', default: 'info' },
    },
  });
  const log = pino({ level: v['log-level'], base: { component: NAME } });
  const config = resolveClientConfig(loadKubeConfig({ explicitPath: v.kubeconfig }), { server: v.master });
  const client = new RestClient(config, { qps: Number(v['kube-api-qps']), burst: Number(v['kube-api-burst']), userAgent: `${NAME}/v0.1.0 (kubeling)` });
  const recorder = new EventRecorder(client, { component: NAME });
  const workers = Number(v.workers);
  // The identity of leaderelection's examples: the host, and something unique to this run.
  const identity = `${hostname()}_${randomUUID()}`;

  let controller: FooController | undefined;
  let running: Promise<void> | undefined;
  let stopping = false;
  const startController = () => {
    controller = new FooController({ client, recorder, log, namespace: v.namespace, resyncMs: parseDuration(v['resync-period']) });
    running = controller.run(workers).catch((e) => log.error({ err: String(e) }, 'controller failed'));
  };

  let elector: LeaderElector | undefined;
  const lease = { namespace: v['leader-elect-resource-namespace'], name: v['leader-elect-resource-name'] };
  if (parseBool(v['leader-elect']) ?? true) {
    elector = new LeaderElector(client, {
      ...lease,
      identity,
      leaseDurationMs: parseDuration(v['leader-elect-lease-duration']),
      renewDeadlineMs: parseDuration(v['leader-elect-renew-deadline']),
      retryPeriodMs: parseDuration(v['leader-elect-retry-period']),
      onStartedLeading: () => {
        // A renewal that lands after shutdown began (see ensureReleased) must not start the controller again.
        if (stopping) return;
        log.info({ identity, lease: `${lease.namespace}/${lease.name}` }, 'became leader');
        startController();
      },
      onStoppedLeading: () => {
        if (stopping) return;
        log.error({ identity }, 'leader election lost');
        controller?.stop();
        process.exit(1);
      },
      onNewLeader: (holder) => {
        if (holder !== identity) log.info({ leader: holder }, 'new leader elected');
      },
    });
    log.info({ identity, lease: `${lease.namespace}/${lease.name}` }, 'attempting to acquire leader lease');
    elector.start();
  } else startController();
  log.info({ identity, server: config.server }, `${NAME} started`);

  stopOnSignals(async () => {
    log.info('shutting down');
    stopping = true;
    controller?.stop();
    // Workers end after the key they hold; the Lease is released so a standby takes over at once.
    await Promise.race([running, new Promise((r) => setTimeout(r, 5000))]);
    if (elector) {
      await elector.stop();
      await ensureReleased(client, `/apis/coordination.k8s.io/v1/namespaces/${lease.namespace}/leases/${lease.name}`, identity);
    }
    client.close();
  });
}

main().catch((e) => {
  process.stderr.write(`${NAME}: ${(e as Error).message}\n`);
  process.exit(1);
});
