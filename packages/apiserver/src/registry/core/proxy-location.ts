/**
 * Where a proxy subresource goes (upstream's ResourceLocation of pods,
 * services and nodes): always an address read from the API objects — the
 * pod's IP, a ready endpoint of the service that a pod of the namespace
 * really has, or the node's kubelet address — never one the request names.
 *
 * - pods: `[scheme:]name[:port]`; no port takes the first declared container
 *   port (none: the scheme's default).
 * - services: `[scheme:]name[:port]`; a port number is the service port of
 *   that number, whose name picks the endpoint port (upstream reads Endpoints;
 *   here the service's EndpointSlices, ready endpoints only). An endpoint
 *   counts only when its target is a Pod of the namespace that has that IP
 *   (upstream's isValidAddress). None: 503 `no endpoints available for service`.
 * - nodes: `[scheme:]name[:port]`; no port, or the kubelet's, is the kubelet
 *   (HTTPS with the apiserver's kubelet client certificate when one is
 *   configured); another port is that port of the node's address, plain.
 *
 * Addresses that are not unicast (link-local — cloud metadata lives there —
 * multicast, unspecified) are refused, as upstream's IsProxyableIP; loopback
 * is allowed because kubeling's pod and node addresses live in 127.0.0.0/8.
 */
import { isIP } from 'node:net';
import type { KubeObject } from '@kubeling/api';
import { badRequest, serviceUnavailable } from '@kubeling/apimachinery';
import type { Store } from '../store.js';

const VALID_SCHEMES = new Set(['', 'http', 'https']);

/** `name`, `name:port` or `scheme:name:port`; undefined when none of those (upstream's BadRequest). */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (!name || !VALID_SCHEMES.has(scheme)) return undefined;
  return { scheme, name, port };
}

export interface ProxyLocation {
  scheme: 'http' | 'https';
  /** An IP address (IPv6 without brackets). */
  host: string;
  /** Undefined: the scheme's default port. */
  port: number | undefined;
  /** Speak to it with the apiserver's kubelet client credentials. */
  kubelet?: boolean;
}

/** True for addresses the proxy may reach: unicast, loopback included. */
export function isProxyableIP(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    if (a === 0 || a >= 224 || (a === 169 && b === 254)) return false;
    return ip !== '255.255.255.255';
  }
  if (v === 6) {
    const l = ip.toLowerCase();
    if (l === '::' || l.startsWith('ff') || /^fe[89ab]/.test(l)) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(l);
    return mapped ? isProxyableIP(mapped[1]!) : true;
  }
  return false;
}

function proxyable(ip: string | undefined): string {
  if (!ip || !isProxyableIP(ip)) throw badRequest('address not allowed');
  return ip;
}

const schemeOf = (s: string): 'http' | 'https' => (s === 'https' ? 'https' : 'http');

function portNumber(p: string, what: string): number {
  const n = Number(p);
  if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw serviceUnavailable(`error trying to reach service: dial tcp: lookup tcp/${p}: unknown port (${what})`);
  return n;
}

interface PodShape {
  spec?: { containers?: { ports?: { name?: string; containerPort: number }[] }[] };
  status?: { podIP?: string; podIPs?: { ip: string }[] };
}

const podIPs = (pod: KubeObject): string[] => {
  const st = (pod as PodShape).status;
  return st?.podIPs?.length ? st.podIPs.map((p) => p.ip) : st?.podIP ? [st.podIP] : [];
};

export async function podLocation(pods: Store, ns: string | undefined, id: string): Promise<ProxyLocation> {
  const sp = splitSchemeNamePort(id);
  if (!sp) throw badRequest(`invalid pod request "${id}"`);
  const pod = await pods.get(ns, sp.name);
  const ports = ((pod as PodShape).spec?.containers ?? []).flatMap((c) => c.ports ?? []);
  let port: number | undefined;
  if (!sp.port) port = ports[0]?.containerPort;
  else if (/^\d+$/.test(sp.port)) port = portNumber(sp.port, `pod ${sp.name}`);
  else {
    // A name: the container port of that name (upstream leaves it to the dialer's service lookup).
    port = ports.find((p) => p.name === sp.port)?.containerPort ?? portNumber(sp.port, `pod ${sp.name}`);
  }
  return { scheme: schemeOf(sp.scheme), host: proxyable(podIPs(pod)[0]), port };
}

interface ServiceShape {
  spec?: { ports?: { name?: string; port: number }[] };
}

interface SliceShape {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean }; targetRef?: { kind?: string; namespace?: string; name?: string } }[];
  ports?: { name?: string; port?: number }[];
}

export interface ServiceStores {
  services: Store;
  endpointSlices: Store;
  pods: Store;
}

/** Fisher-Yates: endpoints are tried in random order, as upstream picks at random. */
function shuffled<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export async function serviceLocation(st: ServiceStores, ns: string | undefined, id: string): Promise<ProxyLocation> {
  const sp = splitSchemeNamePort(id);
  if (!sp) throw badRequest(`invalid service request "${id}"`);
  const svc = await st.services.get(ns, sp.name);
  let portName = sp.port;
  if (/^\d+$/.test(sp.port)) {
    const found = ((svc as ServiceShape).spec?.ports ?? []).find((p) => p.port === Number(sp.port));
    if (!found) throw serviceUnavailable(`no service port ${Number(sp.port)} found for service "${sp.name}"`);
    portName = found.name ?? '';
  }
  const slices = (await st.endpointSlices.list(ns, { labelSelector: `kubernetes.io/service-name=${sp.name}` })).items as (KubeObject & SliceShape)[];
  if (!slices.some((s) => s.endpoints?.length)) throw serviceUnavailable(`no endpoints available for service "${sp.name}"`);
  for (const slice of shuffled(slices)) {
    if (slice.addressType === 'FQDN') continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
    if (!port) continue;
    for (const ep of shuffled(slice.endpoints ?? [])) {
      // A ready condition left unset means ready (discovery/v1 EndpointConditions).
      if (ep.conditions?.ready === false) continue;
      const ref = ep.targetRef;
      if (ref?.kind !== 'Pod' || !ref.name || (ref.namespace ?? ns) !== ns) continue;
      const pod = await st.pods.get(ns, ref.name).catch(() => undefined);
      if (!pod) continue;
      const ips = podIPs(pod);
      const addr = (ep.addresses ?? []).find((a) => ips.includes(a) && isProxyableIP(a));
      if (addr) return { scheme: schemeOf(sp.scheme), host: addr, port };
    }
  }
  throw serviceUnavailable(`no endpoints available for service "${id}"`);
}

interface NodeShape {
  status?: { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
}

export async function nodeLocation(nodes: Store, id: string, kubeletTLS: boolean): Promise<ProxyLocation> {
  const sp = splitSchemeNamePort(id);
  if (!sp) throw badRequest(`invalid node request "${id}"`);
  const node = await nodes.get(undefined, sp.name);
  const st = (node as NodeShape).status;
  const ip = st?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  const kubeletPort = st?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!ip)
    throw serviceUnavailable(`no preferred addresses found; known addresses: [${(st?.addresses ?? []).map((a) => `{${a.type} ${a.address}}`).join(' ')}]`);
  const host = proxyable(ip);
  if (!sp.port || Number(sp.port) === kubeletPort) {
    if (!kubeletPort) throw serviceUnavailable(`no kubelet endpoint is known for node "${sp.name}"`);
    return { scheme: kubeletTLS ? 'https' : 'http', host, port: kubeletPort, kubelet: true };
  }
  return { scheme: schemeOf(sp.scheme), host, port: portNumber(sp.port, `node ${sp.name}`) };
}
