/**
 * Endpoints controller: for every Service with a selector, an Endpoints object of
 * the same name listing the IPs of the matching pods — ready ones under
 * `addresses`, the others under `notReadyAddresses` — with the Service's ports
 * resolved against each pod (named target ports looked up in its containers).
 */
import { isAlreadyExists, isConflict, isNotFound, jsonEqual, selectorFromSet } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { isPodReady } from '@kubeling/component-helpers';
import { enqueueOn } from '../handlers.js';
import type { EndpointAddress, Endpoints, Pod, Service, ServiceSpec } from '../kinds.js';
import { QueueController } from '../queue-controller.js';

/** A Service port as one pod serves it. */
export interface ResolvedPort {
  name?: string;
  port: number;
  protocol: string;
}

/** The Service's ports as one pod serves them: named target ports looked up in its containers; ports it lacks are left out. */
export function resolvePorts(spec: ServiceSpec, pod: Pod): ResolvedPort[] {
  const ports: ResolvedPort[] = [];
  for (const sp of spec.ports ?? []) {
    let port: number | undefined;
    if (typeof sp.targetPort === 'number') port = sp.targetPort;
    else if (typeof sp.targetPort === 'string') {
      for (const c of pod.spec?.containers ?? [])
        for (const cp of c.ports ?? []) if (cp.name === sp.targetPort && (cp.protocol ?? 'TCP') === (sp.protocol ?? 'TCP')) port = cp.containerPort;
    } else port = sp.port;
    if (port === undefined) continue;
    ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP' });
  }
  return ports;
}

/** The Services whose selector picks a pod, for queueing them on pod changes. */
export function servicesSelecting(services: Informer<Service>, pod: Pod): Service[] {
  return services.store.byIndex('namespace', pod.metadata.namespace ?? '').filter((s) => {
    const sel = s.spec?.selector;
    return sel && Object.keys(sel).length && selectorFromSet(sel).matches(pod.metadata.labels);
  });
}

export class EndpointsController extends QueueController {
  readonly name = 'endpoints';
  private services!: Informer<Service>;
  private pods!: Informer<Pod>;
  private endpoints!: Informer<Endpoints>;

  init(): void {
    this.services = this.ctx.informers.informer<Service>({ path: '/api/v1/services' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.endpoints = this.ctx.informers.informer<Endpoints>({ path: '/api/v1/endpoints' });
    enqueueOn(this.services, this.queue);
    // A relabelled pod concerns the Services that selected it and those that select it now.
    enqueueOn(this.pods, this.queue, { keys: (p) => servicesSelecting(this.services, p).map(keyOf), updateOld: true });
  }

  async reconcile(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const path = `/api/v1/namespaces/${ns}/endpoints`;
    const svc = this.services.store.get(key);
    if (!svc) {
      if (this.endpoints.store.get(key)) {
        await this.ctx.client.delete(`${path}/${name}`).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
      }
      return;
    }
    const spec: ServiceSpec = svc.spec ?? {};
    if (!spec.selector || !Object.keys(spec.selector).length) return;
    const sel = selectorFromSet(spec.selector);
    const subsets = new Map<string, { addresses: EndpointAddress[]; notReadyAddresses: EndpointAddress[]; ports: ResolvedPort[] }>();
    const pods = this.pods.store
      .byIndex('namespace', ns)
      .filter((p) => sel.matches(p.metadata.labels) && !p.metadata.deletionTimestamp && p.status?.podIP)
      .sort((a, b) => String(a.status?.podIP).localeCompare(String(b.status?.podIP)));
    for (const p of pods) {
      const ports = resolvePorts(spec, p);
      const sig = JSON.stringify(ports);
      const subset = subsets.get(sig) ?? { addresses: [], notReadyAddresses: [], ports };
      subsets.set(sig, subset);
      const addr: EndpointAddress = {
        ip: p.status!.podIP!,
        // A pod whose subdomain is this Service is known by its hostname (<hostname>.<service>.<ns>.svc).
        ...(p.spec?.hostname && p.spec.subdomain === name ? { hostname: p.spec.hostname } : {}),
        ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
        targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name!, uid: p.metadata.uid! },
      };
      if (isPodReady(p) || spec.publishNotReadyAddresses) subset.addresses.push(addr);
      else subset.notReadyAddresses.push(addr);
    }
    const out = [...subsets.values()].map((s) => ({
      ...(s.addresses.length ? { addresses: s.addresses } : {}),
      ...(s.notReadyAddresses.length ? { notReadyAddresses: s.notReadyAddresses } : {}),
      ports: s.ports,
    }));
    const current = this.endpoints.store.get(key);
    const labels = { ...(svc.metadata.labels ?? {}) };
    if (current && jsonEqual(current.subsets ?? [], out) && jsonEqual(current.metadata.labels ?? {}, labels)) return;
    const body = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name, namespace: ns, labels, ...(current ? { resourceVersion: current.metadata.resourceVersion } : {}) },
      subsets: out,
    };
    try {
      if (current) await this.ctx.client.put(`${path}/${name}`, body);
      else await this.ctx.client.post(path, body);
    } catch (e) {
      if (isConflict(e) || isAlreadyExists(e)) {
        this.queue.addAfter(key, 100);
        return;
      }
      throw e;
    }
  }
}
