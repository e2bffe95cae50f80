/**
 * The metrics.k8s.io/v1beta1 API over the store (metrics-server pkg/api):
 * discovery documents, NodeMetrics and PodMetrics for get and list, label
 * and field selectors, NotFound Statuses, and Table output for kubectl.
 *
 * As upstream, the objects listed are the nodes and pods the informers know,
 * filtered by the selectors on their own labels and names, and only those with
 * usage in the store are returned; each item carries the node's or pod's
 * labels and a creationTimestamp of now. A node or pod that does not exist is
 * the lister's NotFound (`node "x" not found`, `pods "x" not found`); one that
 * exists without metrics is `nodemetrics.metrics.k8s.io "x" not found` /
 * `podmetrics.metrics.k8s.io "ns/x" not found` (api/node.go, api/pod.go).
 */
import type { ContainerMetrics, KubeObject, NodeMetrics, NodeMetricsList, PodMetrics, PodMetricsList } from '@kubeling/api';
import { METRICS_API_VERSION, METRICS_GROUP, METRICS_VERSION } from '@kubeling/api';
import {
  badRequest,
  failure,
  notFound,
  parseFieldSelector,
  parseLabelSelector,
  parseQuantity,
  rfc3339,
  type FieldSelector,
  type LabelSelector,
} from '@kubeling/apimachinery';
import type { ResourceAttributes } from './auth.js';
import { bytesQuantity, cpuQuantity, goDuration } from './format.js';
import type { MetricsStorage, Usage } from './storage.js';

/** What the API reads nodes and pods from (the informers' stores). */
export interface Listers {
  node(name: string): KubeObject | undefined;
  nodes(): KubeObject[];
  pod(namespace: string, name: string): KubeObject | undefined;
  /** All pods, or those of one namespace. */
  pods(namespace?: string): KubeObject[];
}

export type MetricsResource = 'nodes' | 'pods';

export type Route =
  | { kind: 'discovery'; body: unknown }
  | { kind: 'resource'; resource: MetricsResource; namespace: string; name: string }
  | { kind: 'notFound' };

const GROUP_VERSION = { groupVersion: METRICS_API_VERSION, version: METRICS_VERSION };
const API_GROUP = { name: METRICS_GROUP, versions: [GROUP_VERSION], preferredVersion: GROUP_VERSION };
const BASE = `/apis/${METRICS_GROUP}/${METRICS_VERSION}`;

export const DISCOVERY: Record<string, unknown> = {
  '/apis': { kind: 'APIGroupList', apiVersion: 'v1', groups: [API_GROUP] },
  [`/apis/${METRICS_GROUP}`]: { kind: 'APIGroup', apiVersion: 'v1', ...API_GROUP },
  [BASE]: {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: METRICS_API_VERSION,
    resources: [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ],
  },
};

/** The route of a request path (without its query). */
export function route(path: string): Route {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const doc = DISCOVERY[p];
  if (doc) return { kind: 'discovery', body: doc };
  if (!p.startsWith(`${BASE}/`)) return { kind: 'notFound' };
  let parts: string[];
  try {
    parts = p
      .slice(BASE.length + 1)
      .split('/')
      .map((s) => decodeURIComponent(s));
  } catch {
    return { kind: 'notFound' };
  }
  if (parts.some((s) => !s)) return { kind: 'notFound' };
  if (parts[0] === 'nodes' && parts.length <= 2) return { kind: 'resource', resource: 'nodes', namespace: '', name: parts[1] ?? '' };
  if (parts[0] === 'pods' && parts.length === 1) return { kind: 'resource', resource: 'pods', namespace: '', name: '' };
  if (parts[0] === 'namespaces' && parts[2] === 'pods' && parts.length <= 4)
    return { kind: 'resource', resource: 'pods', namespace: parts[1]!, name: parts[3] ?? '' };
  return { kind: 'notFound' };
}

/** The authorization attributes of a resource request. */
export function resourceAttributes(r: Extract<Route, { kind: 'resource' }>, watch: boolean): ResourceAttributes {
  return {
    verb: r.name ? 'get' : watch ? 'watch' : 'list',
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resource: r.resource,
    namespace: r.namespace,
    name: r.name,
  };
}

const NODE_GR = { group: METRICS_GROUP, resource: 'nodemetrics' };
const POD_GR = { group: METRICS_GROUP, resource: 'podmetrics' };

export interface ListOptions {
  labelSelector: LabelSelector | undefined;
  fieldSelector: FieldSelector | undefined;
}

/** labelSelector and fieldSelector from a query; a bad one is a 400 (metav1 field label conversion allows metadata.name and metadata.namespace). */
export function listOptions(q: URLSearchParams): ListOptions {
  let labelSelector: LabelSelector | undefined;
  let fieldSelector: FieldSelector | undefined;
  const ls = q.get('labelSelector');
  const fs = q.get('fieldSelector');
  try {
    if (ls) labelSelector = parseLabelSelector(ls);
    if (fs) fieldSelector = parseFieldSelector(fs);
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  for (const r of fieldSelector?.requirements ?? []) {
    if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace')
      throw badRequest(`"${r.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
  }
  return { labelSelector, fieldSelector };
}

const selected = (o: KubeObject, opts: ListOptions) =>
  (!opts.labelSelector || opts.labelSelector.matches(o.metadata.labels ?? {})) &&
  (!opts.fieldSelector || opts.fieldSelector.matches({ 'metadata.name': o.metadata.name ?? '', 'metadata.namespace': o.metadata.namespace ?? '' }));

const usage = (u: Usage) => ({ cpu: cpuQuantity(u.cpuNanocores), memory: bytesQuantity(u.memoryBytes) });

const meta = (o: KubeObject, now: Date) => ({
  name: o.metadata.name ?? '',
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  creationTimestamp: rfc3339(now),
  ...(o.metadata.labels && Object.keys(o.metadata.labels).length ? { labels: o.metadata.labels } : {}),
});

function nodeMetrics(node: KubeObject, storage: MetricsStorage, now: Date): NodeMetrics | undefined {
  const m = storage.node(node.metadata.name ?? '');
  if (!m) return undefined;
  return {
    kind: 'NodeMetrics',
    apiVersion: METRICS_API_VERSION,
    metadata: meta(node, now),
    timestamp: rfc3339(new Date(m.timestampMs)),
    window: goDuration(m.windowMs * 1e6),
    usage: usage(m.usage),
  };
}

function podMetrics(pod: KubeObject, storage: MetricsStorage, now: Date): PodMetrics | undefined {
  const m = storage.pod(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
  if (!m) return undefined;
  return {
    kind: 'PodMetrics',
    apiVersion: METRICS_API_VERSION,
    metadata: meta(pod, now),
    timestamp: rfc3339(new Date(m.timestampMs)),
    window: goDuration(m.windowMs * 1e6),
    containers: m.containers.map((c): ContainerMetrics => ({ name: c.name, usage: usage(c.usage) })),
  };
}

const byName = (a: { metadata: { name?: string } }, b: { metadata: { name?: string } }) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);
const byNamespaceName = (a: { metadata: { name?: string; namespace?: string } }, b: { metadata: { name?: string; namespace?: string } }) =>
  (a.metadata.namespace ?? '') !== (b.metadata.namespace ?? '') ? ((a.metadata.namespace ?? '') < (b.metadata.namespace ?? '') ? -1 : 1) : byName(a, b);

/** A get or a list; throws a StatusError for NotFound and bad selectors. */
export function read(
  r: Extract<Route, { kind: 'resource' }>,
  q: URLSearchParams,
  listers: Listers,
  storage: MetricsStorage,
  now = new Date(),
): NodeMetrics | PodMetrics | NodeMetricsList | PodMetricsList {
  if (q.get('watch') === 'true' || q.get('watch') === '1') {
    throw failure('MethodNotAllowed', `watch is not supported on resources of kind "${r.resource}.${METRICS_GROUP}"`);
  }
  if (r.resource === 'nodes') {
    if (r.name) {
      const node = listers.node(r.name);
      if (!node) throw notFound({ group: '', resource: 'node' }, r.name);
      const m = nodeMetrics(node, storage, now);
      if (!m) throw notFound(NODE_GR, r.name);
      return m;
    }
    const opts = listOptions(q);
    const items = listers
      .nodes()
      .filter((n) => selected(n, opts))
      .flatMap((n) => nodeMetrics(n, storage, now) ?? [])
      .sort(byName);
    return { kind: 'NodeMetricsList', apiVersion: METRICS_API_VERSION, metadata: {}, items };
  }
  if (r.name) {
    const pod = listers.pod(r.namespace, r.name);
    if (!pod) throw notFound({ group: '', resource: 'pods' }, r.name);
    const m = podMetrics(pod, storage, now);
    if (!m) throw notFound(POD_GR, `${r.namespace}/${r.name}`);
    return m;
  }
  const opts = listOptions(q);
  const items = listers
    .pods(r.namespace || undefined)
    .filter((p) => selected(p, opts))
    .flatMap((p) => podMetrics(p, storage, now) ?? [])
    .sort(byNamespaceName);
  return { kind: 'PodMetricsList', apiVersion: METRICS_API_VERSION, metadata: {}, items };
}

/** Whether the Accept header asks for a meta.k8s.io Table, and which version. */
export function tableWanted(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  for (const part of (accept ?? '').split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (!params.includes('as=Table') || !params.includes('g=meta.k8s.io')) continue;
    if (params.includes('v=v1')) return 'v1';
    if (params.includes('v=v1beta1')) return 'v1beta1';
  }
  return undefined;
}

const quantityColumn = (name: string) => ({ name, type: 'string', format: 'quantity', description: '', priority: 0 });

/**
 * The Table of a get or list (api/table.go): Name, one column per resource
 * name in sorted order (cpu, memory; a pod's usage summed over its
 * containers), Window. Rows carry PartialObjectMetadata unless
 * includeObject=None (Object: the item itself).
 */
export function toTable(obj: NodeMetrics | PodMetrics | NodeMetricsList | PodMetricsList, version: 'v1' | 'v1beta1', includeObject: string | null) {
  const items: (NodeMetrics | PodMetrics)[] = 'items' in obj ? obj.items : [obj];
  const sum = (m: NodeMetrics | PodMetrics): Record<string, string> => {
    if (m.kind === 'NodeMetrics') return m.usage;
    const cpu = m.containers.reduce((s, c) => s + Math.round(parseQuantity(c.usage.cpu) * 1e9), 0);
    const mem = m.containers.reduce((s, c) => s + parseQuantity(c.usage.memory), 0);
    return { cpu: cpuQuantity(cpu), memory: bytesQuantity(mem) };
  };
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: {},
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 },
      quantityColumn('cpu'),
      quantityColumn('memory'),
      { name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 },
    ],
    rows: items.map((m) => {
      const u = sum(m);
      const row: { cells: string[]; object?: unknown } = { cells: [m.metadata.name ?? '', u.cpu ?? '', u.memory ?? '', m.window] };
      if (includeObject === 'Object') row.object = m;
      else if (includeObject !== 'None') row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: m.metadata };
      return row;
    }),
  };
}
