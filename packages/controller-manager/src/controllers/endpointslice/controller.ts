/**
 * EndpointSlice controller: for every Service with a selector, EndpointSlices
 * (labelled `kubernetes.io/service-name` and managed-by this controller, owned
 * by the Service, named `<service>-<random>`) holding the matching pods, one
 * slice per set of resolved ports and at most 100 endpoints a slice (upstream's
 * --max-endpoints-per-slice default). Each endpoint carries ready, serving and
 * terminating conditions, its node and its pod. A Service with no pods keeps
 * one empty slice, as upstream's placeholder. Slices go with their Service
 * through the garbage collector.
 */
import type { discoveryv1 } from '@kubeling/api';
import { isConflict, isNotFound, jsonEqual, selectorFromSet } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { isPodReady } from '@kubeling/component-helpers';
import { resolvePorts, servicesSelecting } from '../endpoints/controller.js';
import { enqueueOn } from '../handlers.js';
import type { EndpointPort, EndpointSlice, Pod, Service, ServiceSpec } from '../kinds.js';
import { QueueController } from '../queue-controller.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const MAX_ENDPOINTS_PER_SLICE = 100;

interface Desired {
  ports: EndpointPort[];
  endpoints: discoveryv1.Endpoint[];
}

export class EndpointSliceController extends QueueController {
  readonly name = 'endpointslice';
  private services!: Informer<Service>;
  private pods!: Informer<Pod>;
  private slices!: Informer<EndpointSlice>;
  /**
   * What this controller wrote and its informer has not seen yet, per Service:
   * slice name → the resourceVersion written, or null for a deletion. A Service
   * waits for them, so a slow watch does not make it create slices twice.
   */
  private readonly expected = new Map<string, { since: number; slices: Map<string, string | null> }>();

  init(): void {
    this.services = this.ctx.informers.informer<Service>({ path: '/api/v1/services' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.slices = this.ctx.informers.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices' });
    enqueueOn(this.services, this.queue);
    // A relabelled pod concerns the Services that selected it and those that select it now.
    enqueueOn(this.pods, this.queue, { keys: (p) => servicesSelecting(this.services, p).map(keyOf), updateOld: true });
    // A slice changed or removed by someone else is put back.
    enqueueOn(this.slices, this.queue, {
      on: ['update', 'delete'],
      keys: (s) => {
        const labels = s.metadata.labels ?? {};
        return labels[MANAGED_BY_LABEL] === CONTROLLER_NAME && labels[SERVICE_NAME_LABEL] ? `${s.metadata.namespace}/${labels[SERVICE_NAME_LABEL]}` : undefined;
      },
    });
  }

  /** The slices this controller keeps for a Service, oldest name first. */
  private owned(ns: string, name: string): EndpointSlice[] {
    return this.slices.store
      .byIndex('namespace', ns)
      .filter(
        (s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME && !s.metadata.deletionTimestamp,
      )
      .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
  }

  /** Whether the informer has seen this controller's last writes for the Service (given up on after 10 s). */
  private caughtUp(key: string, ns: string): boolean {
    const e = this.expected.get(key);
    if (!e) return true;
    const done = [...e.slices].every(([n, rv]) => {
      const s = this.slices.store.get(`${ns}/${n}`);
      return rv === null ? !s : !!s && Number(s.metadata.resourceVersion) >= Number(rv);
    });
    if (done || Date.now() - e.since > 10_000) {
      this.expected.delete(key);
      return true;
    }
    return false;
  }

  private desired(svc: Service): Desired[] {
    const ns = svc.metadata.namespace!;
    const spec: ServiceSpec = svc.spec ?? {};
    const sel = selectorFromSet(spec.selector);
    const groups = new Map<string, Desired>();
    const pods = this.pods.store
      .byIndex('namespace', ns)
      .filter((p) => sel.matches(p.metadata.labels) && p.status?.podIP && !['Succeeded', 'Failed'].includes(p.status.phase ?? ''))
      .sort((a, b) => String(a.status?.podIP).localeCompare(String(b.status?.podIP)));
    for (const p of pods) {
      // Every port carries a name ("" when the Service's has none), as upstream's controller writes them.
      const ports = resolvePorts(spec, p).map((x) => ({ name: x.name ?? '', protocol: x.protocol, port: x.port }));
      const sig = JSON.stringify(ports);
      const g: Desired = groups.get(sig) ?? { ports, endpoints: [] };
      groups.set(sig, g);
      const terminating = !!p.metadata.deletionTimestamp;
      const serving = isPodReady(p);
      g.endpoints.push({
        addresses: [p.status!.podIP!],
        conditions: { ready: (serving && !terminating) || !!spec.publishNotReadyAddresses, serving, terminating },
        // A pod whose subdomain is this Service is known by its hostname (ShouldSetHostname).
        ...(p.spec?.hostname && p.spec.subdomain === svc.metadata.name ? { hostname: p.spec.hostname } : {}),
        ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
        targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name!, uid: p.metadata.uid! },
      });
    }
    const out: Desired[] = [];
    for (const g of groups.values()) {
      for (let i = 0; i < g.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE)
        out.push({ ports: g.ports, endpoints: g.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE) });
    }
    // The placeholder: a Service without endpoints still has one (empty) slice.
    if (!out.length) out.push({ ports: [], endpoints: [] });
    return out;
  }

  async reconcile(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    const svc = this.services.store.get(key);
    const spec: ServiceSpec = svc?.spec ?? {};
    // Without a selector the slices are someone else's (or, for a deleted Service, the garbage collector's).
    if (!svc) this.expected.delete(key);
    if (!svc || svc.metadata.deletionTimestamp || !spec.selector || !Object.keys(spec.selector).length) return;
    if (!this.caughtUp(key, ns)) {
      this.queue.addAfter(key, 100);
      return;
    }
    const seen = new Map<string, string | null>();
    this.expected.set(key, { since: Date.now(), slices: seen });
    const want = this.desired(svc);
    const have = this.owned(ns, name);
    const labels = { ...(svc.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: CONTROLLER_NAME };
    const owner = { apiVersion: 'v1', kind: 'Service', name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true };
    try {
      for (const [i, d] of want.entries()) {
        const cur = have[i];
        const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4', endpoints: d.endpoints, ports: d.ports };
        if (!cur) {
          const made = await this.ctx.client.post<EndpointSlice>(path, {
            ...body,
            metadata: { generateName: `${name}-`, namespace: ns, labels, ownerReferences: [owner] },
          });
          seen.set(made.metadata.name!, made.metadata.resourceVersion!);
          continue;
        }
        if (
          jsonEqual(cur.endpoints ?? [], d.endpoints) &&
          jsonEqual(cur.ports ?? [], d.ports) &&
          jsonEqual(cur.metadata.labels ?? {}, labels) &&
          cur.addressType === 'IPv4'
        )
          continue;
        const put = await this.ctx.client.put<EndpointSlice>(`${path}/${cur.metadata.name}`, {
          ...body,
          metadata: { ...cur.metadata, labels, ownerReferences: [owner] },
        });
        seen.set(put.metadata.name!, put.metadata.resourceVersion!);
      }
      for (const extra of have.slice(want.length)) {
        await this.ctx.client.delete(`${path}/${extra.metadata.name}`).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
        seen.set(extra.metadata.name!, null);
      }
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) {
        this.queue.addAfter(key, 100);
        return;
      }
      throw e;
    }
  }
}
