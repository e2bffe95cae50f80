/**
 * API Priority and Fairness metrics, named and labelled as upstream's
 * (k8s.io/apiserver pkg/util/flowcontrol/metrics/metrics.go), in the
 * apiserver's /metrics registry:
 * apiserver_flowcontrol_rejected_requests_total, _dispatched_requests_total,
 * _current_inqueue_requests, _current_executing_requests,
 * _request_wait_duration_seconds and _nominal_limit_seats.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueSetObserver } from './queueset.js';

export class FlowControlMetrics {
  private readonly rejected: Counter;
  private readonly dispatched: Counter;
  private readonly inQueue: Gauge;
  private readonly executing: Gauge;
  private readonly waitDuration: Histogram;
  private readonly nominalLimit: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rejected = new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Number of requests rejected by API Priority and Fairness subsystem',
      labelNames: ['priority_level', 'flow_schema', 'reason'],
      registers,
    });
    this.dispatched = new Counter({
      name: 'apiserver_flowcontrol_dispatched_requests_total',
      help: 'Number of requests executed by API Priority and Fairness subsystem',
      labelNames: ['priority_level', 'flow_schema'],
      registers,
    });
    this.inQueue = new Gauge({
      name: 'apiserver_flowcontrol_current_inqueue_requests',
      help: 'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
      labelNames: ['priority_level', 'flow_schema'],
      registers,
    });
    this.executing = new Gauge({
      name: 'apiserver_flowcontrol_current_executing_requests',
      help: 'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
      labelNames: ['priority_level', 'flow_schema'],
      registers,
    });
    this.waitDuration = new Histogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Length of time a request spent waiting in its queue',
      labelNames: ['priority_level', 'flow_schema', 'execute'],
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
      registers,
    });
    this.nominalLimit = new Gauge({
      name: 'apiserver_flowcontrol_nominal_limit_seats',
      help: 'Nominal number of execution seats configured for each priority level',
      labelNames: ['priority_level'],
      registers,
    });
  }

  /** The callbacks of one priority level's queue set. */
  observer(pl: string): QueueSetObserver {
    return {
      inQueue: (fs, d) => this.inQueue.inc({ priority_level: pl, flow_schema: fs }, d),
      executing: (fs, d) => this.executing.inc({ priority_level: pl, flow_schema: fs }, d),
      rejected: (fs, reason) => this.rejected.inc({ priority_level: pl, flow_schema: fs, reason }),
      dispatched: (fs) => this.dispatched.inc({ priority_level: pl, flow_schema: fs }),
      waited: (fs, executed, s) => this.waitDuration.observe({ priority_level: pl, flow_schema: fs, execute: String(executed) }, s),
    };
  }

  setLimits(limits: Map<string, number>): void {
    this.nominalLimit.reset();
    for (const [pl, n] of limits) this.nominalLimit.set({ priority_level: pl }, n);
  }
}
