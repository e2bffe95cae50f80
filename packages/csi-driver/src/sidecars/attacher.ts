/**
 * external-attacher for this node (kubernetes-csi/external-attacher
 * pkg/controller/csi_handler.go, util.go): the VolumeAttachments whose
 * `spec.attacher` is the driver and whose `spec.nodeName` is this node.
 *
 * Attach (`reconcileAttachment(name)`, no deletionTimestamp, not yet
 * attached): the PV gets the attacher's finalizer (it must outlive every
 * attachment that names it), the VolumeAttachment gets it too with the node-ID
 * annotation, then ControllerPublishVolume; success sets `status.attached` and
 * `attachmentMetadata` (the publish context) through the status subresource,
 * failure records `status.attachError {time, message}` and throws so the
 * queue retries with backoff.
 *
 * Detach (deletionTimestamp set, finalizer present): ControllerUnpublishVolume,
 * then `status.attached: false` (detachError on failure), then the finalizer
 * is removed.
 *
 * PVs (`reconcileVolume(name)`): a PV being deleted keeps the attacher's
 * finalizer while any VolumeAttachment names it, and loses it after.
 */
import type { Logger } from 'pino';
import { isNotFound, rfc3339 } from '@kubeling/apimachinery';
import type { CsiCall, DriverInfo, KubeApi, Lister } from './deps.js';
import {
  ANN_VA_NODE_ID,
  type CSINode,
  type CSIVolumeSource,
  hasFinalizer,
  type PersistentVolume,
  type PersistentVolumeSpec,
  type VolumeAttachment,
} from './types.js';
import { attacherFinalizer, errorText, pvVolumeCapability, volumeIsAccessible } from './util.js';

export interface AttacherDeps {
  driver: DriverInfo;
  csi: CsiCall;
  api: Pick<KubeApi, 'patchPV' | 'patchVA' | 'patchVAStatus'>;
  attachments: Lister<VolumeAttachment>;
  volumes: Lister<PersistentVolume>;
  csiNodes: Lister<CSINode>;
  log: Logger;
  /** The fs type a PV without one is published with (external-attacher --default-fstype). */
  defaultFsType?: string;
}

export class Attacher {
  readonly finalizer: string;

  constructor(private readonly d: AttacherDeps) {
    this.finalizer = attacherFinalizer(d.driver.name);
  }

  /** Whether a VolumeAttachment is this instance's: this driver, this node. */
  handles(va: VolumeAttachment): boolean {
    return va.spec?.attacher === this.d.driver.name && va.spec.nodeName === this.d.driver.nodeName;
  }

  async reconcileAttachment(name: string): Promise<void> {
    const va = this.d.attachments.get(name);
    if (!va || !this.handles(va)) return;
    if (!va.metadata.deletionTimestamp) await this.syncAttach(va);
    else await this.syncDetach(va);
  }

  private async syncAttach(va: VolumeAttachment): Promise<void> {
    if (va.status?.attached) return;
    let context: Record<string, string>;
    try {
      context = await this.attach(va);
    } catch (e) {
      const msg = errorText(e);
      await this.d.api.patchVAStatus(va.metadata.name!, { status: { attachError: { time: rfc3339(), message: msg } } }).catch((se) => {
        this.d.log.info({ va: va.metadata.name, err: errorText(se) }, 'failed to save attach error');
      });
      throw new Error(`failed to attach: ${msg}`);
    }
    await this.d.api.patchVAStatus(va.metadata.name!, { status: { attached: true, attachmentMetadata: context, attachError: null } }).catch((e) => {
      throw new Error(`failed to mark as attached: ${errorText(e)}`);
    });
    this.d.log.info({ va: va.metadata.name }, 'attached');
  }

  /** The PV spec a VolumeAttachment is about: its PV's, or the inline one. */
  private source(va: VolumeAttachment): { spec: PersistentVolumeSpec; pv?: PersistentVolume } {
    const { persistentVolumeName: pvName, inlineVolumeSpec: inline } = va.spec.source ?? {};
    if (pvName && inline) throw new Error('both InlineCSIVolumeSource and PersistentVolumeName specified in VA source');
    if (pvName) {
      const pv = this.d.volumes.get(pvName);
      if (!pv) throw new Error(`persistentvolume "${pvName}" not found`);
      return { spec: pv.spec ?? {}, pv };
    }
    if (inline) {
      if (!inline.csi) throw new Error('inline volume spec contains nil CSI source');
      return { spec: inline };
    }
    throw new Error('neither InlineCSIVolumeSource nor PersistentVolumeName specified in VA source');
  }

  private csiSource(spec: PersistentVolumeSpec): CSIVolumeSource {
    if (!spec.csi) throw new Error('pv spec contained non-csi source that was not migrated');
    return spec.csi;
  }

  /** getNodeID: the CSINode's entry for this driver, else (detach only) the annotation, else this process's own node ID. */
  private nodeId(va: VolumeAttachment, forDetach: boolean): string {
    const fromNode = this.d.csiNodes.get(va.spec.nodeName)?.spec?.drivers?.find((d) => d.name === this.d.driver.name)?.nodeID;
    if (fromNode) return fromNode;
    if (forDetach && va.metadata.annotations?.[ANN_VA_NODE_ID]) return va.metadata.annotations[ANN_VA_NODE_ID];
    return this.d.driver.nodeId;
  }

  /** csiAttach: checks first (a finalizer would block deletion of a bad VA), then finalizers, then ControllerPublishVolume. */
  private async attach(va: VolumeAttachment): Promise<Record<string, string>> {
    const { spec, pv } = this.source(va);
    if (pv?.metadata.deletionTimestamp) throw new Error(`PersistentVolume "${pv.metadata.name}" is marked for deletion`);
    if (pv && !hasFinalizer(pv, this.finalizer)) {
      await this.d.api
        .patchPV(pv.metadata.name!, {
          metadata: { finalizers: [...(pv.metadata.finalizers ?? []), this.finalizer], resourceVersion: pv.metadata.resourceVersion },
        })
        .catch((e) => {
          throw new Error(`could not add PersistentVolume finalizer: ${errorText(e)}`);
        });
    }
    const csi = this.csiSource(spec);
    const readonly = this.d.driver.controller.has('PUBLISH_READONLY') ? !!csi.readOnly : false;
    const capability = pvVolumeCapability(spec, this.d.driver.controller.has('SINGLE_NODE_MULTI_WRITER'), this.d.defaultFsType ?? '');
    const nodeId = this.nodeId(va, false);
    const needFinalizer = !hasFinalizer(va, this.finalizer);
    const needNodeId = va.metadata.annotations?.[ANN_VA_NODE_ID] !== nodeId;
    if (needFinalizer || needNodeId) {
      const metadata: Record<string, unknown> = { resourceVersion: va.metadata.resourceVersion };
      if (needFinalizer) metadata.finalizers = [...(va.metadata.finalizers ?? []), this.finalizer];
      if (needNodeId) metadata.annotations = { [ANN_VA_NODE_ID]: nodeId };
      await this.d.api.patchVA(va.metadata.name!, { metadata }).catch((e) => {
        throw new Error(`could not save VolumeAttachment: ${errorText(e)}`);
      });
    }
    const resp = await this.d.csi<{ publish_context?: Record<string, string> }>('Controller', 'ControllerPublishVolume', {
      volume_id: csi.volumeHandle,
      node_id: nodeId,
      volume_capability: capability,
      readonly,
      volume_context: csi.volumeAttributes ?? {},
      secrets: {},
    });
    return resp.publish_context ?? {};
  }

  private async syncDetach(va: VolumeAttachment): Promise<void> {
    if (!hasFinalizer(va, this.finalizer)) return;
    try {
      const csi = this.csiSource(this.source(va).spec);
      await this.d.csi('Controller', 'ControllerUnpublishVolume', { volume_id: csi.volumeHandle, node_id: this.nodeId(va, true), secrets: {} });
    } catch (e) {
      const msg = errorText(e);
      await this.d.api.patchVAStatus(va.metadata.name!, { status: { detachError: { time: rfc3339(), message: msg } } }).catch((se) => {
        this.d.log.info({ va: va.metadata.name, err: errorText(se) }, 'failed to save detach error');
      });
      throw new Error(`failed to detach: ${msg}`);
    }
    this.d.log.info({ va: va.metadata.name }, 'detached');
    await this.markDetached(va);
  }

  /** markAsDetached: status first, then the finalizer, so the object is not gone before its status says detached. */
  private async markDetached(va: VolumeAttachment): Promise<void> {
    // NotFound: an earlier pass already removed the finalizer and the object is gone.
    const fail = (e: unknown): undefined => {
      if (isNotFound(e)) return undefined;
      throw new Error(`could not mark as detached: ${errorText(e)}`);
    };
    const status = { attached: false, detachError: null, attachmentMetadata: null };
    const updated = await this.d.api.patchVAStatus(va.metadata.name!, { status }).catch(fail);
    if (!updated) return;
    const finalizers = (updated.metadata.finalizers ?? []).filter((f) => f !== this.finalizer);
    await this.d.api.patchVA(va.metadata.name!, { metadata: { finalizers, resourceVersion: updated.metadata.resourceVersion } }).catch(fail);
  }

  /** SyncNewOrUpdatedPersistentVolume: drop the PV's finalizer once it is being deleted and no VolumeAttachment needs it. */
  async reconcileVolume(name: string): Promise<void> {
    const pv = this.d.volumes.get(name);
    if (!pv?.metadata.deletionTimestamp || !hasFinalizer(pv, this.finalizer)) return;
    // Each node's attacher keeps to the volumes of its own node.
    if (!volumeIsAccessible(pv.spec?.nodeAffinity, this.d.driver.topology ?? {})) return;
    if (this.d.attachments.list().some((va) => va.spec.source?.persistentVolumeName === name)) return;
    const finalizers = (pv.metadata.finalizers ?? []).filter((f) => f !== this.finalizer);
    await this.d.api.patchPV(name, { metadata: { finalizers, resourceVersion: pv.metadata.resourceVersion } });
    this.d.log.info({ pv: name }, 'removed attacher finalizer from PV');
  }
}
