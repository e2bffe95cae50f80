/**
 * `describe`: kubectl's describers for Pods, Deployments, ReplicaSets,
 * Services, Nodes and Namespaces, a generic one for the rest, and the Events
 * that name the object — written with tabs and aligned by a Go-style tabwriter.
 */
import { humanDuration, parseQuantity } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { Ctx, apiVersionOf, pathOf, type Obj, type Target } from '../ctx.js';
import { tabwrite } from '../print/tabwriter.js';
import { podTemplateText } from './rollout.js';

/** Go's RFC1123Z, as describe prints times: `Mon, 23 Nov 2026 10:04:05 +0000`. */
export function rfc1123z(iso: string | undefined): string {
  if (!iso) return '<unset>';
  const d = new Date(iso);
  const off = -d.getTimezoneOffset();
  const local = new Date(d.getTime() + off * 60_000);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  const sign = off >= 0 ? '+' : '-';
  return `${days[local.getUTCDay()]}, ${p(local.getUTCDate())} ${months[local.getUTCMonth()]} ${local.getUTCFullYear()} ${p(local.getUTCHours())}:${p(local.getUTCMinutes())}:${p(local.getUTCSeconds())} ${sign}${p(Math.floor(Math.abs(off) / 60))}${p(Math.abs(off) % 60)}`;
}

class Lines {
  readonly l: string[] = [];
  add(s: string): this {
    this.l.push(s);
    return this;
  }
  /** `Key:\tvalue` at an indent level (two spaces each). */
  kv(level: number, key: string, value: unknown): this {
    return this.add(`${'  '.repeat(level)}${key}:\t${value === undefined || value === null || value === '' ? '<none>' : String(value)}`);
  }
  /** A map printed as kubectl's printLabelsMultiline: `k=v` one per line, or `<none>`. */
  map(level: number, key: string, m: Record<string, string> | undefined, sep = '='): this {
    const entries = Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    if (!entries.length) return this.kv(level, key, '<none>');
    entries.forEach(([k, v], i) => this.add(i === 0 ? `${'  '.repeat(level)}${key}:\t${k}${sep}${v}` : `\t${k}${sep}${v}`));
    return this;
  }
  text(): string {
    return tabwrite(this.l.join('\n')) + '\n';
  }
}

const selectorText = (sel: Obj | undefined): string => {
  if (!sel) return '<none>';
  const parts = Object.entries((sel.matchLabels ?? sel) as Record<string, string>)
    .filter(([, v]) => typeof v === 'string')
    .map(([k, v]) => `${k}=${v}`);
  for (const e of (sel.matchExpressions ?? []) as Obj[]) parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(',')})`);
  return parts.join(',') || '<none>';
};

function annotationsShown(meta: Obj): Record<string, string> {
  const a = { ...((meta.annotations ?? {}) as Record<string, string>) };
  delete a['kubectl.kubernetes.io/last-applied-configuration'];
  return a;
}

function header(d: Lines, o: Obj, withNs = true, created = false): void {
  d.kv(0, 'Name', o.metadata.name);
  if (withNs) d.kv(0, 'Namespace', o.metadata.namespace);
  if (created) d.kv(0, 'CreationTimestamp', rfc1123z(o.metadata.creationTimestamp));
  d.map(0, 'Labels', o.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
}

function containerState(d: Lines, title: string, s: Obj | undefined): void {
  if (!s || !Object.keys(s).length) {
    d.kv(2, title, 'Waiting');
    return;
  }
  if (s.running) {
    d.kv(2, title, 'Running');
    d.kv(3, 'Started', rfc1123z(s.running.startedAt));
  } else if (s.waiting) {
    d.kv(2, title, 'Waiting');
    if (s.waiting.reason) d.kv(3, 'Reason', s.waiting.reason);
  } else if (s.terminated) {
    d.kv(2, title, 'Terminated');
    if (s.terminated.reason) d.kv(3, 'Reason', s.terminated.reason);
    if (s.terminated.message) d.kv(3, 'Message', s.terminated.message);
    d.kv(3, 'Exit Code', s.terminated.exitCode);
    d.kv(3, 'Started', rfc1123z(s.terminated.startedAt));
    d.kv(3, 'Finished', rfc1123z(s.terminated.finishedAt));
  }
}

function describePod(d: Lines, p: Obj): void {
  d.kv(0, 'Name', p.metadata.name).kv(0, 'Namespace', p.metadata.namespace);
  d.kv(0, 'Priority', p.spec?.priority ?? 0);
  if (p.spec?.priorityClassName) d.kv(0, 'Priority Class Name', p.spec.priorityClassName);
  if (p.spec?.serviceAccountName) d.kv(0, 'Service Account', p.spec.serviceAccountName);
  d.kv(0, 'Node', p.spec?.nodeName ? `${p.spec.nodeName}/${p.status?.hostIP ?? ''}` : '<none>');
  if (p.status?.startTime) d.kv(0, 'Start Time', rfc1123z(p.status.startTime));
  d.map(0, 'Labels', p.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(p.metadata), ': ');
  if (p.metadata.deletionTimestamp) d.kv(0, 'Status', `Terminating (lasts ${humanDuration(Date.now() - Date.parse(p.metadata.deletionTimestamp))})`);
  else d.kv(0, 'Status', p.status?.phase ?? 'Pending');
  if (p.status?.reason) d.kv(0, 'Reason', p.status.reason);
  if (p.status?.message) d.kv(0, 'Message', p.status.message);
  d.kv(0, 'IP', p.status?.podIP ?? '');
  const ips = (p.status?.podIPs ?? []) as Obj[];
  if (ips.length) {
    d.add('IPs:');
    for (const ip of ips) d.kv(1, 'IP', ip.ip);
  } else d.kv(0, 'IPs', '<none>');
  const owner = ((p.metadata.ownerReferences ?? []) as Obj[]).find((r) => r.controller);
  if (owner) d.kv(0, 'Controlled By', `${owner.kind}/${owner.name}`);
  const statuses = (list: string) => new Map((((p.status?.[list] ?? []) as Obj[]).map((s) => [s.name, s])) as [string, Obj][]);
  const section = (title: string, list: string, statusList: string) => {
    const cs = (p.spec?.[list] ?? []) as Obj[];
    if (!cs.length) return;
    const st = statuses(statusList);
    d.add(`${title}:`);
    for (const c of cs) {
      const s = st.get(c.name);
      d.add(`  ${c.name}:`);
      d.kv(2, 'Container ID', s?.containerID ?? '');
      d.kv(2, 'Image', c.image);
      d.kv(2, 'Image ID', s?.imageID ?? '');
      const ports = ((c.ports ?? []) as Obj[]).map((x) => `${x.containerPort}/${x.protocol ?? 'TCP'}`);
      d.kv(2, ports.length > 1 ? 'Ports' : 'Port', ports.join(', ') || '<none>');
      d.kv(2, ports.length > 1 ? 'Host Ports' : 'Host Port', ((c.ports ?? []) as Obj[]).map((x) => `${x.hostPort ?? 0}/${x.protocol ?? 'TCP'}`).join(', ') || '<none>');
      if (c.command) {
        d.add('    Command:');
        for (const x of c.command as string[]) d.add(`      ${x}`);
      }
      if (c.args) {
        d.add('    Args:');
        for (const x of c.args as string[]) d.add(`      ${x}`);
      }
      containerState(d, 'State', s?.state);
      if (s?.lastState && Object.keys(s.lastState).length) containerState(d, 'Last State', s.lastState);
      d.kv(2, 'Ready', s?.ready ? 'True' : 'False');
      d.kv(2, 'Restart Count', s?.restartCount ?? 0);
      const lim = c.resources?.limits as Record<string, string> | undefined;
      const req = c.resources?.requests as Record<string, string> | undefined;
      if (lim && Object.keys(lim).length) {
        d.add('    Limits:');
        for (const [k, v] of Object.entries(lim)) d.kv(3, k, v);
      }
      if (req && Object.keys(req).length) {
        d.add('    Requests:');
        for (const [k, v] of Object.entries(req)) d.kv(3, k, v);
      }
      for (const [title, probe] of [['Liveness', c.livenessProbe], ['Readiness', c.readinessProbe], ['Startup', c.startupProbe]] as [string, Obj | undefined][]) {
        if (!probe) continue;
        const how = probe.httpGet ? `http-get ${probe.httpGet.scheme === 'HTTPS' ? 'https' : 'http'}://:${probe.httpGet.port}${probe.httpGet.path ?? '/'}` : probe.tcpSocket ? `tcp-socket :${probe.tcpSocket.port}` : probe.exec ? `exec [${(probe.exec.command ?? []).join(' ')}]` : 'unknown';
        d.kv(2, title, `${how} delay=${probe.initialDelaySeconds ?? 0}s timeout=${probe.timeoutSeconds ?? 1}s period=${probe.periodSeconds ?? 10}s #success=${probe.successThreshold ?? 1} #failure=${probe.failureThreshold ?? 3}`);
      }
      const env = (c.env ?? []) as Obj[];
      if (!env.length && !c.envFrom?.length) d.kv(2, 'Environment', '<none>');
      else {
        d.add('    Environment:');
        for (const e of env) {
          const from = e.valueFrom;
          const v = e.value ?? (from?.fieldRef ? ` (${from.fieldRef.apiVersion ?? 'v1'}:${from.fieldRef.fieldPath})` : from?.configMapKeyRef ? `<set to the key '${from.configMapKeyRef.key}' of config map '${from.configMapKeyRef.name}'>` : from?.secretKeyRef ? `<set to the key '${from.secretKeyRef.key}' in secret '${from.secretKeyRef.name}'>` : '');
          d.add(`      ${e.name}:\t${v}`);
        }
      }
      const mounts = (c.volumeMounts ?? []) as Obj[];
      if (!mounts.length) d.kv(2, 'Mounts', '<none>');
      else {
        d.add('    Mounts:');
        for (const m of mounts) d.add(`      ${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'}${m.subPath ? `,path="${m.subPath}"` : ''})`);
      }
    }
  };
  section('Init Containers', 'initContainers', 'initContainerStatuses');
  section('Containers', 'containers', 'containerStatuses');
  const conds = (p.status?.conditions ?? []) as Obj[];
  if (conds.length) {
    d.add('Conditions:').add('  Type\tStatus');
    for (const c of conds) d.add(`  ${c.type} \t${c.status} `);
  }
  const vols = (p.spec?.volumes ?? []) as Obj[];
  if (!vols.length) d.kv(0, 'Volumes', '<none>');
  else {
    d.add('Volumes:');
    for (const v of vols) {
      d.add(`  ${v.name}:`);
      if (v.emptyDir) d.kv(2, 'Type', 'EmptyDir (a temporary directory that shares a pod\'s lifetime)').kv(2, 'Medium', v.emptyDir.medium ?? '').kv(2, 'SizeLimit', v.emptyDir.sizeLimit ?? '<unset>');
      else if (v.configMap) d.kv(2, 'Type', 'ConfigMap (a volume populated by a ConfigMap)').kv(2, 'Name', v.configMap.name).kv(2, 'Optional', v.configMap.optional ?? false);
      else if (v.secret) d.kv(2, 'Type', 'Secret (a volume populated by a Secret)').kv(2, 'SecretName', v.secret.secretName).kv(2, 'Optional', v.secret.optional ?? false);
      else if (v.hostPath) d.kv(2, 'Type', 'HostPath (bare host directory volume)').kv(2, 'Path', v.hostPath.path).kv(2, 'HostPathType', v.hostPath.type ?? '');
      else if (v.projected) {
        d.kv(2, 'Type', 'Projected (a volume that contains injected data from multiple sources)');
        for (const s of (v.projected.sources ?? []) as Obj[]) {
          if (s.serviceAccountToken) d.kv(2, 'TokenExpirationSeconds', s.serviceAccountToken.expirationSeconds ?? 3607);
          if (s.configMap) d.kv(2, 'ConfigMapName', s.configMap.name).kv(2, 'ConfigMapOptional', s.configMap.optional ?? '<nil>');
          if (s.downwardAPI) d.kv(2, 'DownwardAPI', 'true');
        }
      } else if (v.downwardAPI) d.kv(2, 'Type', 'DownwardAPI (a volume populated by information about the pod)');
      else d.kv(2, 'Type', Object.keys(v).find((k) => k !== 'name') ?? '<unknown>');
    }
  }
  d.kv(0, 'QoS Class', p.status?.qosClass ?? '');
  d.kv(0, 'Node-Selectors', Object.entries((p.spec?.nodeSelector ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`).join('\n\t') || '<none>');
  const tols = ((p.spec?.tolerations ?? []) as Obj[]).map((t) => `${t.key ?? ''}${t.value ? `=${t.value}` : ''}${t.effect ? `:${t.effect}` : ''}${t.operator === 'Exists' && !t.value ? ' op=Exists' : ''}${t.tolerationSeconds !== undefined ? ` for ${t.tolerationSeconds}s` : ''}`);
  d.kv(0, 'Tolerations', tols.join('\n\t') || '<none>');
}

async function describeDeployment(ctx: Ctx, d: Lines, o: Obj): Promise<void> {
  header(d, o, true, true);
  d.kv(0, 'Selector', selectorText(o.spec?.selector));
  const st = o.status ?? {};
  d.kv(0, 'Replicas', `${o.spec?.replicas ?? 1} desired | ${st.updatedReplicas ?? 0} updated | ${st.replicas ?? 0} total | ${st.availableReplicas ?? 0} available | ${st.unavailableReplicas ?? 0} unavailable`);
  const strategy = o.spec?.strategy ?? {};
  d.kv(0, 'StrategyType', strategy.type ?? 'RollingUpdate');
  d.kv(0, 'MinReadySeconds', o.spec?.minReadySeconds ?? 0);
  if ((strategy.type ?? 'RollingUpdate') === 'RollingUpdate') d.kv(0, 'RollingUpdateStrategy', `${strategy.rollingUpdate?.maxUnavailable ?? '25%'} max unavailable, ${strategy.rollingUpdate?.maxSurge ?? '25%'} max surge`);
  for (const line of podTemplateText(o.spec?.template ?? {}).split('\n')) d.add(line);
  const conds = (st.conditions ?? []) as Obj[];
  if (conds.length) {
    d.add('Conditions:').add('  Type\tStatus\tReason').add('  ----\t------\t------');
    for (const c of conds) d.add(`  ${c.type} \t${c.status}\t${c.reason ?? ''}`);
  }
  const rss = ((await ctx.client.get<Obj>(`/apis/apps/v1/namespaces/${o.metadata.namespace}/replicasets`)).items as Obj[]).filter((rs) => ((rs.metadata.ownerReferences ?? []) as Obj[]).some((r) => r.controller && r.uid === o.metadata.uid));
  const rev = o.metadata.annotations?.['deployment.kubernetes.io/revision'];
  const isNew = (rs: Obj) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === rev;
  const fmt = (rs: Obj) => `${rs.metadata.name} (${rs.status?.replicas ?? 0}/${rs.spec?.replicas ?? 0} replicas created)`;
  const olds = rss.filter((rs) => !isNew(rs) && (rs.spec?.replicas ?? 0) > 0);
  d.kv(0, 'OldReplicaSets', olds.map(fmt).join(', ') || '<none>');
  const nrs = rss.find(isNew);
  d.kv(0, 'NewReplicaSet', nrs ? fmt(nrs) : '<none>');
}

function describeReplicaSet(d: Lines, o: Obj, pods: Obj[]): void {
  d.kv(0, 'Name', o.metadata.name).kv(0, 'Namespace', o.metadata.namespace);
  d.kv(0, 'Selector', selectorText(o.spec?.selector));
  d.map(0, 'Labels', o.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
  const owner = ((o.metadata.ownerReferences ?? []) as Obj[]).find((r) => r.controller);
  if (owner) d.kv(0, 'Controlled By', `${owner.kind}/${owner.name}`);
  d.kv(0, 'Replicas', `${o.status?.replicas ?? 0} current / ${o.spec?.replicas ?? 1} desired`);
  const count = (phase: string) => pods.filter((p) => p.status?.phase === phase).length;
  d.kv(0, 'Pods Status', `${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed`);
  for (const line of podTemplateText(o.spec?.template ?? {}).split('\n')) d.add(line);
}

/** A port's endpoints as kubectl lists them from EndpointSlices: ready ones, `ip:port`, three and a count of the rest. */
function sliceEndpoints(slices: Obj[], portName: string): string {
  if (!slices.length) return '<none>';
  const list: string[] = [];
  let count = 0;
  const add = (v: string) => {
    if (list.length < 3) list.push(v);
    count++;
  };
  for (const sl of slices) {
    const ready = ((sl.endpoints ?? []) as Obj[]).filter((e) => e.conditions?.ready !== false);
    const ports = (sl.ports ?? []) as Obj[];
    if (!ports.length) for (const e of ready) add(e.addresses[0]);
    for (const p of ports) if ((p.name ?? '') === portName) for (const e of ready) add(`${String(e.addresses[0]).includes(':') ? `[${e.addresses[0]}]` : e.addresses[0]}:${p.port}`);
  }
  return count > 3 ? `${list.join(',')} + ${count - 3} more...` : list.join(',');
}

function describeService(d: Lines, s: Obj, slices: Obj[]): void {
  header(d, s);
  d.kv(0, 'Selector', Object.entries((s.spec?.selector ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',') || '<none>');
  d.kv(0, 'Type', s.spec?.type ?? 'ClusterIP');
  d.kv(0, 'IP Family Policy', s.spec?.ipFamilyPolicy ?? 'SingleStack');
  d.kv(0, 'IP Families', (s.spec?.ipFamilies ?? ['IPv4']).join(','));
  d.kv(0, 'IP', s.spec?.clusterIP ?? '');
  d.kv(0, 'IPs', (s.spec?.clusterIPs ?? [s.spec?.clusterIP]).filter(Boolean).join(','));
  for (const p of (s.spec?.ports ?? []) as Obj[]) {
    d.kv(0, 'Port', `${p.name ?? '<unset>'}  ${p.port}/${p.protocol ?? 'TCP'}`);
    d.kv(0, 'TargetPort', `${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}`);
    if (p.nodePort) d.kv(0, 'NodePort', `${p.name ?? '<unset>'}  ${p.nodePort}/${p.protocol ?? 'TCP'}`);
    d.kv(0, 'Endpoints', sliceEndpoints(slices, p.name ?? ''));
  }
  d.kv(0, 'Session Affinity', s.spec?.sessionAffinity ?? 'None');
  if (s.spec?.internalTrafficPolicy) d.kv(0, 'Internal Traffic Policy', s.spec.internalTrafficPolicy);
}

/** ConfigMaps and Secrets as kubectl describes them: each key, a Secret's only by size. */
function describeData(d: Lines, o: Obj): void {
  header(d, o);
  d.add('');
  if (o.kind === 'Secret') {
    d.kv(0, 'Type', o.type ?? 'Opaque').add('').add('Data').add('====');
    for (const k of Object.keys(o.data ?? {}).sort()) d.add(`${k}:\t${Buffer.from(String(o.data[k]), 'base64').length} bytes`);
    return;
  }
  d.add('Data').add('====');
  for (const k of Object.keys(o.data ?? {}).sort()) d.add(`${k}:`).add('----').add(String(o.data[k])).add('');
  d.add('').add('BinaryData').add('====');
  for (const k of Object.keys(o.binaryData ?? {}).sort()) d.add(`${k}: ${Buffer.from(String(o.binaryData[k]), 'base64').length} bytes`);
  d.add('');
}

/** A summed quantity printed the way kubectl prints resource.Quantity (cpu in m, memory in binary suffixes). */
function quantityText(resource: string, v: number): string {
  if (resource === 'cpu') {
    const milli = Math.round(v * 1000);
    return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
  }
  if (v === 0) return '0';
  for (const [suffix, f] of [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) if (v % f === 0) return `${v / f}${suffix}`;
  return String(v);
}

/** A pod's summed container requests or limits of one resource. */
function podAmount(p: Obj, kind: 'requests' | 'limits', resource: string): number {
  let sum = 0;
  for (const c of (p.spec?.containers ?? []) as Obj[]) {
    const q = c.resources?.[kind]?.[resource];
    if (q !== undefined) {
      try {
        sum += parseQuantity(q);
      } catch {
        // a malformed quantity counts as none
      }
    }
  }
  return sum;
}

function describeNode(d: Lines, n: Obj, pods: Obj[], lease: Obj | undefined): void {
  d.kv(0, 'Name', n.metadata.name);
  d.kv(0, 'Roles', Object.keys(n.metadata.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice(24)).join(',') || '<none>');
  d.map(0, 'Labels', n.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(n.metadata), ': ');
  d.kv(0, 'CreationTimestamp', rfc1123z(n.metadata.creationTimestamp));
  d.kv(0, 'Taints', ((n.spec?.taints ?? []) as Obj[]).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join('\n\t') || '<none>');
  d.kv(0, 'Unschedulable', n.spec?.unschedulable ? 'true' : 'false');
  if (lease) {
    d.add('Lease:');
    d.kv(1, 'HolderIdentity', lease.spec?.holderIdentity ?? '<unset>');
    d.kv(1, 'AcquireTime', lease.spec?.acquireTime ? rfc1123z(lease.spec.acquireTime) : '<unset>');
    d.kv(1, 'RenewTime', lease.spec?.renewTime ? rfc1123z(lease.spec.renewTime) : '<unset>');
  }
  const conds = (n.status?.conditions ?? []) as Obj[];
  d.add('Conditions:').add('  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage').add('  ----\t------\t-----------------\t------------------\t------\t-------');
  for (const c of conds) d.add(`  ${c.type} \t${c.status} \t${rfc1123z(c.lastHeartbeatTime)} \t${rfc1123z(c.lastTransitionTime)} \t${c.reason ?? ''} \t${c.message ?? ''}`);
  d.add('Addresses:');
  for (const a of (n.status?.addresses ?? []) as Obj[]) d.kv(1, a.type, a.address);
  for (const [title, res] of [['Capacity', n.status?.capacity], ['Allocatable', n.status?.allocatable]] as [string, Record<string, string> | undefined][]) {
    d.add(`${title}:`);
    for (const k of Object.keys(res ?? {}).sort()) d.kv(1, k, res![k]);
  }
  const info = (n.status?.nodeInfo ?? {}) as Obj;
  d.add('System Info:');
  for (const [k, label] of [['machineID', 'Machine ID'], ['systemUUID', 'System UUID'], ['bootID', 'Boot ID'], ['kernelVersion', 'Kernel Version'], ['osImage', 'OS Image'], ['operatingSystem', 'Operating System'], ['architecture', 'Architecture'], ['containerRuntimeVersion', 'Container Runtime Version'], ['kubeletVersion', 'Kubelet Version'], ['kubeProxyVersion', 'Kube-Proxy Version']] as const) d.add(`  ${label}:\t${info[k] ?? ''}`);
  if (n.spec?.podCIDR) d.kv(0, 'PodCIDR', n.spec.podCIDR);
  const active = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const alloc = (r: string) => {
    try {
      return parseQuantity(n.status?.allocatable?.[r] ?? 0);
    } catch {
      return 0;
    }
  };
  const pct = (v: number, r: string) => `${quantityText(r, v)} (${alloc(r) > 0 ? Math.floor((v / alloc(r)) * 100) : 0}%)`;
  d.add(`Non-terminated Pods:\t(${active.length} in total)`);
  d.add('  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge').add('  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---');
  for (const p of active) {
    d.add(`  ${p.metadata.namespace}\t${p.metadata.name}\t\t${pct(podAmount(p, 'requests', 'cpu'), 'cpu')}\t${pct(podAmount(p, 'limits', 'cpu'), 'cpu')}\t${pct(podAmount(p, 'requests', 'memory'), 'memory')}\t${pct(podAmount(p, 'limits', 'memory'), 'memory')}\t${humanDuration(Date.now() - Date.parse(p.metadata.creationTimestamp))}`);
  }
  d.add('Allocated resources:').add('  (Total limits may be over 100 percent, i.e., overcommitted.)').add('  Resource\tRequests\tLimits').add('  --------\t--------\t------');
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = active.reduce((sum, p) => sum + podAmount(p, 'requests', r), 0);
    const lim = active.reduce((sum, p) => sum + podAmount(p, 'limits', r), 0);
    d.add(`  ${r}\t${pct(req, r)}\t${pct(lim, r)}`);
  }
}

const titleCase = (k: string) => k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

/** kubectl's generic describer: the object's fields, nested, keys in Title Case. */
function describeGeneric(d: Lines, o: Obj): void {
  header(d, o, !!o.metadata.namespace);
  const walk = (v: unknown, level: number, key: string) => {
    const pad = '  '.repeat(level);
    if (Array.isArray(v)) {
      d.add(`${pad}${titleCase(key)}:`);
      for (const x of v) {
        if (x && typeof x === 'object') {
          const entries = Object.entries(x as Obj);
          entries.forEach(([k, y], i) => (y && typeof y === 'object' ? walk(y, level + 1, k) : d.add(`${pad}${i === 0 ? '  ' : '  '}${titleCase(k)}:\t${String(y)}`)));
        } else d.add(`${pad}  ${String(x)}`);
      }
    } else if (v && typeof v === 'object') {
      d.add(`${pad}${titleCase(key)}:`);
      for (const [k, y] of Object.entries(v as Obj)) walk(y, level + 1, k);
    } else d.add(`${pad}${titleCase(key)}:\t${String(v)}`);
  };
  for (const [k, v] of Object.entries(o)) if (!['apiVersion', 'kind', 'metadata'].includes(k)) walk(v, 0, k);
}

async function events(ctx: Ctx, o: Obj, d: Lines): Promise<void> {
  const ns = o.metadata.namespace ?? 'default';
  const fs = [`involvedObject.name=${o.metadata.name}`, `involvedObject.uid=${o.metadata.uid}`, ...(o.metadata.namespace ? [`involvedObject.namespace=${ns}`] : [])].join(',');
  let items: Obj[] = [];
  try {
    items = ((await ctx.client.get<Obj>(o.metadata.namespace ? `/api/v1/namespaces/${ns}/events` : '/api/v1/events', { fieldSelector: fs })).items ?? []) as Obj[];
  } catch {
    // Events are best effort, as in kubectl.
  }
  if (!items.length) {
    d.add('Events:\t<none>');
    return;
  }
  const when = (e: Obj) => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp);
  items.sort((a, b) => when(a) - when(b));
  d.add('Events:').add('  Type\tReason\tAge\tFrom\tMessage').add('  ----\t------\t----\t----\t-------');
  const now = Date.now();
  for (const e of items) {
    const first = Date.parse(e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp);
    const count = e.count ?? e.series?.count ?? 1;
    const age = count > 1 ? `${humanDuration(now - when(e))} (x${count} over ${humanDuration(now - first)})` : humanDuration(now - when(e));
    const from = e.source?.component ?? e.reportingComponent ?? e.reportingController ?? '';
    d.add(`  ${e.type}\t${e.reason}\t${age}\t${from}\t${(e.message ?? '').trim()}`);
  }
}

export async function describe(ctx: Ctx, args: string[]): Promise<number> {
  const targets = await ctx.targets(args, { allowList: true });
  const objs: { t: Target; o: Obj }[] = [];
  for (const t of targets) {
    if (t.name) {
      const o = await ctx.getOrNull(pathOf(t));
      if (o) objs.push({ t, o: { apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...o } });
      else {
        // `describe pods web` matches names by prefix when no object has the exact name, as kubectl does.
        const matches = (await ctx.list({ ...t, name: undefined })).filter((x) => (x.metadata.name as string).startsWith(t.name!));
        if (!matches.length) throw new UsageError(`Error from server (NotFound): ${t.mapping.group ? `${t.mapping.resource}.${t.mapping.group}` : t.mapping.resource} "${t.name}" not found`);
        for (const x of matches) objs.push({ t, o: x });
      }
      continue;
    }
    for (const o of await ctx.list(t)) objs.push({ t, o });
  }
  if (!objs.length) {
    const t = targets[0];
    ctx.io.err(t?.namespace ? `No resources found in ${t.namespace} namespace.\n` : 'No resources found\n');
    return 0;
  }
  const texts: string[] = [];
  for (const { o } of objs) {
    const d = new Lines();
    switch (o.kind) {
      case 'Pod':
        describePod(d, o);
        break;
      case 'Deployment':
        await describeDeployment(ctx, d, o);
        break;
      case 'ReplicaSet': {
        const pods = ((await ctx.client.get<Obj>(`/api/v1/namespaces/${o.metadata.namespace}/pods`)).items as Obj[]).filter((p) => ((p.metadata.ownerReferences ?? []) as Obj[]).some((r) => r.uid === o.metadata.uid));
        describeReplicaSet(d, o, pods);
        break;
      }
      case 'Service':
        describeService(d, o, ((await ctx.client.get<Obj>(`/apis/discovery.k8s.io/v1/namespaces/${o.metadata.namespace}/endpointslices`, { labelSelector: `kubernetes.io/service-name=${o.metadata.name}` }).catch(() => ({ items: [] }))).items ?? []) as Obj[]);
        break;
      case 'Node':
        describeNode(d, o, ((await ctx.client.get<Obj>('/api/v1/pods', { fieldSelector: `spec.nodeName=${o.metadata.name}` })).items ?? []) as Obj[], await ctx.getOrNull(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${o.metadata.name}`).catch(() => undefined));
        break;
      case 'ConfigMap':
      case 'Secret':
        describeData(d, o);
        if (o.kind === 'Secret') {
          texts.push(d.text());
          continue;
        }
        break;
      case 'Namespace':
        d.kv(0, 'Name', o.metadata.name);
        d.map(0, 'Labels', o.metadata.labels);
        d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
        d.kv(0, 'Status', o.status?.phase ?? 'Active');
        d.add('').add('No resource quota.').add('').add('No LimitRange resource.');
        texts.push(d.text());
        continue;
      default:
        describeGeneric(d, o);
    }
    await events(ctx, o, d);
    texts.push(d.text());
  }
  ctx.io.out(texts.join('\n\n'));
  return 0;
}
