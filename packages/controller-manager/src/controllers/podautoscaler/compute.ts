/**
 * The replica count each metric of an autoscaler proposes, and the metric's
 * status (kubernetes pkg/controller/podautoscaler/horizontal.go:
 * computeReplicasForMetric and computeStatusFor*Metric): the metrics are read
 * through the MetricsSource, the counts come from replica-calculator.ts.
 *
 * A metric that cannot be computed records a Warning event (FailedGetResourceMetric,
 * FailedGetPodsMetric, ...) and yields the ScalingActive=False condition that
 * stands for it, with upstream's wrapped error messages.
 */
import type { LabelSelector as LabelSelectorObject, autoscalingv2 } from '@kubeling/api';
import { canonicalQuantity } from '@kubeling/api';
import { labelSelectorAsSelector, milliValue } from '@kubeling/apimachinery';
import type { Pod } from '../kinds.js';
import type { MetricsSource } from './metrics.js';
import type { ConditionUpdate } from './normalize.js';
import { type PodTiming, type Tolerances, perPodReplicas, plainMetricReplicas, resourceReplicas, usageRatioReplicaCount } from './replica-calculator.js';

type MetricSpec = autoscalingv2.MetricSpec;
type MetricStatus = autoscalingv2.MetricStatus;
type MetricTarget = autoscalingv2.MetricTarget;

/** What computing one metric needs. */
export interface MetricContext {
  namespace: string;
  /** The scale's spec.replicas and status.replicas. */
  specReplicas: number;
  statusReplicas: number;
  /** The pods of the target (the scale's selector), and that selector as a string. */
  pods: readonly Pod[];
  selector: string;
  tolerances: Tolerances;
  timing: PodTiming;
  metrics: MetricsSource;
  /** Records a Warning event on the autoscaler. */
  warn(reason: string, message: string): void;
}

export interface MetricProposal {
  replicas: number;
  metricName: string;
  timestamp: number;
  status: MetricStatus;
}

/** A metric that could not be computed: the error and the condition it sets if every metric fails. */
export class MetricError extends Error {
  constructor(
    message: string,
    readonly condition: ConditionUpdate,
  ) {
    super(message);
  }
}

const errText = (e: unknown) => String((e as Error)?.message ?? e);

/** NewMilliQuantity(v, DecimalSI).String(). */
export const milliQuantity = (milli: number): string => {
  const n = BigInt(Math.trunc(milli));
  return canonicalQuantity({ negative: n < 0n, nanos: (n < 0n ? -n : n) * 1_000_000n, format: 'DecimalSI' });
};

/** A *metav1.LabelSelector as `%+v` prints it (its generated String()), for metric names. */
export function goLabelSelector(s: LabelSelectorObject | undefined): string {
  if (!s) return 'nil';
  const labels = Object.keys(s.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${s.matchLabels![k]},`)
    .join('');
  const exprs = (s.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

/** getUnableComputeReplicaCountCondition: records the event and builds the condition. */
function unable(ctx: MetricContext, reason: string, message: string): ConditionUpdate {
  ctx.warn(reason, message);
  return { type: 'ScalingActive', status: 'False', reason, message: `the HPA was unable to compute the replica count: ${message}` };
}

/** A metric selector as the string the custom and external metrics APIs take ('' for none). */
const metricSelectorString = (s: LabelSelectorObject | undefined): string => labelSelectorAsSelector(s).toString();

/** computeStatusForResourceMetricGeneric: raw average value, or utilization of the request. */
async function resourceGeneric(
  ctx: MetricContext,
  target: MetricTarget,
  resource: string,
  container: string,
  containerMetric: boolean,
): Promise<{ replicas: number; current: autoscalingv2.MetricValueStatus; timestamp: number; metricName: string }> {
  const fetch = async () => {
    try {
      return await ctx.metrics.getResourceMetric(resource, ctx.namespace, ctx.selector, container);
    } catch (e) {
      throw new Error(`unable to get metrics for resource ${resource}: ${errText(e)}`);
    }
  };
  if (target.averageValue !== undefined) {
    try {
      const { metrics, timestamp } = await fetch();
      const r = plainMetricReplicas({
        currentReplicas: ctx.specReplicas,
        targetUsage: milliValue(target.averageValue),
        resource,
        tolerances: ctx.tolerances,
        pods: ctx.pods,
        metrics,
        timing: ctx.timing,
      });
      return { replicas: r.replicas, current: { averageValue: milliQuantity(r.usage) }, timestamp, metricName: `${resource} resource` };
    } catch (e) {
      throw new Error(`failed to get ${resource} usage: ${errText(e)}`);
    }
  }
  if (target.averageUtilization === undefined) {
    throw new Error('invalid resource metric source: neither an average utilization target nor an average value (usage) target was set');
  }
  try {
    const { metrics, timestamp } = await fetch();
    const r = resourceReplicas({
      currentReplicas: ctx.specReplicas,
      targetUtilization: target.averageUtilization,
      resource,
      container,
      tolerances: ctx.tolerances,
      pods: ctx.pods,
      metrics,
      timing: ctx.timing,
    });
    return {
      replicas: r.replicas,
      current: { averageValue: milliQuantity(r.rawUtilization), averageUtilization: r.utilization },
      timestamp,
      metricName: `${resource} ${containerMetric ? 'container resource' : 'resource'} utilization (percentage of request)`,
    };
  } catch (e) {
    throw new Error(`failed to get ${resource} utilization: ${errText(e)}`);
  }
}

/** Runs a metric's computation; a failure becomes a MetricError with its condition (and event) and the outer wrapping. */
async function guarded(ctx: MetricContext, reason: string, wrap: (m: string) => string, fn: () => Promise<MetricProposal>): Promise<MetricProposal> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof MetricError) throw e;
    throw new MetricError(wrap(errText(e)), unable(ctx, reason, errText(e)));
  }
}

async function resourceMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  const src = spec.resource!;
  return guarded(
    ctx,
    'FailedGetResourceMetric',
    (m) => `failed to get ${src.name} resource metric value: ${m}`,
    async () => {
      const r = await resourceGeneric(ctx, src.target, src.name, '', false);
      return { ...r, status: { type: 'Resource', resource: { name: src.name, current: r.current } } };
    },
  );
}

async function containerResourceMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  const src = spec.containerResource!;
  return guarded(
    ctx,
    'FailedGetContainerResourceMetric',
    (m) => `failed to get ${src.container} container metric value: ${m}`,
    async () => {
      const r = await resourceGeneric(ctx, src.target, src.name, src.container, true);
      return { ...r, status: { type: 'ContainerResource', containerResource: { name: src.name, current: r.current, container: src.container } } };
    },
  );
}

async function podsMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  const src = spec.pods!;
  return guarded(
    ctx,
    'FailedGetPodsMetric',
    (m) => `failed to get pods metric value: ${m}`,
    async () => {
      const metricSelector = metricSelectorString(src.metric.selector);
      let read: Awaited<ReturnType<MetricsSource['getRawMetric']>>;
      try {
        read = await ctx.metrics.getRawMetric(src.metric.name, ctx.namespace, ctx.selector, metricSelector);
      } catch (e) {
        throw new Error(`unable to get metric ${src.metric.name}: ${errText(e)}`);
      }
      const r = plainMetricReplicas({
        currentReplicas: ctx.specReplicas,
        targetUsage: milliValue(src.target.averageValue ?? 0),
        resource: '',
        tolerances: ctx.tolerances,
        pods: ctx.pods,
        metrics: read.metrics,
        timing: ctx.timing,
      });
      return {
        replicas: r.replicas,
        metricName: `pods metric ${src.metric.name}`,
        timestamp: read.timestamp,
        status: { type: 'Pods', pods: { metric: src.metric, current: { averageValue: milliQuantity(r.usage) } } },
      };
    },
  );
}

async function objectMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  const src = spec.object!;
  const t = src.target;
  // The event and condition carry the inner error; the returned one is wrapped (twice, for an average value target).
  const fail = (message: string, outer: (m: string) => string = (m) => m) =>
    new MetricError(`failed to get object metric value: ${outer(message)}`, unable(ctx, 'FailedGetObjectMetric', message));
  const metricSelector = metricSelectorString(src.metric.selector);
  const read = async (outer?: (m: string) => string) => {
    try {
      return await ctx.metrics.getObjectMetric(src.metric.name, ctx.namespace, src.describedObject, metricSelector);
    } catch (e) {
      throw fail(`unable to get metric ${src.metric.name} on ${src.describedObject.kind} ${ctx.namespace}/${src.describedObject.name}: ${errText(e)}`, outer);
    }
  };
  if (t.type === 'Value' && t.value !== undefined) {
    const { value, timestamp } = await read();
    let replicas: number;
    try {
      replicas = usageRatioReplicaCount(ctx.specReplicas, value / milliValue(t.value), ctx.tolerances, ctx.pods);
    } catch (e) {
      throw fail(`unable to calculate ready pods: ${errText(e)}`);
    }
    return {
      replicas,
      timestamp,
      metricName: `${src.describedObject.kind} metric ${src.metric.name}`,
      status: { type: 'Object', object: { metric: src.metric, current: { value: milliQuantity(value) }, describedObject: src.describedObject } },
    };
  }
  if (t.type === 'AverageValue' && t.averageValue !== undefined) {
    const { value, timestamp } = await read((m) => `failed to get ${src.metric.name} object metric: ${m}`);
    const r = perPodReplicas(ctx.statusReplicas, milliValue(t.averageValue), value, ctx.tolerances);
    return {
      replicas: r.replicas,
      timestamp,
      // Upstream names an object metric with an average value target "external metric".
      metricName: `external metric ${src.metric.name}(${goLabelSelector(src.metric.selector)})`,
      status: { type: 'Object', object: { metric: src.metric, current: { averageValue: milliQuantity(r.usage) }, describedObject: src.describedObject } },
    };
  }
  throw fail('invalid object metric source: neither a value target nor an average value target was set');
}

async function externalMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  const src = spec.external!;
  const t = src.target;
  const wrap = (m: string) => `failed to get ${src.metric.name} external metric value: ${m}`;
  const metricSelector = metricSelectorString(src.metric.selector);
  const name = `external metric ${src.metric.name}(${goLabelSelector(src.metric.selector)})`;
  const read = async () => {
    try {
      return await ctx.metrics.getExternalMetric(src.metric.name, ctx.namespace, metricSelector);
    } catch (e) {
      throw new Error(`unable to get external metric ${ctx.namespace}/${src.metric.name}/${goLabelSelector(src.metric.selector)}: ${errText(e)}`);
    }
  };
  const sum = (values: number[]) =>
    Math.min(
      Number.MAX_SAFE_INTEGER,
      values.reduce((a, b) => a + b, 0),
    );
  if (t.averageValue !== undefined) {
    return guarded(
      ctx,
      'FailedGetExternalMetric',
      (m) => wrap(`failed to get ${src.metric.name} external metric: ${m}`),
      async () => {
        const { values, timestamp } = await read();
        const r = perPodReplicas(ctx.statusReplicas, milliValue(t.averageValue!), sum(values), ctx.tolerances);
        return {
          replicas: r.replicas,
          timestamp,
          metricName: name,
          status: { type: 'External', external: { metric: src.metric, current: { averageValue: milliQuantity(r.usage) } } },
        };
      },
    );
  }
  if (t.value !== undefined) {
    return guarded(
      ctx,
      'FailedGetExternalMetric',
      (m) => wrap(`failed to get external metric ${src.metric.name}: ${m}`),
      async () => {
        const { values, timestamp } = await read();
        const usage = sum(values);
        const replicas = usageRatioReplicaCount(ctx.specReplicas, usage / milliValue(t.value!), ctx.tolerances, ctx.pods);
        return {
          replicas,
          timestamp,
          metricName: name,
          status: { type: 'External', external: { metric: src.metric, current: { value: milliQuantity(usage) } } },
        };
      },
    );
  }
  const message = 'invalid external metric source: neither a value target nor an average value target was set';
  throw new MetricError(wrap(message), unable(ctx, 'FailedGetExternalMetric', message));
}

/** computeReplicasForMetric. Throws MetricError. */
export function computeReplicasForMetric(ctx: MetricContext, spec: MetricSpec): Promise<MetricProposal> {
  switch (spec.type) {
    case 'Resource':
      return resourceMetric(ctx, spec);
    case 'ContainerResource':
      return containerResourceMetric(ctx, spec);
    case 'Pods':
      return podsMetric(ctx, spec);
    case 'Object':
      return objectMetric(ctx, spec);
    case 'External':
      return externalMetric(ctx, spec);
  }
  const message = `unknown metric source type "${String(spec.type)}"`;
  return Promise.reject(new MetricError(message, unable(ctx, 'InvalidMetricSourceType', message)));
}
