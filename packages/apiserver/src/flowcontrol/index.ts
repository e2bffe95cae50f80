/**
 * API Priority and Fairness, assembled for one apiserver: the controller
 * following the FlowSchemas and PriorityLevelConfigurations of the registry,
 * its metrics in the server's registry, and the every-minute round of the
 * bootstrap ensurer (the first round is part of bootstrap.ts, at start).
 * The request filter is http/filters/priority-and-fairness.ts.
 */
import type { Logger } from 'pino';
import type { Registry as MetricsRegistry } from 'prom-client';
import { startFlowControlEnsurer } from '../registry/flowcontrol/ensurer.js';
import type { Store } from '../registry/store.js';
import { FlowControl } from './controller.js';
import { FlowControlMetrics } from './metrics.js';

export { FlowControl } from './controller.js';

export const FLOW_SCHEMAS = 'flowcontrol.apiserver.k8s.io/v1/flowschemas';
export const PRIORITY_LEVELS = 'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations';

export interface FlowControlSetup {
  flowControl: FlowControl;
  stop(): void;
}

export function setupFlowControl(
  registry: ReadonlyMap<string, Store>,
  o: { serverConcurrencyLimit: number; metrics: MetricsRegistry; ensureIntervalMs?: number; logger?: Logger },
): FlowControlSetup {
  const metrics = new FlowControlMetrics(o.metrics);
  const flowControl = new FlowControl({
    serverConcurrencyLimit: o.serverConcurrencyLimit,
    observer: (pl) => metrics.observer(pl),
    onLimits: (l) => metrics.setLimits(l),
    ...(o.logger ? { logger: o.logger } : {}),
  });
  const fs = registry.get(FLOW_SCHEMAS)!;
  const pl = registry.get(PRIORITY_LEVELS)!;
  flowControl.follow(fs, pl);
  const stopEnsurer = startFlowControlEnsurer(fs, pl, o.ensureIntervalMs ?? 60_000, o.logger);
  return {
    flowControl,
    stop: () => {
      stopEnsurer();
      flowControl.stop();
    },
  };
}
