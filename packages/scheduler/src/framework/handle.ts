/**
 * The framework handle backed by informers (upstream's SharedInformerFactory
 * listers): an informer for each storage kind a profile's plugins need — none
 * when no plugin needs it — and their events turned into queue moves, as
 * upstream's EventsToRegister: claim and volume adds and updates, class adds and
 * allowedTopologies updates, CSINode adds and updates, CSIDriver updates,
 * CSIStorageCapacity adds and updates.
 */
import type { KubeObject } from '@kubeling/api';
import { jsonEqual } from '@kubeling/apimachinery';
import type { Informer, InformerFactory } from '@kubeling/client';
import type { ClusterEvent } from '../queue.js';
import type { ApiWriter, Handle, Lister, StorageClass, StorageResource } from './storage.js';
import type { Node, Pod } from './types.js';

const PATHS: Record<StorageResource, string> = {
  persistentvolumeclaims: '/api/v1/persistentvolumeclaims',
  persistentvolumes: '/api/v1/persistentvolumes',
  storageclasses: '/apis/storage.k8s.io/v1/storageclasses',
  csinodes: '/apis/storage.k8s.io/v1/csinodes',
  csidrivers: '/apis/storage.k8s.io/v1/csidrivers',
  csistoragecapacities: '/apis/storage.k8s.io/v1/csistoragecapacities',
};

interface Events {
  add?: ClusterEvent;
  update?: ClusterEvent;
  /** Whether an update can matter (default: any update). */
  changed?(a: KubeObject, b: KubeObject): boolean;
}

const EVENTS: Record<StorageResource, Events> = {
  persistentvolumeclaims: { add: 'PvcAdd', update: 'PvcUpdate' },
  persistentvolumes: { add: 'PvAdd', update: 'PvUpdate' },
  storageclasses: {
    add: 'StorageClassAdd',
    update: 'StorageClassUpdate',
    changed: (a, b) => !jsonEqual((a as StorageClass).allowedTopologies, (b as StorageClass).allowedTopologies),
  },
  csinodes: { add: 'CSINodeAdd', update: 'CSINodeUpdate' },
  csidrivers: { update: 'CSIDriverUpdate' },
  csistoragecapacities: { add: 'CSIStorageCapacityAdd', update: 'CSIStorageCapacityUpdate' },
};

export interface InformerHandleOptions {
  informers: InformerFactory;
  api: ApiWriter;
  pod(key: string): Pod | undefined;
  node(name: string): Node | undefined;
  /** Moves parked pods an event may help. */
  move(event: ClusterEvent): void;
}

const EMPTY: Lister<never> = { get: () => undefined, list: () => [] };

const listerOf = <T>(inf: Informer | undefined): Lister<T> =>
  inf ? { get: (k) => inf.store.get(k) as T | undefined, list: () => inf.store.list() as T[] } : (EMPTY as Lister<T>);

/** Registers the informers `needs` names (call before the factory starts) and returns the handle over them. */
export function informerHandle(needs: Iterable<StorageResource>, o: InformerHandleOptions): Handle {
  const informers = new Map<StorageResource, Informer>();
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };
  for (const r of new Set(needs)) {
    const inf = o.informers.informer({ path: PATHS[r] });
    informers.set(r, inf);
    const ev = EVENTS[r];
    const volumeKind = r === 'persistentvolumeclaims' || r === 'persistentvolumes';
    inf.addEventHandler({
      add: () => {
        if (ev.add) o.move(ev.add);
        if (volumeKind) notify();
      },
      update: (a, b) => {
        if (ev.update && (!ev.changed || ev.changed(a, b))) o.move(ev.update);
        if (volumeKind) notify();
      },
      delete: () => {
        if (volumeKind) notify();
      },
    });
  }
  return {
    pvcs: listerOf(informers.get('persistentvolumeclaims')),
    pvs: listerOf(informers.get('persistentvolumes')),
    storageClasses: listerOf(informers.get('storageclasses')),
    csiNodes: listerOf(informers.get('csinodes')),
    csiDrivers: listerOf(informers.get('csidrivers')),
    capacities: listerOf(informers.get('csistoragecapacities')),
    pod: o.pod,
    node: o.node,
    api: o.api,
    onVolumeEvent(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
