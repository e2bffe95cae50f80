/**
 * Prometheus metrics of the apiserver, named as upstream's where one exists:
 * apiserver_request_total, apiserver_request_duration_seconds,
 * apiserver_registered_watchers, etcd_request_duration_seconds. API Priority
 * and Fairness registers its apiserver_flowcontrol_* metrics in this registry
 * too (flowcontrol/metrics.ts).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, resource, subresource and HTTP response code.',
    labelNames: ['verb', 'resource', 'subresource', 'code'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, resource and subresource.',
    labelNames: ['verb', 'resource', 'subresource'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly etcd = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation.',
    labelNames: ['operation'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  get contentType(): string {
    return this.registry.contentType;
  }

  request(verb: string, resource: string, subresource: string, code: number, seconds: number): void {
    this.requests.inc({ verb: verb.toUpperCase(), resource, subresource, code: String(code) });
    this.latency.observe({ verb: verb.toUpperCase(), resource, subresource }, seconds);
  }

  etcdLatency(operation: string, seconds: number): void {
    this.etcd.observe({ operation }, seconds);
  }

  watchersGauge(collect: () => { resource: string; count: number }[]): void {
    new Gauge({
      name: 'apiserver_registered_watchers',
      help: 'Number of currently registered watchers for a given resource.',
      labelNames: ['resource'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { resource, count } of collect()) this.set({ resource }, count);
      },
    });
  }

  /** Total of apiserver_request_total for a verb and resource (tests and benchmarks read it). */
  async requestCount(verb: string, resource: string): Promise<number> {
    const m = await this.requests.get();
    return m.values.filter((v) => v.labels.verb === verb.toUpperCase() && v.labels.resource === resource).reduce((a, v) => a + v.value, 0);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
