/**
 * The attach/detach decisions for one node (pkg/controller/volume/attachdetach
 * reconciler and statusupdater), from its desired volumes, the
 * VolumeAttachments that exist and the node. No I/O here.
 *
 * - Attach: a desired volume without its VolumeAttachment gets one, unless it
 *   may not be attached to several nodes and one exists for another node
 *   (Multi-Attach error, reported once; a detach still in progress there is
 *   waited for silently).
 * - The node's `status.volumesAttached` lists the volumes whose attachment
 *   reports attached, with an empty device path, as the CSI attacher returns.
 * - Detach: an attachment no pod of the node needs goes once the node no
 *   longer lists the volume in `status.volumesInUse` — or at once when the node
 *   is gone or has the out-of-service taint, or after maxWaitForUnmountDuration
 *   (6 min) when the node is not Ready. It leaves `volumesAttached` first; the
 *   attachment is deleted after the node status is written.
 */
import type { Node } from '../kinds.js';
import type { VolumeAttachment } from '../storage.js';
import type { DesiredVolume } from './desired.js';

export const MAX_WAIT_FOR_UNMOUNT_MS = 6 * 60_000;
const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

export interface AttachedVolume {
  name: string;
  devicePath: string;
}

interface NodeView {
  spec?: { taints?: { key: string }[] };
  status?: { volumesInUse?: string[]; volumesAttached?: AttachedVolume[]; conditions?: { type: string; status?: string }[] };
}

export interface NodePlanInput {
  nodeName: string;
  /** Undefined when the node is gone. */
  node: Node | undefined;
  desired: ReadonlyMap<string, DesiredVolume>;
  /** Every VolumeAttachment (the multi-attach check looks at other nodes'). */
  attachments: readonly VolumeAttachment[];
  /** The unique volume name of an attachment, when known. */
  uniqueNameOf(va: VolumeAttachment): string | undefined;
  /** When each attachment was first found not needed (by name); the plan says which to keep. */
  detachRequestedAt: ReadonlyMap<string, number>;
  now: number;
}

export interface MultiAttachBlock {
  volume: DesiredVolume;
  /** The nodes the volume is attached to. */
  otherNodes: string[];
}

export interface NodePlan {
  create: VolumeAttachment[];
  /** Attachments to delete, after the node status is written. */
  detach: VolumeAttachment[];
  /** The node's new volumesAttached, when it changes. */
  volumesAttached?: AttachedVolume[];
  /** Desired volumes whose attachment reports attached, and those that report an attach error. */
  attached: { volume: DesiredVolume; attachment: VolumeAttachment }[];
  attachErrors: { volume: DesiredVolume; message: string }[];
  blocked: MultiAttachBlock[];
  /** Attachments waiting for the node to unmount, with the time each was first found not needed. */
  waiting: Map<string, number>;
  /** Look again then (a not-Ready node's unmount timeout). */
  requeueAfterMs?: number;
}

const isOurs = (va: VolumeAttachment) => !!va.spec?.source?.persistentVolumeName && (va.metadata.name ?? '').startsWith('csi-');

/** The attachment a desired volume needs. */
export const newAttachment = (v: DesiredVolume, nodeName: string): VolumeAttachment => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name: v.attachmentName },
  spec: { attacher: v.driver, nodeName, source: { persistentVolumeName: v.pvName } },
});

const sameList = (a: readonly AttachedVolume[], b: readonly AttachedVolume[]) =>
  a.length === b.length && a.every((x, i) => x.name === b[i]!.name && x.devicePath === b[i]!.devicePath);

export function planNode(input: NodePlanInput): NodePlan {
  const { nodeName, desired, now } = input;
  const node = input.node as (Node & NodeView) | undefined;
  const plan: NodePlan = { create: [], detach: [], attached: [], attachErrors: [], blocked: [], waiting: new Map() };
  const mine = new Map(input.attachments.filter((va) => va.spec?.nodeName === nodeName && isOurs(va)).map((va) => [va.metadata.name!, va]));

  for (const v of desired.values()) {
    const va = mine.get(v.attachmentName);
    if (va) {
      if (va.metadata.deletionTimestamp) continue;
      if (va.status?.attached) plan.attached.push({ volume: v, attachment: va });
      else if (va.status?.attachError?.message) plan.attachErrors.push({ volume: v, message: va.status.attachError.message });
      continue;
    }
    if (!v.multiAttach) {
      const others = input.attachments.filter((a) => a.spec?.source?.persistentVolumeName === v.pvName && a.spec.nodeName !== nodeName);
      if (others.length) {
        // A detach in progress elsewhere is waited for; an attachment in use there is an error to report.
        const live = others.filter((a) => !a.metadata.deletionTimestamp);
        if (live.length) plan.blocked.push({ volume: v, otherNodes: [...new Set(live.map((a) => a.spec.nodeName))].sort() });
        continue;
      }
    }
    plan.create.push(newAttachment(v, nodeName));
  }

  const inUse = new Set(node?.status?.volumesInUse ?? []);
  const ready = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const outOfService = (node?.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT);
  for (const va of mine.values()) {
    if (desired.has(va.metadata.name!) || va.metadata.deletionTimestamp) continue;
    const unique = input.uniqueNameOf(va);
    const mounted = !!node && unique !== undefined && inUse.has(unique);
    if (mounted && !outOfService) {
      const since = input.detachRequestedAt.get(va.metadata.name!) ?? now;
      const timedOut = now - since > MAX_WAIT_FOR_UNMOUNT_MS;
      if (ready || !timedOut) {
        plan.waiting.set(va.metadata.name!, since);
        if (!ready) {
          const left = since + MAX_WAIT_FOR_UNMOUNT_MS - now + 1000;
          plan.requeueAfterMs = Math.min(plan.requeueAfterMs ?? left, left);
        }
        continue;
      }
    }
    plan.detach.push(va);
  }

  if (node) {
    const detaching = new Set(plan.detach.map((va) => va.metadata.name));
    const reported: AttachedVolume[] = [];
    for (const va of mine.values()) {
      if (!va.status?.attached || va.metadata.deletionTimestamp || detaching.has(va.metadata.name)) continue;
      const name = desired.get(va.metadata.name!)?.uniqueName ?? input.uniqueNameOf(va);
      if (name && !reported.some((r) => r.name === name)) reported.push({ name, devicePath: '' });
    }
    reported.sort((a, b) => a.name.localeCompare(b.name));
    const current = [...(node.status?.volumesAttached ?? [])].sort((a, b) => a.name.localeCompare(b.name));
    if (!sameList(reported, current)) plan.volumesAttached = reported;
  }
  return plan;
}

/**
 * reportMultiAttachError's message for a pod: the pods of the pod's own
 * namespace that hold the volume on the other nodes are named, the others
 * counted.
 */
export function multiAttachMessage(pvName: string, podNamespace: string, holders: readonly { namespace: string; name: string }[]): string {
  const prefix = `Multi-Attach error for volume "${pvName}"`;
  if (holders.length === 0) return `${prefix} Volume is already exclusively attached to one node and can't be attached to another`;
  const local = holders.filter((h) => h.namespace === podNamespace).map((h) => h.name);
  const others = holders.length - local.length;
  if (local.length === 0) return `${prefix} Volume is already used by ${others} pod(s) in different namespaces`;
  const msg = `Volume is already used by pod(s) ${local.join(', ')}`;
  return `${prefix} ${others > 0 ? `${msg} and ${others} pod(s) in different namespaces` : msg}`;
}
