/**
 * The decisions of the resourcequota controller (pkg/controller/resourcequota
 * resource_quota_controller.go syncResourceQuota, resource_quota_monitor.go),
 * as pure functions over what the informers hold: a quota's new status, and
 * which object changes release usage so that their namespace's quotas must be
 * recounted at once ("replenishment").
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';
import { jsonEqual } from '@kubeling/apimachinery';
import {
  calculateUsage,
  equalLists,
  evaluatorFor,
  fromQuantityList,
  maskList,
  podIsCharged,
  toQuantityList,
  type QuantityList,
  type QuotaSpecLike,
} from '@kubeling/component-helpers';

export type ResourceQuota = dsl.Static<typeof corev1.ResourceQuota> & KubeObject;

export interface QuotaStatus {
  hard: Record<string, string>;
  used: Record<string, string>;
}

export const specOf = (q: KubeObject): QuotaSpecLike | undefined => (q as ResourceQuota).spec as QuotaSpecLike | undefined;

/**
 * The status a quota should have: `hard` is `spec.hard`; `used` is the
 * recalculated usage of every hard name, where a resource could not be counted
 * (`failed`) the previous value. `status` is undefined when nothing changed
 * (quantities compare by value, so `1000m` equals `1`).
 */
export function planQuotaStatus(
  quota: KubeObject,
  objectsOf: (resource: string) => readonly KubeObject[] | undefined,
  served: (resource: string) => boolean,
  now: number,
): { status: QuotaStatus | undefined; failed: string[] } {
  const spec = specOf(quota);
  const old = (quota as ResourceQuota).status;
  const hard = toQuantityList(spec?.hard);
  const oldUsed = toQuantityList(old?.used);
  let dirty = !old?.hard || !old.used || !equalLists(hard, toQuantityList(old.hard));
  const { used: counted, failed } = calculateUsage(spec, objectsOf, served, now);
  const used: QuantityList = maskList({ ...oldUsed, ...counted }, Object.keys(hard));
  dirty ||= !equalLists(used, oldUsed);
  return { status: dirty ? { hard: fromQuantityList(hard), used: fromQuantityList(used) } : undefined, failed };
}

/** A quota is recalculated in full when what it counts changes (upstream: its spec.hard; scopes too here). */
export function quotaSpecChanged(old: KubeObject, cur: KubeObject): boolean {
  const a = specOf(old);
  const b = specOf(cur);
  if (!equalLists(toQuantityList(a?.hard), toQuantityList(b?.hard))) return true;
  return !jsonEqual(a?.scopes ?? [], b?.scopes ?? []) || !jsonEqual(a?.scopeSelector ?? null, b?.scopeSelector ?? null);
}

const quotaServiceType = (s: KubeObject) => {
  const t = (s.spec as { type?: string } | undefined)?.type;
  return t === 'NodePort' || t === 'LoadBalancer' ? t : '';
};

/**
 * Whether an update releases usage (resource_quota_monitor.go updateFunc): a
 * pod that stops being charged (terminal, or past its grace period), a service
 * whose type stops or starts counting node ports or load balancers.
 */
export function updateReleasesUsage(resource: string, old: KubeObject, cur: KubeObject, now: number): boolean {
  if (resource === '/pods') return podIsCharged(old, now) && !podIsCharged(cur, now);
  if (resource === '/services') return quotaServiceType(old) !== quotaServiceType(cur);
  return false;
}

/** The quotas (of one namespace) that count `resource`, by their spec's and status's hard names. */
export function quotasCounting(resource: string, quotas: readonly KubeObject[]): KubeObject[] {
  const e = evaluatorFor(resource);
  if (!e) return [];
  return quotas.filter((q) => {
    const names = new Set([...Object.keys(specOf(q)?.hard ?? {}), ...Object.keys((q as ResourceQuota).status?.hard ?? {})]);
    return e.matchingResources([...names]).length > 0;
  });
}
