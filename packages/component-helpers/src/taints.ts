/**
 * Taints and tolerations (k8s.io/component-helpers/scheduling/corev1 and
 * core/v1 helpers), shared by the scheduler, the node lifecycle and DaemonSet
 * controllers and the kubelet's admission.
 */

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/** Toleration.ToleratesTaint: an empty effect matches all effects, an empty key with Exists matches all keys. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** Whether any toleration tolerates the taint. */
export function taintTolerated(taint: Taint, tolerations: readonly Toleration[]): boolean {
  return tolerations.some((t) => tolerates(t, taint));
}

/**
 * FindMatchingUntoleratedTaint: the first taint that passes `filter` and no
 * toleration tolerates, or undefined.
 */
export function findUntoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[], filter: (t: Taint) => boolean): Taint | undefined {
  return taints.find((t) => filter(t) && !taintTolerated(t, tolerations));
}

/** Taints with the NoSchedule or NoExecute effect: the ones that keep new pods off a node. */
export const doNotScheduleTaint = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';
