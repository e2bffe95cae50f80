/**
 * Pod helpers the components share (k8s.io/component-helpers and
 * pkg/api/v1/pod): readiness and availability, the controlling owner, and the
 * QoS class.
 */
import type { KubeObject } from '@kubeling/api';
import { parseQuantity } from '@kubeling/apimachinery';

type Condition = { type?: string; status?: string; lastTransitionTime?: string };

const condition = (p: KubeObject, type: string): Condition | undefined =>
  (((p.status ?? {}) as { conditions?: Condition[] }).conditions ?? []).find((c) => c.type === type);

/** The owner reference with `controller: true` (metav1.GetControllerOf). */
export const controllerRef = (o: KubeObject) => (o.metadata.ownerReferences ?? []).find((r) => r.controller);

/** The Ready condition is True (podutil.IsPodReady). */
export const isPodReady = (p: KubeObject): boolean => condition(p, 'Ready')?.status === 'True';

/** Ready for at least minReadySeconds at `now` (podutil.IsPodAvailable). */
export function isPodAvailable(p: KubeObject, minReadySeconds: number, now: number): boolean {
  const ready = condition(p, 'Ready');
  if (ready?.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const since = Date.parse(ready.lastTransitionTime ?? '');
  return Number.isFinite(since) && now - since >= minReadySeconds * 1000;
}

type Resources = { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
const QOS_RESOURCES = ['cpu', 'memory'];

/**
 * The pod's QoS class as ComputePodQOS computes it: only cpu and memory count,
 * and only positive quantities; Guaranteed when every container limits both
 * and the pod's requests equal its limits, BestEffort with neither, else
 * Burstable.
 */
export function qosClass(spec: { containers?: unknown[]; initContainers?: unknown[] } | undefined): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])] as { resources?: Resources }[]) {
    const r = c.resources ?? {};
    for (const [name, q] of Object.entries(r.requests ?? {})) {
      const v = QOS_RESOURCES.includes(name) ? quantity(q) : 0;
      if (v > 0) add(requests, name, v);
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries(r.limits ?? {})) {
      const v = QOS_RESOURCES.includes(name) ? quantity(q) : 0;
      if (v > 0) {
        found.add(name);
        add(limits, name, v);
      }
    }
    if (!QOS_RESOURCES.every((n) => found.has(n))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      if (limits.get(name) !== req) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

function quantity(q: string | number): number {
  try {
    return parseQuantity(q);
  } catch {
    return 0;
  }
}
