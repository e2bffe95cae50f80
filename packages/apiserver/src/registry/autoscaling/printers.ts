/**
 * The Table columns of HorizontalPodAutoscalers as kubernetes
 * pkg/printers/internalversion/printers.go prints them (1.33): NAME,
 * REFERENCE, TARGETS, MINPODS, MAXPODS, REPLICAS, AGE. TARGETS is
 * formatHPAMetrics: `<current>/<target>` per metric, resource metrics prefixed
 * with their resource name (`cpu: 120%/50%`), `<unknown>` for a current value
 * not measured yet, at most two metrics then `+ N more...`. An autoscaling/v1
 * object is printed from its v2 form, as upstream prints the internal one.
 */
import { type KubeObject, type autoscalingv2, canonicalQuantity, parseExactQuantity } from '@kubeling/api';
import { AGE, NAME, age, col, type Printer } from '../../http/printers/columns.js';
import { hpaV1ToV2 } from './conversion.js';

type HPA = autoscalingv2.HorizontalPodAutoscaler;
type MetricSpec = autoscalingv2.MetricSpec;
type MetricStatus = autoscalingv2.MetricStatus;

/** Quantity.String(); a nil *Quantity prints `<nil>`, as Go's does. */
const q = (v: string | number | undefined): string => {
  if (v === undefined) return '<nil>';
  const p = parseExactQuantity(v);
  return p ? canonicalQuantity(p) : String(v);
};
const pct = (n: number | undefined) => (n === undefined ? undefined : `${n}%`);

type ResourceLike = { name: string; target: autoscalingv2.MetricTarget };
type ResourceStatusLike = { current: autoscalingv2.MetricValueStatus } | undefined;

/** A Resource or ContainerResource metric: raw average value, or utilization (`<auto>` without a target). */
function resourceCell(spec: ResourceLike, status: ResourceStatusLike): string {
  if (spec.target.averageValue !== undefined) {
    return `${spec.name}: ${status ? q(status.current.averageValue) : '<unknown>'}/${q(spec.target.averageValue)}`;
  }
  return `${spec.name}: ${pct(status?.current.averageUtilization) ?? '<unknown>'}/${pct(spec.target.averageUtilization) ?? '<auto>'}`;
}

/** One metric's `current/target`; `statuses[i]` is the status of `specs[i]`, as the controller writes them. */
function metricCell(spec: MetricSpec, status: MetricStatus | undefined): string {
  switch (spec.type) {
    case 'External': {
      const t = spec.external!.target;
      if (t.averageValue !== undefined)
        return `${status?.external?.current.averageValue !== undefined ? q(status.external.current.averageValue) : '<unknown>'}/${q(t.averageValue)} (avg)`;
      return `${status?.external ? q(status.external.current.value) : '<unknown>'}/${q(t.value)}`;
    }
    case 'Pods':
      return `${status?.pods ? q(status.pods.current.averageValue) : '<unknown>'}/${q(spec.pods!.target.averageValue)}`;
    case 'Object': {
      const t = spec.object!.target;
      if (t.averageValue !== undefined)
        return `${status?.object?.current.averageValue !== undefined ? q(status.object.current.averageValue) : '<unknown>'}/${q(t.averageValue)} (avg)`;
      return `${status?.object ? q(status.object.current.value) : '<unknown>'}/${q(t.value)}`;
    }
    case 'Resource':
      return resourceCell(spec.resource!, status?.resource);
    case 'ContainerResource':
      return resourceCell(spec.containerResource!, status?.containerResource);
  }
  return '<unknown type>';
}

const MAX_SHOWN = 2;

/** formatHPAMetrics. */
export function formatHPAMetrics(specs: readonly MetricSpec[] | undefined, statuses: readonly MetricStatus[] | undefined): string {
  if (!specs?.length) return '<none>';
  const list = specs.map((s, i) => {
    try {
      return metricCell(s, statuses?.[i]);
    } catch {
      // A metric without its source (only possible in objects that never passed validation).
      return '<unknown type>';
    }
  });
  if (list.length <= MAX_SHOWN) return list.join(', ');
  return `${list.slice(0, MAX_SHOWN).join(', ')} + ${list.length - MAX_SHOWN} more...`;
}

/** The row cells of one HorizontalPodAutoscaler (either version). */
export function hpaCells(obj: KubeObject, now: number): unknown[] {
  const hpa = (obj.apiVersion === 'autoscaling/v1' ? hpaV1ToV2(obj) : obj) as unknown as HPA;
  const ref = hpa.spec?.scaleTargetRef;
  return [
    hpa.metadata?.name,
    `${ref?.kind ?? ''}/${ref?.name ?? ''}`,
    formatHPAMetrics(hpa.spec?.metrics, hpa.status?.currentMetrics),
    hpa.spec?.minReplicas !== undefined ? String(hpa.spec.minReplicas) : '<unset>',
    hpa.spec?.maxReplicas ?? 0,
    hpa.status?.currentReplicas ?? 0,
    age(hpa, now),
  ];
}

export const autoscalingPrinters: Record<string, Printer> = {
  'autoscaling/horizontalpodautoscalers': {
    columns: [
      NAME,
      col(
        'Reference',
        'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
      ),
      col(
        'Targets',
        'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).',
      ),
      col('MinPods', 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.'),
      col('MaxPods', 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.'),
      col('Replicas', 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.'),
      AGE,
    ],
    cells: hpaCells,
  },
};
