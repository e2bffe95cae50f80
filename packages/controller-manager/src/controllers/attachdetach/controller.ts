/**
 * The attach/detach controller (pkg/controller/volume/attachdetach) for CSI
 * volumes: one key per node. Its pods' attachable volumes get
 * VolumeAttachments (the external attacher of the driver does the attach and
 * reports it in the attachment's status); the node's `status.volumesAttached`
 * follows the attachments that report attached, which is what the kubelet
 * waits for before mounting; attachments no pod needs are deleted once the
 * node has unmounted the volume. Only nodes the kubelet hands to the
 * controller (annotation `volumes.kubernetes.io/controller-managed-attach-detach`)
 * are attached to; a node that is gone has its attachments removed. Events on
 * pods come from `attachdetach-controller`. Decisions are reconcile.ts's.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { Node, Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import {
  ANN_CONTROLLER_MANAGED_ATTACH,
  POD_PVC_INDEX,
  claimRefKey,
  isPodTerminated,
  podClaimKeys,
  type CSIDriver,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type VolumeAttachment,
} from '../storage.js';
import { csiUniqueName, desiredVolumes, type DesiredVolume } from './desired.js';
import { multiAttachMessage, planNode, type NodePlan } from './reconcile.js';

const NODE_INDEX = 'attachdetach-node';
const RESYNC_MS = 60_000;

export class AttachDetachController extends QueueController {
  readonly name = 'attachdetach';
  private pods!: Informer<Pod>;
  private nodes!: Informer<Node>;
  private claims!: Informer<PersistentVolumeClaim>;
  private volumes!: Informer<PersistentVolume>;
  private drivers!: Informer<CSIDriver>;
  private attachments!: Informer<VolumeAttachment>;
  /** Attachment → unique volume name, remembered for volumes whose PV has gone. */
  private readonly uniqueNames = new Map<string, string>();
  /** Attachment → when it was first found not needed (the unmount wait). */
  private readonly detachRequestedAt = new Map<string, number>();
  /** Events already sent: attach success and errors per attachment, Multi-Attach per node and volume. */
  private readonly reported = new Set<string>();
  /** PV → nodes waiting for it to be detached elsewhere. */
  private readonly blockedOn = new Map<string, Set<string>>();

  init(): void {
    const inf = this.ctx.informers;
    this.pods = inf.informer<Pod>({ path: '/api/v1/pods' });
    this.nodes = inf.informer<Node>({ path: '/api/v1/nodes' });
    this.claims = inf.informer<PersistentVolumeClaim>({ path: '/api/v1/persistentvolumeclaims' });
    this.volumes = inf.informer<PersistentVolume>({ path: '/api/v1/persistentvolumes' });
    this.drivers = inf.informer<CSIDriver>({ path: '/apis/storage.k8s.io/v1/csidrivers' });
    this.attachments = inf.informer<VolumeAttachment>({ path: '/apis/storage.k8s.io/v1/volumeattachments' });
    this.pods.store.addIndexer(POD_PVC_INDEX, podClaimKeys);
    this.pods.store.addIndexer(NODE_INDEX, (p) => ((p as Pod).spec?.nodeName ? [(p as Pod).spec!.nodeName!] : []));

    const podNode = (p: Pod) => p.spec?.nodeName;
    this.pods.addEventHandler({
      add: (p) => this.enqueue(podNode(p)),
      update: (o, p) => {
        this.enqueue(podNode(o));
        this.enqueue(podNode(p));
      },
      delete: (p) => this.enqueue(podNode(p)),
    });
    this.nodes.addEventHandler({
      add: (n) => this.enqueue(n.metadata.name),
      update: (_, n) => this.enqueue(n.metadata.name),
      delete: (n) => this.enqueue(n.metadata.name),
    });
    const claimUsers = (key: string) => this.pods.store.byIndex(POD_PVC_INDEX, key).forEach((p) => this.enqueue(podNode(p)));
    this.claims.addEventHandler({
      add: (c) => claimUsers(`${c.metadata.namespace}/${c.metadata.name}`),
      update: (_, c) => claimUsers(`${c.metadata.namespace}/${c.metadata.name}`),
    });
    const volumeUsers = (v: PersistentVolume) => {
      if (v.spec?.claimRef?.name) claimUsers(claimRefKey(v.spec.claimRef));
    };
    this.volumes.addEventHandler({ add: volumeUsers, update: (_, v) => volumeUsers(v), delete: volumeUsers });
    this.drivers.addEventHandler({ add: () => this.enqueueAll(), update: () => this.enqueueAll(), delete: () => this.enqueueAll() });
    this.attachments.addEventHandler({
      add: (va) => this.enqueue(va.spec?.nodeName),
      update: (_, va) => this.enqueue(va.spec?.nodeName),
      delete: (va) => {
        this.enqueue(va.spec?.nodeName);
        const pv = va.spec?.source?.persistentVolumeName;
        for (const n of (pv && this.blockedOn.get(pv)) || []) this.enqueue(n);
        for (const k of this.reported) if (k.startsWith(`${va.metadata.uid}/`)) this.reported.delete(k);
        this.uniqueNames.delete(va.metadata.name!);
        this.detachRequestedAt.delete(va.metadata.name!);
      },
    });
  }

  private enqueue(node: string | undefined): void {
    if (node) this.queue.add(node);
  }

  private enqueueAll(): void {
    for (const n of this.nodes.store.keys()) this.queue.add(n);
    for (const va of this.attachments.store.list()) this.enqueue(va.spec?.nodeName);
  }

  override async run(signal: AbortSignal): Promise<void> {
    const timer = setInterval(() => this.enqueueAll(), RESYNC_MS);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    await super.run(signal);
  }

  private uniqueNameOf(va: VolumeAttachment): string | undefined {
    const pv = va.spec?.source?.persistentVolumeName;
    const csi = pv ? this.volumes.store.get(pv)?.spec?.csi : undefined;
    if (csi) this.uniqueNames.set(va.metadata.name!, csiUniqueName(csi.driver, csi.volumeHandle));
    return this.uniqueNames.get(va.metadata.name!);
  }

  async reconcile(nodeName: string): Promise<{ requeueAfterMs?: number } | void> {
    const node = this.nodes.store.get(nodeName);
    // A node the kubelet attaches for itself is not this controller's.
    if (node && node.metadata.annotations?.[ANN_CONTROLLER_MANAGED_ATTACH] === undefined) return;
    const desired = node
      ? desiredVolumes(nodeName, {
          pods: this.pods.store.byIndex(NODE_INDEX, nodeName),
          claim: (k) => this.claims.store.get(k),
          volume: (n) => this.volumes.store.get(n),
          driver: (n) => this.drivers.store.get(n),
        })
      : new Map<string, DesiredVolume>();
    for (const v of desired.values()) if (this.attachments.store.get(v.attachmentName)) this.uniqueNames.set(v.attachmentName, v.uniqueName);
    const plan = planNode({
      nodeName,
      node,
      desired,
      attachments: this.attachments.store.list(),
      uniqueNameOf: (va) => this.uniqueNameOf(va),
      detachRequestedAt: this.detachRequestedAt,
      now: Date.now(),
    });
    for (const name of this.detachRequestedAt.keys()) {
      if (this.attachments.store.get(name)?.spec?.nodeName === nodeName && !plan.waiting.has(name)) this.detachRequestedAt.delete(name);
    }
    for (const [name, since] of plan.waiting) this.detachRequestedAt.set(name, since);
    this.report(nodeName, plan, desired);
    try {
      for (const va of plan.create) {
        await this.ctx.client.post('/apis/storage.k8s.io/v1/volumeattachments', va).catch((e) => {
          if (!isAlreadyExists(e)) throw e;
        });
      }
      // Out of the node's status before the detach, as upstream: no detach unless the status was written.
      if (plan.volumesAttached && node) {
        await this.ctx.client.patch(
          `/api/v1/nodes/${nodeName}/status`,
          { status: { volumesAttached: plan.volumesAttached.length ? plan.volumesAttached : null } },
          'application/merge-patch+json',
        );
      }
      for (const va of plan.detach) {
        await this.ctx.client
          .delete(`/apis/storage.k8s.io/v1/volumeattachments/${va.metadata.name}`, { preconditions: { uid: va.metadata.uid } })
          .catch((e) => {
            if (!isNotFound(e) && !isConflict(e)) throw e;
          });
      }
    } catch (e) {
      if (isNotFound(e)) return;
      if (isConflict(e)) return { requeueAfterMs: 100 };
      throw e;
    }
    if (plan.requeueAfterMs !== undefined) return { requeueAfterMs: plan.requeueAfterMs };
  }

  /** The pod events of the plan, each once. */
  private report(nodeName: string, plan: NodePlan, desired: ReadonlyMap<string, DesiredVolume>): void {
    const recorder = this.ctx.recorder('attachdetach-controller');
    const onPods = (v: DesiredVolume, type: 'Normal' | 'Warning', reason: string, message: (p: Pod) => string) => {
      for (const p of v.pods) void recorder.event({ ...p, apiVersion: 'v1', kind: 'Pod' } as KubeObject, type, reason, message(p));
    };
    const once = (key: string) => !this.reported.has(key) && !!this.reported.add(key);
    for (const { volume, attachment } of plan.attached) {
      if (once(`${attachment.metadata.uid}/attached`))
        onPods(volume, 'Normal', 'SuccessfulAttachVolume', () => `AttachVolume.Attach succeeded for volume "${volume.pvName}" `);
    }
    for (const { volume, message } of plan.attachErrors) {
      const va = this.attachments.store.get(volume.attachmentName);
      if (once(`${va?.metadata.uid}/error/${message}`)) {
        onPods(volume, 'Warning', 'FailedAttachVolume', () => `AttachVolume.Attach failed for volume "${volume.pvName}" : ${message}`);
      }
    }
    for (const [pv, nodes] of this.blockedOn) {
      nodes.delete(nodeName);
      if (!nodes.size) this.blockedOn.delete(pv);
    }
    for (const { volume, otherNodes } of plan.blocked) {
      (this.blockedOn.get(volume.pvName) ?? this.blockedOn.set(volume.pvName, new Set()).get(volume.pvName)!).add(nodeName);
      if (!once(`multiattach/${nodeName}/${volume.attachmentName}`)) continue;
      const holders = this.pods.store
        .byIndex(POD_PVC_INDEX, volume.claimKey)
        .filter((p) => otherNodes.includes(p.spec?.nodeName ?? '') && !isPodTerminated(p))
        .map((p) => ({ namespace: p.metadata.namespace!, name: p.metadata.name! }));
      onPods(volume, 'Warning', 'FailedAttachVolume', (p) => multiAttachMessage(volume.pvName, p.metadata.namespace!, holders));
    }
    // Reported again only after the pods stopped wanting the volume, as upstream's MultiAttachErrorReported.
    for (const k of this.reported) if (k.startsWith(`multiattach/${nodeName}/`) && !desired.has(k.split('/')[2]!)) this.reported.delete(k);
  }
}
