/**
 * Request checks shared by the hostpath driver's services: gRPC errors with
 * the messages csi-driver-host-path uses, volume capability checks (only the
 * mount access type and the single-node access modes), int64 fields,
 * capacity ranges, topology and request paths.
 */
import { isAbsolute, normalize, relative } from 'node:path';
import { CsiError, grpcStatus, type Topology, type VolumeCapability } from '@kubeling/csi';

export const invalid = (msg: string) => new CsiError(grpcStatus.INVALID_ARGUMENT, msg);
export const notFound = (msg: string) => new CsiError(grpcStatus.NOT_FOUND, msg);
export const alreadyExists = (msg: string) => new CsiError(grpcStatus.ALREADY_EXISTS, msg);
export const failedPrecondition = (msg: string) => new CsiError(grpcStatus.FAILED_PRECONDITION, msg);
export const resourceExhausted = (msg: string) => new CsiError(grpcStatus.RESOURCE_EXHAUSTED, msg);
export const outOfRange = (msg: string) => new CsiError(grpcStatus.OUT_OF_RANGE, msg);
export const aborted = (msg: string) => new CsiError(grpcStatus.ABORTED, msg);

/** The message csi-driver-host-path's state package gives for an unknown volume ID. */
export const volumeNotFound = (id: string) => notFound(`volume id ${id} does not exist in the volumes list`);

/** The access modes a volume on one node's disk can honour. */
export const SUPPORTED_MODES: ReadonlySet<string> = new Set([
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
]);

/** Why a capability cannot be served, or undefined when it can; a malformed capability throws INVALID_ARGUMENT. */
export function capabilityProblem(cap: VolumeCapability | null | undefined): string | undefined {
  if (!cap) throw invalid('Volume capability missing in request');
  if (!cap.mount && !cap.block) throw invalid('cannot have both mount and block access type be undefined');
  if (cap.mount && cap.block) throw invalid('cannot have both block and mount access type');
  const mode = cap.access_mode?.mode;
  if (!mode || mode === 'UNKNOWN') throw invalid('Volume access mode missing in request');
  if (cap.block) return 'block access type is not supported: volumes are directories';
  if (!SUPPORTED_MODES.has(String(mode))) return `access mode ${mode} is not supported: volumes are on one node`;
  return undefined;
}

/** Checks a capability an RPC is to serve: unsupported is INVALID_ARGUMENT. Returns its access mode. */
export function requireCapability(cap: VolumeCapability | null | undefined): string {
  const problem = capabilityProblem(cap);
  if (problem) throw invalid(problem);
  return String(cap!.access_mode!.mode);
}

/** An int64 field (a decimal string or a number) as a non-negative integer; 0 when unset. */
export function int64(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw invalid(`${field} is not an integer: ${String(v)}`);
  if (n < 0) throw invalid(`${field} must not be negative: ${n}`);
  return n;
}

/** The size a capacity range asks for: `required_bytes`, else `limit_bytes` or `fallback` when smaller, else `fallback`. */
export function requestedBytes(range: { required_bytes?: unknown; limit_bytes?: unknown } | null | undefined, fallback: number): number {
  const required = int64(range?.required_bytes, 'capacity_range.required_bytes');
  const limit = int64(range?.limit_bytes, 'capacity_range.limit_bytes');
  if (limit > 0 && required > limit) throw outOfRange(`required bytes ${required} exceed limit bytes ${limit}`);
  if (required > 0) return required;
  if (limit > 0) return Math.min(limit, fallback);
  return fallback;
}

/** The limit of a capacity range, or Infinity when unset. */
export function limitBytes(range: { limit_bytes?: unknown } | null | undefined): number {
  const limit = int64(range?.limit_bytes, 'capacity_range.limit_bytes');
  return limit > 0 ? limit : Number.POSITIVE_INFINITY;
}

/** Whether a topology segment map names this node (the only topology a volume of this driver has). */
export function topologyMatches(t: Topology | null | undefined, key: string, nodeId: string): boolean {
  const segments = t?.segments ?? {};
  return Object.entries(segments).every(([k, v]) => k === key && v === nodeId) && segments[key] === nodeId;
}

/**
 * A path from a request: required, absolute, normalised, and outside the
 * driver's own state folder (a request must never make the driver replace or
 * remove its volumes).
 */
export function requestPath(p: unknown, missing: string, stateDir: string): string {
  if (typeof p !== 'string' || p === '') throw invalid(missing);
  if (!isAbsolute(p)) throw invalid(`path ${p} is not absolute`);
  const n = normalize(p);
  const rel = relative(stateDir, n);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw invalid(`path ${p} is inside the driver's state folder`);
  return n;
}

/** A byte count as resource.Quantity prints it in the BinarySI format (`1Gi`, `512Mi`, `1500`). */
export function binarySI(n: number): string {
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let i = 0;
  while (i < suffixes.length - 1 && n !== 0 && n % 1024 === 0) {
    n /= 1024;
    i++;
  }
  return `${n}${suffixes[i]}`;
}

export function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const ka = Object.keys(x);
  return ka.length === Object.keys(y).length && ka.every((k) => y[k] === x[k]);
}
