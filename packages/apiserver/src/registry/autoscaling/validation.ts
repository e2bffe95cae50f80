/**
 * Validation of stored (autoscaling/v2) HorizontalPodAutoscalers, as kubernetes
 * pkg/apis/autoscaling/validation/validation.go runs it on the internal form,
 * with the feature gates of 1.33's defaults: HPAScaleToZero off (minReplicas 0
 * is refused unless the object already had it), HPAConfigurableTolerance off
 * (the strategy drops a new tolerance before validation sees it). Requests in
 * autoscaling/v1 are validated after conversion, so their errors name v2
 * paths, as upstream's do.
 */
import { type KubeObject, type autoscalingv2, canonicalQuantity, parseExactQuantity, validateContainerResourceName } from '@kubeling/api';
import { field, isDNS1123Label, isValidPathSegmentName, type FieldError } from '@kubeling/apimachinery';

type HPA = autoscalingv2.HorizontalPodAutoscaler;
type Rules = autoscalingv2.HPAScalingRules;

export const MAX_PERIOD_SECONDS = 1800;
export const MAX_STABILIZATION_WINDOW_SECONDS = 3600;

const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const POLICY_TYPES = ['Percent', 'Pods'];

/** A quantity's sign (Quantity.Sign), or undefined when it does not parse. */
function sign(q: unknown): number | undefined {
  const p = parseExactQuantity(q);
  if (!p) return undefined;
  return p.nanos === 0n ? 0 : p.negative ? -1 : 1;
}
const shown = (q: unknown) => {
  const p = parseExactQuantity(q);
  return p ? canonicalQuantity(p) : q;
};

/** ValidateCrossVersionObjectReference: kind and name required, each a valid path segment. */
export function validateCrossVersionObjectReference(ref: autoscalingv2.CrossVersionObjectReference | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of ['kind', 'name'] as const) {
    const v = ref?.[k];
    if (!v) errs.push(field.required(`${p}.${k}`, ''));
    else for (const msg of isValidPathSegmentName(v)) errs.push(field.invalid(`${p}.${k}`, v, msg));
  }
  return errs;
}

function validateMetricTarget(t: autoscalingv2.MetricTarget | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = t?.type ?? '';
  if (!type) errs.push(field.required(`${p}.type`, 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue') {
    errs.push(field.invalid(`${p}.type`, type, 'must be either Utilization, Value, or AverageValue'));
  }
  if (t?.value !== undefined && sign(t.value) !== 1) errs.push(field.invalid(`${p}.value`, shown(t.value), 'must be positive'));
  if (t?.averageValue !== undefined && sign(t.averageValue) !== 1) errs.push(field.invalid(`${p}.averageValue`, shown(t.averageValue), 'must be positive'));
  if (t?.averageUtilization !== undefined && t.averageUtilization < 1)
    errs.push(field.invalid(`${p}.averageUtilization`, t.averageUtilization, 'must be greater than 0'));
  return errs;
}

function validateMetricIdentifier(id: autoscalingv2.MetricIdentifier | undefined, p: string): FieldError[] {
  if (!id?.name) return [field.required(`${p}.name`, 'must specify a metric name')];
  return isValidPathSegmentName(id.name).map((m) => field.invalid(`${p}.name`, id.name, m));
}

type Source = { target?: autoscalingv2.MetricTarget };

/** What every source with a raw value and a utilization target checks (validateResourceSource, validateContainerResourceSource). */
function resourceTarget(src: Source, p: string): FieldError[] {
  const errs = validateMetricTarget(src.target, `${p}.target`);
  const t = src.target;
  if (t?.averageUtilization === undefined && t?.averageValue === undefined) {
    errs.push(field.required(`${p}.target.averageUtilization`, 'must set either a target raw value or a target utilization'));
  }
  if (t?.averageUtilization !== undefined && t.averageValue !== undefined) {
    errs.push(field.forbidden(`${p}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
  }
  return errs;
}

const SOURCES: Record<string, (src: never, p: string) => FieldError[]> = {
  object: (src: autoscalingv2.MetricSpec['object'] & object, p) => {
    const errs = [
      ...validateCrossVersionObjectReference(src.describedObject, `${p}.describedObject`),
      ...validateMetricIdentifier(src.metric, `${p}.metric`),
      ...validateMetricTarget(src.target, `${p}.target`),
    ];
    if (src.target?.value === undefined && src.target?.averageValue === undefined) {
      errs.push(field.required(`${p}.target.averageValue`, 'must set either a target value or averageValue'));
    }
    return errs;
  },
  external: (src: autoscalingv2.MetricSpec['external'] & object, p) => {
    const errs = [...validateMetricIdentifier(src.metric, `${p}.metric`), ...validateMetricTarget(src.target, `${p}.target`)];
    if (src.target?.value === undefined && src.target?.averageValue === undefined) {
      errs.push(field.required(`${p}.target.averageValue`, 'must set either a target value for metric or a per-pod target'));
    }
    if (src.target?.value !== undefined && src.target.averageValue !== undefined) {
      errs.push(field.forbidden(`${p}.target.value`, 'may not set both a target value for metric and a per-pod target'));
    }
    return errs;
  },
  pods: (src: autoscalingv2.MetricSpec['pods'] & object, p) => {
    const errs = [...validateMetricIdentifier(src.metric, `${p}.metric`), ...validateMetricTarget(src.target, `${p}.target`)];
    if (src.target?.averageValue === undefined) errs.push(field.required(`${p}.target.averageValue`, 'must specify a positive target averageValue'));
    return errs;
  },
  resource: (src: autoscalingv2.MetricSpec['resource'] & object, p) => {
    const errs = src.name ? [] : [field.required(`${p}.name`, 'must specify a resource name')];
    return [...errs, ...resourceTarget(src, p)];
  },
  containerResource: (src: autoscalingv2.MetricSpec['containerResource'] & object, p) => {
    const errs: FieldError[] = [];
    if (!src.name) errs.push(field.required(`${p}.name`, 'must specify a resource name'));
    else errs.push(...validateContainerResourceName(src.name, `${p}.name`));
    if (!src.container) errs.push(field.required(`${p}.container`, 'must specify a container'));
    else errs.push(...isDNS1123Label(src.container).map((m) => field.invalid(`${p}.container`, src.container, m)));
    return [...errs, ...resourceTarget(src, p)];
  },
};
/** The order validateMetricSpec looks at the sources in (the first present is validated). */
const SOURCE_ORDER = ['object', 'external', 'pods', 'resource', 'containerResource'] as const;
const FIELD_OF: Record<string, string> = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' };

function validateMetricSpec(spec: autoscalingv2.MetricSpec, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = spec.type ?? '';
  if (!type) errs.push(field.required(`${p}.type`, 'must specify a metric source type'));
  if (!METRIC_SOURCE_TYPES.includes(type)) errs.push(field.notSupported(`${p}.type`, type, METRIC_SOURCE_TYPES));
  const present = SOURCE_ORDER.filter((k) => spec[k] !== undefined && spec[k] !== null);
  if (present.length) errs.push(...SOURCES[present[0]!]!(spec[present[0]!] as never, `${p}.${present[0]}`));
  const expected = FIELD_OF[type];
  if (expected) {
    if (!present.includes(expected as (typeof SOURCE_ORDER)[number])) {
      errs.push(field.required(`${p}.${expected}`, 'must populate information for the given metric source'));
    }
  } else if (type) {
    errs.push(field.notSupported(`${p}.type`, type, METRIC_SOURCE_TYPES));
  }
  if (present.length !== 1) for (const k of present) if (k !== expected) errs.push(field.forbidden(`${p}.${k}`, 'must populate the given metric source only'));
  return errs;
}

function validateScalingRules(rules: Rules | undefined, p: string): FieldError[] {
  if (!rules) return [];
  const errs: FieldError[] = [];
  const w = rules.stabilizationWindowSeconds;
  if (w !== undefined && w < 0) errs.push(field.invalid(`${p}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (w !== undefined && w > MAX_STABILIZATION_WINDOW_SECONDS) {
    errs.push(field.invalid(`${p}.stabilizationWindowSeconds`, w, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  }
  if (rules.selectPolicy !== undefined && !SELECT_POLICIES.includes(rules.selectPolicy)) {
    errs.push(field.notSupported(`${p}.selectPolicy`, rules.selectPolicy, SELECT_POLICIES));
  }
  if (!rules.policies?.length) errs.push(field.required(`${p}.policies`, 'must specify at least one Policy'));
  (rules.policies ?? []).forEach((pol, i) => {
    const pp = `${p}.policies[${i}]`;
    if (!POLICY_TYPES.includes(pol.type)) errs.push(field.notSupported(`${pp}.type`, pol.type, POLICY_TYPES));
    if (!(pol.value > 0)) errs.push(field.invalid(`${pp}.value`, pol.value, 'must be greater than zero'));
    if (!(pol.periodSeconds > 0)) errs.push(field.invalid(`${pp}.periodSeconds`, pol.periodSeconds, 'must be greater than zero'));
    if (pol.periodSeconds > MAX_PERIOD_SECONDS)
      errs.push(field.invalid(`${pp}.periodSeconds`, pol.periodSeconds, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  if (rules.tolerance !== undefined && (sign(rules.tolerance) ?? 0) < 0) {
    errs.push(field.invalid(`${p}.tolerance`, shown(rules.tolerance), 'must be greater than or equal to zero'));
  }
  return errs;
}

/** validateHorizontalPodAutoscalerSpec; minReplicas may be 0 only when `allowZero` (the object had it already). */
export function validateHPASpec(spec: autoscalingv2.HorizontalPodAutoscalerSpec | undefined, allowZero = false): FieldError[] {
  const errs: FieldError[] = [];
  const lower = allowZero ? 0 : 1;
  const min = spec?.minReplicas;
  const max = spec?.maxReplicas ?? 0;
  if (min !== undefined && min < lower) errs.push(field.invalid('spec.minReplicas', min, `must be greater than or equal to ${lower}`));
  if (max < 1) errs.push(field.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min) errs.push(field.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(spec?.scaleTargetRef, 'spec.scaleTargetRef'));
  const metrics = spec?.metrics ?? [];
  metrics.forEach((m, i) => errs.push(...validateMetricSpec(m, `spec.metrics[${i}]`)));
  if (min === 0 && !metrics.some((m) => m.type === 'Object' || m.type === 'External')) {
    errs.push(field.forbidden('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  if (spec?.behavior) {
    errs.push(...validateScalingRules(spec.behavior.scaleUp, 'spec.behavior.scaleUp'));
    errs.push(...validateScalingRules(spec.behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return errs;
}

/** ValidateHorizontalPodAutoscaler (and ...Update, with `allowZero` when the old object had minReplicas 0). */
export const validateHPA = (obj: KubeObject, allowZero = false): FieldError[] => validateHPASpec((obj as unknown as HPA).spec, allowZero);

/** ValidateHorizontalPodAutoscalerStatusUpdate: replica counts are not negative. */
export function validateHPAStatusUpdate(obj: KubeObject): FieldError[] {
  const s = (obj as unknown as HPA).status;
  const errs: FieldError[] = [];
  if ((s?.currentReplicas ?? 0) < 0) errs.push(field.invalid('status.currentReplicas', s!.currentReplicas, 'must be greater than or equal to 0'));
  if ((s?.desiredReplicas ?? 0) < 0) errs.push(field.invalid('status.desiredReplicas', s!.desiredReplicas, 'must be greater than or equal to 0'));
  return errs;
}
