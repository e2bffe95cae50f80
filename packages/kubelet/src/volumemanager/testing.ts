/**
 * A volume manager's world for unit tests: claims, PVs, attachments and
 * CSIDrivers held in memory behind the VolumeApi, a CSI driver that stages
 * and publishes by links and records every call, and what the manager asked
 * for (events, claim status patches, pod triggers, node status updates).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { CsiError, grpcStatus } from '@kubeling/csi';
import { DriverRegistry } from '../csi/drivers.js';
import type { Pod } from '../kinds.js';
import type { CSIDriver, PersistentVolume, PersistentVolumeClaim, VolumeAttachment } from './types.js';
import { VolumeManager, type VolumeApi, type VolumeManagerOptions } from './volume-manager.js';

export const NODE = 'n1';
export const DRIVER = 'hostpath.test';

/** A pod volume as the tests write them. */
export type TestVolume = { name: string } & Record<string, unknown>;

export const pod = (uid: string, volumes: TestVolume[], spec: Record<string, unknown> = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p-${uid}`, namespace: 'default', uid },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'c', image: 'busybox', volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/${v.name}` })) }],
      volumes,
      ...spec,
    },
  }) as unknown as Pod;

export const claim = (
  name: string,
  pvName: string,
  extra: { metadata?: Partial<PersistentVolumeClaim['metadata']>; status?: PersistentVolumeClaim['status'] } = {},
): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '5', ...extra.metadata },
  spec: { volumeName: pvName, accessModes: ['ReadWriteOnce'] },
  status: { phase: 'Bound', capacity: { storage: '1Gi' }, ...extra.status },
});

export const csiPV = (name: string, claimName: string, spec: Partial<PersistentVolume['spec']> = {}): PersistentVolume => ({
  metadata: { name },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    claimRef: { namespace: 'default', name: claimName, uid: `uid-${claimName}` },
    csi: { driver: DRIVER, volumeHandle: `h-${name}`, volumeAttributes: { a: '1' } },
    ...spec,
  },
});

/** A CSI request as the fake driver reads it. */
export interface NodeRequest {
  method: string;
  volume_id?: string;
  staging_target_path?: string;
  target_path?: string;
  publish_context?: Record<string, string>;
  [field: string]: unknown;
}

type NodeHandler = (r: NodeRequest) => Promise<object>;

export function world(dir: string) {
  const claims = new Map<string, PersistentVolumeClaim>();
  const pvs = new Map<string, PersistentVolume>();
  const vas = new Map<string, VolumeAttachment>();
  const csiDrivers = new Map<string, CSIDriver>();
  const events: string[] = [];
  const rpc: NodeRequest[] = [];
  const patches: { ns: string; name: string; patch: object }[] = [];
  const triggers: string[] = [];
  let reported: ReadonlySet<string> = new Set<string>();
  let statusAsks = 0;
  const volDir = join(dir, 'vol');
  mkdirSync(volDir, { recursive: true });
  const notFound = (what: string) => Object.assign(new Error(`${what} not found`), { status: { reason: 'NotFound' } });
  const api: VolumeApi = {
    claim: async (_ns, name) => {
      const c = claims.get(name);
      if (!c) throw notFound(`persistentvolumeclaims "${name}"`);
      return structuredClone(c);
    },
    volume: async (name) => {
      const pv = pvs.get(name);
      if (!pv) throw notFound(`persistentvolumes "${name}"`);
      return structuredClone(pv);
    },
    csiDriver: async (name) => csiDrivers.get(name),
    volumeAttachment: async (name) => vas.get(name),
    secret: async () => ({ user: 'u' }),
    patchClaimStatus: async (ns, name, patch) => {
      patches.push({ ns, name, patch });
      return claims.get(name)!;
    },
    event: (obj, type, reason, message) => void events.push(`${obj.kind} ${type} ${reason} ${message}`),
  };
  const node: Record<string, NodeHandler> = {
    NodeGetCapabilities: async () => ({ capabilities: ['STAGE_UNSTAGE_VOLUME', 'EXPAND_VOLUME'].map((type) => ({ rpc: { type } })) }),
    NodeStageVolume: async (r) => {
      rmSync(r.staging_target_path!, { recursive: true });
      symlinkSync(volDir, r.staging_target_path!);
      return {};
    },
    NodeUnstageVolume: async (r) => {
      if (existsSync(r.staging_target_path!)) unlinkSync(r.staging_target_path!);
      return {};
    },
    NodePublishVolume: async (r) => {
      if (!existsSync(r.target_path!)) symlinkSync(volDir, r.target_path!);
      return {};
    },
    NodeUnpublishVolume: async (r) => {
      try {
        unlinkSync(r.target_path!);
      } catch {
        // not published
      }
      return {};
    },
    NodeExpandVolume: async () => ({ capacity_bytes: '2147483648' }),
  };
  const drivers = new DriverRegistry(() => ({
    call: async <T>(_s: string, method: string, req: object) => {
      const r = { method, ...req };
      rpc.push(r);
      const h = node[method];
      if (!h) throw new CsiError(grpcStatus.UNIMPLEMENTED, method);
      return (await h(r)) as T;
    },
    close() {},
  }));
  const mk = (rootDir = join(dir, 'root'), o: Partial<VolumeManagerOptions> = {}) =>
    new VolumeManager({
      nodeName: NODE,
      rootDir,
      drivers,
      api,
      log: pino({ level: 'silent' }),
      trigger: (uid, ms) => void triggers.push(`${uid}+${ms}`),
      reportedInUse: () => reported,
      requestStatusUpdate: () => void statusAsks++,
      ...o,
    });
  return {
    claims,
    pvs,
    vas,
    csiDrivers,
    events,
    rpc,
    patches,
    triggers,
    drivers,
    node,
    mk,
    /** The node reports these volumes in use. */
    report: (inUse: string[]) => (reported = new Set(inUse)),
    statusAsks: () => statusAsks,
    /** The driver calls, capabilities left out. */
    methods: () => rpc.map((r) => r.method).filter((m) => m !== 'NodeGetCapabilities'),
  };
}

/** Runs a test in a fresh temporary directory. */
export function withDir(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vm-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
