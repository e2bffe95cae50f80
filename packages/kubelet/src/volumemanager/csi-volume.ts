/**
 * Setting a CSI persistent volume up for a pod and tearing it down (kubernetes
 * pkg/volume/csi csi_attacher.go WaitForAttach/MountDevice/UnmountDevice,
 * csi_mounter.go SetUpAt/TearDownAt, csi_client.go). Up: when the driver
 * needs attaching (its CSIDriver says attachRequired, or there is no CSIDriver)
 * the VolumeAttachment must report `attached` and its attachmentMetadata is the
 * publish context; NodeStageVolume to the staging path when the driver has
 * STAGE_UNSTAGE_VOLUME; NodePublishVolume to the pod's target path. Down:
 * NodeUnpublishVolume, then NodeUnstageVolume once no pod of the node
 * publishes the volume any more. Failures carry upstream's operation names and
 * texts, which the volume manager turns into FailedMount events.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CSI_TIMEOUT_MS, rpcErrorText, type CsiConn, type DriverRegistry } from '../csi/drivers.js';
import type { Pod } from '../kinds.js';
import {
  attachmentName,
  publishPath,
  stagingDir,
  stagingPath,
  type CSIDriver,
  type PersistentVolume,
  type SecretReference,
  type VolumeAttachment,
} from './types.js';
import { loadVolData, removeMountDir, removeMountPoint, saveVolData, type PodVolumeRecord, type StagingVolData } from './vol-data.js';

/** What a mount step reads from the apiserver. */
export interface CsiApi {
  /** undefined when there is none. */
  csiDriver(name: string): Promise<CSIDriver | undefined>;
  volumeAttachment(name: string): Promise<VolumeAttachment | undefined>;
  /** The secret's data, decoded. */
  secret(namespace: string, name: string): Promise<Record<string, string>>;
}

/** An operation failed: `MountVolume.<op> failed for volume "<pv>" : <detail>`. */
export class MountError extends Error {
  constructor(
    readonly op: string,
    readonly volume: string,
    readonly detail: string,
    /** The volume was not attached yet when it failed. */
    readonly unattached = false,
  ) {
    super(`MountVolume.${op} failed for volume "${volume}" : ${detail}`);
  }
}

/** The volume is not ready yet and nothing failed: waiting on its attachment. */
export class Pending extends Error {
  constructor(
    message: string,
    readonly unattached: boolean,
    readonly retryMs: number,
  ) {
    super(message);
  }
}

export interface CsiMountContext {
  rootDir: string;
  nodeName: string;
  drivers: DriverRegistry;
  api: CsiApi;
}

const ACCESS_MODES: Record<string, [string, string]> = {
  // access mode → [without SINGLE_NODE_MULTI_WRITER, with it] (asCSIAccessModeV1, asSingleNodeMultiWriterCapableCSIAccessModeV1)
  ReadWriteOnce: ['SINGLE_NODE_WRITER', 'SINGLE_NODE_MULTI_WRITER'],
  ReadOnlyMany: ['MULTI_NODE_READER_ONLY', 'MULTI_NODE_READER_ONLY'],
  ReadWriteMany: ['MULTI_NODE_MULTI_WRITER', 'MULTI_NODE_MULTI_WRITER'],
  ReadWriteOncePod: ['SINGLE_NODE_WRITER', 'SINGLE_NODE_SINGLE_WRITER'],
};

/** The volume capability the kubelet asks for: a filesystem mount, the PV's first access mode. */
export function volumeCapability(pv: PersistentVolume, caps: Set<string>): object {
  const mode = ACCESS_MODES[pv.spec.accessModes?.[0] ?? 'ReadWriteOnce']?.[caps.has('SINGLE_NODE_MULTI_WRITER') ? 1 : 0] ?? 'UNKNOWN';
  return { mount: { fs_type: pv.spec.csi?.fsType ?? '', mount_flags: pv.spec.mountOptions ?? [] }, access_mode: { mode } };
}

/** The result of a set-up: the pod's target path, and whether the volume needed attaching. */
export interface CsiSetUp {
  targetPath: string;
  stagingPath: string;
  attachable: boolean;
}

/**
 * Sets the volume up for the pod. `attachVerified` is told, before staging,
 * whether the volume needs attaching; `beforeAttach` may refuse to go on (the
 * node has not reported the volume in use yet).
 */
export async function setUpCsiVolume(
  c: CsiMountContext,
  pod: Pod,
  pv: PersistentVolume,
  readOnly: boolean,
  hooks: { beforeAttach(): void; attachVerified(attachable: boolean): void },
): Promise<CsiSetUp> {
  const src = pv.spec.csi!;
  const pvName = pv.metadata.name;
  const { driver: driverName, volumeHandle: handle } = src;
  const csiDriver = await c.api.csiDriver(driverName);
  // skipAttach: only a CSIDriver saying attachRequired: false skips the attachment.
  const attachable = csiDriver?.spec?.attachRequired !== false;
  let publishContext: Record<string, string> = {};
  if (attachable) {
    hooks.beforeAttach();
    const va = await c.api.volumeAttachment(attachmentName(handle, driverName, c.nodeName));
    if (va?.metadata.deletionTimestamp) throw new MountError('WaitForAttach', pvName, 'volume attachment is being deleted', true);
    if (!va?.status?.attached) {
      const msg = va?.status?.attachError?.message;
      if (msg) throw new MountError('WaitForAttach', pvName, msg, true);
      throw new Pending(`volume ${pvName} is not attached yet`, true, 500);
    }
    publishContext = va.status.attachmentMetadata ?? {};
  }
  hooks.attachVerified(attachable);

  let conn: CsiConn;
  let caps: Set<string>;
  try {
    conn = c.drivers.client(driverName);
  } catch (e) {
    throw new MountError('MountDevice', pvName, `kubernetes.io/csi: attacher.MountDevice failed to create newCsiDriverClient: ${(e as Error).message}`);
  }
  try {
    caps = await c.drivers.nodeCapabilities(driverName);
  } catch (e) {
    throw new MountError('MountDevice', pvName, `kubernetes.io/csi: attacher.MountDevice failed to check STAGE_UNSTAGE_VOLUME: ${rpcErrorText(e)}`);
  }
  const capability = volumeCapability(pv, caps);
  const target = publishPath(c.rootDir, pod.metadata.uid!, pvName);
  // NewMounter: the pod's vol_data.json (before staging, so a staged volume is always found from a pod); SetUpAt: the target's parent.
  saveVolData(dirname(target), {
    specVolID: pvName,
    volumeHandle: handle,
    driverName,
    nodeName: c.nodeName,
    attachmentID: attachmentName(handle, driverName, c.nodeName),
    volumeLifecycleMode: 'Persistent',
  });
  const staged = caps.has('STAGE_UNSTAGE_VOLUME');
  const staging = stagingPath(c.rootDir, driverName, handle);
  // MountDevice: the staging directory and its vol_data.json, kept even without staging so the volume can be found again.
  saveVolData(stagingDir(c.rootDir, driverName, handle), { volumeHandle: handle, driverName } satisfies StagingVolData);
  if (staged) {
    mkdirSync(staging, { recursive: true, mode: 0o750 });
    const secrets = await secretsOf(c, src.nodeStageSecretRef, 'NodeStageSecretRef', pvName, 'MountDevice');
    try {
      await conn.call(
        'Node',
        'NodeStageVolume',
        {
          volume_id: handle,
          publish_context: publishContext,
          staging_target_path: staging,
          volume_capability: capability,
          secrets,
          volume_context: src.volumeAttributes ?? {},
        },
        { timeoutMs: CSI_TIMEOUT_MS },
      );
    } catch (e) {
      throw new MountError('MountDevice', pvName, rpcErrorText(e));
    }
  }

  const secrets = await secretsOf(c, src.nodePublishSecretRef, 'NodePublishSecretRef', pvName, 'SetUp');
  try {
    await conn.call(
      'Node',
      'NodePublishVolume',
      {
        volume_id: handle,
        publish_context: publishContext,
        staging_target_path: staged ? staging : '',
        target_path: target,
        volume_capability: capability,
        readonly: readOnly,
        secrets,
        volume_context: { ...src.volumeAttributes, ...podAttributes(pod, csiDriver) },
      },
      { timeoutMs: CSI_TIMEOUT_MS },
    );
  } catch (e) {
    throw new MountError('SetUp', pvName, rpcErrorText(e));
  }
  return { targetPath: target, stagingPath: staged ? staging : '', attachable };
}

/** podAttributes: the pod's identity in the volume context when the CSIDriver asks for it (podInfoOnMount). */
function podAttributes(pod: Pod, d: CSIDriver | undefined): Record<string, string> {
  if (!d?.spec?.podInfoOnMount) return {};
  return {
    'csi.storage.k8s.io/pod.name': pod.metadata.name!,
    'csi.storage.k8s.io/pod.namespace': pod.metadata.namespace!,
    'csi.storage.k8s.io/pod.uid': pod.metadata.uid!,
    'csi.storage.k8s.io/serviceAccount.name': pod.spec.serviceAccountName ?? '',
    'csi.storage.k8s.io/ephemeral': 'false',
  };
}

async function secretsOf(c: CsiMountContext, ref: SecretReference | undefined, what: string, pvName: string, op: string): Promise<Record<string, string>> {
  if (!ref) return {};
  const ns = ref.namespace ?? '';
  try {
    return await c.api.secret(ns, ref.name);
  } catch (e) {
    throw new MountError(op, pvName, `fetching ${what} ${ns}/${ref.name} failed: ${(e as Error).message}`);
  }
}

/** TearDownAt: NodeUnpublishVolume, then the target's directory and vol_data.json. */
export async function unpublishCsiVolume(drivers: DriverRegistry, rec: PodVolumeRecord): Promise<void> {
  let conn: CsiConn;
  try {
    conn = drivers.client(rec.data.driverName);
  } catch (e) {
    throw new Error(`kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: ${(e as Error).message}`);
  }
  try {
    await conn.call('Node', 'NodeUnpublishVolume', { volume_id: rec.data.volumeHandle, target_path: rec.targetPath }, { timeoutMs: CSI_TIMEOUT_MS });
  } catch (e) {
    throw new Error(`kubernetes.io/csi: mounter.TearDownAt failed: ${rpcErrorText(e)}`);
  }
  removeMountDir(rec.targetPath);
}

/** UnmountDevice: NodeUnstageVolume when the driver stages, then the staging directory. Nothing staged is nothing to do. */
export async function unstageCsiVolume(c: Pick<CsiMountContext, 'rootDir' | 'drivers'>, driverName: string, handle: string): Promise<void> {
  const dir = stagingDir(c.rootDir, driverName, handle);
  if (!loadVolData<StagingVolData>(dir)) {
    removeMountPoint(stagingPath(c.rootDir, driverName, handle));
    return;
  }
  let caps: Set<string>;
  try {
    caps = await c.drivers.nodeCapabilities(driverName);
  } catch (e) {
    throw new Error(`kubernetes.io/csi: attacher.UnmountDevice failed to create newCsiDriverClient: ${(e as Error).message}`);
  }
  const staging = stagingPath(c.rootDir, driverName, handle);
  if (caps.has('STAGE_UNSTAGE_VOLUME')) {
    try {
      await c.drivers.client(driverName).call('Node', 'NodeUnstageVolume', { volume_id: handle, staging_target_path: staging }, { timeoutMs: CSI_TIMEOUT_MS });
    } catch (e) {
      throw new Error(`kubernetes.io/csi: attacher.UnmountDevice failed: ${rpcErrorText(e)}`);
    }
  }
  removeMountDir(staging);
}
