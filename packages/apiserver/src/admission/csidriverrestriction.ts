/**
 * CSIDriverRestriction (kubeling's own, in the spirit of NodeRestriction): what
 * a node's CSI driver — a user `system:csi-driver:<node>` — may write with the
 * cluster-wide rights its sidecars need (external-provisioner in
 * node-deployment mode, external-attacher, external-resizer and the capacity
 * publisher, as kubernetes-csi/external-provisioner's `--node-deployment`).
 * A driver may only touch its own node's storage:
 *
 * - persistentvolumes: create, update and delete only volumes whose required
 *   node affinity pins them to the node (every term has an `In` expression
 *   whose values are exactly `[<node>]`; on update and delete the stored
 *   volume must be pinned too). The volume's only source is `csi`, with no
 *   secret reference (the Node authorizer would let the node read it). A new
 *   volume is made for a claim, as the provisioner makes it: its claimRef names
 *   an existing claim (by UID) selected for the node whose provisioner is the
 *   volume's CSI driver; an update keeps the claimRef.
 * - volumeattachments (and their status): only the node's own, before and after.
 * - csistoragecapacities: only objects whose `nodeTopology` is `matchLabels`
 *   every value of which is the node (the capacity publisher's segment).
 * - persistentvolumeclaims: an update may only take `volume.kubernetes.io/selected-node`
 *   from unset to the node (becoming the owner of an Immediate claim) or from
 *   the node back to unset (rescheduling); a status update leaves everything
 *   but the status alone, on claims bound to a volume of the node.
 *
 * Refusals are 403 Forbidden, `<resource> "<name>" is forbidden: csidriverrestriction: ...`.
 * It runs as validating admission, on the objects as they will be stored.
 * Other users pass.
 */
import type { KubeObject, corev1, storagev1 } from '@kubeling/api';
import { jsonEqual } from '@kubeling/apimachinery';
import { admissionForbidden } from './attributes.js';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';

const USER_PREFIX = 'system:csi-driver:';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';

/** Every PersistentVolumeSource field of a PersistentVolumeSpec. */
const PV_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'hostPath',
  'glusterfs',
  'nfs',
  'rbd',
  'iscsi',
  'cinder',
  'cephfs',
  'fc',
  'flocker',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'local',
  'storageos',
  'csi',
] as const;

const CSI_SECRET_REFS = [
  'controllerPublishSecretRef',
  'nodeStageSecretRef',
  'nodePublishSecretRef',
  'controllerExpandSecretRef',
  'nodeExpandSecretRef',
] as const;

const PVS = '/persistentvolumes';
const PVCS = '/persistentvolumeclaims';
const ATTACHMENTS = 'storage.k8s.io/volumeattachments';
const CAPACITIES = 'storage.k8s.io/csistoragecapacities';
const HANDLED = new Set([PVS, PVCS, ATTACHMENTS, CAPACITIES]);

type PersistentVolume = corev1.PersistentVolume;
type PersistentVolumeClaim = corev1.PersistentVolumeClaim;
type VolumeAttachment = storagev1.VolumeAttachment;
type CSIStorageCapacity = storagev1.CSIStorageCapacity;

export interface CSIDriverRestrictionLookups {
  /** A claim as stored now (undefined when there is none). */
  claim(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** A PersistentVolume as stored now (undefined when there is none). */
  volume(name: string): Promise<KubeObject | undefined>;
}

/** The node whose CSI driver a user is: the rest of `system:csi-driver:<node>`. */
export function csiDriverNode(user: { name: string } | undefined): string | undefined {
  return user?.name.startsWith(USER_PREFIX) ? user.name.slice(USER_PREFIX.length) : undefined;
}

/** Whether a volume's required node affinity admits only `node`: every term has `In [<node>]` on some key. */
export function pinnedToNode(pv: KubeObject | undefined, node: string): boolean {
  const terms = (pv as PersistentVolume | undefined)?.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  return terms.length > 0 && terms.every((t) => (t.matchExpressions ?? []).some((e) => e.operator === 'In' && e.values?.length === 1 && e.values[0] === node));
}

/** Whether a CSIStorageCapacity's topology is `matchLabels` only, every value `node`. */
export function capacityPinnedToNode(c: KubeObject | undefined, node: string): boolean {
  const topology = (c as CSIStorageCapacity | undefined)?.nodeTopology;
  const labels = Object.values(topology?.matchLabels ?? {});
  return labels.length > 0 && !(topology?.matchExpressions ?? []).length && labels.every((v) => v === node);
}

/** What is wrong with a volume's source for a CSI driver to write, if anything. */
export function volumeSourceProblem(pv: KubeObject): string | undefined {
  const spec: Record<string, unknown> = (pv as PersistentVolume).spec ?? {};
  const other = PV_SOURCES.filter((s) => s !== 'csi' && spec[s] != null);
  if (other.length) return `with a csi volume source only, not ${other.join(', ')}`;
  const csi = (pv as PersistentVolume).spec?.csi;
  if (!csi) return 'with a csi volume source';
  const secrets = CSI_SECRET_REFS.filter((r) => csi[r] != null);
  if (secrets.length) return `that reference no secrets (spec.csi.${secrets.join(', spec.csi.')})`;
  return undefined;
}

const VERB = { CREATE: 'create', UPDATE: 'update', DELETE: 'delete', CONNECT: 'connect' } as const;

type Deny = (why: string) => Error;

const claimRefKey = (pv: KubeObject | undefined) => {
  const r = (pv as PersistentVolume | undefined)?.spec?.claimRef;
  return r ? { namespace: r.namespace ?? '', name: r.name ?? '', uid: r.uid ?? '' } : undefined;
};

/** The object with what the server fills in (and `also`) taken out, to compare what a writer changed. */
function stripped(o: KubeObject, also: (c: KubeObject) => void): KubeObject {
  const c = structuredClone(o);
  delete c.metadata.resourceVersion;
  delete c.metadata.managedFields;
  delete c.metadata.generation;
  also(c);
  return c;
}

export class CSIDriverRestriction implements ValidatingAdmission {
  readonly name = 'CSIDriverRestriction';
  constructor(private readonly lookups: CSIDriverRestrictionLookups) {}

  handles(a: AdmissionAttributes): boolean {
    return HANDLED.has(a.resource) && csiDriverNode(a.user) !== undefined && a.operation !== 'CONNECT';
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const node = csiDriverNode(a.user)!;
    const who = `csidriverrestriction: ${a.user!.name}`;
    const deny: Deny = (why) => admissionForbidden(a, obj, `${who} ${why}`);
    if (!node) throw deny('names no node');
    const verb = VERB[a.operation];
    // On DELETE the object is the stored one.
    const current = a.operation === 'DELETE' ? undefined : obj;
    const old = a.operation === 'DELETE' ? (a.old ?? obj) : a.old;
    switch (a.resource) {
      case PVS:
        return this.volume(current, old, a, node, verb, deny);
      case PVCS:
        if (a.operation !== 'UPDATE') throw deny(`may not ${verb} PersistentVolumeClaims`);
        return a.subresource === 'status' ? this.claimStatus(obj, a.old!, node, deny) : claimUpdate(obj, a.old!, node, deny);
      case ATTACHMENTS:
        for (const o of [old, current]) {
          if (o && (o as VolumeAttachment).spec?.nodeName !== node) throw deny(`may only ${verb} VolumeAttachments of node "${node}"`);
        }
        return;
      case CAPACITIES:
        for (const o of [old, current]) {
          if (o && !capacityPinnedToNode(o, node)) throw deny(`may only ${verb} CSIStorageCapacities for node "${node}"`);
        }
        return;
    }
  }

  private async volume(pv: KubeObject | undefined, old: KubeObject | undefined, a: AdmissionAttributes, node: string, verb: string, deny: Deny): Promise<void> {
    if (old && !pinnedToNode(old, node)) throw deny(`may only ${verb} PersistentVolumes pinned to node "${node}"`);
    if (!pv) return;
    const problem = volumeSourceProblem(pv);
    if (problem) throw deny(`may only ${verb} PersistentVolumes ${problem}`);
    if (!pinnedToNode(pv, node)) throw deny(`may only ${verb} PersistentVolumes pinned to node "${node}"`);
    if (a.operation === 'UPDATE') {
      if (!jsonEqual(claimRefKey(pv), claimRefKey(old))) throw deny('may not change the claimRef of PersistentVolumes');
      return;
    }
    await this.newVolumeClaim(pv, node, deny);
  }

  /** A new volume is for a claim selected for this node, of this volume's driver (the provisioner's Provision). */
  private async newVolumeClaim(pv: KubeObject, node: string, deny: Deny): Promise<void> {
    const ref = claimRefKey(pv);
    const driver = (pv as PersistentVolume).spec?.csi?.driver ?? '';
    const forClaim = `may only create PersistentVolumes for a claim selected for node "${node}"`;
    if (!ref?.namespace || !ref.name || !ref.uid) throw deny(`${forClaim}: spec.claimRef must name the claim and its uid`);
    const claim = await this.lookups.claim(ref.namespace, ref.name);
    const key = `${ref.namespace}/${ref.name}`;
    if (!claim || claim.metadata.uid !== ref.uid) throw deny(`${forClaim}: claim "${key}" with uid ${ref.uid} not found`);
    const annotations = claim.metadata.annotations ?? {};
    const selected = annotations[ANN_SELECTED_NODE] ?? '';
    if (selected !== node) throw deny(`${forClaim}: claim "${key}" is ${selected ? `selected for node "${selected}"` : 'not selected for a node'}`);
    const provisioner = annotations[ANN_STORAGE_PROVISIONER] ?? annotations[ANN_BETA_STORAGE_PROVISIONER] ?? '';
    if (provisioner !== driver)
      throw deny(`may only create PersistentVolumes of the provisioner of claim "${key}" ("${provisioner}"), not of driver "${driver}"`);
  }

  /** The resizer's status writes: status only, on claims bound to this node's volumes. */
  private async claimStatus(pvc: KubeObject, old: KubeObject, node: string, deny: Deny): Promise<void> {
    const dropStatus = (c: KubeObject) => {
      delete (c as PersistentVolumeClaim).status;
    };
    if (!jsonEqual(stripped(pvc, dropStatus), stripped(old, dropStatus)))
      throw deny('may only change the status of PersistentVolumeClaims through their status');
    const volumeName = (old as PersistentVolumeClaim).spec?.volumeName;
    const pv = volumeName ? await this.lookups.volume(volumeName) : undefined;
    if (!pinnedToNode(pv, node)) throw deny(`may only update the status of PersistentVolumeClaims bound to PersistentVolumes pinned to node "${node}"`);
  }
}

/** The provisioner's claim writes: only selected-node, from unset to this node or back. */
function claimUpdate(pvc: KubeObject, old: KubeObject, node: string, deny: Deny): void {
  const dropSelected = (c: KubeObject) => {
    if (c.metadata.annotations) delete c.metadata.annotations[ANN_SELECTED_NODE];
    if (c.metadata.annotations && !Object.keys(c.metadata.annotations).length) delete c.metadata.annotations;
  };
  if (!jsonEqual(stripped(pvc, dropSelected), stripped(old, dropSelected)))
    throw deny(`may only change the ${ANN_SELECTED_NODE} annotation of PersistentVolumeClaims`);
  const before = old.metadata.annotations?.[ANN_SELECTED_NODE];
  const after = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
  if (before === after) return;
  if (after !== undefined && after !== node) throw deny(`may only set ${ANN_SELECTED_NODE} to "${node}"`);
  if (before !== undefined && before !== node) throw deny(`may not change ${ANN_SELECTED_NODE} of a claim selected for node "${before}"`);
}
