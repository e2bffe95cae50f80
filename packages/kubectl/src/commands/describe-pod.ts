/**
 * kubectl's describers for Pods (containers, their states, probes,
 * environment, mounts and the pod's volumes) and Nodes (conditions, capacity,
 * and the requests and limits of the pods they run).
 */
import type { KubeObject } from '@kubeling/api';
import { humanDuration, parseQuantity } from '@kubeling/apimachinery';
import { asList, asObject, asObjects, asString, nested, type JsonObject } from '../json.js';
import { type Lines, annotationsShown, rfc1123z } from './describe-text.js';

function containerState(d: Lines, title: string, state: unknown): void {
  const s = asObject(state);
  if (!s || !Object.keys(s).length) {
    d.kv(2, title, 'Waiting');
    return;
  }
  const running = asObject(s.running);
  const waiting = asObject(s.waiting);
  const terminated = asObject(s.terminated);
  if (running) {
    d.kv(2, title, 'Running');
    d.kv(3, 'Started', rfc1123z(asString(running.startedAt)));
  } else if (waiting) {
    d.kv(2, title, 'Waiting');
    if (waiting.reason) d.kv(3, 'Reason', waiting.reason);
  } else if (terminated) {
    d.kv(2, title, 'Terminated');
    if (terminated.reason) d.kv(3, 'Reason', terminated.reason);
    if (terminated.message) d.kv(3, 'Message', terminated.message);
    d.kv(3, 'Exit Code', terminated.exitCode);
    d.kv(3, 'Started', rfc1123z(asString(terminated.startedAt)));
    d.kv(3, 'Finished', rfc1123z(asString(terminated.finishedAt)));
  }
}

/** A probe as describe shows it: `http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3`. */
function probeText(probe: JsonObject): string {
  const httpGet = asObject(probe.httpGet);
  const tcpSocket = asObject(probe.tcpSocket);
  const exec = asObject(probe.exec);
  const how = httpGet
    ? `http-get ${httpGet.scheme === 'HTTPS' ? 'https' : 'http'}://:${httpGet.port}${httpGet.path ?? '/'}`
    : tcpSocket
      ? `tcp-socket :${tcpSocket.port}`
      : exec
        ? `exec [${asList(exec.command).join(' ')}]`
        : 'unknown';
  return `${how} delay=${probe.initialDelaySeconds ?? 0}s timeout=${probe.timeoutSeconds ?? 1}s period=${probe.periodSeconds ?? 10}s #success=${probe.successThreshold ?? 1} #failure=${probe.failureThreshold ?? 3}`;
}

/** Where an environment variable's value comes from, when it has none of its own. */
function envSource(from: JsonObject | undefined): string {
  const fieldRef = asObject(from?.fieldRef);
  const configMapKeyRef = asObject(from?.configMapKeyRef);
  const secretKeyRef = asObject(from?.secretKeyRef);
  if (fieldRef) return ` (${fieldRef.apiVersion ?? 'v1'}:${fieldRef.fieldPath})`;
  if (configMapKeyRef) return `<set to the key '${configMapKeyRef.key}' of config map '${configMapKeyRef.name}'>`;
  if (secretKeyRef) return `<set to the key '${secretKeyRef.key}' in secret '${secretKeyRef.name}'>`;
  return '';
}

function describeContainer(d: Lines, c: JsonObject, s: JsonObject | undefined): void {
  d.add(`  ${c.name}:`);
  d.kv(2, 'Container ID', s?.containerID ?? '');
  d.kv(2, 'Image', c.image);
  d.kv(2, 'Image ID', s?.imageID ?? '');
  const ports = asObjects(c.ports).map((x) => `${x.containerPort}/${x.protocol ?? 'TCP'}`);
  d.kv(2, ports.length > 1 ? 'Ports' : 'Port', ports.join(', ') || '<none>');
  d.kv(
    2,
    ports.length > 1 ? 'Host Ports' : 'Host Port',
    asObjects(c.ports)
      .map((x) => `${x.hostPort ?? 0}/${x.protocol ?? 'TCP'}`)
      .join(', ') || '<none>',
  );
  if (c.command) {
    d.add('    Command:');
    for (const x of asList(c.command)) d.add(`      ${x}`);
  }
  if (c.args) {
    d.add('    Args:');
    for (const x of asList(c.args)) d.add(`      ${x}`);
  }
  containerState(d, 'State', s?.state);
  const lastState = asObject(s?.lastState);
  if (lastState && Object.keys(lastState).length) containerState(d, 'Last State', lastState);
  d.kv(2, 'Ready', s?.ready ? 'True' : 'False');
  d.kv(2, 'Restart Count', s?.restartCount ?? 0);
  const lim = asObject(nested(c.resources, 'limits'));
  const req = asObject(nested(c.resources, 'requests'));
  if (lim && Object.keys(lim).length) {
    d.add('    Limits:');
    for (const [k, v] of Object.entries(lim)) d.kv(3, k, v);
  }
  if (req && Object.keys(req).length) {
    d.add('    Requests:');
    for (const [k, v] of Object.entries(req)) d.kv(3, k, v);
  }
  for (const [title, probe] of [
    ['Liveness', c.livenessProbe],
    ['Readiness', c.readinessProbe],
    ['Startup', c.startupProbe],
  ] as const) {
    const p = asObject(probe);
    if (p) d.kv(2, title, probeText(p));
  }
  const env = asObjects(c.env);
  if (!env.length && !asList(c.envFrom).length) d.kv(2, 'Environment', '<none>');
  else {
    d.add('    Environment:');
    for (const e of env) d.add(`      ${e.name}:\t${e.value ?? envSource(asObject(e.valueFrom))}`);
  }
  const mounts = asObjects(c.volumeMounts);
  if (!mounts.length) d.kv(2, 'Mounts', '<none>');
  else {
    d.add('    Mounts:');
    for (const m of mounts) d.add(`      ${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'}${m.subPath ? `,path="${m.subPath}"` : ''})`);
  }
}

function describeVolume(d: Lines, v: JsonObject): void {
  d.add(`  ${v.name}:`);
  const emptyDir = asObject(v.emptyDir);
  const configMap = asObject(v.configMap);
  const secret = asObject(v.secret);
  const hostPath = asObject(v.hostPath);
  const projected = asObject(v.projected);
  if (emptyDir)
    d.kv(2, 'Type', "EmptyDir (a temporary directory that shares a pod's lifetime)")
      .kv(2, 'Medium', emptyDir.medium ?? '')
      .kv(2, 'SizeLimit', emptyDir.sizeLimit ?? '<unset>');
  else if (configMap)
    d.kv(2, 'Type', 'ConfigMap (a volume populated by a ConfigMap)')
      .kv(2, 'Name', configMap.name)
      .kv(2, 'Optional', configMap.optional ?? false);
  else if (secret)
    d.kv(2, 'Type', 'Secret (a volume populated by a Secret)')
      .kv(2, 'SecretName', secret.secretName)
      .kv(2, 'Optional', secret.optional ?? false);
  else if (hostPath)
    d.kv(2, 'Type', 'HostPath (bare host directory volume)')
      .kv(2, 'Path', hostPath.path)
      .kv(2, 'HostPathType', hostPath.type ?? '');
  else if (projected) {
    d.kv(2, 'Type', 'Projected (a volume that contains injected data from multiple sources)');
    for (const s of asObjects(projected.sources)) {
      const token = asObject(s.serviceAccountToken);
      const cm = asObject(s.configMap);
      if (token) d.kv(2, 'TokenExpirationSeconds', token.expirationSeconds ?? 3607);
      if (cm) d.kv(2, 'ConfigMapName', cm.name).kv(2, 'ConfigMapOptional', cm.optional ?? '<nil>');
      if (s.downwardAPI) d.kv(2, 'DownwardAPI', 'true');
    }
  } else if (v.downwardAPI) d.kv(2, 'Type', 'DownwardAPI (a volume populated by information about the pod)');
  else d.kv(2, 'Type', Object.keys(v).find((k) => k !== 'name') ?? '<unknown>');
}

export function describePod(d: Lines, p: KubeObject): void {
  const spec = asObject(p.spec) ?? {};
  const status = asObject(p.status) ?? {};
  d.kv(0, 'Name', p.metadata.name).kv(0, 'Namespace', p.metadata.namespace);
  d.kv(0, 'Priority', spec.priority ?? 0);
  if (spec.priorityClassName) d.kv(0, 'Priority Class Name', spec.priorityClassName);
  if (spec.serviceAccountName) d.kv(0, 'Service Account', spec.serviceAccountName);
  d.kv(0, 'Node', spec.nodeName ? `${spec.nodeName}/${status.hostIP ?? ''}` : '<none>');
  if (status.startTime) d.kv(0, 'Start Time', rfc1123z(asString(status.startTime)));
  d.map(0, 'Labels', p.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(p.metadata), ': ');
  if (p.metadata.deletionTimestamp) d.kv(0, 'Status', `Terminating (lasts ${humanDuration(Date.now() - Date.parse(p.metadata.deletionTimestamp))})`);
  else d.kv(0, 'Status', status.phase ?? 'Pending');
  if (status.reason) d.kv(0, 'Reason', status.reason);
  if (status.message) d.kv(0, 'Message', status.message);
  d.kv(0, 'IP', status.podIP ?? '');
  const ips = asObjects(status.podIPs);
  if (ips.length) {
    d.add('IPs:');
    for (const ip of ips) d.kv(1, 'IP', ip.ip);
  } else d.kv(0, 'IPs', '<none>');
  const owner = (p.metadata.ownerReferences ?? []).find((r) => r.controller);
  if (owner) d.kv(0, 'Controlled By', `${owner.kind}/${owner.name}`);
  const section = (title: string, list: string, statusList: string) => {
    const cs = asObjects(spec[list]);
    if (!cs.length) return;
    const statuses = new Map(asObjects(status[statusList]).map((s) => [s.name, s]));
    d.add(`${title}:`);
    for (const c of cs) describeContainer(d, c, statuses.get(c.name));
  };
  section('Init Containers', 'initContainers', 'initContainerStatuses');
  section('Containers', 'containers', 'containerStatuses');
  const conds = asObjects(status.conditions);
  if (conds.length) {
    d.add('Conditions:').add('  Type\tStatus');
    for (const c of conds) d.add(`  ${c.type} \t${c.status} `);
  }
  const vols = asObjects(spec.volumes);
  if (!vols.length) d.kv(0, 'Volumes', '<none>');
  else {
    d.add('Volumes:');
    for (const v of vols) describeVolume(d, v);
  }
  d.kv(0, 'QoS Class', status.qosClass ?? '');
  d.kv(
    0,
    'Node-Selectors',
    Object.entries(asObject(spec.nodeSelector) ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join('\n\t') || '<none>',
  );
  const tols = asObjects(spec.tolerations).map(
    (t) =>
      `${t.key ?? ''}${t.value ? `=${t.value}` : ''}${t.effect ? `:${t.effect}` : ''}${t.operator === 'Exists' && !t.value ? ' op=Exists' : ''}${t.tolerationSeconds !== undefined ? ` for ${t.tolerationSeconds}s` : ''}`,
  );
  d.kv(0, 'Tolerations', tols.join('\n\t') || '<none>');
}

/** A summed quantity printed the way kubectl prints resource.Quantity (cpu in m, memory in binary suffixes). */
function quantityText(resource: string, v: number): string {
  if (resource === 'cpu') {
    const milli = Math.round(v * 1000);
    return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
  }
  if (v === 0) return '0';
  for (const [suffix, f] of [
    ['Ei', 2 ** 60],
    ['Pi', 2 ** 50],
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const)
    if (v % f === 0) return `${v / f}${suffix}`;
  return String(v);
}

/** A quantity's value; a malformed one (or one of another JSON type) counts as none. */
function amount(q: unknown): number | undefined {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  try {
    return parseQuantity(q);
  } catch {
    return undefined;
  }
}

/** A pod's summed container requests or limits of one resource. */
function podAmount(p: KubeObject, kind: 'requests' | 'limits', resource: string): number {
  let sum = 0;
  for (const c of asObjects(nested(p.spec, 'containers'))) sum += amount(nested(c.resources, kind, resource)) ?? 0;
  return sum;
}

export function describeNode(d: Lines, n: KubeObject, pods: KubeObject[], lease: KubeObject | undefined): void {
  const spec = asObject(n.spec) ?? {};
  const status = asObject(n.status) ?? {};
  d.kv(0, 'Name', n.metadata.name);
  d.kv(
    0,
    'Roles',
    Object.keys(n.metadata.labels ?? {})
      .filter((k) => k.startsWith('node-role.kubernetes.io/'))
      .map((k) => k.slice(24))
      .join(',') || '<none>',
  );
  d.map(0, 'Labels', n.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(n.metadata), ': ');
  d.kv(0, 'CreationTimestamp', rfc1123z(n.metadata.creationTimestamp));
  d.kv(
    0,
    'Taints',
    asObjects(spec.taints)
      .map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`)
      .join('\n\t') || '<none>',
  );
  d.kv(0, 'Unschedulable', spec.unschedulable ? 'true' : 'false');
  if (lease) {
    const ls = asObject(lease.spec) ?? {};
    d.add('Lease:');
    d.kv(1, 'HolderIdentity', ls.holderIdentity ?? '<unset>');
    d.kv(1, 'AcquireTime', ls.acquireTime ? rfc1123z(asString(ls.acquireTime)) : '<unset>');
    d.kv(1, 'RenewTime', ls.renewTime ? rfc1123z(asString(ls.renewTime)) : '<unset>');
  }
  d.add('Conditions:')
    .add('  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage')
    .add('  ----\t------\t-----------------\t------------------\t------\t-------');
  for (const c of asObjects(status.conditions))
    d.add(
      `  ${c.type} \t${c.status} \t${rfc1123z(asString(c.lastHeartbeatTime))} \t${rfc1123z(asString(c.lastTransitionTime))} \t${c.reason ?? ''} \t${c.message ?? ''}`,
    );
  d.add('Addresses:');
  for (const a of asObjects(status.addresses)) d.kv(1, String(a.type), a.address);
  for (const [title, res] of [
    ['Capacity', asObject(status.capacity)],
    ['Allocatable', asObject(status.allocatable)],
  ] as const) {
    d.add(`${title}:`);
    for (const k of Object.keys(res ?? {}).sort()) d.kv(1, k, res?.[k]);
  }
  const info = asObject(status.nodeInfo) ?? {};
  d.add('System Info:');
  for (const [k, label] of [
    ['machineID', 'Machine ID'],
    ['systemUUID', 'System UUID'],
    ['bootID', 'Boot ID'],
    ['kernelVersion', 'Kernel Version'],
    ['osImage', 'OS Image'],
    ['operatingSystem', 'Operating System'],
    ['architecture', 'Architecture'],
    ['containerRuntimeVersion', 'Container Runtime Version'],
    ['kubeletVersion', 'Kubelet Version'],
    ['kubeProxyVersion', 'Kube-Proxy Version'],
  ] as const)
    d.add(`  ${label}:\t${info[k] ?? ''}`);
  if (spec.podCIDR) d.kv(0, 'PodCIDR', spec.podCIDR);
  const active = pods.filter((p) => nested(p.status, 'phase') !== 'Succeeded' && nested(p.status, 'phase') !== 'Failed');
  const alloc = (r: string) => amount(nested(status, 'allocatable', r) ?? 0) ?? 0;
  const pct = (v: number, r: string) => `${quantityText(r, v)} (${alloc(r) > 0 ? Math.floor((v / alloc(r)) * 100) : 0}%)`;
  d.add(`Non-terminated Pods:\t(${active.length} in total)`);
  d.add('  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge').add(
    '  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---',
  );
  for (const p of active) {
    d.add(
      `  ${p.metadata.namespace}\t${p.metadata.name}\t\t${pct(podAmount(p, 'requests', 'cpu'), 'cpu')}\t${pct(podAmount(p, 'limits', 'cpu'), 'cpu')}\t${pct(podAmount(p, 'requests', 'memory'), 'memory')}\t${pct(podAmount(p, 'limits', 'memory'), 'memory')}\t${humanDuration(Date.now() - Date.parse(p.metadata.creationTimestamp ?? ''))}`,
    );
  }
  d.add('Allocated resources:')
    .add('  (Total limits may be over 100 percent, i.e., overcommitted.)')
    .add('  Resource\tRequests\tLimits')
    .add('  --------\t--------\t------');
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = active.reduce((sum, p) => sum + podAmount(p, 'requests', r), 0);
    const lim = active.reduce((sum, p) => sum + podAmount(p, 'limits', r), 0);
    d.add(`  ${r}\t${pct(req, r)}\t${pct(lim, r)}`);
  }
}
