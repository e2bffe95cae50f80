/**
 * Where the autoscaler reads metrics (kubernetes pkg/controller/podautoscaler/metrics
 * interfaces.go, client.go): resource metrics of pods from metrics.k8s.io/v1beta1,
 * per-pod and per-object custom metrics from custom.metrics.k8s.io/v1beta2,
 * external metrics from external.metrics.k8s.io/v1beta1 — all through the
 * apiserver, which proxies them to the metrics servers behind their APIServices.
 *
 * The controller takes a `MetricsSource`; `RestMetricsSource` is the default.
 * Tests inject their own (the integration test without an aggregated metrics
 * server). Values are milli-units; errors carry upstream's messages.
 */
import { METRICS_API_VERSION, type PodMetricsList } from '@kubeling/api';
import { milliValue, parseDuration } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';
import type { PodMetricsInfo } from './replica-calculator.js';

export interface ObjectRef {
  kind: string;
  name: string;
  apiVersion?: string;
}

export interface MetricsSource {
  /** Each pod's usage of `resource` (the named container's when `container` is set), and the oldest timestamp. */
  getResourceMetric(resource: string, namespace: string, selector: string, container: string): Promise<{ metrics: PodMetricsInfo; timestamp: number }>;
  /** A custom metric of each pod the selector matches. */
  getRawMetric(metricName: string, namespace: string, selector: string, metricSelector: string): Promise<{ metrics: PodMetricsInfo; timestamp: number }>;
  /** A custom metric describing one object. */
  getObjectMetric(metricName: string, namespace: string, ref: ObjectRef, metricSelector: string): Promise<{ value: number; timestamp: number }>;
  /** Every value of an external metric the selector matches. */
  getExternalMetric(metricName: string, namespace: string, metricSelector: string): Promise<{ values: number[]; timestamp: number }>;
}

/** metricServerDefaultMetricWindow: what a custom metric without windowSeconds is taken to cover. */
const DEFAULT_WINDOW_MS = 60_000;

const errText = (e: unknown) => String((e as Error)?.message ?? e);
const enc = encodeURIComponent;

interface MetricValue {
  describedObject?: { name?: string };
  timestamp?: string;
  windowSeconds?: number;
  value?: string | number;
}

/** The metrics APIs through the apiserver, with the controller-manager's client. */
export class RestMetricsSource implements MetricsSource {
  constructor(
    private readonly client: RestClient,
    /** The resource (plural) of a kind, for object metrics (the RESTMapper). */
    private readonly resourceOf: (ref: ObjectRef) => Promise<string>,
  ) {}

  async getResourceMetric(resource: string, namespace: string, selector: string, container: string) {
    let list: PodMetricsList;
    try {
      list = await this.client.get<PodMetricsList>(
        `/apis/${METRICS_API_VERSION}/namespaces/${enc(namespace)}/pods`,
        selector ? { labelSelector: selector } : {},
      );
    } catch (e) {
      throw new Error(`unable to fetch metrics from resource metrics API: ${errText(e)}`);
    }
    const items = list.items ?? [];
    if (!items.length) throw new Error('no metrics returned from resource metrics API');
    const metrics: PodMetricsInfo = new Map();
    for (const m of items) {
      const at = { timestamp: Date.parse(m.timestamp), windowMs: m.window ? parseDuration(m.window) : 0 };
      const name = m.metadata.name!;
      if (container) {
        // getContainerMetrics: every pod must report the container.
        const c = m.containers.find((x) => x.name === container);
        if (!c) throw new Error(`failed to get container metrics: container ${container} not present in metrics for pod ${m.metadata.namespace}/${name}`);
        const v = c.usage[resource];
        if (v !== undefined) metrics.set(name, { value: milliValue(v), ...at });
        continue;
      }
      // getPodMetrics: a pod missing the resource in any container has no metric.
      if (!m.containers.length || m.containers.some((c) => c.usage[resource] === undefined)) continue;
      metrics.set(name, { value: m.containers.reduce((s, c) => s + milliValue(c.usage[resource]!), 0), ...at });
    }
    return { metrics, timestamp: Date.parse(items[0]!.timestamp) };
  }

  private async customList(path: string, query: Record<string, string>): Promise<MetricValue[]> {
    try {
      const list = await this.client.get<{ items?: MetricValue[] }>(path, query);
      return list.items ?? [];
    } catch (e) {
      throw new Error(`unable to fetch metrics from custom metrics API: ${errText(e)}`);
    }
  }

  async getRawMetric(metricName: string, namespace: string, selector: string, metricSelector: string) {
    const items = await this.customList(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${enc(namespace)}/pods/*/${enc(metricName)}`, {
      labelSelector: selector,
      ...(metricSelector ? { metricLabelSelector: metricSelector } : {}),
    });
    if (!items.length) throw new Error('no metrics returned from custom metrics API');
    const metrics: PodMetricsInfo = new Map();
    for (const m of items) {
      const windowMs = m.windowSeconds !== undefined ? m.windowSeconds * 1000 : DEFAULT_WINDOW_MS;
      metrics.set(m.describedObject?.name ?? '', { value: milliValue(m.value ?? 0), timestamp: Date.parse(m.timestamp ?? ''), windowMs });
    }
    return { metrics, timestamp: Date.parse(items[0]!.timestamp ?? '') };
  }

  async getObjectMetric(metricName: string, namespace: string, ref: ObjectRef, metricSelector: string) {
    const resource = await this.resourceOf(ref);
    const items = await this.customList(`/apis/custom.metrics.k8s.io/v1beta2/namespaces/${enc(namespace)}/${resource}/${enc(ref.name)}/${enc(metricName)}`, {
      ...(metricSelector ? { metricLabelSelector: metricSelector } : {}),
    });
    if (items.length !== 1) throw new Error(`unable to fetch metrics from custom metrics API: the server returned ${items.length} metric values, expected one`);
    return { value: milliValue(items[0]!.value ?? 0), timestamp: Date.parse(items[0]!.timestamp ?? '') };
  }

  async getExternalMetric(metricName: string, namespace: string, metricSelector: string) {
    let items: MetricValue[];
    try {
      const list = await this.client.get<{ items?: MetricValue[] }>(`/apis/external.metrics.k8s.io/v1beta1/namespaces/${enc(namespace)}/${enc(metricName)}`, {
        ...(metricSelector ? { labelSelector: metricSelector } : {}),
      });
      items = list.items ?? [];
    } catch (e) {
      throw new Error(`unable to fetch metrics from external metrics API: ${errText(e)}`);
    }
    if (!items.length) throw new Error('no metrics returned from external metrics API');
    return { values: items.map((m) => milliValue(m.value ?? 0)), timestamp: Date.parse(items[0]!.timestamp ?? '') };
  }
}
