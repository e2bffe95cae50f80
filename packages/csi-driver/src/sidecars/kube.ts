/**
 * The sidecars' API writes over a RestClient: the paths, verbs and patch type
 * (JSON merge patch, as the kubernetes-csi sidecars send) behind `KubeApi`.
 */
import type { RestClient } from '@kubeling/client';
import type { KubeApi } from './deps.js';
import type { CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, VolumeAttachment } from './types.js';

const MERGE = 'application/merge-patch+json';
const PVS = '/api/v1/persistentvolumes';
const VAS = '/apis/storage.k8s.io/v1/volumeattachments';
const capacities = (ns: string) => `/apis/storage.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/csistoragecapacities`;
const seg = encodeURIComponent;

export function kubeApi(client: RestClient): KubeApi {
  return {
    createPV: (pv) => client.post<PersistentVolume>(PVS, pv),
    deletePV: async (name) => {
      const res = await client.delete<PersistentVolume & { kind?: string }>(`${PVS}/${seg(name)}`);
      // A Status answer means the object is gone; the object itself means finalizers keep it.
      return res?.kind === 'PersistentVolume' ? res : undefined;
    },
    patchPV: (name, patch) => client.patch<PersistentVolume>(`${PVS}/${seg(name)}`, patch, MERGE),
    updateClaim: (claim) =>
      client.put<PersistentVolumeClaim>(`/api/v1/namespaces/${seg(claim.metadata.namespace!)}/persistentvolumeclaims/${seg(claim.metadata.name!)}`, claim),
    patchClaimStatus: (ns, name, patch) =>
      client.patch<PersistentVolumeClaim>(`/api/v1/namespaces/${seg(ns)}/persistentvolumeclaims/${seg(name)}/status`, patch, MERGE),
    patchVA: (name, patch) => client.patch<VolumeAttachment>(`${VAS}/${seg(name)}`, patch, MERGE),
    patchVAStatus: (name, patch) => client.patch<VolumeAttachment>(`${VAS}/${seg(name)}/status`, patch, MERGE),
    createCapacity: (ns, obj) => client.post<CSIStorageCapacity>(capacities(ns), obj),
    updateCapacity: (obj) => client.put<CSIStorageCapacity>(`${capacities(obj.metadata.namespace!)}/${seg(obj.metadata.name!)}`, obj),
    deleteCapacity: async (ns, name) => {
      await client.delete(`${capacities(ns)}/${seg(name)}`);
    },
  };
}
