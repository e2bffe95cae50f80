/**
 * The pure half of external-provisioner (pkg/controller/controller.go
 * prepareProvision, Provision, checkError): the CreateVolume request for a
 * claim of a class, and the PersistentVolume made from the driver's answer.
 * Nothing here talks to the API or the driver.
 */
import type { DriverInfo } from './deps.js';
import {
  ANN_PROVISIONED_BY,
  claimClass,
  PROVISIONER_FINALIZER,
  PROVISIONER_ID_KEY,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from './types.js';
import {
  allowedTopologiesMatch,
  bytesToQuantity,
  GRPC,
  grpcCode,
  mayBeInProgress,
  nodeAffinityFor,
  quantityBytes,
  volumeCapability,
  toCsiAccessMode,
} from './util.js';

const PREFIX = 'csi.storage.k8s.io/';
const FSTYPE_KEY = `${PREFIX}fstype`;
/** The reserved parameter keys external-provisioner consumes and strips before CreateVolume. */
const KNOWN_PREFIXED = new Set(
  [
    'fstype',
    'secret-name',
    'secret-namespace',
    'provisioner-secret-name',
    'provisioner-secret-namespace',
    'controller-publish-secret-name',
    'controller-publish-secret-namespace',
    'node-stage-secret-name',
    'node-stage-secret-namespace',
    'node-publish-secret-name',
    'node-publish-secret-namespace',
    'controller-expand-secret-name',
    'controller-expand-secret-namespace',
    'node-expand-secret-name',
    'node-expand-secret-namespace',
  ].map((k) => PREFIX + k),
);

/** The PV name for a claim (getProvisionedVolumeNameForClaim). */
export const pvNameFor = (claim: PersistentVolumeClaim): string => `pvc-${claim.metadata.uid}`;

/** A claim the driver cannot provision as asked: the message goes into a ProvisioningFailed event. */
export class ProvisionError extends Error {}

export interface Prepared {
  req: {
    name: string;
    capacity_range: { required_bytes: string };
    volume_capabilities: Record<string, unknown>[];
    parameters: Record<string, string>;
    accessibility_requirements?: { requisite: { segments: Record<string, string> }[]; preferred: { segments: Record<string, string> }[] };
  };
  fsType: string;
  block: boolean;
}

/** `{ ignored }`: someone else provisions it (an external populator); no PV is made here. */
export type PrepareResult = Prepared | { ignored: string };

/** removePrefixedParameters: the class parameters without the reserved `csi.storage.k8s.io/` keys. */
export function driverParameters(params: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    if (!k.startsWith(PREFIX)) out[k] = v;
    else if (!KNOWN_PREFIXED.has(k))
      throw new ProvisionError(`failed to strip CSI Parameters of prefixed keys: found unknown parameter key "${k}" with reserved namespace ${PREFIX}`);
  }
  return out;
}

function fsTypeOf(params: Record<string, string> | undefined, defaultFsType: string): string {
  let found = 0;
  let fsType = '';
  for (const [k, v] of Object.entries(params ?? {})) {
    if (k.toLowerCase() === 'fstype' || k === FSTYPE_KEY) {
      fsType = v;
      found++;
    }
  }
  if (found > 1) throw new ProvisionError(`fstype specified in parameters with both "fstype" and "${FSTYPE_KEY}" keys`);
  return fsType || defaultFsType;
}

/** The data source checks of prepareProvision: snapshots and clones need capabilities; other kinds belong to a populator. */
function checkDataSource(claim: PersistentVolumeClaim, driver: DriverInfo): string | undefined {
  const ds = claim.spec?.dataSource;
  if (!ds) return undefined;
  if (!ds.name) throw new ProvisionError(`the PVC source not found for PVC ${claim.metadata.name}`);
  if (ds.kind === 'VolumeSnapshot') {
    if (ds.apiGroup !== 'snapshot.storage.k8s.io')
      throw new ProvisionError(`the PVC source does not belong to the right APIGroup. Expected snapshot.storage.k8s.io, Got ${ds.apiGroup ?? ''}`);
    if (!driver.controller.has('CREATE_DELETE_SNAPSHOT'))
      throw new ProvisionError('CSI driver does not support snapshot restore: controller CREATE_DELETE_SNAPSHOT capability is not reported');
    return undefined;
  }
  if (ds.kind === 'PersistentVolumeClaim') {
    if (!driver.controller.has('CLONE_VOLUME'))
      throw new ProvisionError('CSI driver does not support clone operations: controller CLONE_VOLUME capability is not reported');
    return undefined;
  }
  return `data source (${ds.kind}) is not handled by the provisioner, assuming an external populator will provision it`;
}

/** prepareProvision: checks a claim against the driver and builds CreateVolume; throws ProvisionError. */
export function prepareProvision(claim: PersistentVolumeClaim, sc: StorageClass, driver: DriverInfo, defaultFsType = ''): PrepareResult {
  if (!driver.plugin.has('CONTROLLER_SERVICE'))
    throw new ProvisionError('CSI driver does not support dynamic provisioning: plugin CONTROLLER_SERVICE capability is not reported');
  if (!driver.controller.has('CREATE_DELETE_VOLUME'))
    throw new ProvisionError('CSI driver does not support dynamic provisioning: controller CREATE_DELETE_VOLUME capability is not reported');
  const ignored = checkDataSource(claim, driver);
  if (ignored) return { ignored };
  if (claim.spec?.selector) throw new ProvisionError('claim Selector is not supported');
  if (!claim.metadata.uid) throw new ProvisionError('corrupted PVC object, it is missing UID');
  const fsType = fsTypeOf(sc.parameters, defaultFsType);
  const block = claim.spec?.volumeMode === 'Block';
  const snmw = driver.controller.has('SINGLE_NODE_MULTI_WRITER');
  let caps: Record<string, unknown>[];
  try {
    caps = (claim.spec?.accessModes ?? []).map((m) => volumeCapability(block, toCsiAccessMode([m], snmw), fsType, sc.mountOptions ?? []));
  } catch (e) {
    throw new ProvisionError((e as Error).message);
  }
  const req: Prepared['req'] = {
    name: pvNameFor(claim),
    capacity_range: { required_bytes: String(quantityBytes(claim.spec?.resources?.requests?.storage)) },
    volume_capabilities: caps,
    parameters: driverParameters(sc.parameters),
  };
  if (driver.plugin.has('VOLUME_ACCESSIBILITY_CONSTRAINTS') && driver.topology) {
    // Node deployment: the only topology this instance can serve is its own node's.
    if (!allowedTopologiesMatch(sc.allowedTopologies, driver.topology))
      throw new ProvisionError(`error generating accessibility requirements: no available topology found for node "${driver.nodeName}"`);
    const own = { segments: { ...driver.topology } };
    req.accessibility_requirements = { requisite: [own], preferred: [own] };
  }
  return { req, fsType, block };
}

/** What to do after a failed CreateVolume (checkError): retry, give up on this node, or retry as a fresh attempt. */
export type FailureState = 'inBackground' | 'reschedule' | 'finished';

export function provisionFailureState(e: unknown, mayReschedule: boolean): FailureState {
  if (grpcCode(e) === GRPC.RESOURCE_EXHAUSTED) return mayReschedule ? 'reschedule' : 'finished';
  return mayBeInProgress(e) ? 'inBackground' : 'finished';
}

export interface CreatedVolume {
  volume_id: string;
  capacity_bytes?: string | number;
  volume_context?: Record<string, string>;
  accessible_topology?: { segments?: Record<string, string> }[];
}

/**
 * The PersistentVolume for a claim whose volume the driver created (Provision +
 * provisionClaimOperation): capacity, access modes, the CSI source with the
 * provisioner identity, claimRef, class, reclaim policy, mount options,
 * volume mode, node affinity from the volume's topology, the provisioned-by
 * annotation and the provisioner's finalizer.
 */
export function buildPersistentVolume(
  claim: PersistentVolumeClaim,
  sc: StorageClass,
  driver: DriverInfo,
  identity: string,
  prepared: Prepared,
  vol: CreatedVolume,
  capacityBytes: number,
): PersistentVolume {
  const spec: NonNullable<PersistentVolume['spec']> = {
    accessModes: [...(claim.spec?.accessModes ?? [])],
    capacity: { storage: bytesToQuantity(capacityBytes) },
    csi: {
      driver: driver.name,
      volumeHandle: vol.volume_id,
      ...(prepared.block || !prepared.fsType ? {} : { fsType: prepared.fsType }),
      volumeAttributes: { [PROVISIONER_ID_KEY]: identity, ...(vol.volume_context ?? {}) },
    },
    claimRef: {
      kind: 'PersistentVolumeClaim',
      namespace: claim.metadata.namespace!,
      name: claim.metadata.name!,
      uid: claim.metadata.uid!,
      apiVersion: 'v1',
      resourceVersion: claim.metadata.resourceVersion!,
    },
    storageClassName: claimClass(claim),
  };
  if (sc.mountOptions?.length) spec.mountOptions = [...sc.mountOptions];
  if (sc.reclaimPolicy) spec.persistentVolumeReclaimPolicy = sc.reclaimPolicy;
  if (claim.spec?.volumeMode) spec.volumeMode = claim.spec.volumeMode;
  if (driver.plugin.has('VOLUME_ACCESSIBILITY_CONSTRAINTS')) {
    const affinity = nodeAffinityFor(vol.accessible_topology);
    if (affinity) spec.nodeAffinity = affinity;
  }
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: prepared.req.name, annotations: { [ANN_PROVISIONED_BY]: driver.name }, finalizers: [PROVISIONER_FINALIZER] },
    spec,
  };
}

/** The capacity to record: the driver's, or the request when it answered 0 (unknown); less than asked is an error. */
export function createdCapacity(vol: CreatedVolume, requested: number): number {
  const got = Number(vol.capacity_bytes ?? 0);
  if (got === 0) return requested;
  if (got < requested) throw new ProvisionError(`created volume capacity ${got} less than requested capacity ${requested}`);
  return got;
}
