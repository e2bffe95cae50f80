/**
 * Table printers of core/v1 kinds, with the columns and cell formats of
 * kubernetes pkg/printers/internalversion/printers.go (printPod, printNode,
 * printService, ...). The pod STATUS column follows kubectl's derivation.
 */
import type { corev1, dsl, eventsv1 } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';
import { AGE, NAME, age, col, firstThree, mapSelector, printer, wide, type Printer } from './columns.js';

/** A container's state as the printer reads it (the api leaves ContainerStatus undescribed). */
type ContainerState = {
  waiting?: { reason?: string };
  running?: object;
  terminated?: { exitCode?: number; signal?: number; reason?: string; finishedAt?: string };
};
type ContainerStatus = { restartCount?: number; ready?: boolean; state?: ContainerState; lastState?: ContainerState };

/** A pod with the fields the printer reads that the api does not describe yet. */
type PrintedPod = corev1.Pod & {
  spec?: { readinessGates?: { conditionType: string }[] };
  status?: { containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
};

/** A node with the status fields the printer reads (the api leaves NodeStatus undescribed). */
type PrintedNode = corev1.Node & {
  status?: {
    conditions?: { type: string; status: string }[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: { kubeletVersion?: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  };
};

/** A service with the load balancer status the printer reads (the api leaves ServiceStatus undescribed). */
type PrintedService = corev1.Service & { status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } };

/** An Event as either API version stores it (events.k8s.io shares core events' storage). */
type AnyEvent = corev1.Event & eventsv1.Event;

/** The pod STATUS column, as kubectl's printer derives it. */
export function podStatusReason(pod: PrintedPod): { reason: string; ready: number; total: number; restarts: number; lastRestart?: string } {
  const status: NonNullable<PrintedPod['status']> = pod.status ?? {};
  const spec: NonNullable<PrintedPod['spec']> = pod.spec ?? {};
  let reason: string = status.reason || status.phase || 'Unknown';
  let restarts = 0;
  let lastRestart: string | undefined;
  const total = (spec.containers ?? []).length;
  let ready = 0;
  const initStatuses: ContainerStatus[] = status.initContainerStatuses ?? [];
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
    const statuses: ContainerStatus[] = status.containerStatuses ?? [];
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
      const readyCond = (status.conditions ?? []).find((x) => x.type === 'Ready');
      reason = readyCond?.status === 'True' ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp) reason = 'Terminating';
  return { reason, ready, total, restarts, ...(lastRestart ? { lastRestart } : {}) };
}

function nodeStatus(n: PrintedNode): string {
  const conds = n.status?.conditions ?? [];
  const ready = conds.find((c) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (n.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(n: PrintedNode): string {
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter(Boolean);
  return roles.length ? roles.sort().join(',') : '<none>';
}

function servicePorts(s: PrintedService): string {
  const ports = s.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`)).join(',');
}

function externalIP(s: PrintedService): string {
  const type = s.spec?.type ?? 'ClusterIP';
  const ext = s.spec?.externalIPs ?? [];
  if (type === 'ExternalName') return s.spec?.externalName ?? '<none>';
  if (type === 'LoadBalancer') {
    const ing = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname).filter(Boolean);
    const all = [...ing, ...ext];
    return all.length ? all.join(',') : '<pending>';
  }
  return ext.length ? ext.join(',') : '<none>';
}

function endpointsString(e: dsl.Static<typeof corev1.Endpoints>): string {
  const out: string[] = [];
  for (const s of e.subsets ?? []) {
    for (const a of s.addresses ?? []) {
      const ports = s.ports ?? [];
      if (!ports.length) out.push(a.ip);
      for (const p of ports) out.push(`${a.ip}:${p.port}`);
    }
  }
  return firstThree(out, '<none>');
}

const eventObject = (e: AnyEvent) => {
  const ref = e.involvedObject ?? e.regarding ?? {};
  return `${String(ref.kind ?? '').toLowerCase()}/${ref.name ?? ''}`;
};

export const corePrinters: Record<string, Printer> = {
  '/componentstatuses': printer<corev1.ComponentStatus>(
    [
      NAME,
      col('Status', 'Status of the component conditions'),
      col('Message', 'Message of the component conditions'),
      col('Error', 'Error of the component conditions'),
    ],
    (c) => {
      // printComponentStatus: the Healthy condition says it all.
      const healthy = (c.conditions ?? []).find((x) => x.type === 'Healthy');
      const status = healthy?.status === 'True' ? 'Healthy' : healthy ? 'Unhealthy' : 'Unknown';
      return [c.metadata?.name, status, healthy?.message ?? '', healthy?.error ?? ''];
    },
  ),
  '/pods': printer<PrintedPod>(
    [
      NAME,
      col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'The aggregate status of the containers in this pod.'),
      col('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
      AGE,
      wide('IP', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
      wide('Node', 'NodeName is a request to schedule this pod onto a specific node.'),
      wide(
        'Nominated Node',
        'nominatedNodeName is set when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.',
      ),
      wide('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.'),
    ],
    (p, now) => {
      const s = podStatusReason(p);
      const restarts = s.lastRestart ? `${s.restarts} (${humanDuration(now - Date.parse(s.lastRestart))} ago)` : String(s.restarts);
      const gates = p.spec?.readinessGates ?? [];
      const conds = p.status?.conditions ?? [];
      const gatesTrue = gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length;
      return [
        p.metadata?.name,
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
  ),
  '/services': printer<PrintedService>(
    [
      NAME,
      col('Type', 'type determines how the Service is exposed.'),
      col('Cluster-IP', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
      col('External-IP', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
      col('Port(s)', 'The list of ports that are exposed by this service.'),
      AGE,
      wide('Selector', 'Route service traffic to pods with label keys and values matching this selector.'),
    ],
    (s, now) => [
      s.metadata?.name,
      s.spec?.type ?? 'ClusterIP',
      s.spec?.clusterIP || '<none>',
      externalIP(s),
      servicePorts(s),
      age(s, now),
      mapSelector(s.spec?.selector),
    ],
  ),
  '/endpoints': printer<dsl.Static<typeof corev1.Endpoints>>([NAME, col('Endpoints', 'Endpoints is the list of endpoints for the service.'), AGE], (e, now) => [
    e.metadata?.name,
    endpointsString(e),
    age(e, now),
  ]),
  '/namespaces': printer<corev1.Namespace>([NAME, col('Status', 'The status of the namespace'), AGE], (n, now) => [
    n.metadata?.name,
    n.status?.phase ?? 'Active',
    age(n, now),
  ]),
  '/nodes': printer<PrintedNode>(
    [
      NAME,
      col('Status', 'The status of the node'),
      col('Roles', 'The roles of the node'),
      AGE,
      col('Version', 'Kubelet Version reported by the node.'),
      wide('Internal-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.'),
      wide('External-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.'),
      wide('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).'),
      wide('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
      wide('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).'),
    ],
    (n, now) => {
      const addr = (t: string) => (n.status?.addresses ?? []).find((a) => a.type === t)?.address ?? '<none>';
      const info = n.status?.nodeInfo ?? {};
      return [
        n.metadata?.name,
        nodeStatus(n),
        nodeRoles(n),
        age(n, now),
        info.kubeletVersion ?? '',
        addr('InternalIP'),
        addr('ExternalIP'),
        info.osImage ?? '<unknown>',
        info.kernelVersion ?? '<unknown>',
        info.containerRuntimeVersion ?? '<unknown>',
      ];
    },
  ),
  '/configmaps': printer<corev1.ConfigMap>([NAME, col('Data', 'Data contains the configuration data.', { type: 'integer' }), AGE], (c, now) => [
    c.metadata?.name,
    Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length,
    age(c, now),
  ]),
  '/secrets': printer<dsl.Static<typeof corev1.Secret>>(
    [NAME, col('Type', 'The type of the secret'), col('Data', 'The number of entries in the secret', { type: 'integer' }), AGE],
    (s, now) => [s.metadata?.name, s.type ?? 'Opaque', Object.keys(s.data ?? {}).length, age(s, now)],
  ),
  '/serviceaccounts': printer<dsl.Static<typeof corev1.ServiceAccount>>(
    [
      NAME,
      col('Secrets', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', {
        type: 'integer',
      }),
      AGE,
    ],
    (s, now) => [s.metadata?.name, (s.secrets ?? []).length, age(s, now)],
  ),
  '/events': printer<AnyEvent>(
    [
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
    (e, now) => {
      const last = e.lastTimestamp ?? e.deprecatedLastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
      const first = e.firstTimestamp ?? e.deprecatedFirstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
      const src = e.source?.component ?? e.reportingComponent ?? e.reportingController ?? '';
      return [
        last ? humanDuration(now - Date.parse(last)) : '<unknown>',
        e.type ?? '',
        e.reason ?? '',
        eventObject(e),
        e.message ?? e.note ?? '',
        (e.involvedObject ?? e.regarding)?.fieldPath ?? '',
        src,
        first ? humanDuration(now - Date.parse(first)) : '<unknown>',
        e.count ?? e.deprecatedCount ?? 1,
        e.metadata?.name,
      ];
    },
  ),
};
