/**
 * What the sidecars depend on, as plain functions and read-only listers, so
 * that their decisions are tested with recording fakes and run against the
 * real apiserver and driver socket in the process (kube.ts builds the real
 * ones from a RestClient, plugin.ts from informers and the CsiClient).
 */
import type { KubeObject } from '@kubeling/api';
import type { CSIStorageCapacity, PersistentVolume, PersistentVolumeClaim, VolumeAttachment } from './types.js';
import type { Segments } from './util.js';

export type CsiService = 'Identity' | 'Controller' | 'Node';

/** One CSI RPC on the driver socket; rejects with the gRPC error (a `code` and `details`). */
export type CsiCall = <T = any>(service: CsiService, method: string, req: object) => Promise<T>;

/** An event on an object (client-go EventRecorder.Event); never throws. */
export type Recorder = (obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string) => void;

/** An informer store's read side: objects are shared, never edited in place. */
export interface Lister<T> {
  get(key: string): T | undefined;
  list(): T[];
}

/** The API writes the sidecars make. Patches are JSON merge patches. */
export interface KubeApi {
  createPV(pv: PersistentVolume): Promise<PersistentVolume>;
  /** Resolves with the object as the DELETE answered it (still there with a deletionTimestamp while finalizers remain), or undefined once gone. */
  deletePV(name: string): Promise<PersistentVolume | undefined>;
  patchPV(name: string, patch: object): Promise<PersistentVolume>;
  /** PUT of the whole claim (optimistic concurrency on its resourceVersion). */
  updateClaim(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  patchClaimStatus(namespace: string, name: string, patch: object): Promise<PersistentVolumeClaim>;
  patchVA(name: string, patch: object): Promise<VolumeAttachment>;
  patchVAStatus(name: string, patch: object): Promise<VolumeAttachment>;
  createCapacity(namespace: string, obj: CSIStorageCapacity): Promise<CSIStorageCapacity>;
  updateCapacity(obj: CSIStorageCapacity): Promise<CSIStorageCapacity>;
  deleteCapacity(namespace: string, name: string): Promise<void>;
}

/** What the process learnt from the driver at start (GetPluginInfo, capabilities, NodeGetInfo). */
export interface DriverInfo {
  /** The driver's name, e.g. `hostpath.csi.kubeling.io`. */
  name: string;
  /** The Kubernetes node this process runs for. */
  nodeName: string;
  /** NodeGetInfo `node_id`. */
  nodeId: string;
  /** NodeGetInfo `accessible_topology.segments` (undefined when the driver reports none). */
  topology: Segments | undefined;
  /** GetPluginCapabilities service types (`CONTROLLER_SERVICE`, `VOLUME_ACCESSIBILITY_CONSTRAINTS`). */
  plugin: ReadonlySet<string>;
  /** ControllerGetCapabilities rpc types (`CREATE_DELETE_VOLUME`, `PUBLISH_UNPUBLISH_VOLUME`, `EXPAND_VOLUME`, …). */
  controller: ReadonlySet<string>;
}
