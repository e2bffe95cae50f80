/**
 * kube-proxy in userspace mode: for each Service's cluster IP and TCP or UDP
 * port a listener on this machine (cluster IPs are inside 127.0.0.0/8, so they
 * are local addresses here), each connection — or each UDP client, for as long
 * as it keeps talking — relayed to one of the Service's ready endpoints in turn. Services and EndpointSlices come from informers, as
 * upstream's kube-proxy reads them; a change reconciles the listeners. A listener that cannot bind (a port under
 * 1024 without root, or another proxy holding it) is reported and retried on
 * the next change.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { KubeObject, corev1, discoveryv1 } from '@kubeling/api';
import type { InformerFactory } from '@kubeling/client';
import { UdpRelay } from './udp.js';

type Service = corev1.Service & KubeObject;
type EndpointSlice = discoveryv1.EndpointSlice & KubeObject;

export interface Backend {
  ip: string;
  port: number;
}

/** A listener's target: the Service port, its ready endpoints, and ClientIP affinity's timeout when the Service asks for it. */
export interface Desired {
  service: string;
  backends: Backend[];
  affinityMs?: number;
}

/** kube-proxy's default ClientIP affinity timeout (3 hours). */
const DEFAULT_AFFINITY_SECONDS = 10_800;

/**
 * What should be listening: `clusterIP:port` (TCP) or `clusterIP:port/UDP` → the
 * ready endpoints of its Service's EndpointSlices; for NodePort and
 * LoadBalancer Services also `<node address>:<nodePort>` on each of
 * `nodePortAddresses` (kube-proxy's --nodeport-addresses).
 */
export function desiredListeners(
  services: readonly KubeObject[],
  slices: readonly KubeObject[],
  nodePortAddresses: readonly string[] = [],
): Map<string, Desired> {
  const byService = new Map<string, EndpointSlice[]>();
  for (const sl of slices as readonly EndpointSlice[]) {
    const svc = sl.metadata.labels?.['kubernetes.io/service-name'];
    if (!svc || sl.addressType === 'FQDN') continue;
    const key = `${sl.metadata.namespace}/${svc}`;
    byService.set(key, [...(byService.get(key) ?? []), sl]);
  }
  const out = new Map<string, Desired>();
  for (const s of services as readonly Service[]) {
    const spec = s.spec ?? {};
    const ip = spec.clusterIP;
    if (!ip || ip === 'None' || spec.type === 'ExternalName') continue;
    // Only loopback addresses are listened on: nothing this proxy opens is reachable from off the machine.
    if (!ip.startsWith('127.')) continue;
    const name = `${s.metadata.namespace}/${s.metadata.name}`;
    for (const p of spec.ports ?? []) {
      const protocol = p.protocol ?? 'TCP';
      if ((protocol !== 'TCP' && protocol !== 'UDP') || !p.port) continue;
      const backends: Backend[] = [];
      for (const sl of byService.get(name) ?? []) {
        // The slice's port of the same name (or the unnamed one, for an unnamed Service port).
        const ep = (sl.ports ?? []).find((x) => (x.name ?? '') === (p.name ?? '') && (x.protocol ?? 'TCP') === protocol);
        if (!ep?.port) continue;
        // A missing ready condition counts as ready, as the API documents.
        for (const e of sl.endpoints ?? []) if (e.conditions?.ready !== false && e.addresses?.[0]) backends.push({ ip: e.addresses[0], port: ep.port });
      }
      const suffix = protocol === 'UDP' ? '/UDP' : '';
      const affinity =
        (spec as { sessionAffinity?: string; sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } } }).sessionAffinity === 'ClientIP';
      const timeout = (spec as { sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } } }).sessionAffinityConfig?.clientIP?.timeoutSeconds;
      const d: Desired = {
        service: `${name}:${p.name ?? p.port}`,
        backends,
        ...(affinity ? { affinityMs: (timeout ?? DEFAULT_AFFINITY_SECONDS) * 1000 } : {}),
      };
      out.set(`${ip}:${p.port}${suffix}`, d);
      const nodePort = (p as { nodePort?: number }).nodePort;
      if (nodePort && (spec.type === 'NodePort' || spec.type === 'LoadBalancer')) {
        for (const addr of nodePortAddresses) if (addr.startsWith('127.')) out.set(`${addr}:${nodePort}${suffix}`, d);
      }
    }
  }
  return out;
}

interface Listener {
  server: Server | UdpRelay;
  service: string;
  backends: Backend[];
  next: number;
  sockets: Set<Socket>;
  /** ClientIP affinity: how long a client keeps its endpoint, and who has which. */
  affinityMs?: number | undefined;
  clients: Map<string, { backend: Backend; until: number }>;
}

export class Proxier {
  private readonly listeners = new Map<string, Listener>();
  private readonly failed = new Set<string>();
  private pending: NodeJS.Timeout | undefined;
  private closed = false;
  /** ClientIP affinity per Service port, shared by its cluster IP and node port listeners (one service chain upstream). */
  private readonly affinity = new Map<string, Map<string, { backend: Backend; until: number }>>();
  /** Connections relayed, for /metrics and tests. */
  connections = 0;

  constructor(
    private readonly informers: InformerFactory,
    private readonly log: Logger,
    /** Where NodePorts listen: the nodes' addresses (loopback ones only). */
    private readonly nodePortAddresses: readonly string[] = ['127.0.0.1'],
  ) {}

  init(): void {
    const services = this.informers.informer({ path: '/api/v1/services' });
    const slices = this.informers.informer({ path: '/apis/discovery.k8s.io/v1/endpointslices' });
    const changed = () => this.schedule(services.store.list(), slices.store.list());
    for (const inf of [services, slices]) inf.addEventHandler({ add: changed, update: changed, delete: changed });
  }

  private schedule(services: KubeObject[], slices: KubeObject[]): void {
    if (this.closed) return;
    if (this.pending) clearTimeout(this.pending);
    this.pending = setTimeout(() => void this.sync(services, slices), 50);
  }

  /** Makes the listeners match what the Services and EndpointSlices ask for. */
  async sync(services: readonly KubeObject[], slices: readonly KubeObject[]): Promise<void> {
    const want = desiredListeners(services, slices, this.nodePortAddresses);
    const ports = new Set([...want.values()].map((d) => d.service));
    for (const k of this.affinity.keys()) if (!ports.has(k)) this.affinity.delete(k);
    const clientsOf = (service: string) => this.affinity.get(service) ?? this.affinity.set(service, new Map()).get(service)!;
    for (const [key, l] of this.listeners) {
      if (want.has(key)) continue;
      this.listeners.delete(key);
      l.server.close();
      for (const s of l.sockets) s.destroy();
    }
    for (const [key, d] of want) {
      const have = this.listeners.get(key);
      if (have) {
        have.backends = d.backends;
        have.affinityMs = d.affinityMs;
        have.clients = clientsOf(d.service);
        if (!d.affinityMs) have.clients.clear();
        continue;
      }
      const udp = key.endsWith('/UDP');
      const hostPort = udp ? key.slice(0, -'/UDP'.length) : key;
      const i = hostPort.lastIndexOf(':');
      const host = hostPort.slice(0, i);
      const port = Number(hostPort.slice(i + 1));
      const l: Listener = {
        server: undefined as unknown as Server,
        service: d.service,
        backends: d.backends,
        next: 0,
        sockets: new Set(),
        affinityMs: d.affinityMs,
        clients: clientsOf(d.service),
      };
      try {
        if (udp) {
          const relay = new UdpRelay((client) => this.pick(l, client));
          l.server = relay;
          await relay.listen(host, port);
        } else {
          const server = createServer((c) => this.relay(l, c));
          l.server = server;
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen({ host, port }, () => resolve());
          });
        }
        this.listeners.set(key, l);
        this.failed.delete(key);
      } catch (e) {
        if (!this.failed.has(key)) this.log.warn({ service: d.service, address: key, err: (e as Error).message }, 'cannot listen for a service');
        this.failed.add(key);
      }
    }
  }

  /**
   * The endpoint for a client: with ClientIP affinity the one it had, while
   * that is still ready and the affinity has not expired; otherwise the next
   * ready endpoint in turn.
   */
  private pick(l: Listener, client: string): Backend | undefined {
    const now = Date.now();
    const had = l.affinityMs ? l.clients.get(client) : undefined;
    let b = had && had.until > now ? l.backends.find((x) => x.ip === had.backend.ip && x.port === had.backend.port) : undefined;
    b ??= l.backends.length ? l.backends[l.next++ % l.backends.length] : undefined;
    if (b && l.affinityMs) l.clients.set(client, { backend: b, until: now + l.affinityMs });
    if (b) this.connections++;
    return b;
  }

  private relay(l: Listener, client: Socket): void {
    const b = this.pick(l, client.remoteAddress ?? '');
    if (!b) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: b.ip, port: b.port });
    l.sockets.add(client).add(upstream);
    const done = () => {
      client.destroy();
      upstream.destroy();
      l.sockets.delete(client);
      l.sockets.delete(upstream);
    };
    client.on('error', done).on('close', done);
    upstream.on('error', done).on('close', done);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** `clusterIP:port` (and `clusterIP:port/UDP`) of each listener now open. */
  get listening(): string[] {
    return [...this.listeners.keys()].sort();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pending) clearTimeout(this.pending);
    for (const l of this.listeners.values()) {
      l.server.close();
      for (const s of l.sockets) s.destroy();
    }
    this.listeners.clear();
  }
}
