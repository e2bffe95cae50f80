/**
 * The resource metrics API, metrics.k8s.io/v1beta1 (k8s.io/metrics
 * pkg/apis/metrics/v1beta1): what a metrics server answers behind its
 * APIService, and what `kubectl top` and the HPA controller read. The
 * kube-apiserver does not serve these kinds itself, so they are plain types
 * here, not schemas in the resource catalogue.
 */
import type { ObjectMeta } from './schema/meta.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
export const METRICS_API_VERSION = `${METRICS_GROUP}/${METRICS_VERSION}`;

/** Quantities as strings, as the API serializes resource.Quantity ("250m", "12Mi"). */
export type ResourceUsage = { cpu: string; memory: string } & Record<string, string>;

export interface ContainerMetrics {
  name: string;
  usage: ResourceUsage;
}

export interface PodMetrics {
  kind: 'PodMetrics';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: ObjectMeta;
  /** The end of the window the usage was measured over (RFC 3339). */
  timestamp: string;
  /** The window's length, a Go duration ("15s"). */
  window: string;
  containers: ContainerMetrics[];
}

export interface NodeMetrics {
  kind: 'NodeMetrics';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: ObjectMeta;
  timestamp: string;
  window: string;
  usage: ResourceUsage;
}

export interface PodMetricsList {
  kind: 'PodMetricsList';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: { resourceVersion?: string };
  items: PodMetrics[];
}

export interface NodeMetricsList {
  kind: 'NodeMetricsList';
  apiVersion: typeof METRICS_API_VERSION;
  metadata: { resourceVersion?: string };
  items: NodeMetrics[];
}
