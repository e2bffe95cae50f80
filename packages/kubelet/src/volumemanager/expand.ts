/**
 * Online expansion of a mounted CSI volume (kubernetes
 * pkg/volume/util/operationexecutor node_expander.go, operation_generator
 * GenerateExpandInUseVolumeFunc, pkg/volume/csi/expander.go NodeExpand,
 * pkg/volume/util/resize_util.go): when the claim waits on the node
 * (condition FileSystemResizePending, or allocatedResourceStatuses storage
 * NodeResizePending / NodeResizeInProgress) and its PV is larger than the
 * claim's status capacity, the node marks the expansion in progress (when the
 * resizer tracks it), calls NodeExpandVolume on the published path, records
 * FileSystemResizeSuccessful on the pod and the claim, and marks the resize
 * finished: status capacity = the PV's, the resize conditions and the
 * allocatedResourceStatuses entry gone. A failure is a VolumeResizeFailed
 * event on the pod. The kubelet writes only these status fields, with the
 * resourceVersion it read.
 */
import { parseQuantity } from '@kubeling/apimachinery';
import { CSI_TIMEOUT_MS, rpcErrorText, type DriverRegistry } from '../csi/drivers.js';
import type { Pod } from '../kinds.js';
import { volumeCapability } from './csi-volume.js';
import type { ClaimCondition, PersistentVolume, PersistentVolumeClaim } from './types.js';

const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending']);

export interface ExpandApi {
  patchClaimStatus(namespace: string, name: string, patch: object): Promise<PersistentVolumeClaim>;
  secret(namespace: string, name: string): Promise<Record<string, string>>;
  event(obj: Pod | PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Whether the claim waits on the node to grow its filesystem to the PV's size (volumeRequiresFSResize and the resize status). */
export function needsNodeExpansion(claim: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  const st = claim.status ?? {};
  const pending =
    (st.conditions ?? []).some((c) => c.type === 'FileSystemResizePending' && c.status === 'True') ||
    ['NodeResizePending', 'NodeResizeInProgress'].includes(st.allocatedResourceStatuses?.storage ?? '');
  if (!pending) return false;
  const want = pv.spec.capacity?.storage;
  if (!want) return false;
  return parseQuantity(want) > parseQuantity(st.capacity?.storage ?? '0');
}

/** The claim status patch of MarkNodeExpansionInProgress, MarkFSResizeFinished (with the read resourceVersion). */
export function inProgressPatch(claim: PersistentVolumeClaim): object {
  return {
    metadata: { resourceVersion: claim.metadata.resourceVersion },
    status: { allocatedResourceStatuses: { ...claim.status?.allocatedResourceStatuses, storage: 'NodeResizeInProgress' } },
  };
}

export function finishedPatch(claim: PersistentVolumeClaim, size: string): object {
  const conditions: ClaimCondition[] = (claim.status?.conditions ?? []).filter((c) => !RESIZE_CONDITIONS.has(c.type));
  const statuses = { ...claim.status?.allocatedResourceStatuses };
  delete statuses.storage;
  return {
    metadata: { resourceVersion: claim.metadata.resourceVersion },
    status: {
      capacity: { ...claim.status?.capacity, storage: size },
      conditions: conditions.length ? conditions : null,
      allocatedResourceStatuses: Object.keys(statuses).length ? statuses : null,
    },
  };
}

export interface ExpandTarget {
  pod: Pod;
  claim: PersistentVolumeClaim;
  pv: PersistentVolume;
  targetPath: string;
  stagingPath: string;
  nodeName: string;
}

/** Grows the volume on the node and finishes the resize on the claim; returns whether it did. */
export async function expandOnNode(drivers: DriverRegistry, api: ExpandApi, t: ExpandTarget): Promise<boolean> {
  const { pod, pv } = t;
  let claim = t.claim;
  if (!needsNodeExpansion(claim, pv)) return false;
  const src = pv.spec.csi!;
  const size = pv.spec.capacity!.storage!;
  const failed = (detail: string) =>
    api.event(pod, 'Warning', 'VolumeResizeFailed', `NodeExpandVolume.NodeExpandVolume failed for volume "${pv.metadata.name}" : ${detail}`);
  const ns = claim.metadata.namespace!;
  if (claim.status?.allocatedResourceStatuses?.storage) claim = await api.patchClaimStatus(ns, claim.metadata.name, inProgressPatch(claim));
  try {
    const caps = await drivers.nodeCapabilities(src.driver);
    if (!caps.has('EXPAND_VOLUME')) {
      failed(`Expander.NodeExpand failed to expand the volume : NodeExpand is not supported by the CSI driver ${pv.metadata.name}`);
      return false;
    }
    const ref = src.nodeExpandSecretRef;
    const secrets = ref ? await api.secret(ref.namespace ?? '', ref.name) : {};
    await drivers.client(src.driver).call(
      'Node',
      'NodeExpandVolume',
      {
        volume_id: src.volumeHandle,
        volume_path: t.targetPath,
        capacity_range: { required_bytes: String(parseQuantity(size)), limit_bytes: '0' },
        staging_target_path: t.stagingPath,
        volume_capability: volumeCapability(pv, caps),
        secrets,
      },
      { timeoutMs: CSI_TIMEOUT_MS },
    );
  } catch (e) {
    failed(`Expander.NodeExpand failed to expand the volume : ${rpcErrorText(e)}`);
    return false;
  }
  const msg = `MountVolume.NodeExpandVolume succeeded for volume "${pv.metadata.name}" ${t.nodeName}`;
  api.event(pod, 'Normal', 'FileSystemResizeSuccessful', msg);
  api.event(claim, 'Normal', 'FileSystemResizeSuccessful', msg);
  await api.patchClaimStatus(ns, claim.metadata.name, finishedPatch(claim, size));
  return true;
}
