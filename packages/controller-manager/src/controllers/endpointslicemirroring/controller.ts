/**
 * EndpointSlice mirroring controller (pkg/controller/endpointslicemirroring):
 * keeps EndpointSlices mirroring the Endpoints of Services without a selector
 * (`mirror.ts` decides what), owned by the Endpoints object so they go with it.
 * Slices of Endpoints no longer mirrored are deleted.
 */
import { isConflict, isNotFound, jsonEqual } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import type { EndpointSlice, Endpoints, Service } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { desiredSlices, MIRROR_MANAGED_BY, shouldMirror, type DesiredSlice } from './mirror.js';

const slicesKey = (s: EndpointSlice) => {
  const l = s.metadata.labels ?? {};
  return l['endpointslice.kubernetes.io/managed-by'] === MIRROR_MANAGED_BY && l['kubernetes.io/service-name']
    ? `${s.metadata.namespace}/${l['kubernetes.io/service-name']}`
    : undefined;
};

export class EndpointSliceMirroringController extends QueueController {
  readonly name = 'endpointslicemirroring';
  private endpoints!: Informer<Endpoints>;
  private services!: Informer<Service>;
  private slices!: Informer<EndpointSlice>;

  init(): void {
    this.endpoints = this.ctx.informers.informer<Endpoints>({ path: '/api/v1/endpoints' });
    this.services = this.ctx.informers.informer<Service>({ path: '/api/v1/services' });
    this.slices = this.ctx.informers.informer<EndpointSlice>({ path: '/apis/discovery.k8s.io/v1/endpointslices' });
    enqueueOn(this.endpoints, this.queue);
    enqueueOn(this.services, this.queue);
    enqueueOn(this.slices, this.queue, { on: ['update', 'delete'], keys: slicesKey });
  }

  async reconcile(key: string): Promise<void> {
    const ns = key.split('/')[0] ?? '';
    const ep = this.endpoints.store.get(key);
    const svc = this.services.store.get(key);
    const have = this.slices.store.byIndex('namespace', ns).filter((s) => slicesKey(s) === key);
    const want = shouldMirror(ep, svc) ? desiredSlices(ep!) : [];
    const base = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    // Pair wanted slices with existing ones of the same family, in order; create the rest, delete the leftovers.
    const spare = [...have].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
    for (const d of want) {
      const i = spare.findIndex((s) => s.addressType === d.addressType);
      const cur = i >= 0 ? spare.splice(i, 1)[0] : undefined;
      const body = this.sliceOf(d, ep!, cur);
      if (cur && jsonEqual(body, { ...cur, metadata: body.metadata })) continue;
      try {
        if (cur) await this.ctx.client.put(`${base}/${cur.metadata.name}`, body);
        else await this.ctx.client.post(base, body);
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.queue.add(key);
      }
    }
    for (const s of spare) {
      try {
        await this.ctx.client.delete(`${base}/${s.metadata.name}`, { preconditions: { uid: s.metadata.uid } });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }

  private sliceOf(d: DesiredSlice, ep: Endpoints, cur: EndpointSlice | undefined): EndpointSlice {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        ...(cur ? { name: cur.metadata.name, resourceVersion: cur.metadata.resourceVersion, uid: cur.metadata.uid } : { generateName: `${ep.metadata.name}-` }),
        namespace: ep.metadata.namespace,
        labels: d.labels,
        ...(Object.keys(d.annotations).length ? { annotations: d.annotations } : {}),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: ep.metadata.name!, uid: ep.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      addressType: d.addressType,
      endpoints: d.endpoints,
      ports: d.ports,
    } as EndpointSlice;
  }
}
