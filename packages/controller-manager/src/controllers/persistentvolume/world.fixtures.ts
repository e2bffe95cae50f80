/**
 * Test fixtures for the persistentvolume binder: volumes, claims and classes
 * as the API would hold them, and a world of plain maps the binder reads (as
 * its listers) and writes (as the API, with resourceVersion checks), recording
 * every write and event in order.
 */
import { conflict, OPTIMISTIC_LOCK_MESSAGE, type LabelSelectorObject } from '@kubeling/apimachinery';
import type { Pod } from '../kinds.js';
import { type PersistentVolume, type PersistentVolumeClaim, type StorageClass, claimKey } from '../storage.js';
import { Binder } from './binder.js';

export const NOW = new Date('2026-03-01T10:00:00Z');

export interface VolumeOpts {
  size?: string;
  modes?: string[];
  cls?: string;
  phase?: string;
  claim?: { name: string; uid?: string; namespace?: string };
  labels?: Record<string, string>;
  mode?: string;
  policy?: string;
  annotations?: Record<string, string>;
  source?: Record<string, unknown>;
  deleting?: boolean;
}

export const pv = (name: string, o: VolumeOpts = {}): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: {
    name,
    uid: `pv-${name}`,
    resourceVersion: '1',
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.annotations ? { annotations: o.annotations } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-03-01T09:00:00Z' } : {}),
  },
  spec: {
    capacity: { storage: o.size ?? '1Gi' },
    accessModes: o.modes ?? ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: o.policy ?? 'Retain',
    ...(o.cls !== undefined ? { storageClassName: o.cls } : {}),
    ...(o.mode ? { volumeMode: o.mode } : {}),
    ...(o.claim
      ? { claimRef: { kind: 'PersistentVolumeClaim', namespace: o.claim.namespace ?? 'ns', name: o.claim.name, ...(o.claim.uid ? { uid: o.claim.uid } : {}) } }
      : {}),
    ...(o.source ?? { hostPath: { path: `/tmp/pv/${name}` } }),
  },
  status: { phase: o.phase ?? 'Available' },
});

export interface ClaimOpts {
  size?: string;
  modes?: string[];
  /** null: no storageClassName at all. */
  cls?: string | null;
  volumeName?: string;
  selector?: LabelSelectorObject;
  annotations?: Record<string, string>;
  phase?: string;
  mode?: string;
}

export const pvc = (name: string, o: ClaimOpts = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1', ...(o.annotations ? { annotations: o.annotations } : {}) },
  spec: {
    accessModes: o.modes ?? ['ReadWriteOnce'],
    resources: { requests: { storage: o.size ?? '1Gi' } },
    ...(o.cls === null ? {} : { storageClassName: o.cls ?? '' }),
    ...(o.volumeName ? { volumeName: o.volumeName } : {}),
    ...(o.selector ? { selector: o.selector } : {}),
    ...(o.mode ? { volumeMode: o.mode } : {}),
  },
  status: { phase: o.phase ?? 'Pending' },
});

export const sc = (name: string, provisioner: string, mode = 'Immediate', isDefault = false): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
  provisioner,
  reclaimPolicy: 'Delete',
  volumeBindingMode: mode,
});

export const unscheduledPod = (name: string, claim: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `pod-${name}` },
    spec: { containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
    status: { phase: 'Pending' },
  }) as unknown as Pod;

export interface World {
  binder: Binder;
  volumes: Map<string, PersistentVolume>;
  claims: Map<string, PersistentVolumeClaim>;
  /** Writes, in order: `update pv/x`, `status pv/x`, `update pvc/ns/x`, `status pvc/ns/x`, `delete pv/x`. */
  writes: string[];
  events: { kind: string; type: string; reason: string; message: string }[];
  enqueued: string[];
  removed: string[];
}

export function world(o: { volumes?: PersistentVolume[]; claims?: PersistentVolumeClaim[]; classes?: StorageClass[]; pods?: Pod[] } = {}): World {
  const volumes = new Map((o.volumes ?? []).map((v) => [v.metadata.name!, v]));
  const claims = new Map((o.claims ?? []).map((c) => [claimKey(c), c]));
  const classes = new Map((o.classes ?? []).map((c) => [c.metadata.name!, c]));
  const w: Omit<World, 'binder'> = { volumes, claims, writes: [], events: [], enqueued: [], removed: [] };
  let rv = 100;
  /** A write with the stored object's resourceVersion wins and bumps it; an older one is a Conflict. */
  const store = <T extends PersistentVolume | PersistentVolumeClaim>(m: Map<string, T>, key: string, obj: T, what: string): T => {
    const cur = m.get(key);
    if (cur && cur.metadata.resourceVersion !== obj.metadata.resourceVersion)
      throw conflict({ group: '', resource: 'persistentvolumes' }, key, OPTIMISTIC_LOCK_MESSAGE);
    w.writes.push(what);
    const next = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } });
    m.set(key, next);
    return structuredClone(next);
  };
  const binder = new Binder({
    volumes: () => [...volumes.values()],
    volume: (n) => volumes.get(n),
    claim: (k) => claims.get(k),
    storageClass: (n) => classes.get(n),
    storageClasses: () => [...classes.values()],
    podsUsingClaim: (k) =>
      (o.pods ?? []).filter((p) =>
        ((p.spec as { volumes?: { persistentVolumeClaim?: { claimName: string } }[] }).volumes ?? []).some(
          (v) => `ns/${v.persistentVolumeClaim?.claimName}` === k,
        ),
      ),
    api: {
      getVolume: async (n) => structuredClone(volumes.get(n)),
      getClaim: async (ns, n) => structuredClone(claims.get(`${ns}/${n}`)),
      updateVolume: async (v) => store(volumes, v.metadata.name!, v, `update pv/${v.metadata.name}`),
      updateVolumeStatus: async (v) => store(volumes, v.metadata.name!, v, `status pv/${v.metadata.name}`),
      deleteVolume: async (n) => {
        w.writes.push(`delete pv/${n}`);
        volumes.delete(n);
      },
      updateClaim: async (c) => store(claims, claimKey(c), c, `update pvc/${claimKey(c)}`),
      updateClaimStatus: async (c) => store(claims, claimKey(c), c, `status pvc/${claimKey(c)}`),
    },
    event: (obj, type, reason, message) => w.events.push({ kind: obj.kind!, type, reason, message }),
    enqueueClaim: (k) => w.enqueued.push(k),
    removeAll: async (path) => {
      w.removed.push(path);
    },
    now: () => NOW,
  });
  return { ...w, binder };
}
