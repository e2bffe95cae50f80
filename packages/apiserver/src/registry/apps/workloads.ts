/**
 * apps/v1 workloads (Deployment, ReplicaSet, DaemonSet, StatefulSet) as
 * strategies: defaults and spec validation from @kubeling/api
 * (pkg/apis/apps/v1/defaults.go, pkg/apis/apps/validation), a selector that
 * may not change, and generation on spec changes.
 */
import {
  defaultDaemonSetSpec,
  defaultDeploymentSpec,
  defaultReplicaSetSpec,
  defaultStatefulSetSpec,
  validateDaemonSetSpec,
  validateDeploymentSpec,
  validateReplicaSetSpec,
  validateStatefulSetSpec,
  type KubeObject,
} from '@kubeling/api';
import { field, jsonEqual, type FieldError, type LabelSelectorObject } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type WorkloadSpec = Record<string, unknown> & { selector?: LabelSelectorObject };

const specOf = (o: KubeObject) => (o.spec ??= {}) as WorkloadSpec;

function selectorImmutable(obj: KubeObject, old: KubeObject): FieldError[] {
  const a = specOf(obj).selector;
  const b = (old.spec as WorkloadSpec | undefined)?.selector;
  return jsonEqual(a, b) ? [] : [field.invalid('spec.selector', a, 'field is immutable')];
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
  // deploymentStatusStrategy: labels stay as they are.
  prepareForStatusUpdate(obj, old) {
    if (old.metadata.labels) obj.metadata.labels = { ...old.metadata.labels };
    else delete obj.metadata.labels;
  },
  defaults: (obj) => defaultDeploymentSpec(specOf(obj)),
  validate: (obj) => validateDeploymentSpec(specOf(obj)),
});

export const replicaSetStrategy = workload({
  defaults: (obj) => defaultReplicaSetSpec(specOf(obj)),
  validate: (obj) => validateReplicaSetSpec(specOf(obj)),
  fields: (obj) => ({ 'status.replicas': String(((obj.status ?? {}) as { replicas?: number }).replicas ?? 0) }),
});

export const daemonSetStrategy = workload({
  defaults: (obj) => defaultDaemonSetSpec(specOf(obj)),
  validate: (obj) => validateDaemonSetSpec(specOf(obj)),
});

export const statefulSetStrategy = workload({
  defaults: (obj) => defaultStatefulSetSpec(specOf(obj)),
  validate: (obj) => validateStatefulSetSpec(specOf(obj)),
});
