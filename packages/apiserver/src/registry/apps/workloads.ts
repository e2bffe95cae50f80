/**
 * apps/v1 workloads (Deployment, ReplicaSet, DaemonSet, StatefulSet): defaults,
 * a selector that must select the template's labels and may not change, the
 * template's pod spec validated as a pod's, and generation on spec changes
 * (kubernetes pkg/apis/apps/v1/defaults.go, pkg/apis/apps/validation).
 */
import type { KubeObject } from '@kubeling/api';
import { field, jsonEqual, selectorFromLabelSelector, validateLabels, type FieldError, type LabelSelectorObject } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { defaultPodSpec, validatePodSpec } from '../core/pods.js';

type Obj = Record<string, unknown>;
type Template = { metadata?: { labels?: Record<string, string> }; spec?: Obj };
type WorkloadSpec = Obj & {
  replicas?: number;
  selector?: LabelSelectorObject;
  template?: Template;
  strategy?: Obj & { type?: string; rollingUpdate?: Obj };
  updateStrategy?: Obj & { type?: string; rollingUpdate?: Obj };
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  minReadySeconds?: number;
  podManagementPolicy?: string;
};

const specOf = (o: KubeObject) => (o.spec ??= {}) as WorkloadSpec;

/** Selector present, non-empty, matching the template labels; template valid. */
export function validateSelectorAndTemplate(s: WorkloadSpec, opts: { restartPolicies?: string[]; extraVolumes?: string[] } = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.selector) errs.push(field.required('spec.selector', ''));
  else if (!Object.keys(s.selector.matchLabels ?? {}).length && !(s.selector.matchExpressions ?? []).length) {
    errs.push(field.invalid('spec.selector', s.selector, 'empty selector is invalid for deployment'));
  }
  const labels = s.template?.metadata?.labels ?? {};
  errs.push(...validateLabels(labels, 'spec.template.metadata.labels'));
  if (s.selector) {
    try {
      const sel = selectorFromLabelSelector(s.selector);
      if (!sel.empty() && !sel.matches(labels)) {
        errs.push(field.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
      }
    } catch (e) {
      errs.push(field.invalid('spec.selector', s.selector, (e as Error).message));
    }
  }
  if (!s.template) errs.push(field.required('spec.template', ''));
  else {
    errs.push(...validatePodSpec(s.template.spec as never, 'spec.template.spec', opts.extraVolumes ?? []));
    const rp = (s.template.spec as { restartPolicy?: string } | undefined)?.restartPolicy;
    const allowed = opts.restartPolicies ?? ['Always'];
    if (rp && !allowed.includes(rp)) errs.push(field.notSupported('spec.template.spec.restartPolicy', rp, allowed));
  }
  return errs;
}

function nonNegative(s: WorkloadSpec, keys: (keyof WorkloadSpec)[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of keys) {
    const v = s[k];
    if (typeof v === 'number' && v < 0) errs.push(field.invalid(`spec.${String(k)}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

function selectorImmutable(obj: KubeObject, old: KubeObject): FieldError[] {
  const a = specOf(obj).selector;
  const b = (old.spec as WorkloadSpec | undefined)?.selector;
  return jsonEqual(a, b) ? [] : [field.invalid('spec.selector', a, 'field is immutable')];
}

function defaultTemplate(s: WorkloadSpec): void {
  if (s.template) {
    s.template.spec ??= {};
    defaultPodSpec(s.template.spec as never);
  }
}

const workload = (extra: Partial<Strategy>): Strategy => ({
  generation: true,
  statusSubresource: true,
  prepareForCreate(obj) {
    obj.status = {};
  },
  validateUpdate: selectorImmutable,
  ...extra,
});

export const deploymentStrategy = workload({
  defaults(obj) {
    const s = specOf(obj);
    s.replicas ??= 1;
    s.strategy ??= {};
    s.strategy.type ??= 'RollingUpdate';
    if (s.strategy.type === 'RollingUpdate') {
      s.strategy.rollingUpdate ??= {};
      s.strategy.rollingUpdate.maxUnavailable ??= '25%';
      s.strategy.rollingUpdate.maxSurge ??= '25%';
    }
    s.revisionHistoryLimit ??= 10;
    s.progressDeadlineSeconds ??= 600;
    defaultTemplate(s);
  },
  validate(obj) {
    const s = specOf(obj);
    const errs = [...validateSelectorAndTemplate(s), ...nonNegative(s, ['replicas', 'revisionHistoryLimit', 'minReadySeconds'])];
    const t = s.strategy?.type;
    if (t && t !== 'RollingUpdate' && t !== 'Recreate') errs.push(field.notSupported('spec.strategy.type', t, ['Recreate', 'RollingUpdate']));
    if (t === 'Recreate' && s.strategy?.rollingUpdate) errs.push(field.forbidden('spec.strategy.rollingUpdate', 'may not be specified when strategy `type` is \'Recreate\''));
    if (s.progressDeadlineSeconds !== undefined && s.minReadySeconds !== undefined && s.progressDeadlineSeconds <= s.minReadySeconds) {
      errs.push(field.invalid('spec.progressDeadlineSeconds', s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
    return errs;
  },
});

export const replicaSetStrategy = workload({
  defaults(obj) {
    const s = specOf(obj);
    s.replicas ??= 1;
    defaultTemplate(s);
  },
  validate(obj) {
    const s = specOf(obj);
    return [...validateSelectorAndTemplate(s), ...nonNegative(s, ['replicas', 'minReadySeconds'])];
  },
  fields: (obj) => ({ 'status.replicas': String(((obj.status ?? {}) as { replicas?: number }).replicas ?? 0) }),
});

export const daemonSetStrategy = workload({
  defaults(obj) {
    const s = specOf(obj);
    s.updateStrategy ??= {};
    s.updateStrategy.type ??= 'RollingUpdate';
    if (s.updateStrategy.type === 'RollingUpdate') {
      s.updateStrategy.rollingUpdate ??= {};
      s.updateStrategy.rollingUpdate.maxUnavailable ??= 1;
      s.updateStrategy.rollingUpdate.maxSurge ??= 0;
    }
    s.revisionHistoryLimit ??= 10;
    defaultTemplate(s);
  },
  validate(obj) {
    const s = specOf(obj);
    return [...validateSelectorAndTemplate(s), ...nonNegative(s, ['minReadySeconds', 'revisionHistoryLimit'])];
  },
});

export const statefulSetStrategy = workload({
  defaults(obj) {
    const s = specOf(obj);
    s.replicas ??= 1;
    s.podManagementPolicy ??= 'OrderedReady';
    s.updateStrategy ??= {};
    s.updateStrategy.type ??= 'RollingUpdate';
    if (s.updateStrategy.type === 'RollingUpdate') {
      s.updateStrategy.rollingUpdate ??= {};
      s.updateStrategy.rollingUpdate.partition ??= 0;
    }
    s.revisionHistoryLimit ??= 10;
    s.persistentVolumeClaimRetentionPolicy ??= { whenDeleted: 'Retain', whenScaled: 'Retain' };
    defaultTemplate(s);
  },
  validate(obj) {
    const s = specOf(obj);
    const claims = ((s.volumeClaimTemplates ?? []) as { metadata?: { name?: string } }[]).map((c) => c.metadata?.name ?? '').filter(Boolean);
    const errs = [...validateSelectorAndTemplate(s, { extraVolumes: claims }), ...nonNegative(s, ['replicas', 'minReadySeconds', 'revisionHistoryLimit'])];
    const p = s.podManagementPolicy;
    if (p && p !== 'OrderedReady' && p !== 'Parallel') errs.push(field.notSupported('spec.podManagementPolicy', p, ['OrderedReady', 'Parallel']));
    return errs;
  },
});
