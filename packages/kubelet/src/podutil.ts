/**
 * What the kubelet derives from a pod spec (kubernetes pkg/kubelet/kubelet_pods.go,
 * kuberuntime): environment variables with `$(VAR)` expansion, the
 * downward-API field values, resource field values, QoS class, and the
 * image-pull decision.
 */
import { defaultPullPolicy } from '@kubeling/api';
import { milliValue, intValue } from '@kubeling/apimachinery';
import type { ConfigMap, Container, Pod, ResourceFieldSelector, Secret } from './kinds.js';

export class ConfigError extends Error {}

/** A field the downward API exposes (fieldRef.fieldPath). */
export function podFieldValue(pod: Pod, path: string, hostIP: string, podIP: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return pod.metadata[m[1] as 'labels' | 'annotations']?.[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return hostIP;
    case 'status.podIP':
    case 'status.podIPs':
      return podIP;
    case 'metadata.labels':
    case 'metadata.annotations': {
      const map = pod.metadata[path === 'metadata.labels' ? 'labels' : 'annotations'] ?? {};
      return Object.keys(map)
        .sort()
        .map((k) => `${k}="${map[k]}"`)
        .join('\n');
    }
    default:
      throw new ConfigError(`unsupported fieldPath: ${path}`);
  }
}

/** resourceFieldRef: limits/requests of a container, divided by `divisor`, rounded up. */
export function resourceFieldValue(container: Container, ref: ResourceFieldSelector, nodeAllocatable: Record<string, number>): string {
  const [kind, name] = String(ref.resource ?? '').split('.') as [string, string];
  const res = container.resources ?? {};
  let raw: string | number | undefined = kind === 'limits' ? res.limits?.[name] : kind === 'requests' ? res.requests?.[name] : undefined;
  if (raw === undefined && kind === 'limits') {
    // An unset limit reads as the node's allocatable.
    const v = nodeAllocatable[name];
    if (v !== undefined) raw = name === 'cpu' ? `${v}m` : v;
  }
  if (raw === undefined) raw = 0;
  // An unset or zero divisor is 1 (ExtractContainerResourceValue); a stored pod carries it as "0".
  const divisor = ref.divisor === undefined || milliValue(ref.divisor) === 0 ? '1' : ref.divisor;
  if (name === 'cpu') return String(Math.ceil(milliValue(raw) / milliValue(divisor)));
  return String(Math.ceil(intValue(raw) / intValue(divisor)));
}

/** `$(VAR)` expansion as Kubernetes does it: `$$` escapes, unknown references stay as written. */
export function expand(s: string, vars: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '$' && s[i + 1] === '$') {
      out += '$';
      i++;
    } else if (c === '$' && s[i + 1] === '(') {
      const end = s.indexOf(')', i + 2);
      if (end < 0) {
        out += s.slice(i);
        break;
      }
      const name = s.slice(i + 2, end);
      out += Object.hasOwn(vars, name) ? vars[name] : `$(${name})`;
      i = end;
    } else out += c;
  }
  return out;
}

export interface EnvSources {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /** A ServiceAccount token bound to the pod (TokenRequest). */
  token?(pod: Pod, serviceAccount: string, audience: string | undefined, expirationSeconds: number): Promise<string>;
  /** The Services whose variables a pod of the namespace gets: the namespace's, and the master `kubernetes` Service. */
  services?(namespace: string): Promise<{ namespace: ServiceLike[]; master: ServiceLike | undefined }>;
}

/** The part of a Service its environment variables come from. */
export interface ServiceLike {
  metadata: { name?: string };
  spec?: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] };
}

const envName = (s: string) => s.replace(/-/g, '_').toUpperCase();

/**
 * Upstream's envvars.FromServices: for each Service with a cluster IP,
 * <NAME>_SERVICE_HOST and _SERVICE_PORT (the first port, and one per named
 * port), and Docker's link variables (<NAME>_PORT, <NAME>_PORT_<port>_<PROTO>
 * and its _PROTO, _PORT and _ADDR).
 */
export function serviceEnv(services: ServiceLike[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const svc of services) {
    const ip = svc.spec?.clusterIP;
    const ports = svc.spec?.ports ?? [];
    if (!ip || ip === 'None' || !ports.length) continue;
    const prefix = envName(svc.metadata.name ?? '');
    env[`${prefix}_SERVICE_HOST`] = ip;
    env[`${prefix}_SERVICE_PORT`] = String(ports[0]!.port);
    for (const p of ports) if (p.name) env[`${prefix}_SERVICE_PORT_${envName(p.name)}`] = String(p.port);
    const host = ip.includes(':') ? `[${ip}]` : ip;
    ports.forEach((p, i) => {
      const proto = p.protocol || 'TCP';
      const url = `${proto.toLowerCase()}://${host}:${p.port}`;
      if (i === 0) env[`${prefix}_PORT`] = url;
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      env[pp] = url;
      env[`${pp}_PROTO`] = proto.toLowerCase();
      env[`${pp}_PORT`] = String(p.port);
      env[`${pp}_ADDR`] = ip;
    });
  }
  return env;
}

/** makeEnvironmentVariables: envFrom first, then env in order, each able to refer to the ones before. */
export async function containerEnv(
  pod: Pod,
  container: Container,
  src: EnvSources,
  hostIP: string,
  podIP: string,
  allocatable: Record<string, number>,
): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace!;
  // Service variables first: the container's own override them, and $(VAR) may refer to them (getServiceEnvVarMap).
  const env: Record<string, string> = {};
  if (src.services) {
    const { namespace, master } = await src.services(ns);
    const byName = new Map<string, ServiceLike>();
    if (master) byName.set(master.metadata.name ?? '', master);
    if (pod.spec.enableServiceLinks !== false) for (const svc of namespace) byName.set(svc.metadata.name ?? '', svc);
    Object.assign(env, serviceEnv([...byName.values()]));
  }
  // The API leaves a reference's name optional; an unset one is looked up, and reported, as "undefined".
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const cm = await src.configMap(ns, String(from.configMapRef.name));
      if (!cm) {
        if (from.configMapRef.optional) continue;
        throw new ConfigError(`configmap "${from.configMapRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(cm.data ?? {})) env[prefix + k] = String(v);
    } else if (from.secretRef) {
      const s = await src.secret(ns, String(from.secretRef.name));
      if (!s) {
        if (from.secretRef.optional) continue;
        throw new ConfigError(`secret "${from.secretRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(s.data ?? {})) env[prefix + k] = Buffer.from(String(v), 'base64').toString('utf8');
    }
  }
  for (const e of container.env ?? []) {
    if (e.valueFrom) {
      const vf = e.valueFrom;
      if (vf.configMapKeyRef) {
        const cm = await src.configMap(ns, String(vf.configMapKeyRef.name));
        const v = cm?.data?.[vf.configMapKeyRef.key];
        if (v === undefined) {
          if (vf.configMapKeyRef.optional) continue;
          throw new ConfigError(
            cm
              ? `couldn't find key ${vf.configMapKeyRef.key} in ConfigMap ${ns}/${vf.configMapKeyRef.name}`
              : `configmap "${vf.configMapKeyRef.name}" not found`,
          );
        }
        env[e.name] = String(v);
      } else if (vf.secretKeyRef) {
        const s = await src.secret(ns, String(vf.secretKeyRef.name));
        const v = s?.data?.[vf.secretKeyRef.key];
        if (v === undefined) {
          if (vf.secretKeyRef.optional) continue;
          throw new ConfigError(
            s ? `couldn't find key ${vf.secretKeyRef.key} in Secret ${ns}/${vf.secretKeyRef.name}` : `secret "${vf.secretKeyRef.name}" not found`,
          );
        }
        env[e.name] = Buffer.from(String(v), 'base64').toString('utf8');
      } else if (vf.fieldRef) {
        env[e.name] = podFieldValue(pod, vf.fieldRef.fieldPath, hostIP, podIP);
      } else if (vf.resourceFieldRef) {
        const ref = vf.resourceFieldRef;
        const target = ref.containerName ? (pod.spec.containers?.find((c) => c.name === ref.containerName) ?? container) : container;
        env[e.name] = resourceFieldValue(target, ref, allocatable);
      }
    } else env[e.name] = expand(String(e.value ?? ''), env);
  }
  return env;
}

/** Whether to pull: Always pulls, IfNotPresent when absent, Never never; unset, as the apiserver defaults it. */
export function pullPolicy(container: Container): string {
  return container.imagePullPolicy || defaultPullPolicy(String(container.image ?? ''));
}
