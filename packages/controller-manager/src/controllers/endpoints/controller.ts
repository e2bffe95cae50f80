/**
 * Endpoints controller: for every Service with a selector, an Endpoints object of
 * the same name listing the IPs of the matching pods — ready ones under
 * `addresses`, the others under `notReadyAddresses` — with the Service's ports
 * resolved against each pod (named target ports looked up in its containers).
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isConflict, isNotFound, jsonEqual, selectorFromSet } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { isPodReady } from '@kubeling/component-helpers';

type Obj = Record<string, any>;

/** The Service's ports as one pod serves them: named target ports looked up in its containers; ports it lacks are left out. */
export function resolvePorts(spec: Obj, pod: KubeObject): Obj[] {
  const ports: Obj[] = [];
  for (const sp of (spec.ports ?? []) as Obj[]) {
    let port: number | undefined;
    if (typeof sp.targetPort === 'number') port = sp.targetPort;
    else if (typeof sp.targetPort === 'string') {
      for (const c of ((pod.spec as Obj).containers ?? []) as Obj[]) for (const cp of (c.ports ?? []) as Obj[]) if (cp.name === sp.targetPort && (cp.protocol ?? 'TCP') === (sp.protocol ?? 'TCP')) port = cp.containerPort;
    } else port = sp.port;
    if (port === undefined) continue;
    ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP' });
  }
  return ports;
}

/** The Services whose selector picks a pod, for queueing them on pod changes. */
export function servicesSelecting(services: Informer, pod: KubeObject): KubeObject[] {
  return services.store.byIndex('namespace', pod.metadata.namespace ?? '').filter((s) => {
    const sel = (s.spec as Obj | undefined)?.selector;
    return sel && Object.keys(sel).length && selectorFromSet(sel).matches(pod.metadata.labels);
  });
}

export class EndpointsController extends QueueController {
  readonly name = 'endpoints';
  private services!: Informer;
  private pods!: Informer;
  private endpoints!: Informer;

  init(): void {
    this.services = this.ctx.informers.informer({ path: '/api/v1/services' });
    this.pods = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.endpoints = this.ctx.informers.informer({ path: '/api/v1/endpoints' });
    this.services.addEventHandler({ add: (s) => this.queue.add(keyOf(s)), update: (_o, s) => this.queue.add(keyOf(s)), delete: (s) => this.queue.add(keyOf(s)) });
    const podChanged = (...pods: KubeObject[]) => {
      for (const p of pods) for (const s of servicesSelecting(this.services, p)) this.queue.add(keyOf(s));
    };
    this.pods.addEventHandler({ add: (p) => podChanged(p), update: (o, p) => podChanged(o, p), delete: (p) => podChanged(p) });
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
    const spec = (svc.spec ?? {}) as Obj;
    if (!spec.selector || !Object.keys(spec.selector).length) return;
    const sel = selectorFromSet(spec.selector);
    const subsets = new Map<string, { addresses: Obj[]; notReadyAddresses: Obj[]; ports: Obj[] }>();
    const pods = this.pods.store
      .byIndex('namespace', ns)
      .filter((p) => sel.matches(p.metadata.labels) && !p.metadata.deletionTimestamp && (p.status as Obj | undefined)?.podIP)
      .sort((a, b) => String((a.status as Obj).podIP).localeCompare(String((b.status as Obj).podIP)));
    for (const p of pods) {
      const ports = resolvePorts(spec, p);
      const sig = JSON.stringify(ports);
      const subset = subsets.get(sig) ?? { addresses: [], notReadyAddresses: [], ports };
      subsets.set(sig, subset);
      const addr = {
        ip: (p.status as Obj).podIP,
        ...((p.spec as Obj).nodeName ? { nodeName: (p.spec as Obj).nodeName } : {}),
        targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name, uid: p.metadata.uid },
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
    const body = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns, labels, ...(current ? { resourceVersion: current.metadata.resourceVersion } : {}) }, subsets: out };
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
