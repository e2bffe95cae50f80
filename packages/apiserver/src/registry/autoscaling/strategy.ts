/**
 * HorizontalPodAutoscalers (kubernetes pkg/registry/autoscaling/horizontalpodautoscaler
 * strategy.go, pkg/apis/autoscaling/v2/defaults.go): one stored form,
 * autoscaling/v2, served as v2 and, through conversion.ts, as v1 — both
 * versions read and write the same key and share one watch cache (the store's
 * shared-storage conversion: `toExternal`/`fromExternal`). The strategy's rules
 * run on the stored form, whichever version the request came in.
 *
 * - defaults: minReplicas 1; no metrics → 80% average CPU utilization; a
 *   behavior that is set gets its missing rules filled (scale up: no
 *   stabilization, max of 4 pods and 100% per 15 s; scale down: 100% per 15 s,
 *   its stabilization window left to the controller's
 *   --horizontal-pod-autoscaler-downscale-stabilization, as upstream).
 * - create resets the status; updates keep it (status subresource).
 * - behavior tolerances are dropped unless the object had one
 *   (HPAConfigurableTolerance is alpha, off, in 1.33).
 */
import type { KubeObject, autoscalingv2 } from '@kubeling/api';
import type { Strategy } from '../strategy.js';
import { cpuUtilizationMetric, DEFAULT_CPU_UTILIZATION, dropRoundTripAnnotations, hpaV1ToV2, hpaV2ToV1 } from './conversion.js';
import { validateHPA, validateHPAStatusUpdate } from './validation.js';

type HPA = autoscalingv2.HorizontalPodAutoscaler;
type Rules = autoscalingv2.HPAScalingRules;

const SCALE_UP_DEFAULTS: Rules = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};
const SCALE_DOWN_DEFAULTS: Rules = { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };

/** copyHPAScalingRules over the defaults: every field the rules set wins. */
export function scalingRulesWithDefaults(rules: Rules | undefined, defaults: Rules): Rules {
  const out: Rules = structuredClone(defaults);
  if (!rules) return out;
  if (rules.selectPolicy !== undefined) out.selectPolicy = rules.selectPolicy;
  if (rules.stabilizationWindowSeconds !== undefined) out.stabilizationWindowSeconds = rules.stabilizationWindowSeconds;
  if (rules.policies !== undefined) out.policies = rules.policies;
  if (rules.tolerance !== undefined) out.tolerance = rules.tolerance;
  return out;
}

export const scaleUpRules = (r: Rules | undefined): Rules => scalingRulesWithDefaults(r, SCALE_UP_DEFAULTS);
export const scaleDownRules = (r: Rules | undefined): Rules => scalingRulesWithDefaults(r, SCALE_DOWN_DEFAULTS);

/** SetDefaults_HorizontalPodAutoscaler (autoscaling/v2). */
export function defaultHPA(obj: KubeObject): void {
  const hpa = obj as unknown as HPA;
  if (!hpa.spec || typeof hpa.spec !== 'object') return;
  hpa.spec.minReplicas ??= 1;
  if (!hpa.spec.metrics?.length) hpa.spec.metrics = [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];
  const b = hpa.spec.behavior;
  if (b) hpa.spec.behavior = { scaleUp: scaleUpRules(b.scaleUp), scaleDown: scaleDownRules(b.scaleDown) };
}

const usesTolerance = (hpa: KubeObject | undefined) => {
  const b = (hpa as unknown as HPA | undefined)?.spec?.behavior;
  return b?.scaleUp?.tolerance !== undefined || b?.scaleDown?.tolerance !== undefined;
};

/** dropDisabledFields: a tolerance only stays on an object that already used one. */
function dropDisabledFields(obj: KubeObject, old?: KubeObject): void {
  if (usesTolerance(old)) return;
  const b = (obj as unknown as HPA).spec?.behavior;
  if (b?.scaleUp) delete b.scaleUp.tolerance;
  if (b?.scaleDown) delete b.scaleDown.tolerance;
}

/** Objects whose update may keep minReplicas 0 (the old object had it): prepareForUpdate marks them for validate. */
const zeroAllowed = new WeakSet<KubeObject>();

/** A stored object in v2; those written as autoscaling/v1 before v2 was the storage version are converted (and defaulted). */
export function storedAsV2(stored: KubeObject): KubeObject {
  if (stored.apiVersion !== 'autoscaling/v1') return stored;
  const v2 = hpaV1ToV2(stored);
  defaultHPA(v2);
  return v2;
}

/** autoscaling/v2 HorizontalPodAutoscalers: the storage version. */
export const hpaStrategy: Strategy = {
  statusSubresource: true,
  defaults: defaultHPA,
  prepareForCreate(obj) {
    obj.status = {};
    dropDisabledFields(obj);
  },
  prepareForUpdate(obj, old) {
    dropDisabledFields(obj, old);
    if ((old as unknown as HPA).spec?.minReplicas === 0) zeroAllowed.add(obj);
  },
  validate: (obj) => validateHPA(obj, zeroAllowed.has(obj)),
  validateStatusUpdate: (obj) => validateHPAStatusUpdate(obj),
  // The v1 round-trip annotations never reach storage nor a v2 reader (upstream's v2 conversion drops them).
  toExternal: (stored) => {
    const v2 = storedAsV2(stored);
    return { ...v2, metadata: dropRoundTripAnnotations(v2.metadata) };
  },
  fromExternal: (obj) => ({ ...obj, apiVersion: 'autoscaling/v2', metadata: dropRoundTripAnnotations(obj.metadata ?? {}) }),
};

/** autoscaling/v1 HorizontalPodAutoscalers: the same objects, converted. */
export const hpaV1Strategy: Strategy = {
  ...hpaStrategy,
  toExternal: (stored) => hpaV2ToV1(storedAsV2(stored)),
  fromExternal: hpaV1ToV2,
};
