/**
 * Test fixtures for the attach/detach controller: pods on nodes with claims,
 * bound claims and CSI volumes, nodes and VolumeAttachments.
 */
import type { Node, Pod } from '../kinds.js';
import type { CSIDriver, PersistentVolume, PersistentVolumeClaim, VolumeAttachment } from '../storage.js';
import { attachmentName } from './desired.js';

export const DRIVER = 'hostpath.csi.kubeling.io';

export const podOn = (name: string, node: string, claims: string[], o: { phase?: string; ephemeral?: string[]; namespace?: string } = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace ?? 'ns', uid: `uid-${name}` },
    spec: {
      nodeName: node,
      containers: [],
      volumes: [
        ...claims.map((c) => ({ name: `v-${c}`, persistentVolumeClaim: { claimName: c } })),
        ...(o.ephemeral ?? []).map((v) => ({ name: v, ephemeral: { volumeClaimTemplate: { spec: {} } } })),
      ],
    },
    status: { phase: o.phase ?? 'Running' },
  }) as unknown as Pod;

export const boundClaim = (name: string, volume: string, o: { owner?: string; phase?: string; namespace?: string } = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name,
    namespace: o.namespace ?? 'ns',
    uid: `uid-${name}`,
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'x', uid: o.owner, controller: true }] } : {}),
  },
  spec: { volumeName: volume },
  status: { phase: o.phase ?? 'Bound' },
});

export const csiVolume = (name: string, claim: string, o: { driver?: string; modes?: string[]; namespace?: string } = {}): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: {
    accessModes: o.modes ?? ['ReadWriteOnce'],
    claimRef: { namespace: o.namespace ?? 'ns', name: claim, uid: `uid-${claim}` },
    csi: { driver: o.driver ?? DRIVER, volumeHandle: `handle-${name}` },
  },
  status: { phase: 'Bound' },
});

export const driver = (name: string, attachRequired: boolean): CSIDriver => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSIDriver',
  metadata: { name },
  spec: { attachRequired },
});

export const node = (name: string, o: { inUse?: string[]; attached?: string[]; ready?: boolean; outOfService?: boolean } = {}): Node =>
  ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
    spec: o.outOfService ? { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] } : {},
    status: {
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      ...(o.inUse ? { volumesInUse: o.inUse } : {}),
      ...(o.attached ? { volumesAttached: o.attached.map((n) => ({ name: n, devicePath: '' })) } : {}),
    },
  }) as unknown as Node;

export const attachment = (pv: string, nodeName: string, o: { attached?: boolean; error?: string; deleting?: boolean } = {}): VolumeAttachment => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'VolumeAttachment',
  metadata: {
    name: attachmentName(`handle-${pv}`, DRIVER, nodeName),
    uid: `va-${pv}-${nodeName}`,
    ...(o.deleting ? { deletionTimestamp: '2026-03-01T10:00:00Z' } : {}),
  },
  spec: { attacher: DRIVER, nodeName, source: { persistentVolumeName: pv } },
  status: { attached: o.attached ?? false, ...(o.error ? { attachError: { message: o.error } } : {}) },
});

export const uniqueName = (pv: string) => `kubernetes.io/csi/${DRIVER}^handle-${pv}`;
