/**
 * kubeling-scheduler.
 *
 *   --kubeconfig=PATH | --master=URL
 *   --config=FILE              KubeSchedulerConfiguration (profiles, plugins, weights,
 *                              percentageOfNodesToScore)
 *   --leader-elect=true        --leader-elect-lease-duration=15s ...
 *   --bind-address=127.0.0.1   --secure-port=10259 (health and metrics)
 *   --kube-api-qps=50 --kube-api-burst=100
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadKubeConfig, resolveClientConfig, stopOnSignals } from '@kubeling/client';
import { parseBool, parseDuration as duration } from '@kubeling/apimachinery';
import { buildConfig, loadConfig } from './framework/profile.js';
import { SchedulerServer } from './server.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      config: { type: 'string' },
      'leader-elect': { type: 'string', default: 'true' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'secure-port': { type: 'string', default: '10259' },
      'kube-api-qps': { type: 'string', default: '50' },
      'kube-api-burst': { type: 'string', default: '100' },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
  });
  const log = pino({ level: values['log-level'], base: { component: 'scheduler' } });
  const kc = loadKubeConfig({ explicitPath: values.kubeconfig });
  const config = resolveClientConfig(kc, { server: values.master });
  const server = new SchedulerServer({
    config,
    scheduler: values.config ? loadConfig(values.config) : buildConfig(),
    leaderElect: parseBool(values['leader-elect']) ?? true,
    leaseDurationMs: duration(values['leader-elect-lease-duration']!),
    renewDeadlineMs: duration(values['leader-elect-renew-deadline']!),
    retryPeriodMs: duration(values['leader-elect-retry-period']!),
    qps: Number(values['kube-api-qps']),
    burst: Number(values['kube-api-burst']),
    bindAddress: values['bind-address']!,
    port: Number(values['secure-port']),
    log,
  });
  await server.start();
  log.info({ identity: server.identity, port: server.address?.port }, 'scheduler started');
  stopOnSignals(() => server.stop());
}

main().catch((e) => {
  process.stderr.write(`scheduler: ${(e as Error).message}\n`);
  process.exit(1);
});
