/**
 * apps/v1 defaulting and spec validation of Deployments, ReplicaSets,
 * DaemonSets and StatefulSets, with kube-apiserver 1.33's paths, order and
 * messages (pkg/apis/apps/v1/defaults.go, pkg/apis/apps/validation).
 *
 * Bad values that upstream passes as Go structs or maps are printed as its
 * ErrorBody prints them (`%#v`: `map[string]string{"app":"d"}`,
 * `v1.LabelSelector{...}`; IntOrString through its String(): `150%`).
 */
import {
  field,
  isValidPercent,
  selectorFromLabelSelector,
  validateLabelSelector,
  validateLabels,
  validateAnnotations,
  type FieldError,
  type LabelSelector,
  type LabelSelectorObject,
} from '@kubeling/apimachinery';
import { defaultPersistentVolumeClaim } from './core-v1-claim-validation.js';
import { defaultPodSpec, validatePodSpec, validatePodTemplateSpec } from './core-v1-validation.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objOf = (v: unknown): Obj | undefined => (isObj(v) ? v : undefined);
const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');
const present = (v: unknown) => v !== undefined && v !== null;
const goQuoted = (s: string) => field.goQuote(s);
/** How `%#v` prints a non-nil pointer member: an address, which no client can predict. */
const goPtr = (type: string, v: unknown) => (present(v) ? `(*${type})(0xc000000000)` : `(*${type})(nil)`);

// ================================================================ rendering

/** `%#v` of a metav1.LabelSelector, as upstream prints `spec.selector` values. */
export function goLabelSelector(sel: LabelSelectorObject | null | undefined): field.GoValue {
  if (!sel) return new field.GoValue('(*v1.LabelSelector)(nil)');
  const exprs = sel.matchExpressions;
  const reqs =
    exprs === undefined || exprs === null
      ? '[]v1.LabelSelectorRequirement(nil)'
      : `[]v1.LabelSelectorRequirement{${exprs
          .map(
            (e) =>
              `v1.LabelSelectorRequirement{Key:${goQuoted(strOf(e.key))}, Operator:${goQuoted(strOf(e.operator))}, Values:${field.goStringSlice(e.values).text}}`,
          )
          .join(', ')}}`;
  return new field.GoValue(`v1.LabelSelector{MatchLabels:${field.goStringMap(sel.matchLabels).text}, MatchExpressions:${reqs}}`);
}

/** An intstr.IntOrString as ErrorBody prints it: through String(), unquoted (`25%`, `3`). */
export const goIntOrString = (v: unknown): field.GoValue => new field.GoValue(v === undefined || v === null ? '0' : String(v));

// ================================================================== helpers

function nonNegative(value: unknown, p: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [field.invalid(p, value, 'must be greater than or equal to 0')] : [];
}

/** ValidatePositiveIntOrPercent: a percent string, or an integer not below 0. */
export function validatePositiveIntOrPercent(v: unknown, p: string): FieldError[] {
  if (typeof v === 'string') return isValidPercent(v).map((m) => field.invalid(p, goIntOrString(v), m));
  if (typeof v === 'number') return nonNegative(v, p);
  return [];
}

/** getIntOrPercentValue: the number of a percent, or the integer (a string that is neither counts as Atoi would: 0 when not a number). */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return 0;
  if (isValidPercent(v).length === 0) return Number(v.slice(0, -1));
  return /^[+-]?[0-9]+$/.test(v) ? Number(v) : 0;
}

/** IsNotMoreThan100Percent */
function notMoreThan100Percent(v: unknown, p: string): FieldError[] {
  if (typeof v !== 'string' || isValidPercent(v).length) return [];
  return Number(v.slice(0, -1)) > 100 ? [field.invalid(p, goIntOrString(v), 'must not be greater than 100%')] : [];
}

/** The selector of a spec, or the message of why it is not one. */
function asSelector(sel: LabelSelectorObject | null | undefined): LabelSelector | Error {
  try {
    return selectorFromLabelSelector(sel);
  } catch (e) {
    return e as Error;
  }
}

/** The spec's required selector: present, valid, not empty (`empty selector is invalid for <kind>`). */
function validateRequiredSelector(sel: LabelSelectorObject | null | undefined, p: string, kind: string): FieldError[] {
  if (!sel) return [field.required(p, '')];
  const errs = validateLabelSelector(sel, p);
  if (Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
    errs.push(field.invalid(p, goLabelSelector(sel), `empty selector is invalid for ${kind}`));
  }
  return errs;
}

const templateLabels = (template: unknown) => objOf(objOf(objOf(template)?.metadata)?.labels) as Record<string, string> | undefined;

function selectorMismatch(selector: LabelSelector, template: unknown, p: string): FieldError[] {
  const labels = templateLabels(template);
  return !selector.empty() && !selector.matches(labels ?? {})
    ? [field.invalid(`${p}.metadata.labels`, field.goStringMap(labels), '`selector` does not match template `labels`')]
    : [];
}

/** The template with its pod spec defaulted when it has none (upstream's template is a value, always defaulted). */
function withSpec(template: unknown): Obj {
  const t = objOf(template) ?? {};
  if (objOf(t.spec)) return t;
  const spec: Obj = {};
  defaultPodSpec(spec);
  return { ...t, spec };
}

/** ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets). */
function validateTemplateForReplicaSet(template: unknown, selector: LabelSelector, p: string): FieldError[] {
  const t = withSpec(template);
  const spec = objOf(t.spec) ?? {};
  const errs = [...selectorMismatch(selector, t, p), ...validatePodTemplateSpec(t, p)];
  if (spec.restartPolicy !== 'Always') errs.push(field.notSupported(`${p}.spec.restartPolicy`, strOf(spec.restartPolicy), ['Always']));
  if (present(spec.activeDeadlineSeconds))
    errs.push(field.forbidden(`${p}.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  return errs;
}

// =============================================================== Deployment

function validateDeploymentStrategy(strategy: unknown, p: string): FieldError[] {
  const s = objOf(strategy) ?? {};
  const type = strOf(s.type);
  const ru = objOf(s.rollingUpdate);
  switch (type) {
    case 'Recreate':
      return present(s.rollingUpdate) ? [field.forbidden(`${p}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")] : [];
    case 'RollingUpdate': {
      if (!ru) return [field.required(`${p}.rollingUpdate`, 'this should be defaulted and never be nil')];
      const rp = `${p}.rollingUpdate`;
      const errs = [...validatePositiveIntOrPercent(ru.maxUnavailable, `${rp}.maxUnavailable`), ...validatePositiveIntOrPercent(ru.maxSurge, `${rp}.maxSurge`)];
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(field.invalid(`${rp}.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
      }
      errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${rp}.maxUnavailable`));
      return errs;
    }
    default: {
      const value = new field.GoValue(
        `apps.DeploymentStrategy{Type:${goQuoted(type)}, RollingUpdate:${goPtr('apps.RollingUpdateDeployment', s.rollingUpdate)}}`,
      );
      return [field.notSupported(p, value, ['Recreate', 'RollingUpdate'])];
    }
  }
}

/** ValidateDeploymentSpec */
export function validateDeploymentSpec(spec: unknown, p = 'spec'): FieldError[] {
  const s = objOf(spec) ?? {};
  const sel = objOf(s.selector) as LabelSelectorObject | undefined;
  const errs = [...nonNegative(s.replicas, `${p}.replicas`), ...validateRequiredSelector(sel, `${p}.selector`, 'deployment')];
  const selector = asSelector(sel);
  if (selector instanceof Error) errs.push(field.invalid(`${p}.selector`, goLabelSelector(sel), 'invalid label selector'));
  else errs.push(...validateTemplateForReplicaSet(s.template, selector, `${p}.template`));
  errs.push(...validateDeploymentStrategy(s.strategy, `${p}.strategy`));
  errs.push(...nonNegative(s.minReadySeconds, `${p}.minReadySeconds`));
  errs.push(...nonNegative(s.revisionHistoryLimit, `${p}.revisionHistoryLimit`));
  if (typeof s.progressDeadlineSeconds === 'number') {
    errs.push(...nonNegative(s.progressDeadlineSeconds, `${p}.progressDeadlineSeconds`));
    if (s.progressDeadlineSeconds <= (typeof s.minReadySeconds === 'number' ? s.minReadySeconds : 0)) {
      errs.push(field.invalid(`${p}.progressDeadlineSeconds`, s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

// =============================================================== ReplicaSet

/** ValidateReplicaSetSpec (its empty-selector message says `deployment`, as upstream's does). */
export function validateReplicaSetSpec(spec: unknown, p = 'spec'): FieldError[] {
  const s = objOf(spec) ?? {};
  const sel = objOf(s.selector) as LabelSelectorObject | undefined;
  const errs = [
    ...nonNegative(s.replicas, `${p}.replicas`),
    ...nonNegative(s.minReadySeconds, `${p}.minReadySeconds`),
    ...validateRequiredSelector(sel, `${p}.selector`, 'deployment'),
  ];
  const selector = asSelector(sel);
  if (selector instanceof Error) errs.push(field.invalid(`${p}.selector`, goLabelSelector(sel), 'invalid label selector'));
  else errs.push(...validateTemplateForReplicaSet(s.template, selector, `${p}.template`));
  return errs;
}

/**
 * ValidateReplicationControllerSpec (core/v1, the ReplicaSet's predecessor): an
 * equality selector that may not be empty, and a template that must be present
 * and match it; otherwise the ReplicaSet's template rules.
 */
export function validateReplicationControllerSpec(spec: unknown, p = 'spec'): FieldError[] {
  const s = objOf(spec) ?? {};
  const sel = (objOf(s.selector) ?? {}) as Record<string, string>;
  const errs = [
    ...nonNegative(s.minReadySeconds, `${p}.minReadySeconds`),
    ...(Object.keys(sel).length ? [] : [field.required(`${p}.selector`, '')]),
    ...nonNegative(s.replicas, `${p}.replicas`),
  ];
  if (!objOf(s.template)) errs.push(field.required(`${p}.template`, ''));
  else errs.push(...validateTemplateForReplicaSet(s.template, selectorFromLabelSelector({ matchLabels: sel }), `${p}.template`));
  return errs;
}

/** SetDefaults_ReplicationController: selector and object labels from the template's labels, 1 replica. */
export function defaultReplicationController(obj: { metadata?: { labels?: Record<string, string> }; spec?: unknown }): void {
  const s = (obj.spec = objOf(obj.spec) ?? {}) as Obj;
  const labels = templateLabels(s.template);
  if (labels) {
    if (!Object.keys(objOf(s.selector) ?? {}).length) s.selector = { ...labels };
    obj.metadata ??= {};
    if (!Object.keys(obj.metadata.labels ?? {}).length) obj.metadata.labels = { ...labels };
  }
  if (!present(s.replicas)) s.replicas = 1;
  defaultTemplate(s);
}

// ================================================================ DaemonSet

function validateDaemonSetUpdateStrategy(strategy: unknown, p: string): FieldError[] {
  const s = objOf(strategy) ?? {};
  const type = strOf(s.type);
  switch (type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate': {
      const ru = objOf(s.rollingUpdate);
      if (!ru) return [field.required(`${p}.rollingUpdate`, '')];
      const rp = `${p}.rollingUpdate`;
      const errs = [
        ...validatePositiveIntOrPercent(ru.maxUnavailable, `${rp}.maxUnavailable`),
        ...validatePositiveIntOrPercent(ru.maxSurge, `${rp}.maxSurge`),
        ...notMoreThan100Percent(ru.maxUnavailable, `${rp}.maxUnavailable`),
        ...notMoreThan100Percent(ru.maxSurge, `${rp}.maxSurge`),
      ];
      const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
      const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
      if (hasUnavailable && hasSurge) errs.push(field.invalid(`${rp}.maxSurge`, goIntOrString(ru.maxSurge), 'may not be set when maxUnavailable is non-zero'));
      else if (!hasUnavailable && !hasSurge) errs.push(field.required(`${rp}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
      return errs;
    }
    default: {
      const value = new field.GoValue(
        `apps.DaemonSetUpdateStrategy{Type:${goQuoted(type)}, RollingUpdate:${goPtr('apps.RollingUpdateDaemonSet', s.rollingUpdate)}}`,
      );
      return [field.notSupported(p, value, ['RollingUpdate', 'OnDelete'])];
    }
  }
}

/** ValidateDaemonSetSpec */
export function validateDaemonSetSpec(spec: unknown, p = 'spec'): FieldError[] {
  const s = objOf(spec) ?? {};
  const sel = objOf(s.selector) as LabelSelectorObject | undefined;
  const errs = validateLabelSelector(sel, `${p}.selector`);
  const selector = asSelector(sel);
  const t = withSpec(s.template);
  if (!(selector instanceof Error) && !selector.matches(templateLabels(t) ?? {})) {
    errs.push(field.invalid(`${p}.template.metadata.labels`, field.goStringMap(templateLabels(t)), '`selector` does not match template `labels`'));
  }
  if (sel && Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
    errs.push(field.invalid(`${p}.selector`, goLabelSelector(sel), 'empty selector is invalid for daemonset'));
  }
  errs.push(...validatePodTemplateSpec(t, `${p}.template`));
  const podSpec = objOf(t.spec) ?? {};
  if (podSpec.restartPolicy !== 'Always') errs.push(field.notSupported(`${p}.template.spec.restartPolicy`, strOf(podSpec.restartPolicy), ['Always']));
  if (present(podSpec.activeDeadlineSeconds))
    errs.push(field.forbidden(`${p}.template.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in DaemonSet is not Supported'));
  errs.push(...nonNegative(s.minReadySeconds, `${p}.minReadySeconds`));
  errs.push(...nonNegative(s.templateGeneration, `${p}.templateGeneration`));
  errs.push(...validateDaemonSetUpdateStrategy(s.updateStrategy, `${p}.updateStrategy`));
  errs.push(...nonNegative(s.revisionHistoryLimit, `${p}.revisionHistoryLimit`));
  return errs;
}

// ============================================================== StatefulSet

const RETENTION_POLICIES = ['Retain', 'Delete'];

function validateStatefulSetUpdateStrategy(strategy: unknown, p: string): FieldError[] {
  const s = objOf(strategy) ?? {};
  const type = strOf(s.type);
  const ru = objOf(s.rollingUpdate);
  const ruValue = () =>
    new field.GoValue(
      `apps.RollingUpdateStatefulSetStrategy{Partition:${typeof ru?.partition === 'number' ? ru.partition : 0}, MaxUnavailable:${goPtr('intstr.IntOrString', ru?.maxUnavailable)}}`,
    );
  switch (type) {
    case '':
      return [field.required(p, '')];
    case 'OnDelete':
      return ru ? [field.invalid(`${p}.rollingUpdate`, ruValue(), "only allowed for updateStrategy 'RollingUpdate'")] : [];
    case 'RollingUpdate': {
      if (!ru) return [];
      const rp = `${p}.rollingUpdate`;
      const errs = nonNegative(ru.partition, `${rp}.partition`);
      if (present(ru.maxUnavailable)) {
        errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, `${rp}.maxUnavailable`));
        if (intOrPercentValue(ru.maxUnavailable) === 0) errs.push(field.invalid(`${rp}.maxUnavailable`, goIntOrString(ru.maxUnavailable), 'cannot be 0'));
        errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${rp}.maxUnavailable`));
      }
      return errs;
    }
    default: {
      const value = new field.GoValue(
        `apps.StatefulSetUpdateStrategy{Type:${goQuoted(type)}, RollingUpdate:${goPtr('apps.RollingUpdateStatefulSetStrategy', s.rollingUpdate)}}`,
      );
      return [field.invalid(p, value, "must be 'RollingUpdate' or 'OnDelete'")];
    }
  }
}

/**
 * ValidateStatefulSetSpec. As upstream, the pod template is checked for its
 * labels (against the selector, and as labels), annotations, restart policy
 * and active deadline only: its pod spec is not validated here (a
 * volumeClaimTemplate replaces a template volume of the same name only when a
 * pod is made, and the pods are validated when the controller creates them),
 * and the claim templates are validated as claims when they are created.
 */
export function validateStatefulSetSpec(spec: unknown, p = 'spec'): FieldError[] {
  const s = objOf(spec) ?? {};
  const errs: FieldError[] = [];
  const pmp = strOf(s.podManagementPolicy);
  if (!pmp) errs.push(field.required(`${p}.podManagementPolicy`, ''));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') errs.push(field.invalid(`${p}.podManagementPolicy`, pmp, "must be 'OrderedReady' or 'Parallel'"));
  errs.push(...validateStatefulSetUpdateStrategy(s.updateStrategy, `${p}.updateStrategy`));
  const retention = objOf(s.persistentVolumeClaimRetentionPolicy);
  if (retention) {
    for (const k of ['whenDeleted', 'whenScaled']) {
      const v = strOf(retention[k]);
      if (!RETENTION_POLICIES.includes(v)) errs.push(field.notSupported(`${p}.persistentVolumeClaimRetentionPolicy.${k}`, v, RETENTION_POLICIES));
    }
  }
  errs.push(...nonNegative(s.replicas, `${p}.replicas`));
  errs.push(...nonNegative(s.minReadySeconds, `${p}.minReadySeconds`));
  const ordinals = objOf(s.ordinals);
  if (ordinals) errs.push(...nonNegative(ordinals.start, `${p}.ordinals.start`));
  const sel = objOf(s.selector) as LabelSelectorObject | undefined;
  errs.push(...validateRequiredSelector(sel, `${p}.selector`, 'statefulset'));
  const selector = asSelector(sel);
  const t = withSpec(s.template);
  if (selector instanceof Error) errs.push(field.invalid(`${p}.selector`, goLabelSelector(sel), ''));
  else {
    const meta = objOf(t.metadata) ?? {};
    errs.push(...selectorMismatch(selector, t, `${p}.template`));
    errs.push(...validateLabels(templateLabels(t), `${p}.template.labels`));
    errs.push(...validateAnnotations(objOf(meta.annotations) as Record<string, string> | undefined, `${p}.template.annotations`));
  }
  const podSpec = objOf(t.spec) ?? {};
  if (podSpec.restartPolicy !== 'Always') errs.push(field.notSupported(`${p}.template.spec.restartPolicy`, strOf(podSpec.restartPolicy), ['Always']));
  if (present(podSpec.activeDeadlineSeconds))
    errs.push(field.forbidden(`${p}.template.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in StatefulSet is not Supported'));
  return errs;
}

/** The names of a StatefulSet's volumeClaimTemplates. */
export const claimTemplateNames = (spec: unknown): string[] =>
  (Array.isArray(objOf(spec)?.volumeClaimTemplates) ? (objOf(spec)!.volumeClaimTemplates as unknown[]) : [])
    .map((c) => strOf(objOf(objOf(c)?.metadata)?.name))
    .filter(Boolean);

// ====================================================== kubeling's workloads

/**
 * The selector-and-template check kubeling's workload strategies share
 * (Deployments, ReplicaSets, DaemonSets, StatefulSets and Jobs): a present,
 * non-empty selector that matches the template labels, and the template's pod
 * spec, whose restart policy is one of `restartPolicies` (Always by default).
 * `extraVolumes` (a StatefulSet's claim templates) may be mounted without being
 * listed, and a listed volume of the same name is no duplicate.
 */
export function validateSelectorAndTemplate(
  s: { selector?: LabelSelectorObject; template?: { metadata?: { labels?: Record<string, string> }; spec?: unknown } },
  opts: { restartPolicies?: string[]; extraVolumes?: readonly string[] } = {},
): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.selector) errs.push(field.required('spec.selector', ''));
  else if (!Object.keys(s.selector.matchLabels ?? {}).length && !(s.selector.matchExpressions ?? []).length) {
    errs.push(field.invalid('spec.selector', goLabelSelector(s.selector), 'empty selector is invalid for deployment'));
  }
  const labels = s.template?.metadata?.labels;
  errs.push(...validateLabels(labels, 'spec.template.labels'));
  if (s.selector) {
    const sel = asSelector(s.selector);
    if (sel instanceof Error) errs.push(field.invalid('spec.selector', goLabelSelector(s.selector), 'invalid label selector'));
    else errs.push(...selectorMismatch(sel, s.template, 'spec.template'));
  }
  if (!s.template) errs.push(field.required('spec.template', ''));
  else {
    errs.push(...validatePodSpec(s.template.spec, 'spec.template.spec', opts.extraVolumes ?? []));
    const rp = strOf(objOf(s.template.spec)?.restartPolicy);
    const allowed = opts.restartPolicies ?? ['Always'];
    if (rp && !allowed.includes(rp)) errs.push(field.notSupported('spec.template.spec.restartPolicy', rp, allowed));
  }
  return errs;
}

// =============================================================== defaulting

const unset = (v: unknown) => v === undefined || v === null || v === '';

function defaultTemplate(s: Obj): void {
  const t = objOf(s.template);
  if (!t) return;
  if (!objOf(t.spec)) t.spec = {};
  defaultPodSpec(t.spec as Obj);
}

/** SetDefaults_Deployment: 1 replica, RollingUpdate 25%/25%, 10 revisions, 600s progress deadline, the template. */
export function defaultDeploymentSpec(s: Obj): void {
  if (!present(s.replicas)) s.replicas = 1;
  const strategy = (s.strategy = objOf(s.strategy) ?? {});
  if (unset(strategy.type)) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate = objOf(strategy.rollingUpdate) ?? {});
    if (!present(ru.maxUnavailable)) ru.maxUnavailable = '25%';
    if (!present(ru.maxSurge)) ru.maxSurge = '25%';
  }
  if (!present(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  if (!present(s.progressDeadlineSeconds)) s.progressDeadlineSeconds = 600;
  defaultTemplate(s);
}

/** SetDefaults_ReplicaSet: 1 replica, the template. */
export function defaultReplicaSetSpec(s: Obj): void {
  if (!present(s.replicas)) s.replicas = 1;
  defaultTemplate(s);
}

/** SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0, 10 revisions, the template. */
export function defaultDaemonSetSpec(s: Obj): void {
  const strategy = (s.updateStrategy = objOf(s.updateStrategy) ?? {});
  if (unset(strategy.type)) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = (strategy.rollingUpdate = objOf(strategy.rollingUpdate) ?? {});
    if (!present(ru.maxUnavailable)) ru.maxUnavailable = 1;
    if (!present(ru.maxSurge)) ru.maxSurge = 0;
  }
  if (!present(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  // Each claim template is defaulted as a claim (phase Pending, volume mode Filesystem).
  for (const t of Array.isArray(s.volumeClaimTemplates) ? s.volumeClaimTemplates : []) if (isObj(t)) defaultPersistentVolumeClaim(t);
  defaultTemplate(s);
}

/**
 * SetDefaults_StatefulSet: OrderedReady, RollingUpdate (a rollingUpdate with
 * partition 0 when the type was unset; an explicit RollingUpdate without one
 * keeps none), Retain/Retain claim retention (each member defaulted on its
 * own), 1 replica, 10 revisions, the template.
 */
export function defaultStatefulSetSpec(s: Obj): void {
  if (unset(s.podManagementPolicy)) s.podManagementPolicy = 'OrderedReady';
  const strategy = (s.updateStrategy = objOf(s.updateStrategy) ?? {});
  if (unset(strategy.type)) {
    strategy.type = 'RollingUpdate';
    strategy.rollingUpdate = objOf(strategy.rollingUpdate) ?? {};
  }
  const ru = objOf(strategy.rollingUpdate);
  if (strategy.type === 'RollingUpdate' && ru && !present(ru.partition)) ru.partition = 0;
  const retention = (s.persistentVolumeClaimRetentionPolicy = objOf(s.persistentVolumeClaimRetentionPolicy) ?? {});
  if (unset(retention.whenDeleted)) retention.whenDeleted = 'Retain';
  if (unset(retention.whenScaled)) retention.whenScaled = 'Retain';
  if (!present(s.replicas)) s.replicas = 1;
  if (!present(s.revisionHistoryLimit)) s.revisionHistoryLimit = 10;
  // Each claim template is defaulted as a claim (phase Pending, volume mode Filesystem).
  for (const t of Array.isArray(s.volumeClaimTemplates) ? s.volumeClaimTemplates : []) if (isObj(t)) defaultPersistentVolumeClaim(t);
  defaultTemplate(s);
}
