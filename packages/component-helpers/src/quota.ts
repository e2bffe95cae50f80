/**
 * What a ResourceQuota counts, shared by the apiserver's quota admission and
 * the controller-manager's resourcequota controller so that both count the
 * same way (kubernetes pkg/quota/v1/evaluator/core and
 * k8s.io/apiserver/pkg/quota/v1/generic).
 *
 * An evaluator knows one resource: which quota resource names it accounts for
 * (`matchingResources`), what one object of it uses (`usage`), whether an
 * object falls in a quota scope (`matchesScope`), and which writes admission
 * charges (`handles`). Pods, Services and PersistentVolumeClaims have their own;
 * every other served resource is an object count (`count/<resource>.<group>`),
 * with the legacy names `configmaps`, `secrets`, `replicationcontrollers` and
 * `resourcequotas` as aliases. `calculateUsage` is quota.CalculateUsage: a
 * quota's usage from the objects of its namespace.
 */
import type { KubeObject } from '@kubeling/api';
import { qosClass } from './pods.js';
import {
  addLists,
  countQuantity,
  maskList,
  maxLists,
  roundUpQuantity,
  toQuantity,
  toQuantityList,
  ZERO_QUANTITY,
  type Quantity,
  type QuantityList,
} from './quota-resources.js';

export * from './quota-resources.js';

export interface ScopedResourceSelectorRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

/** The parts of a ResourceQuota spec that decide what it counts. */
export interface QuotaSpecLike {
  hard?: Record<string, unknown>;
  scopes?: string[];
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] };
}

export interface Evaluator {
  /** `group/resource`, e.g. `/pods`, `apps/deployments`. */
  readonly resource: string;
  /** The names of `names` this evaluator accounts for. */
  matchingResources(names: readonly string[]): string[];
  /** Whether `obj` falls in the scope (false for every scope on resources without scopes). */
  matchesScope(req: ScopedResourceSelectorRequirement, obj: KubeObject): boolean;
  /** What `obj` uses; `now` decides whether a terminating pod still counts. */
  usage(obj: KubeObject, now: number): QuantityList;
  /** Whether admission charges this write (a create; an update where usage can change). */
  handles(operation: string, subresource: string | undefined): boolean;
  /** Why `obj` may not be admitted under a quota tracking `required` (pods must state cpu/memory), if it may not. */
  constraints(required: readonly string[], obj: KubeObject): string | undefined;
}

/** generic.ObjectCountQuotaResourceNameFor. */
export const objectCountName = (resource: string): string => {
  const [group, res] = splitResource(resource);
  return group ? `count/${res}.${group}` : `count/${res}`;
};

/** `group/resource` → [group, resource]. */
const splitResource = (r: string): [string, string] => {
  const i = r.indexOf('/');
  return [r.slice(0, i), r.slice(i + 1)];
};

/** The resource a `count/<resource>[.<group>]` name counts, as `group/resource`. */
export function resourceOfCountName(name: string): string | undefined {
  const m = /^count\/([^.]+)(?:\.(.+))?$/.exec(name);
  return m ? `${m[2] ?? ''}/${m[1]}` : undefined;
}

/** install.ignoredResources: never counted (virtual, or events, which were never quota-ed). */
export const IGNORED_RESOURCES: ReadonlySet<string> = new Set([
  '/bindings',
  '/componentstatuses',
  '/events',
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

const noScope = () => false;
const intersect = (names: readonly string[], known: readonly string[]) => names.filter((n) => known.includes(n));

/** generic.NewObjectCountEvaluator: `count/<resource>` (and an alias) per object, on create. */
function objectCountEvaluator(resource: string, alias?: string): Evaluator {
  const names = [objectCountName(resource), ...(alias ? [alias] : [])];
  return {
    resource,
    matchingResources: (input) => intersect(input, names),
    matchesScope: noScope,
    usage: () => Object.fromEntries(names.map((n) => [n, countQuantity(1)])),
    handles: (op, sub) => op === 'CREATE' && !sub,
    constraints: () => undefined,
  };
}

// ---- pods (evaluator/core/pods.go) ------------------------------------------

const POD_RESOURCES = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];
/** Quota resources a pod must state per container when a quota tracks them (an upstream backward-compatibility rule). */
const VALIDATION_SET = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

const isNativeResource = (n: string) => !n.includes('/') || n.includes('kubernetes.io/');
const isExtendedResourceName = (n: string) => !isNativeResource(n) && !n.startsWith('requests.');
const isExtendedResourceNameForQuota = (n: string) => !isNativeResource(n) && n.startsWith('requests.');

interface ContainerLike {
  name?: string;
  restartPolicy?: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}
interface PodLike {
  spec?: {
    containers?: ContainerLike[];
    initContainers?: ContainerLike[];
    overhead?: Record<string, unknown>;
    activeDeadlineSeconds?: number;
    priorityClassName?: string;
    affinity?: { podAffinity?: AffinityLike; podAntiAffinity?: AffinityLike };
  };
  status?: { phase?: string; qosClass?: string };
}
interface AffinityLike {
  requiredDuringSchedulingIgnoredDuringExecution?: AffinityTermLike[];
  preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm?: AffinityTermLike }[];
}
interface AffinityTermLike {
  namespaces?: string[];
  namespaceSelector?: unknown;
}

/**
 * resourcehelper.PodRequests / PodLimits: app containers summed, restartable
 * init containers (sidecars) added, the largest init container (with the
 * sidecars started before it) as a floor; pod overhead added (to limits only
 * where a limit is set).
 */
export function podResources(pod: KubeObject, which: 'requests' | 'limits'): QuantityList {
  const spec = (pod as PodLike).spec ?? {};
  let total: QuantityList = {};
  for (const c of spec.containers ?? []) total = addLists(total, toQuantityList(c.resources?.[which]));
  let sidecars: QuantityList = {};
  let initMax: QuantityList = {};
  for (const c of spec.initContainers ?? []) {
    const r = toQuantityList(c.resources?.[which]);
    if (c.restartPolicy === 'Always') {
      total = addLists(total, r);
      sidecars = addLists(sidecars, r);
      initMax = maxLists(initMax, sidecars);
    } else initMax = maxLists(initMax, addLists(r, sidecars));
  }
  total = maxLists(total, initMax);
  if (spec.overhead) {
    const overhead = toQuantityList(spec.overhead);
    if (which === 'requests') total = addLists(total, overhead);
    else for (const k of Object.keys(total)) if (overhead[k]) total = addLists(total, { [k]: overhead[k] });
  }
  return total;
}

/** podComputeUsageHelper: the quota names a pod's (or a container's) requests and limits charge. */
function computeUsage(requests: QuantityList, limits: QuantityList): QuantityList {
  const out: QuantityList = { pods: countQuantity(1) };
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    if (requests[r]) {
      out[r] = requests[r];
      out[`requests.${r}`] = requests[r];
    }
    if (limits[r]) out[`limits.${r}`] = limits[r];
  }
  for (const [r, q] of Object.entries(requests)) {
    if (r.startsWith('hugepages-')) {
      out[r] = q;
      out[`requests.${r}`] = q;
    }
    if (isExtendedResourceName(r)) out[`requests.${r}`] = q;
  }
  return out;
}

/**
 * QuotaV1Pod: a pod is charged unless it is terminal, or terminating with its
 * grace period over (a pod stuck on a lost node should not hold quota).
 */
export function podIsCharged(pod: KubeObject, now: number): boolean {
  const phase = (pod as PodLike).status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
  if (deletionTimestamp && deletionGracePeriodSeconds !== undefined) {
    const end = Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000;
    if (now > end) return false;
  }
  return true;
}

const isTerminating = (pod: PodLike) => typeof pod.spec?.activeDeadlineSeconds === 'number' && pod.spec.activeDeadlineSeconds >= 0;
const isBestEffort = (pod: PodLike) => (pod.status?.qosClass || qosClass(pod.spec)) === 'BestEffort';

function crossNamespaceAffinity(pod: PodLike): boolean {
  const cross = (t: AffinityTermLike | undefined) => !!t && ((t.namespaces?.length ?? 0) > 0 || t.namespaceSelector !== undefined);
  const any = (a: AffinityLike | undefined) =>
    (a?.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(cross) ||
    (a?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((w) => cross(w.podAffinityTerm));
  return any(pod.spec?.affinity?.podAffinity) || any(pod.spec?.affinity?.podAntiAffinity);
}

/** The PriorityClass scope is a label selector over `{PriorityClass: <priorityClassName>}` (pods.go podMatchesSelector). */
function priorityClassMatches(pod: PodLike, req: ScopedResourceSelectorRequirement): boolean {
  const name = pod.spec?.priorityClassName || undefined;
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return name !== undefined && values.includes(name);
    case 'NotIn':
      return name === undefined || !values.includes(name);
    case 'Exists':
      return name !== undefined;
    case 'DoesNotExist':
      return name === undefined;
    default:
      return false;
  }
}

export const podEvaluator: Evaluator = {
  resource: '/pods',
  matchingResources(input) {
    return [
      ...intersect(input, POD_RESOURCES),
      ...input.filter((n) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || isExtendedResourceNameForQuota(n)),
    ];
  },
  matchesScope(req, obj) {
    const pod = obj as PodLike;
    switch (req.scopeName) {
      case 'Terminating':
        return isTerminating(pod);
      case 'NotTerminating':
        return !isTerminating(pod);
      case 'BestEffort':
        return isBestEffort(pod);
      case 'NotBestEffort':
        return !isBestEffort(pod);
      case 'PriorityClass':
        return priorityClassMatches(pod, req);
      case 'CrossNamespacePodAffinity':
        return crossNamespaceAffinity(pod);
      default:
        return false;
    }
  },
  usage(obj, now) {
    // count/pods counts every stored pod; the rest only what is still alive.
    const out: QuantityList = { 'count/pods': countQuantity(1) };
    if (!podIsCharged(obj, now)) return out;
    return { ...out, ...computeUsage(podResources(obj, 'requests'), podResources(obj, 'limits')) };
  },
  handles: (op, sub) => op === 'CREATE' && !sub,
  constraints(required, obj) {
    const req = required.filter((r) => VALIDATION_SET.includes(r));
    if (!req.length) return undefined;
    const missing = new Map<string, Set<string>>();
    const spec = (obj as PodLike).spec ?? {};
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      const has = computeUsage(toQuantityList(c.resources?.requests), toQuantityList(c.resources?.limits));
      for (const r of req) if (!(r in has)) missing.set(r, (missing.get(r) ?? new Set()).add(c.name ?? ''));
    }
    if (!missing.size) return undefined;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
};

// ---- services (evaluator/core/services.go) ----------------------------------

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

interface ServiceLike {
  spec?: { type?: string; ports?: { nodePort?: number }[]; allocateLoadBalancerNodePorts?: boolean };
}

export const serviceEvaluator: Evaluator = {
  resource: '/services',
  matchingResources: (input) => intersect(input, SERVICE_RESOURCES),
  matchesScope: noScope,
  usage(obj) {
    const spec = (obj as ServiceLike).spec ?? {};
    const ports = spec.ports ?? [];
    const out: QuantityList = {
      'count/services': countQuantity(1),
      services: countQuantity(1),
      'services.loadbalancers': ZERO_QUANTITY,
      'services.nodeports': ZERO_QUANTITY,
    };
    if (spec.type === 'NodePort') out['services.nodeports'] = countQuantity(ports.length);
    if (spec.type === 'LoadBalancer') {
      // Without node ports allocated for a load balancer, only the ports that name one count.
      const nodePorts = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => p.nodePort).length : ports.length;
      out['services.nodeports'] = countQuantity(nodePorts);
      out['services.loadbalancers'] = countQuantity(1);
    }
    return out;
  },
  // An update can change the type, and with it node ports and load balancers.
  handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && !sub,
  constraints: () => undefined,
};

// ---- persistent volume claims (evaluator/core/persistent_volume_claims.go) --

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const PVC_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

interface PVCLike {
  metadata: { annotations?: Record<string, string> };
  spec?: { storageClassName?: string; resources?: { requests?: Record<string, unknown> } };
}

export const pvcEvaluator: Evaluator = {
  resource: '/persistentvolumeclaims',
  matchingResources: (input) =>
    input.filter((n) => n === 'count/persistentvolumeclaims' || PVC_RESOURCES.includes(n) || PVC_RESOURCES.some((r) => n.endsWith(STORAGE_CLASS_SUFFIX + r))),
  matchesScope: noScope,
  usage(obj) {
    const pvc = obj as unknown as PVCLike;
    const out: QuantityList = { persistentvolumeclaims: countQuantity(1), 'count/persistentvolumeclaims': countQuantity(1) };
    // helper.GetPersistentVolumeClaimClass: the beta annotation wins over the field.
    const cls = pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? pvc.spec?.storageClassName ?? '';
    if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = countQuantity(1);
    const storage = pvc.spec?.resources?.requests?.storage;
    if (storage !== undefined) {
      const q: Quantity = roundUpQuantity(toQuantity(storage));
      out['requests.storage'] = q;
      if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`] = q;
    }
    return out;
  },
  // Claims may grow (volume expansion).
  handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && !sub,
  constraints: () => undefined,
};

// ---- the registry (evaluator/core/registry.go) -----------------------------

const SPECIAL: ReadonlyMap<string, Evaluator> = new Map(
  [
    podEvaluator,
    serviceEvaluator,
    pvcEvaluator,
    objectCountEvaluator('/configmaps', 'configmaps'),
    objectCountEvaluator('/resourcequotas', 'resourcequotas'),
    objectCountEvaluator('/replicationcontrollers', 'replicationcontrollers'),
    objectCountEvaluator('/secrets', 'secrets'),
  ].map((e) => [e.resource, e]),
);

/** The evaluator of a resource (`group/resource`): its own, else an object count; none for ignored resources. */
export function evaluatorFor(resource: string): Evaluator | undefined {
  if (IGNORED_RESOURCES.has(resource)) return undefined;
  return SPECIAL.get(resource) ?? objectCountEvaluator(resource);
}

/**
 * The resources whose objects a quota with these hard names counts: the
 * special evaluators' resources that match, and each `count/` name's resource
 * that `served` says exists (unknown resources are not counted, as upstream
 * only counts what discovery lists).
 */
export function trackedResources(names: readonly string[], served: (resource: string) => boolean): string[] {
  const out = new Set<string>();
  for (const e of SPECIAL.values()) if (e.matchingResources(names).length) out.add(e.resource);
  for (const n of names) {
    const r = resourceOfCountName(n);
    if (r && !out.has(r) && !IGNORED_RESOURCES.has(r) && served(r)) out.add(r);
  }
  return [...out];
}

/** The scopes of a quota as selector requirements: `scopes` (as Exists) then `scopeSelector`. */
export function scopeSelectors(spec: QuotaSpecLike | undefined): ScopedResourceSelectorRequirement[] {
  return [
    ...(spec?.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })),
    ...(spec?.scopeSelector?.matchExpressions ?? []).map((r) => ({ scopeName: r.scopeName, operator: r.operator, ...(r.values ? { values: r.values } : {}) })),
  ];
}

/** generic.Matches: the quota tracks something the evaluator counts, and the object is in all its scopes. */
export function quotaMatches(e: Evaluator, spec: QuotaSpecLike | undefined, obj: KubeObject): boolean {
  if (!e.matchingResources(Object.keys(spec?.hard ?? {})).length) return false;
  return scopeSelectors(spec).every((s) => e.matchesScope(s, obj));
}

/**
 * generic.CalculateUsageStats for one evaluator: the usage of the objects in
 * every scope of the quota, over `names` (each at least zero).
 */
export function usageStats(e: Evaluator, spec: QuotaSpecLike | undefined, names: readonly string[], objects: readonly KubeObject[], now: number): QuantityList {
  let used: QuantityList = Object.fromEntries(names.map((n) => [n, ZERO_QUANTITY]));
  const scopes = scopeSelectors(spec);
  for (const o of objects) if (scopes.every((s) => e.matchesScope(s, o))) used = addLists(used, e.usage(o, now));
  return maskList(used, names);
}

/**
 * quota.CalculateUsage: a quota's usage of everything it tracks. `objectsOf`
 * gives the objects of a resource in the quota's namespace, or undefined when
 * they cannot be had now; the names of such resources are in `failed` and
 * absent from `used` (callers keep their previous value).
 */
export function calculateUsage(
  spec: QuotaSpecLike | undefined,
  objectsOf: (resource: string) => readonly KubeObject[] | undefined,
  served: (resource: string) => boolean,
  now: number,
): { used: QuantityList; failed: string[] } {
  const names = Object.keys(spec?.hard ?? {});
  let used: QuantityList = {};
  const failed: string[] = [];
  for (const r of trackedResources(names, served)) {
    const e = evaluatorFor(r)!;
    const matched = e.matchingResources(names);
    const objects = objectsOf(r);
    if (!objects) {
      failed.push(...matched);
      continue;
    }
    used = addLists(used, usageStats(e, spec, matched, objects, now));
  }
  return { used, failed };
}
