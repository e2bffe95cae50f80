/**
 * What the volume plugins read: the storage kinds as scheduling sees them,
 * the listers and API access the framework hands to plugins (upstream's
 * framework.Handle: SharedInformerFactory listers and ClientSet), and the
 * helpers of k8s.io/component-helpers/storage/volume and ephemeral that the
 * plugins share (claim classes, PV node affinity, topology terms, the claim
 * names of a pod's volumes).
 */
import type { KubeObject } from '@kubeling/api';
import { parseQuantity, selectorFromLabelSelector, type LabelSelectorObject } from '@kubeling/apimachinery';
import { anyTermMatches, type NodeSelectorTerm } from '@kubeling/component-helpers';
import type { Node, Pod } from './types.js';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export type PersistentVolumeClaim = KubeObject & {
  spec?: {
    accessModes?: string[];
    selector?: LabelSelectorObject;
    resources?: { requests?: Record<string, string | number> };
    volumeName?: string;
    storageClassName?: string | null;
    volumeMode?: string;
  };
  status?: { phase?: string };
};

export type PersistentVolume = KubeObject & {
  spec?: {
    capacity?: Record<string, string | number>;
    accessModes?: string[];
    claimRef?: ObjectReference | null;
    storageClassName?: string;
    volumeMode?: string;
    nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
    csi?: { driver: string; volumeHandle: string };
  };
  status?: { phase?: string };
};

export interface TopologySelectorTerm {
  matchLabelExpressions?: { key: string; values?: string[] }[];
}

export type StorageClass = KubeObject & {
  provisioner?: string;
  volumeBindingMode?: string;
  allowedTopologies?: TopologySelectorTerm[];
};

export type CSINode = KubeObject & {
  spec?: { drivers?: { name: string; nodeID?: string; topologyKeys?: string[]; allocatable?: { count?: number } }[] };
};

export type CSIDriver = KubeObject & { spec?: { storageCapacity?: boolean } };

export type CSIStorageCapacity = KubeObject & {
  storageClassName?: string;
  nodeTopology?: LabelSelectorObject | null;
  capacity?: string | number;
  maximumVolumeSize?: string | number;
};

/** A read-only view of an informer's store; keys are `namespace/name` or `name`. */
export interface Lister<T> {
  get(key: string): T | undefined;
  list(): T[];
}

/** The storage resources a plugin can ask the framework to watch. */
export type StorageResource = 'persistentvolumeclaims' | 'persistentvolumes' | 'storageclasses' | 'csinodes' | 'csidrivers' | 'csistoragecapacities';

/** The API calls PreBind makes (a narrow part of RestClient, so tests pass functions). */
export interface ApiWriter {
  put<T = unknown>(path: string, body: unknown): Promise<T>;
}

/** What the framework gives plugins (upstream's framework.Handle, the parts used here). */
export interface Handle {
  readonly pvcs: Lister<PersistentVolumeClaim>;
  readonly pvs: Lister<PersistentVolume>;
  readonly storageClasses: Lister<StorageClass>;
  readonly csiNodes: Lister<CSINode>;
  readonly csiDrivers: Lister<CSIDriver>;
  readonly capacities: Lister<CSIStorageCapacity>;
  /** The pod as the informer has it; undefined once it is deleted. */
  pod(key: string): Pod | undefined;
  node(name: string): Node | undefined;
  readonly api: ApiWriter;
  /** Calls `fn` after every claim or volume event until the returned function is called. */
  onVolumeEvent(fn: () => void): () => void;
}

/** A plugin that reads listers: the framework watches what it `needs` and hands it the handle before scheduling starts. */
export interface HandlePlugin {
  readonly name: string;
  readonly needs: readonly StorageResource[];
  setHandle(h: Handle): void;
}

export const isHandlePlugin = (p: object): p is HandlePlugin => typeof (p as HandlePlugin).setHandle === 'function';

// ---- helpers (component-helpers/storage/volume, ephemeral) ------------------------

/** GetPersistentVolumeClaimClass: the beta annotation, then spec.storageClassName, else "". */
export function claimClass(pvc: PersistentVolumeClaim): string {
  const ann = pvc.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return pvc.spec?.storageClassName ?? '';
}

/** GetPersistentVolumeClass: the beta annotation, then spec.storageClassName. */
export function volumeClass(pv: PersistentVolume): string {
  const ann = pv.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (ann !== undefined) return ann;
  return pv.spec?.storageClassName ?? '';
}

/** A storage quantity in bytes; an absent or malformed one is 0. */
export function storageBytes(q: string | number | undefined): number {
  if (q === undefined) return 0;
  try {
    return parseQuantity(q);
  } catch {
    return 0;
  }
}

export const claimRequest = (pvc: PersistentVolumeClaim): number => storageBytes(pvc.spec?.resources?.requests?.storage);

/** isPVCFullyBound: a volume name and the bind-completed annotation. */
export const claimFullyBound = (pvc: PersistentVolumeClaim): boolean =>
  !!pvc.spec?.volumeName && !!pvc.metadata.annotations && Object.hasOwn(pvc.metadata.annotations, ANN_BIND_COMPLETED);

/** CheckNodeAffinity: a PV's required node affinity against the node's labels (no terms: any node). */
export function volumeNodeAffinityMatches(pv: PersistentVolume, nodeLabels: Record<string, string> | undefined): boolean {
  const req = pv.spec?.nodeAffinity?.required;
  if (!pv.spec?.nodeAffinity || !req) return true;
  return anyTermMatches(req.nodeSelectorTerms ?? [], { metadata: { labels: nodeLabels ?? {} } });
}

/** MatchTopologySelectorTerms: no terms match everything; an empty term matches nothing. */
export function topologyMatches(terms: readonly TopologySelectorTerm[] | undefined, labels: Record<string, string> | undefined): boolean {
  if (!terms?.length) return true;
  const l = labels ?? {};
  return terms.some((t) => {
    const exprs = t.matchLabelExpressions ?? [];
    return exprs.length > 0 && exprs.every((e) => Object.hasOwn(l, e.key) && (e.values ?? []).includes(l[e.key]!));
  });
}

/** Whether a CSIStorageCapacity's nodeTopology selects the node (a missing topology: nowhere). */
export function capacityReachable(c: CSIStorageCapacity, labels: Record<string, string> | undefined): boolean {
  if (!c.nodeTopology) return false;
  try {
    return selectorFromLabelSelector(c.nodeTopology).matches(labels ?? {});
  } catch {
    return false;
  }
}

/** A claim a pod's volume refers to: a persistentVolumeClaim, or a generic ephemeral volume's `<pod>-<volume>`. */
export interface PodClaim {
  volume: string;
  claim: string;
  ephemeral: boolean;
}

interface VolumeLike {
  name: string;
  persistentVolumeClaim?: { claimName: string };
  ephemeral?: unknown;
}

export function podClaims(pod: Pod): PodClaim[] {
  const out: PodClaim[] = [];
  for (const v of (pod.spec?.volumes ?? []) as VolumeLike[]) {
    if (v.persistentVolumeClaim) out.push({ volume: v.name, claim: v.persistentVolumeClaim.claimName, ephemeral: false });
    else if (v.ephemeral) out.push({ volume: v.name, claim: `${pod.metadata.name}-${v.name}`, ephemeral: true });
  }
  return out;
}

/** ephemeral.VolumeIsForPod: the claim of a generic ephemeral volume must be controlled by the pod. */
export function ephemeralOwnerError(pod: Pod, pvc: PersistentVolumeClaim): string | undefined {
  const owner = (pvc.metadata.ownerReferences ?? []).find((r) => r.controller);
  if (owner && owner.uid === pod.metadata.uid) return undefined;
  return `PVC ${pvc.metadata.namespace}/${pvc.metadata.name} was not created for pod ${pod.metadata.namespace}/${pod.metadata.name} (pod is not owner)`;
}

/** The NotFound message of a claim, as the lister's error reads. */
export const claimNotFound = (name: string): string => `persistentvolumeclaim "${name}" not found`;
