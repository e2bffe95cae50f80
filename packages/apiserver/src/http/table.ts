/**
 * Server-side printing: `meta.k8s.io/v1 Table` responses with the columns
 * kubectl users know (kubernetes pkg/printers/internalversion/printers.go),
 * rows carrying PartialObjectMetadata (or the whole object with
 * includeObject=Object), ages pre-rendered as upstream's HumanDuration.
 */
import type { KubeObject } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';

type Obj = Record<string, any>;

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

interface Printer {
  columns: Column[];
  cells(o: Obj, now: number): unknown[];
}

const col = (name: string, description: string, opts: Partial<Column> = {}): Column => ({
  name,
  type: 'string',
  format: '',
  description,
  priority: 0,
  ...opts,
});
const NAME = col('Name', 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.', { format: 'name' });
const AGE = col('Age', 'CreationTimestamp is a timestamp representing the server time when this object was created.');
const wide = (name: string, description: string) => col(name, description, { priority: 1 });

export const age = (o: Obj, now: number): string => {
  const t = o.metadata?.creationTimestamp;
  return t ? humanDuration(now - Date.parse(t)) : '<unknown>';
};

const containersOf = (spec: Obj | undefined) => ((spec?.containers ?? []) as Obj[]);
const names = (cs: Obj[]) => cs.map((c) => c.name).join(',');
const images = (cs: Obj[]) => cs.map((c) => c.image).join(',');

export function selectorString(sel: Obj | undefined): string {
  if (!sel) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) parts.push(`${k}=${v}`);
  for (const e of (sel.matchExpressions ?? []) as Obj[]) {
    const vals = (e.values ?? []).slice().sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

const mapSelector = (m: Record<string, string> | undefined) =>
  m && Object.keys(m).length ? Object.entries(m).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(',') : '<none>';

/** The pod STATUS column, as kubectl's printer derives it. */
export function podStatusReason(pod: Obj): { reason: string; ready: number; total: number; restarts: number; lastRestart?: string } {
  const status = pod.status ?? {};
  const spec = pod.spec ?? {};
  let reason: string = status.reason || status.phase || 'Unknown';
  let restarts = 0;
  let lastRestart: string | undefined;
  const total = (spec.containers ?? []).length;
  let ready = 0;
  const initStatuses = (status.initContainerStatuses ?? []) as Obj[];
  let initializing = false;
  initStatuses.forEach((c, i) => {
    restarts += c.restartCount ?? 0;
    const term = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (term && term.exitCode === 0) return;
    if (term) {
      reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
      initializing = true;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
      initializing = true;
    } else if (!initializing) {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
      initializing = true;
    }
  });
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const statuses = (status.containerStatuses ?? []) as Obj[];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += c.restartCount ?? 0;
      const lastTerm = c.lastState?.terminated?.finishedAt;
      if (lastTerm && (!lastRestart || lastTerm > lastRestart)) lastRestart = lastTerm;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const readyCond = ((status.conditions ?? []) as Obj[]).find((x) => x.type === 'Ready');
      reason = readyCond?.status === 'True' ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp) reason = 'Terminating';
  return { reason, ready, total, restarts, ...(lastRestart ? { lastRestart } : {}) };
}

function nodeStatus(n: Obj): string {
  const conds = (n.status?.conditions ?? []) as Obj[];
  const ready = conds.find((c) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (n.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(n: Obj): string {
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter(Boolean);
  return roles.length ? roles.sort().join(',') : '<none>';
}

function servicePorts(s: Obj): string {
  const ports = (s.spec?.ports ?? []) as Obj[];
  if (!ports.length) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`)).join(',');
}

function externalIP(s: Obj): string {
  const type = s.spec?.type ?? 'ClusterIP';
  const ext = (s.spec?.externalIPs ?? []) as string[];
  if (type === 'ExternalName') return s.spec?.externalName ?? '<none>';
  if (type === 'LoadBalancer') {
    const ing = ((s.status?.loadBalancer?.ingress ?? []) as Obj[]).map((i) => i.ip ?? i.hostname).filter(Boolean);
    const all = [...ing, ...ext];
    return all.length ? all.join(',') : '<pending>';
  }
  return ext.length ? ext.join(',') : '<none>';
}

function endpointsString(e: Obj): string {
  const out: string[] = [];
  for (const s of (e.subsets ?? []) as Obj[]) {
    for (const a of (s.addresses ?? []) as Obj[]) {
      const ports = (s.ports ?? []) as Obj[];
      if (!ports.length) out.push(a.ip);
      for (const p of ports) out.push(`${a.ip}:${p.port}`);
    }
  }
  return firstThree(out, '<none>');
}

/** At most three items, then how many more, as upstream's printers shorten lists. */
function firstThree(items: string[], none: string): string {
  if (!items.length) return none;
  return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
}

function jobDuration(j: Obj, now: number): string {
  const start = j.status?.startTime;
  if (!start) return '';
  const end = j.status?.completionTime ? Date.parse(j.status.completionTime) : now;
  return humanDuration(end - Date.parse(start));
}

function jobStatus(j: Obj): string {
  const conds = (j.status?.conditions ?? []) as Obj[];
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (j.metadata?.deletionTimestamp) return 'Terminating';
  if (has('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  if (has('FailureTarget')) return 'FailureTarget';
  if (j.spec?.suspend) return 'Suspended';
  return 'Running';
}

const eventObject = (e: Obj) => {
  const ref = e.involvedObject ?? e.regarding ?? {};
  return `${String(ref.kind ?? '').toLowerCase()}/${ref.name ?? ''}`;
};

const printers: Record<string, Printer> = {
  '/pods': {
    columns: [
      NAME,
      col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'The aggregate status of the containers in this pod.'),
      col('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
      AGE,
      wide('IP', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
      wide('Node', 'NodeName is a request to schedule this pod onto a specific node.'),
      wide('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.'),
      wide('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.'),
    ],
    cells(p, now) {
      const s = podStatusReason(p);
      const restarts = s.lastRestart ? `${s.restarts} (${humanDuration(now - Date.parse(s.lastRestart))} ago)` : String(s.restarts);
      const gates = (p.spec?.readinessGates ?? []) as Obj[];
      const conds = (p.status?.conditions ?? []) as Obj[];
      const gatesTrue = gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length;
      return [
        p.metadata.name,
        `${s.ready}/${s.total}`,
        s.reason,
        restarts,
        age(p, now),
        p.status?.podIP || '<none>',
        p.spec?.nodeName || '<none>',
        p.status?.nominatedNodeName || '<none>',
        gates.length ? `${gatesTrue}/${gates.length}` : '<none>',
      ];
    },
  },
  'apps/deployments': {
    columns: [
      NAME,
      col('Ready', 'Number of the pod with ready state'),
      col('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', { type: 'integer' }),
      col('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', { type: 'integer' }),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.'),
    ],
    cells(d, now) {
      const cs = containersOf(d.spec?.template?.spec);
      return [d.metadata.name, `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`, d.status?.updatedReplicas ?? 0, d.status?.availableReplicas ?? 0, age(d, now), names(cs), images(cs), selectorString(d.spec?.selector)];
    },
  },
  'apps/replicasets': {
    columns: [
      NAME,
      col('Desired', 'Replicas is the number of desired replicas.', { type: 'integer' }),
      col('Current', 'Replicas is the most recently observed number of replicas.', { type: 'integer' }),
      col('Ready', 'The number of ready replicas for this replica set.', { type: 'integer' }),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Selector is a label query over pods that should match the replica count.'),
    ],
    cells(r, now) {
      const cs = containersOf(r.spec?.template?.spec);
      return [r.metadata.name, r.spec?.replicas ?? 0, r.status?.replicas ?? 0, r.status?.readyReplicas ?? 0, age(r, now), names(cs), images(cs), selectorString(r.spec?.selector)];
    },
  },
  'apps/daemonsets': {
    columns: [
      NAME,
      col('Desired', 'The total number of nodes that should be running the daemon pod.', { type: 'integer' }),
      col('Current', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', { type: 'integer' }),
      col('Ready', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.', { type: 'integer' }),
      col('Up-to-date', 'The total number of nodes that are running updated daemon pod', { type: 'integer' }),
      col('Available', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.', { type: 'integer' }),
      col('Node Selector', 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that are managed by the daemon set.'),
    ],
    cells(d, now) {
      const cs = containersOf(d.spec?.template?.spec);
      const st = d.status ?? {};
      return [d.metadata.name, st.desiredNumberScheduled ?? 0, st.currentNumberScheduled ?? 0, st.numberReady ?? 0, st.updatedNumberScheduled ?? 0, st.numberAvailable ?? 0, mapSelector(d.spec?.template?.spec?.nodeSelector), age(d, now), names(cs), images(cs), selectorString(d.spec?.selector)];
    },
  },
  'apps/statefulsets': {
    columns: [NAME, col('Ready', 'Number of the pod with ready state'), AGE, wide('Containers', 'Names of each container in the template.'), wide('Images', 'Images referenced by each container in the template.')],
    cells(s, now) {
      const cs = containersOf(s.spec?.template?.spec);
      return [s.metadata.name, `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`, age(s, now), names(cs), images(cs)];
    },
  },
  '/services': {
    columns: [
      NAME,
      col('Type', 'type determines how the Service is exposed.'),
      col('Cluster-IP', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
      col('External-IP', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
      col('Port(s)', 'The list of ports that are exposed by this service.'),
      AGE,
      wide('Selector', 'Route service traffic to pods with label keys and values matching this selector.'),
    ],
    cells(s, now) {
      return [s.metadata.name, s.spec?.type ?? 'ClusterIP', s.spec?.clusterIP || '<none>', externalIP(s), servicePorts(s), age(s, now), mapSelector(s.spec?.selector)];
    },
  },
  '/endpoints': {
    columns: [NAME, col('Endpoints', 'Endpoints is the list of endpoints for the service.'), AGE],
    cells: (e, now) => [e.metadata.name, endpointsString(e), age(e, now)],
  },
  '/namespaces': {
    columns: [NAME, col('Status', 'The status of the namespace'), AGE],
    cells: (n, now) => [n.metadata.name, n.status?.phase ?? 'Active', age(n, now)],
  },
  '/nodes': {
    columns: [
      NAME,
      col('Status', 'The status of the node'),
      col('Roles', 'The roles of the node'),
      AGE,
      col('Version', 'Kubelet Version reported by the node.'),
      wide('Internal-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.'),
      wide('External-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.'),
      wide('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).'),
      wide('Kernel-Version', 'Kernel Version reported by the node from \'uname -r\' (e.g. 3.16.0-0.bpo.4-amd64).'),
      wide('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).'),
    ],
    cells(n, now) {
      const addr = (t: string) => ((n.status?.addresses ?? []) as Obj[]).find((a) => a.type === t)?.address ?? '<none>';
      const info = n.status?.nodeInfo ?? {};
      return [n.metadata.name, nodeStatus(n), nodeRoles(n), age(n, now), info.kubeletVersion ?? '', addr('InternalIP'), addr('ExternalIP'), info.osImage ?? '<unknown>', info.kernelVersion ?? '<unknown>', info.containerRuntimeVersion ?? '<unknown>'];
    },
  },
  '/configmaps': {
    columns: [NAME, col('Data', 'Data contains the configuration data.', { type: 'integer' }), AGE],
    cells: (c, now) => [c.metadata.name, Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length, age(c, now)],
  },
  '/secrets': {
    columns: [NAME, col('Type', 'The type of the secret'), col('Data', 'The number of entries in the secret', { type: 'integer' }), AGE],
    cells: (s, now) => [s.metadata.name, s.type ?? 'Opaque', Object.keys(s.data ?? {}).length, age(s, now)],
  },
  '/serviceaccounts': {
    columns: [NAME, col('Secrets', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', { type: 'integer' }), AGE],
    cells: (s, now) => [s.metadata.name, (s.secrets ?? []).length, age(s, now)],
  },
  '/events': {
    columns: [
      col('Last Seen', 'Time when last event occurred'),
      col('Type', 'Type of this event (Normal, Warning), new types could be added in the future.'),
      col('Reason', 'Reason why this event is generated'),
      col('Object', 'Object this event is about.'),
      col('Message', 'Message describing this event'),
      wide('Subobject', 'Subobject that this event is about'),
      wide('Source', 'The component reporting this event.'),
      wide('First Seen', 'Time when first event occurred'),
      wide('Count', 'Number of times this event has occurred'),
      col('Name', 'Name of the event', { priority: 1 }),
    ],
    cells(e, now) {
      const last = e.lastTimestamp ?? e.deprecatedLastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const first = e.firstTimestamp ?? e.deprecatedFirstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const src = e.source?.component ?? e.reportingComponent ?? e.reportingController ?? '';
      return [last ? humanDuration(now - Date.parse(last)) : '<unknown>', e.type ?? '', e.reason ?? '', eventObject(e), e.message ?? e.note ?? '', (e.involvedObject ?? e.regarding ?? {}).fieldPath ?? '', src, first ? humanDuration(now - Date.parse(first)) : '<unknown>', e.count ?? e.deprecatedCount ?? 1, e.metadata.name];
    },
  },
  'batch/jobs': {
    columns: [
      NAME,
      col('Status', 'Status of the job.'),
      col('Completions', 'The desired number of successfully finished pods the job should be run with.'),
      col('Duration', 'Time required to complete the job.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that should match the pod count.'),
    ],
    cells(j, now) {
      const cs = containersOf(j.spec?.template?.spec);
      const completions = j.spec?.completions !== undefined ? `${j.status?.succeeded ?? 0}/${j.spec.completions}` : `${j.status?.succeeded ?? 0}/1 of ${j.spec?.parallelism ?? 1}`;
      return [j.metadata.name, jobStatus(j), completions, jobDuration(j, now), age(j, now), names(cs), images(cs), selectorString(j.spec?.selector)];
    },
  },
  'batch/cronjobs': {
    columns: [
      NAME,
      col('Schedule', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
      col('Timezone', 'The time zone name for the given schedule.'),
      col('Suspend', 'This flag tells the controller to suspend subsequent executions.', { type: 'boolean' }),
      col('Active', 'A list of pointers to currently running jobs.', { type: 'integer' }),
      col('Last Schedule', 'Information when was the last time the job was successfully scheduled.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that should match the pod count.'),
    ],
    cells(c, now) {
      const cs = containersOf(c.spec?.jobTemplate?.spec?.template?.spec);
      const last = c.status?.lastScheduleTime ? humanDuration(now - Date.parse(c.status.lastScheduleTime)) : '<none>';
      return [c.metadata.name, c.spec?.schedule ?? '', c.spec?.timeZone ?? '<none>', c.spec?.suspend ?? false, (c.status?.active ?? []).length, last, age(c, now), names(cs), images(cs), selectorString(c.spec?.jobTemplate?.spec?.selector)];
    },
  },
  'discovery.k8s.io/endpointslices': {
    columns: [
      NAME,
      col('AddressType', 'The type of address carried by this EndpointSlice.'),
      col('Ports', 'Ports allowed by this EndpointSlice.'),
      col('Endpoints', 'Endpoints that are part of this EndpointSlice.'),
      AGE,
    ],
    cells: (e, now) => {
      const ports = ((e.ports ?? []) as Obj[]).map((p) => (p.port === undefined || p.port === null ? '<unset>' : String(p.port)));
      const addrs = ((e.endpoints ?? []) as Obj[]).flatMap((x) => (x.addresses ?? []) as string[]);
      return [e.metadata.name, e.addressType ?? '', firstThree(ports, '<unset>'), firstThree(addrs, '<unset>'), age(e, now)];
    },
  },
  'coordination.k8s.io/leases': {
    columns: [NAME, col('Holder', 'The holder of the lease'), AGE],
    cells: (l, now) => [l.metadata.name, l.spec?.holderIdentity ?? '', age(l, now)],
  },
  'scheduling.k8s.io/priorityclasses': {
    columns: [
      NAME,
      col('Value', 'The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.', { type: 'integer' }),
      col('Global-Default', 'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.', { type: 'boolean' }),
      AGE,
      col('Preemption Policy', 'PreemptionPolicy is the Policy for preempting pods with lower priority.'),
    ],
    cells: (p, now) => [p.metadata.name, p.value ?? 0, p.globalDefault ?? false, age(p, now), p.preemptionPolicy ?? 'PreemptLowerPriority'],
  },
  'policy/poddisruptionbudgets': {
    columns: [
      NAME,
      col('Min Available', 'The minimum number of pods that must be available simultaneously.'),
      col('Max Unavailable', 'The maximum number of pods that may be unavailable simultaneously.'),
      col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', { type: 'integer' }),
      AGE,
    ],
    cells: (p, now) => [p.metadata.name, p.spec?.minAvailable !== undefined ? String(p.spec.minAvailable) : 'N/A', p.spec?.maxUnavailable !== undefined ? String(p.spec.maxUnavailable) : 'N/A', p.status?.disruptionsAllowed ?? 0, age(p, now)],
  },
  '/persistentvolumeclaims': {
    columns: [NAME, col('Status', 'The phase of the claim.'), col('Volume', 'The volume bound to the claim.'), col('Capacity', 'The capacity of the volume.'), col('Access Modes', 'The access modes.'), col('StorageClass', 'The storage class.'), AGE],
    cells: (p, now) => [p.metadata.name, p.status?.phase ?? 'Pending', p.spec?.volumeName ?? '', p.status?.capacity?.storage ?? '', (p.status?.accessModes ?? []).map((m: string) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[m] ?? m).join(','), p.spec?.storageClassName ?? '<unset>', age(p, now)],
  },
  'rbac.authorization.k8s.io/rolebindings': {
    columns: [NAME, col('Role', 'Role referenced by this binding.'), AGE, wide('Users', 'Users in the binding.'), wide('Groups', 'Groups in the binding.'), wide('ServiceAccounts', 'ServiceAccounts in the binding.')],
    cells: (b, now) => bindingCells(b, now),
  },
  'rbac.authorization.k8s.io/clusterrolebindings': {
    columns: [NAME, col('Role', 'Role referenced by this binding.'), AGE, wide('Users', 'Users in the binding.'), wide('Groups', 'Groups in the binding.'), wide('ServiceAccounts', 'ServiceAccounts in the binding.')],
    cells: (b, now) => bindingCells(b, now),
  },
};

function bindingCells(b: Obj, now: number): unknown[] {
  const subjects = (b.subjects ?? []) as Obj[];
  const of = (k: string) => subjects.filter((s) => s.kind === k).map((s) => (k === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name)).join(', ');
  return [b.metadata.name, `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`, age(b, now), of('User'), of('Group'), of('ServiceAccount')];
}

const DEFAULT_PRINTER: Printer = {
  columns: [NAME, col('Created At', 'CreationTimestamp is a timestamp representing the server time when this object was created.', { type: 'date' })],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
};

export function printerFor(group: string, resource: string): Printer {
  return printers[`${group}/${resource}`] ?? DEFAULT_PRINTER;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function partialMetadata(o: KubeObject): Obj {
  const { managedFields: _m, ...meta } = o.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta };
}

export function toTable(
  group: string,
  resource: string,
  objects: KubeObject[],
  listMeta: Obj,
  include: IncludeObject,
  withColumns = true,
  tableVersion: 'v1' | 'v1beta1' = 'v1',
): Obj {
  const p = printerFor(group, resource);
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: p.columns } : { columnDefinitions: null }),
    rows: objects.map((o) => {
      const row: Obj = { cells: p.cells(o, now) };
      if (include === 'Metadata') row.object = partialMetadata(o);
      else if (include === 'Object') row.object = o;
      if (resource === 'pods' && !group) {
        const phase = (o.status as Obj | undefined)?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') row.conditions = [{ type: 'Completed', status: 'True', reason: phase, message: 'The pod has completed successfully.' }];
      }
      return row;
    }),
  };
}

/** Whether (and which version of) a Table the Accept header asks for. */
export function tableWanted(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (!params.includes('as=Table') || !params.includes('g=meta.k8s.io')) continue;
    if (params.includes('v=v1')) return 'v1';
    if (params.includes('v=v1beta1')) return 'v1beta1';
  }
  return undefined;
}
