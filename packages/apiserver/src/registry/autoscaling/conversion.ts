/**
 * autoscaling/v1 ↔ autoscaling/v2 HorizontalPodAutoscalers (kubernetes
 * pkg/apis/autoscaling/v1/conversion.go). v2 is the stored form; v1 shows a
 * Resource cpu Utilization metric as `targetCPUUtilizationPercentage` (and its
 * current value as `currentCPUUtilizationPercentage`), and keeps everything
 * else v1 cannot express in four annotations, in the JSON upstream writes there:
 * the other metrics and their statuses in v1's alpha MetricSpec/MetricStatus
 * shapes, the conditions, and the behavior as the internal Go type marshals it
 * (Go field names). Reading v1 back decodes them, so a v1 client's
 * read-modify-write loses nothing. Both directions are pure.
 */
import type { KubeObject, LabelSelector, ObjectMeta, autoscalingv2 } from '@kubeling/api';

type Obj = Record<string, unknown>;
type Quantity = string | number;
type HPA = autoscalingv2.HorizontalPodAutoscaler;
type MetricSpec = autoscalingv2.MetricSpec;
type MetricStatus = autoscalingv2.MetricStatus;

export const METRIC_SPECS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
const ROUND_TRIP = [METRIC_SPECS_ANNOTATION, BEHAVIOR_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION];

/** autoscaling.DefaultCPUUtilization: what an HPA without metrics targets. */
export const DEFAULT_CPU_UTILIZATION = 80;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A zero resource.Quantity, as a non-pointer Quantity field marshals when unset. */
const ZERO = '0';
/** Only the keys whose values are set (omitempty pointers), in the order given. */
const compact = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** DropRoundTripHorizontalPodAutoscalerAnnotations: metadata without the four annotations (no empty map left behind). */
export function dropRoundTripAnnotations(meta: ObjectMeta): ObjectMeta {
  const ann = meta.annotations;
  if (!ann || !ROUND_TRIP.some((k) => k in ann)) return meta;
  const rest = Object.fromEntries(Object.entries(ann).filter(([k]) => !ROUND_TRIP.includes(k)));
  const { annotations: _a, ...others } = meta;
  return Object.keys(rest).length ? { ...others, annotations: rest } : others;
}

const isCpuUtilization = (m: MetricSpec) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target.averageUtilization !== undefined;

/** The metric autoscaling/v1's targetCPUUtilizationPercentage stands for. */
export const cpuUtilizationMetric = (percent: number): MetricSpec => ({
  type: 'Resource',
  resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } },
});

// ---- v2 → v1 -----------------------------------------------------------------------

const ref = (r: autoscalingv2.CrossVersionObjectReference | undefined) =>
  compact({ kind: r?.kind ?? '', name: r?.name ?? '', apiVersion: r?.apiVersion || undefined });

function metricSpecToV1(m: MetricSpec): Obj {
  const t = (x: { target?: autoscalingv2.MetricTarget } | undefined) => x?.target;
  const body = (): Obj | undefined => {
    switch (m.type) {
      case 'Object':
        return compact({
          target: ref(m.object?.describedObject),
          metricName: m.object?.metric.name ?? '',
          targetValue: t(m.object)?.value ?? ZERO,
          selector: m.object?.metric.selector,
          averageValue: t(m.object)?.averageValue,
        });
      case 'Pods':
        return compact({ metricName: m.pods?.metric.name ?? '', targetAverageValue: t(m.pods)?.averageValue ?? ZERO, selector: m.pods?.metric.selector });
      case 'Resource':
        return compact({
          name: m.resource?.name ?? '',
          targetAverageUtilization: t(m.resource)?.averageUtilization,
          targetAverageValue: t(m.resource)?.averageValue,
        });
      case 'ContainerResource':
        return compact({
          name: m.containerResource?.name ?? '',
          targetAverageUtilization: t(m.containerResource)?.averageUtilization,
          targetAverageValue: t(m.containerResource)?.averageValue,
          container: m.containerResource?.container ?? '',
        });
      case 'External':
        return compact({
          metricName: m.external?.metric.name ?? '',
          metricSelector: m.external?.metric.selector,
          targetValue: t(m.external)?.value,
          targetAverageValue: t(m.external)?.averageValue,
        });
    }
    return undefined;
  };
  return compact({ type: m.type, [FIELD_OF[m.type] ?? 'unknown']: body() });
}

const FIELD_OF: Record<string, keyof MetricSpec> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  ContainerResource: 'containerResource',
  External: 'external',
};

function metricStatusToV1(m: MetricStatus): Obj {
  const c = (x: { current?: autoscalingv2.MetricValueStatus } | undefined) => x?.current;
  const body = (): Obj | undefined => {
    switch (m.type) {
      case 'Object':
        return compact({
          target: ref(m.object?.describedObject),
          metricName: m.object?.metric.name ?? '',
          currentValue: c(m.object)?.value ?? ZERO,
          selector: m.object?.metric.selector,
          averageValue: c(m.object)?.averageValue,
        });
      case 'Pods':
        return compact({ metricName: m.pods?.metric.name ?? '', currentAverageValue: c(m.pods)?.averageValue ?? ZERO, selector: m.pods?.metric.selector });
      case 'Resource':
        return compact({
          name: m.resource?.name ?? '',
          currentAverageUtilization: c(m.resource)?.averageUtilization,
          currentAverageValue: c(m.resource)?.averageValue ?? ZERO,
        });
      case 'ContainerResource':
        return compact({
          name: m.containerResource?.name ?? '',
          currentAverageUtilization: c(m.containerResource)?.averageUtilization,
          currentAverageValue: c(m.containerResource)?.averageValue ?? ZERO,
          container: m.containerResource?.container ?? '',
        });
      case 'External':
        return compact({
          metricName: m.external?.metric.name ?? '',
          metricSelector: m.external?.metric.selector,
          currentValue: c(m.external)?.value ?? ZERO,
          currentAverageValue: c(m.external)?.averageValue,
        });
    }
    return undefined;
  };
  return compact({ type: m.type, [FIELD_OF[m.type] ?? 'unknown']: body() });
}

/** The internal HPAScalingRules as encoding/json writes a struct without json tags: Go field names, nil as null. */
function rulesGo(r: autoscalingv2.HPAScalingRules | undefined): Obj | null {
  if (!r) return null;
  return {
    StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
    SelectPolicy: r.selectPolicy ?? null,
    Policies: r.policies ? r.policies.map((p) => ({ Type: p.type, Value: p.value, PeriodSeconds: p.periodSeconds })) : null,
    Tolerance: r.tolerance ?? null,
  };
}

/** The autoscaling/v1 view of a stored (v2) HorizontalPodAutoscaler (without apiVersion and kind). */
export function hpaV2ToV1(stored: KubeObject): KubeObject {
  const o = stored as unknown as HPA;
  const spec = o.spec;
  const status = o.status;
  const annotations: Record<string, string> = {};
  const metrics = spec?.metrics ?? [];
  const other = metrics.filter((m) => !isCpuUtilization(m)).map(metricSpecToV1);
  if (other.length) annotations[METRIC_SPECS_ANNOTATION] = JSON.stringify(other);
  if (status?.currentMetrics?.length) annotations[METRIC_STATUSES_ANNOTATION] = JSON.stringify(status.currentMetrics.map(metricStatusToV1));
  if (spec?.behavior)
    annotations[BEHAVIOR_ANNOTATION] = JSON.stringify({ ScaleUp: rulesGo(spec.behavior.scaleUp), ScaleDown: rulesGo(spec.behavior.scaleDown) });
  if (status?.conditions?.length) {
    const conds = status.conditions.map((c) =>
      compact({
        type: c.type,
        status: c.status,
        lastTransitionTime: c.lastTransitionTime ?? null,
        reason: c.reason || undefined,
        message: c.message || undefined,
      }),
    );
    annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conds);
  }
  const meta = dropRoundTripAnnotations(stored.metadata);
  const outMeta: ObjectMeta = Object.keys(annotations).length ? { ...meta, annotations: { ...(meta.annotations ?? {}), ...annotations } } : meta;
  // The first cpu Resource metric decides the v1 target (a later one is in the annotation only if it is no Utilization).
  const cpu = metrics.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
  const currentCpu = (status?.currentMetrics ?? [])
    .filter((m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.current.averageUtilization !== undefined)
    .pop();
  const { spec: _s, status: _st, metadata: _m, apiVersion: _av, kind: _k, ...rest } = stored;
  return {
    ...rest,
    metadata: outMeta,
    spec: compact({
      scaleTargetRef: spec?.scaleTargetRef ? ref(spec.scaleTargetRef) : undefined,
      minReplicas: spec?.minReplicas,
      maxReplicas: spec?.maxReplicas,
      targetCPUUtilizationPercentage: cpu?.resource?.target.averageUtilization,
    }),
    status: compact({
      observedGeneration: status?.observedGeneration,
      lastScaleTime: status?.lastScaleTime,
      currentReplicas: status?.currentReplicas ?? 0,
      desiredReplicas: status?.desiredReplicas ?? 0,
      currentCPUUtilizationPercentage: currentCpu?.resource?.current.averageUtilization,
    }),
  };
}

// ---- v1 → v2 -----------------------------------------------------------------------

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const qty = (v: unknown): Quantity | undefined => (typeof v === 'string' || typeof v === 'number' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const sel = (v: unknown): LabelSelector | undefined => (isObj(v) ? (v as LabelSelector) : undefined);
const refFrom = (v: unknown): autoscalingv2.CrossVersionObjectReference => {
  const r = isObj(v) ? v : {};
  return compact({ kind: str(r.kind), name: str(r.name), apiVersion: str(r.apiVersion) || undefined }) as autoscalingv2.CrossVersionObjectReference;
};
const identifier = (name: unknown, selector: unknown): autoscalingv2.MetricIdentifier =>
  compact({ name: str(name), selector: sel(selector) }) as autoscalingv2.MetricIdentifier;
const targetOf = (t: Obj): autoscalingv2.MetricTarget => compact(t) as autoscalingv2.MetricTarget;

function metricSpecFromV1(m: Obj): MetricSpec {
  const type = str(m.type) as MetricSpec['type'];
  const out: MetricSpec = { type };
  const o = (k: string): Obj => (isObj(m[k]) ? (m[k] as Obj) : {});
  if (type === 'Object' && isObj(m.object)) {
    const s = o('object');
    out.object = {
      describedObject: refFrom(s.target),
      target: targetOf({ type: s.averageValue === undefined ? 'Value' : 'AverageValue', value: qty(s.targetValue) ?? ZERO, averageValue: qty(s.averageValue) }),
      metric: identifier(s.metricName, s.selector),
    };
  } else if (type === 'Pods' && isObj(m.pods)) {
    const s = o('pods');
    out.pods = { metric: identifier(s.metricName, s.selector), target: targetOf({ type: 'AverageValue', averageValue: qty(s.targetAverageValue) ?? ZERO }) };
  } else if ((type === 'Resource' && isObj(m.resource)) || (type === 'ContainerResource' && isObj(m.containerResource))) {
    const s = o(type === 'Resource' ? 'resource' : 'containerResource');
    const u = int(s.targetAverageUtilization);
    const target = targetOf({ type: u === undefined ? 'AverageValue' : 'Utilization', averageValue: qty(s.targetAverageValue), averageUtilization: u });
    if (type === 'Resource') out.resource = { name: str(s.name), target };
    else out.containerResource = { name: str(s.name), target, container: str(s.container) };
  } else if (type === 'External' && isObj(m.external)) {
    const s = o('external');
    const value = qty(s.targetValue);
    out.external = {
      metric: identifier(s.metricName, s.metricSelector),
      target: targetOf({ type: value === undefined ? 'AverageValue' : 'Value', value, averageValue: qty(s.targetAverageValue) }),
    };
  }
  return out;
}

function metricStatusFromV1(m: Obj): MetricStatus {
  const type = str(m.type) as MetricStatus['type'];
  const out: MetricStatus = { type };
  const o = (k: string): Obj => (isObj(m[k]) ? (m[k] as Obj) : {});
  const cur = (c: Obj) => compact(c) as autoscalingv2.MetricValueStatus;
  if (type === 'Object' && isObj(m.object)) {
    const s = o('object');
    out.object = {
      metric: identifier(s.metricName, s.selector),
      current: cur({ value: qty(s.currentValue) ?? ZERO, averageValue: qty(s.averageValue) }),
      describedObject: refFrom(s.target),
    };
  } else if (type === 'Pods' && isObj(m.pods)) {
    const s = o('pods');
    out.pods = { metric: identifier(s.metricName, s.selector), current: cur({ averageValue: qty(s.currentAverageValue) ?? ZERO }) };
  } else if ((type === 'Resource' && isObj(m.resource)) || (type === 'ContainerResource' && isObj(m.containerResource))) {
    const s = o(type === 'Resource' ? 'resource' : 'containerResource');
    const current = cur({ averageValue: qty(s.currentAverageValue) ?? ZERO, averageUtilization: int(s.currentAverageUtilization) });
    if (type === 'Resource') out.resource = { name: str(s.name), current };
    else out.containerResource = { name: str(s.name), current, container: str(s.container) };
  } else if (type === 'External' && isObj(m.external)) {
    const s = o('external');
    out.external = {
      metric: identifier(s.metricName, s.metricSelector),
      current: cur({ value: qty(s.currentValue) ?? ZERO, averageValue: qty(s.currentAverageValue) }),
    };
  }
  return out;
}

/** encoding/json matches struct fields case-insensitively: the behavior annotation may spell them either way. */
const field = (o: Obj, name: string): unknown => {
  const k = Object.keys(o).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : o[k];
};

function rulesFromGo(v: unknown): autoscalingv2.HPAScalingRules | undefined {
  if (!isObj(v)) return undefined;
  const policies = field(v, 'Policies');
  return compact({
    stabilizationWindowSeconds: int(field(v, 'StabilizationWindowSeconds')),
    selectPolicy: typeof field(v, 'SelectPolicy') === 'string' ? field(v, 'SelectPolicy') : undefined,
    policies: Array.isArray(policies)
      ? policies
          .filter(isObj)
          .map((p) => ({ type: str(field(p, 'Type')), value: int(field(p, 'Value')) ?? 0, periodSeconds: int(field(p, 'PeriodSeconds')) ?? 0 }))
      : undefined,
    tolerance: qty(field(v, 'Tolerance')),
  }) as autoscalingv2.HPAScalingRules;
}

const parseJSON = (s: string | undefined): unknown => {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    // An annotation that does not decode is ignored, as upstream ignores json.Unmarshal's error.
    return undefined;
  }
};

/** The stored (v2) form of an autoscaling/v1 HorizontalPodAutoscaler (apiVersion autoscaling/v2). */
export function hpaV1ToV2(obj: KubeObject): KubeObject {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const status = isObj(obj.status) ? obj.status : undefined;
  const ann = obj.metadata?.annotations ?? {};
  const cpu = int(spec.targetCPUUtilizationPercentage);
  let metrics: MetricSpec[] = cpu === undefined ? [] : [cpuUtilizationMetric(cpu)];
  const other = parseJSON(ann[METRIC_SPECS_ANNOTATION]);
  if (Array.isArray(other)) metrics = [...other.filter(isObj).map(metricSpecFromV1), ...metrics];
  // autoscaling/v1 had the CPU default in its controller; conversion makes it explicit.
  if (!metrics.length) metrics = [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];
  let behavior: autoscalingv2.HorizontalPodAutoscalerBehavior | undefined;
  const b = parseJSON(ann[BEHAVIOR_ANNOTATION]);
  if (isObj(b)) {
    const scaleUp = rulesFromGo(field(b, 'ScaleUp'));
    const scaleDown = rulesFromGo(field(b, 'ScaleDown'));
    if (scaleUp || scaleDown) behavior = compact({ scaleUp, scaleDown });
  }
  const currentCpu = int(status?.currentCPUUtilizationPercentage);
  let currentMetrics: MetricStatus[] | undefined =
    currentCpu === undefined ? undefined : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentCpu } } }];
  const cur = parseJSON(ann[METRIC_STATUSES_ANNOTATION]);
  if (Array.isArray(cur)) currentMetrics = cur.filter(isObj).map(metricStatusFromV1);
  let conditions: autoscalingv2.HorizontalPodAutoscalerCondition[] | undefined;
  const conds = parseJSON(ann[CONDITIONS_ANNOTATION]);
  if (Array.isArray(conds)) {
    conditions = conds.filter(isObj).map(
      (c) =>
        compact({
          type: str(c.type),
          status: str(c.status),
          lastTransitionTime: typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : undefined,
          reason: str(c.reason) || undefined,
          message: str(c.message) || undefined,
        }) as autoscalingv2.HorizontalPodAutoscalerCondition,
    );
  }
  const { spec: _s, status: _st, metadata: _m, ...rest } = obj;
  const out: KubeObject = {
    ...rest,
    apiVersion: 'autoscaling/v2',
    metadata: dropRoundTripAnnotations(obj.metadata ?? {}),
    spec: compact({
      scaleTargetRef: isObj(spec.scaleTargetRef) ? refFrom(spec.scaleTargetRef) : spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      metrics,
      behavior,
    }),
  };
  if (status || conditions) {
    out.status = compact({
      observedGeneration: status?.observedGeneration,
      lastScaleTime: status?.lastScaleTime,
      currentReplicas: status?.currentReplicas,
      desiredReplicas: status?.desiredReplicas,
      currentMetrics,
      conditions,
    });
  }
  return out;
}
