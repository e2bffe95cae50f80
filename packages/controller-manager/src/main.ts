/**
 * kubeling-controller-manager.
 *
 *   --kubeconfig=PATH | --master=URL
 *   --controllers=*            (`*,-name` to leave one out)
 *   --leader-elect=true        --leader-elect-lease-duration=15s ...
 *   --bind-address=127.0.0.1   --secure-port=10257 (health and metrics)
 *   --kube-api-qps=20 --kube-api-burst=30
 *   --node-monitor-grace-period=50s --node-monitor-period=5s --terminated-pod-gc-threshold=12500
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadKubeConfig, resolveClientConfig, stopOnSignals } from '@kubeling/client';
import { parseBool, parseDuration as duration } from '@kubeling/apimachinery';
import { ControllerManager } from './manager.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      controllers: { type: 'string', default: '*' },
      'leader-elect': { type: 'string', default: 'true' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'secure-port': { type: 'string', default: '10257' },
      'kube-api-qps': { type: 'string', default: '20' },
      'kube-api-burst': { type: 'string', default: '30' },
      'concurrent-syncs': { type: 'string', default: '5' },
      'node-monitor-grace-period': { type: 'string', default: '50s' },
      'node-monitor-period': { type: 'string', default: '5s' },
      'terminated-pod-gc-threshold': { type: 'string', default: '12500' },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
  });
  const log = pino({ level: values['log-level'], base: { component: 'controller-manager' } });
  const kc = loadKubeConfig({ explicitPath: values.kubeconfig });
  const config = resolveClientConfig(kc, { server: values.master });
  const mgr = new ControllerManager({
    config,
    controllers: values.controllers!.split(','),
    leaderElect: parseBool(values['leader-elect']) ?? true,
    leaseDurationMs: duration(values['leader-elect-lease-duration']!),
    renewDeadlineMs: duration(values['leader-elect-renew-deadline']!),
    retryPeriodMs: duration(values['leader-elect-retry-period']!),
    qps: Number(values['kube-api-qps']),
    burst: Number(values['kube-api-burst']),
    workers: Number(values['concurrent-syncs']),
    nodeMonitorGracePeriodMs: duration(values['node-monitor-grace-period']!),
    nodeMonitorPeriodMs: duration(values['node-monitor-period']!),
    podGC: { terminatedThreshold: Number(values['terminated-pod-gc-threshold']) },
    bindAddress: values['bind-address']!,
    port: Number(values['secure-port']),
    log,
  });
  await mgr.start();
  log.info({ identity: mgr.identity, port: mgr.address?.port }, 'controller-manager started');
  stopOnSignals(() => mgr.stop());
}

main().catch((e) => {
  process.stderr.write(`controller-manager: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
