/**
 * Pod resource requests (k8s.io/component-helpers/resource): the effective
 * request of a pod is the larger of its app containers' sum (plus restartable
 * init containers — sidecars) and the largest init container (plus the sidecars
 * started before it), plus the pod overhead. cpu is counted in millicores, every
 * other resource in units.
 */
import { intValue, milliValue } from '@kubeling/apimachinery';

export type ResourceList = Record<string, number>;

/** Requests scheduling assumes for a container that states none (scheduler/util: 100m, 200 MB). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

interface ContainerLike {
  restartPolicy?: string;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
}

interface PodSpecLike {
  containers?: ContainerLike[];
  initContainers?: ContainerLike[];
  overhead?: Record<string, string | number>;
}

/** A quantity in the unit a resource is counted in. */
export function resourceValue(name: string, q: string | number): number {
  return name === 'cpu' ? milliValue(q) : intValue(q);
}

export function toResourceList(rl: Record<string, string | number> | undefined): ResourceList {
  const out: ResourceList = {};
  for (const [k, v] of Object.entries(rl ?? {})) out[k] = resourceValue(k, v);
  return out;
}

function add(into: ResourceList, r: ResourceList): void {
  for (const [k, v] of Object.entries(r)) into[k] = (into[k] ?? 0) + v;
}

function maxInto(into: ResourceList, r: ResourceList): void {
  for (const [k, v] of Object.entries(r)) if (v > (into[k] ?? 0)) into[k] = v;
}

/** Requests of one container: explicit requests, else limits (the apiserver defaults requests from limits). */
function containerRequests(c: ContainerLike, nonZero: boolean): ResourceList {
  const r = toResourceList({ ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) });
  if (nonZero) {
    r.cpu ??= DEFAULT_MILLI_CPU_REQUEST;
    r.memory ??= DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * PodRequests. With `nonZero`, containers without a cpu/memory request count
 * the scheduler's defaults (used for scoring so that empty pods still spread).
 */
export function podRequests(spec: PodSpecLike, opts: { nonZero?: boolean } = {}): ResourceList {
  const nonZero = opts.nonZero ?? false;
  const total: ResourceList = {};
  for (const c of spec.containers ?? []) add(total, containerRequests(c, nonZero));
  const sidecars: ResourceList = {};
  const initMax: ResourceList = {};
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      add(sidecars, r);
      maxInto(initMax, sidecars);
    } else {
      const eff = { ...sidecars };
      add(eff, r);
      maxInto(initMax, eff);
    }
  }
  add(total, sidecars);
  maxInto(total, initMax);
  if (spec.overhead) add(total, toResourceList(spec.overhead));
  return total;
}
