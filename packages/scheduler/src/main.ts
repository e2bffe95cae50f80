/**
 * kubeling-scheduler.
 *
 *   --kubeconfig=PATH | --master=URL
 *   --config=FILE              KubeSchedulerConfiguration (profiles, plugins, weights,
 *                              percentageOfNodesToScore)
 *   --leader-elect=true        --leader-elect-lease-duration=15s ...
 *   --bind-address=127.0.0.1   --secure-port=10259 (health and metrics)
 *   --kube-api-qps=50 --kube-api-burst=100
 *
 * The common flags, health, leader election and signals are the component
 * shell's (`runComponent`); this file adds the scheduler's own flags.
 */
import { runComponent } from '@kubeling/component-helpers';
import { buildConfig, loadConfig } from './framework/profile.js';
import { SchedulerServer } from './server.js';

runComponent({
  name: 'scheduler',
  defaults: { securePort: 10259, qps: 50, burst: 100 },
  flags: { config: { type: 'string' } },
  create: (options, values) => new SchedulerServer({ ...options, scheduler: values.config ? loadConfig(values.config) : buildConfig() }),
});
