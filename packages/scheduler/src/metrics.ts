/**
 * The scheduler's Prometheus metrics, with upstream's names and buckets
 * (pkg/scheduler/metrics): attempts by result, attempt latency, the end-to-end
 * SLI, preemption, and the pending pods of each queue.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SchedulingQueue } from './queue.js';

export interface SchedulerMetrics {
  attempts: Counter<'result' | 'profile'>;
  attemptDuration: Histogram<'result' | 'profile'>;
  e2e: Histogram<'attempts'>;
  preemptionAttempts: Counter;
  preemptionVictims: Histogram;
}

/** Registers the metrics in `registry` (none when undefined: they are still counted, unexported). */
export function schedulerMetrics(registry: Registry | undefined, queue: SchedulingQueue): SchedulerMetrics {
  const registers = registry ? [registry] : [];
  new Gauge({
    name: 'scheduler_pending_pods',
    help: 'Number of pending pods, by the queue type.',
    labelNames: ['queue'],
    registers,
    collect() {
      const p = queue.pending;
      this.set({ queue: 'active' }, p.active);
      this.set({ queue: 'backoff' }, p.backoff);
      this.set({ queue: 'unschedulable' }, p.unschedulable);
    },
  });
  return {
    attempts: new Counter({
      name: 'scheduler_schedule_attempts_total',
      help: 'Number of attempts to schedule pods, by the result.',
      labelNames: ['result', 'profile'],
      registers,
    }),
    attemptDuration: new Histogram({
      name: 'scheduler_scheduling_attempt_duration_seconds',
      help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding).',
      labelNames: ['result', 'profile'],
      buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048],
      registers,
    }),
    e2e: new Histogram({
      name: 'scheduler_pod_scheduling_sli_duration_seconds',
      help: 'E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.',
      labelNames: ['attempts'],
      buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96],
      registers,
    }),
    preemptionAttempts: new Counter({ name: 'scheduler_preemption_attempts_total', help: 'Total preemption attempts in the cluster till now.', registers }),
    preemptionVictims: new Histogram({
      name: 'scheduler_preemption_victims',
      help: 'Number of selected preemption victims.',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    }),
  };
}
