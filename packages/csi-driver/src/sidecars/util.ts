/**
 * Helpers the sidecars share, each after the kubernetes-csi function it
 * follows: quantities in bytes (resource.NewQuantity(n, BinarySI)), gRPC
 * errors as Go prints them, access modes to CSI (csi-lib-utils accessmodes),
 * volume capabilities of a PV (external-attacher GetVolumeCapabilities),
 * topology to node affinity and back (external-provisioner topology.go), the
 * attacher's finalizer name and the resize conditions merge (external-resizer
 * util.MergeResizeConditionsOfPVC).
 */
import { createHash } from 'node:crypto';
import { parseQuantity } from '@kubeling/apimachinery';
import type { ClaimCondition, NodeSelectorTerm, PersistentVolumeSpec, TopologySelectorTerm } from './types.js';

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** A byte count as a canonical BinarySI quantity: 10737418240 → `10Gi`, 1500 → `1500`. */
export function bytesToQuantity(bytes: number | bigint | string): string {
  let v = BigInt(bytes);
  let e = 0;
  while (v >= 1024n && v % 1024n === 0n && e < BINARY_SUFFIXES.length - 1) {
    v /= 1024n;
    e++;
  }
  return `${v}${BINARY_SUFFIXES[e]}`;
}

/** A quantity's value in bytes (0 when absent). */
export const quantityBytes = (q: string | undefined): number => (q === undefined ? 0 : parseQuantity(q));

/** gRPC status codes by number, named as Go's codes.Code.String() names them. */
const CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

export const GRPC = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNAVAILABLE: 14,
} as const;

/** The gRPC status code of an error from a CSI call, or undefined when it is not one. */
export function grpcCode(e: unknown): number | undefined {
  const c = (e as { code?: unknown } | undefined)?.code;
  return typeof c === 'number' && c >= 0 && c < CODE_NAMES.length ? c : undefined;
}

/** An error's text as a Go sidecar logs it: gRPC errors as `rpc error: code = NotFound desc = …`. */
export function errorText(e: unknown): string {
  const code = grpcCode(e);
  if (code !== undefined) {
    const details = (e as { details?: unknown }).details;
    const desc = typeof details === 'string' ? details : (e as Error).message;
    return `rpc error: code = ${CODE_NAMES[code]} desc = ${desc}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Whether a failed operation may still be running in the driver (external-resizer
 * util.IsFinalError is the negation): cancelled, timed out, unavailable, aborted,
 * or not a gRPC error at all.
 */
export function mayBeInProgress(e: unknown): boolean {
  const c = grpcCode(e);
  return c === undefined || c === GRPC.CANCELLED || c === GRPC.DEADLINE_EXCEEDED || c === GRPC.UNAVAILABLE || c === GRPC.ABORTED;
}

/**
 * PV access modes to one CSI access mode (csi-lib-utils accessmodes.ToCSIAccessMode).
 * Throws the upstream message for combinations CSI cannot express.
 */
export function toCsiAccessMode(modes: readonly string[], singleNodeMultiWriter: boolean): string {
  const m = new Set(modes);
  if (m.has('ReadWriteOncePod')) {
    if (m.size > 1) throw new Error('CSI does not support ReadWriteOncePod with other access modes');
    return singleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
  }
  if (m.has('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (m.has('ReadOnlyMany') && m.has('ReadWriteOnce')) throw new Error('CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume');
  if (m.has('ReadOnlyMany')) return 'MULTI_NODE_READER_ONLY';
  if (m.has('ReadWriteOnce')) return singleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
  throw new Error(`unsupported AccessMode combination: [${[...modes].join(' ')}]`);
}

/** A CSI VolumeCapability message for a volume mode, fs type and mount flags. */
export function volumeCapability(block: boolean, mode: string, fsType: string, mountFlags: readonly string[] = []): Record<string, unknown> {
  return block ? { block: {}, access_mode: { mode } } : { mount: { fs_type: fsType, mount_flags: [...mountFlags] }, access_mode: { mode } };
}

/** The capability a PV is published with (external-attacher GetVolumeCapabilities). */
export function pvVolumeCapability(spec: PersistentVolumeSpec, singleNodeMultiWriter: boolean, defaultFsType = ''): Record<string, unknown> {
  if (!spec.csi) throw new Error('CSI volume source was nil');
  const mode = toCsiAccessMode(spec.accessModes ?? [], singleNodeMultiWriter);
  return volumeCapability(spec.volumeMode === 'Block', mode, spec.csi.fsType || defaultFsType, spec.mountOptions ?? []);
}

/** external-attacher SanitizeDriverName: anything but letters, digits and `-` becomes `-`; never ends with `-`. */
export function sanitizeDriverName(driver: string): string {
  const name = driver.replace(/[^a-zA-Z0-9-]/g, '-');
  return name.endsWith('-') ? `${name}X` : name;
}

/** `external-attacher/<sanitized driver>`, on VolumeAttachments and the PVs they use. */
export const attacherFinalizer = (driver: string): string => `external-attacher/${sanitizeDriverName(driver)}`;

/** external-provisioner getNameWithMaxLength: `base-suffix`, or `base-<sha256 prefix>` when that is too long. */
export function nameWithMaxLength(base: string, suffix: string, max: number): string {
  const name = `${base}-${suffix}`;
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex');
  return `${base}-${hash.slice(0, max - base.length - 1)}`;
}

export type Segments = Record<string, string>;

/** GenerateVolumeNodeAffinity: one term per accessible topology, one `In` expression per segment key. */
export function nodeAffinityFor(topologies: readonly { segments?: Segments }[] | undefined): PersistentVolumeSpec['nodeAffinity'] | undefined {
  const terms: NodeSelectorTerm[] = [];
  for (const t of topologies ?? []) {
    const keys = Object.keys(t.segments ?? {}).sort();
    if (!keys.length) continue;
    terms.push({ matchExpressions: keys.map((k) => ({ key: k, operator: 'In', values: [t.segments![k]!] })) });
  }
  return terms.length ? { required: { nodeSelectorTerms: terms } } : undefined;
}

function requirementMatches(r: { key: string; operator: string; values?: string[] }, labels: Segments): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'In':
      return has && (r.values ?? []).includes(v!);
    case 'NotIn':
      return !has || !(r.values ?? []).includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

/** VolumeIsAccessible: whether a PV's node affinity admits a node with these topology labels (no affinity admits all). */
export function volumeIsAccessible(affinity: PersistentVolumeSpec['nodeAffinity'], labels: Segments): boolean {
  const terms = affinity?.required?.nodeSelectorTerms;
  if (!terms) return true;
  return terms.some((t) => (t.matchExpressions?.length ?? 0) > 0 && t.matchExpressions!.every((r) => requirementMatches(r, labels)));
}

/** Whether a class's allowedTopologies admit these segments (no terms admit all). */
export function allowedTopologiesMatch(terms: readonly TopologySelectorTerm[] | undefined, segments: Segments): boolean {
  if (!terms?.length) return true;
  return terms.some((t) => (t.matchLabelExpressions ?? []).every((e) => Object.hasOwn(segments, e.key) && (e.values ?? []).includes(segments[e.key]!)));
}

const RESIZE_CONDITIONS = new Set(['FileSystemResizePending', 'Resizing', 'ControllerResizeError', 'NodeResizeError']);

/**
 * external-resizer MergeResizeConditionsOfPVC: conditions of other types are kept;
 * resize conditions are replaced by `resize` (an old one of the same type and
 * status is kept as it was, its transition time included).
 */
export function mergeResizeConditions(old: readonly ClaimCondition[] | undefined, resize: readonly ClaimCondition[], keepOld = false): ClaimCondition[] {
  const pending = new Map(resize.map((c) => [c.type, c]));
  const out: ClaimCondition[] = [];
  for (const c of old ?? []) {
    if (!RESIZE_CONDITIONS.has(c.type)) {
      out.push(c);
      continue;
    }
    const n = pending.get(c.type);
    if (n) {
      out.push(n.status !== c.status ? n : c);
      pending.delete(c.type);
    } else if (keepOld) out.push(c);
  }
  out.push(...pending.values());
  return out;
}
