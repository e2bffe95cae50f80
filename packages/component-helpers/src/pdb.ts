/**
 * PodDisruptionBudget helpers shared by the apiserver's eviction subresource
 * and the disruption controller (k8s.io/component-helpers/apps/poddisruptionbudget,
 * apimeta.SetStatusCondition): the DisruptionAllowed condition and which
 * budgets select a pod.
 */
import type { KubeObject } from '@kubeling/api';
import { rfc3339, selectorFromLabelSelector, type LabelSelectorObject } from '@kubeling/apimachinery';

export interface MetaCondition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PDBStatusLike {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  conditions?: MetaCondition[];
}

export interface PDBLike extends KubeObject {
  spec?: {
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    selector?: LabelSelectorObject | null;
    unhealthyPodEvictionPolicy?: string;
  };
  status?: PDBStatusLike;
}

export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const SUFFICIENT_PODS = 'SufficientPods';
export const INSUFFICIENT_PODS = 'InsufficientPods';
export const SYNC_FAILED = 'SyncFailed';

/**
 * apimeta.SetStatusCondition: replaces the condition of the same type, keeping
 * its lastTransitionTime unless the status changes; adds it otherwise.
 */
export function setStatusCondition(
  conditions: MetaCondition[],
  c: Omit<MetaCondition, 'lastTransitionTime'> & { lastTransitionTime?: string },
  now = new Date(),
): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  const cur = i >= 0 ? conditions[i] : undefined;
  const lastTransitionTime = cur && cur.status === c.status ? cur.lastTransitionTime : (c.lastTransitionTime ?? rfc3339(now));
  const next: MetaCondition = { ...c, lastTransitionTime };
  if (c.observedGeneration === undefined) delete next.observedGeneration;
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

/** UpdateDisruptionAllowedCondition: True/SufficientPods while disruptions are allowed, else False/InsufficientPods. */
export function updateDisruptionAllowedCondition(status: PDBStatusLike, now = new Date()): void {
  const conditions = (status.conditions ??= []);
  const allowed = (status.disruptionsAllowed ?? 0) > 0;
  setStatusCondition(
    conditions,
    {
      type: DISRUPTION_ALLOWED,
      status: allowed ? 'True' : 'False',
      reason: allowed ? SUFFICIENT_PODS : INSUFFICIENT_PODS,
      message: '',
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    },
    now,
  );
}

/** ConditionsAreUpToDate: the DisruptionAllowed condition says what the status' numbers say, for this generation. */
export function conditionsAreUpToDate(pdb: PDBLike): boolean {
  const s = pdb.status ?? {};
  const c = (s.conditions ?? []).find((x) => x.type === DISRUPTION_ALLOWED);
  if (!c || (s.observedGeneration ?? 0) !== (pdb.metadata.generation ?? 0)) return false;
  return (s.disruptionsAllowed ?? 0) > 0 ? c.status === 'True' && c.reason === SUFFICIENT_PODS : c.status === 'False' && c.reason === INSUFFICIENT_PODS;
}

/**
 * The budgets of `pod`'s namespace that select it. policy/v1 lets an empty
 * selector select every pod for the controller (`emptySelectsAll`), while the
 * eviction subresource has an empty selector select none; an invalid selector
 * selects nothing, and (for the controller's lister) so does a pod without
 * labels.
 */
export function pdbsForPod<P extends PDBLike>(pdbs: readonly P[], pod: KubeObject, emptySelectsAll: boolean): P[] {
  const labels = pod.metadata.labels ?? {};
  if (emptySelectsAll && Object.keys(labels).length === 0) return [];
  return pdbs.filter((pdb) => {
    if (pdb.metadata.namespace !== pod.metadata.namespace) return false;
    try {
      const sel = selectorFromLabelSelector(pdb.spec?.selector);
      if (sel.empty() && !emptySelectsAll) return false;
      return sel.matches(labels);
    } catch {
      return false;
    }
  });
}
