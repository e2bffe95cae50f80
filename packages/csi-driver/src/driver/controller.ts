/**
 * The hostpath driver's Identity and Controller services. Volumes are
 * folders on this node, so every volume is accessible from this node only
 * (topology `topology.hostpath.kubeling.io/node`), the controller publishes
 * to this node only, and the node's capacity is shared by the volumes.
 * Follows csi-driver-host-path pkg/hostpath (identityserver.go,
 * controllerserver.go, hostpath.go) and the CSI spec's error tables.
 */
import { randomUUID } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, rmSync } from 'node:fs';
import type { CsiHandler, VolumeCapability } from '@kubeling/csi';
import {
  aborted,
  alreadyExists,
  binarySI,
  capabilityProblem,
  failedPrecondition,
  invalid,
  limitBytes,
  notFound,
  outOfRange,
  requestedBytes,
  requireCapability,
  resourceExhausted,
  sameMap,
  topologyMatches,
  volumeNotFound,
} from './args.js';
import type { HostpathConfig } from './config.js';
import { inspect } from './links.js';
import type { VolumeRecord, VolumeState } from './state.js';

/** The size of a volume whose CreateVolume gives no capacity range. */
export const DEFAULT_VOLUME_BYTES = 1024 * 1024 * 1024;

export function identityService(c: HostpathConfig): Record<string, CsiHandler> {
  return {
    GetPluginInfo: async () => ({ name: c.driverName, vendor_version: c.version }),
    GetPluginCapabilities: async () => ({
      capabilities: [
        { service: { type: 'CONTROLLER_SERVICE' } },
        { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' } },
        { volume_expansion: { type: 'ONLINE' } },
      ],
    }),
    Probe: async () => {
      try {
        accessSync(c.state.volumesDir, constants.W_OK);
      } catch (e) {
        throw failedPrecondition(`state directory is not writable: ${(e as Error).message}`);
      }
      return { ready: { value: true } };
    },
  };
}

const CONTROLLER_CAPABILITIES = [
  'CREATE_DELETE_VOLUME',
  'PUBLISH_UNPUBLISH_VOLUME',
  'LIST_VOLUMES',
  'GET_CAPACITY',
  'EXPAND_VOLUME',
  'GET_VOLUME',
  'VOLUME_CONDITION',
  'SINGLE_NODE_MULTI_WRITER',
];

/** The volume as CreateVolume, ListVolumes and ControllerGetVolume report it. */
export function csiVolume(c: HostpathConfig, v: VolumeRecord) {
  return {
    volume_id: v.id,
    capacity_bytes: String(v.capacityBytes),
    volume_context: v.parameters,
    accessible_topology: [{ segments: { [c.topologyKey]: c.nodeId } }],
  };
}

/** VolumeCondition: abnormal when the volume's folder is gone. */
export function volumeCondition(state: VolumeState, v: VolumeRecord) {
  return existsSync(state.volumePath(v.id))
    ? { abnormal: false, message: 'volume is healthy' }
    : { abnormal: true, message: `The volume directory ${state.volumePath(v.id)} does not exist` };
}

function volumeStatus(c: HostpathConfig, v: VolumeRecord) {
  return { published_node_ids: v.attached ? [c.nodeId] : [], volume_condition: volumeCondition(c.state, v) };
}

function checkCapabilities(caps: VolumeCapability[] | undefined): void {
  if (!caps?.length) throw invalid('Volume Capabilities missing in request');
  for (const cap of caps) requireCapability(cap);
}

/** Fails unless this node can hold `extra` more bytes. */
function checkCapacity(c: HostpathConfig, size: number, extra: number): void {
  if (size > c.capacityBytes) throw outOfRange(`Requested capacity ${size} exceeds maximum allowed ${c.capacityBytes}`);
  const used = c.state.usedBytes();
  if (used + extra > c.capacityBytes) {
    throw resourceExhausted(
      `requested capacity ${size} exceeds remaining capacity for node "${c.nodeId}", ${binarySI(used)} out of ${binarySI(c.capacityBytes)} already used`,
    );
  }
}

function checkTopology(c: HostpathConfig, req: any): void {
  const requisite: any[] = req.accessibility_requirements?.requisite ?? [];
  if (requisite.length && !requisite.some((t) => topologyMatches(t, c.topologyKey, c.nodeId))) {
    throw resourceExhausted(`volumes of node "${c.nodeId}" are only accessible from {${c.topologyKey}: ${c.nodeId}}, not from the requisite topology`);
  }
}

function createVolume(c: HostpathConfig, req: any) {
  if (!req.name) throw invalid('Name missing in request');
  checkCapabilities(req.volume_capabilities);
  if (req.volume_content_source?.type) throw invalid('volume content source is not supported');
  if (Object.keys(req.mutable_parameters ?? {}).length) throw invalid('mutable parameters are not supported');
  const size = requestedBytes(req.capacity_range, DEFAULT_VOLUME_BYTES);
  checkTopology(c, req);
  const parameters: Record<string, string> = req.parameters ?? {};

  const existing = c.state.byName(req.name);
  if (existing) {
    const required = requestedBytes(req.capacity_range, 0);
    if (existing.capacityBytes < required || existing.capacityBytes > limitBytes(req.capacity_range)) {
      throw alreadyExists(`Volume with the same name: ${req.name} but with different size already exist`);
    }
    if (!sameMap(existing.parameters, parameters)) throw alreadyExists(`Volume with the same name: ${req.name} but with different parameters already exist`);
    mkdirSync(c.state.volumePath(existing.id), { recursive: true });
    return { volume: csiVolume(c, existing) };
  }

  checkCapacity(c, size, size);
  const id = randomUUID();
  mkdirSync(c.state.volumePath(id), { recursive: true, mode: 0o777 });
  const v: VolumeRecord = {
    id,
    name: req.name,
    capacityBytes: size,
    nodeCapacityBytes: size,
    parameters,
    createdAt: new Date().toISOString(),
    attached: null,
    staged: {},
    published: {},
  };
  c.state.put(v);
  return { volume: csiVolume(c, v) };
}

function deleteVolume(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  const v = c.state.get(req.volume_id);
  // A volume that does not exist (or no longer does) is deleted: OK.
  if (!v) return {};
  // Records whose link is gone (a node path removed behind the driver's back) do not hold the volume.
  const volumePath = c.state.volumePath(v.id);
  const live = (paths: Record<string, unknown>) =>
    Object.keys(paths).filter((p) => {
      const at = inspect(p);
      return at.kind === 'link' && at.to === volumePath;
    });
  const staged = live(v.staged);
  const published = live(v.published);
  if (v.attached || staged.length || published.length) {
    throw failedPrecondition(
      `Volume '${v.id}' is still used (attached: ${!!v.attached}, staged: [${staged.join(' ')}], published: [${published.join(' ')}]) by '${c.nodeId}' node`,
    );
  }
  if (c.state.isVolumeId(v.id)) rmSync(c.state.volumePath(v.id), { recursive: true, force: true });
  c.state.delete(v.id);
  return {};
}

function controllerPublish(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID cannot be empty');
  if (!req.node_id) throw invalid('Node ID cannot be empty');
  if (!req.volume_capability) throw invalid('Volume Capabilities cannot be empty');
  requireCapability(req.volume_capability);
  if (req.node_id !== c.nodeId) throw notFound(`Not matching Node ID ${req.node_id} to hostpath Node ID ${c.nodeId}`);
  const v = c.state.get(req.volume_id);
  if (!v) throw volumeNotFound(req.volume_id);
  const readonly = !!req.readonly;
  if (v.attached) {
    if (v.attached.readonly !== readonly) throw alreadyExists('Volume published but has incompatible readonly flag');
    return { publish_context: {} };
  }
  if (c.maxVolumesPerNode > 0 && c.state.attachedCount() >= c.maxVolumesPerNode) {
    throw resourceExhausted(`Cannot attach any more volumes to this node ('${c.nodeId}')`);
  }
  c.state.put({ ...v, attached: { readonly } });
  return { publish_context: {} };
}

function controllerUnpublish(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID cannot be empty');
  // An empty node ID means every node, which is this one.
  if (req.node_id && req.node_id !== c.nodeId) throw notFound(`Node ID ${req.node_id} does not match to expected Node ID ${c.nodeId}`);
  const v = c.state.get(req.volume_id);
  // A volume that does not exist is not published.
  if (!v?.attached) return {};
  c.state.put({ ...v, attached: null });
  return {};
}

function validateVolumeCapabilities(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID cannot be empty');
  if (!req.volume_capabilities?.length) throw invalid('Volume Capabilities cannot be empty');
  if (!c.state.get(req.volume_id)) throw volumeNotFound(req.volume_id);
  for (const cap of req.volume_capabilities) {
    const problem = capabilityProblem(cap);
    if (problem) return { message: problem };
  }
  return {
    confirmed: {
      volume_context: req.volume_context ?? {},
      volume_capabilities: req.volume_capabilities,
      parameters: req.parameters ?? {},
    },
  };
}

function listVolumes(c: HostpathConfig, req: any) {
  const max = Number(req.max_entries ?? 0);
  if (max < 0) throw invalid(`max_entries must not be negative: ${max}`);
  const volumes = c.state.list();
  let start = 0;
  if (req.starting_token) {
    if (!/^\d+$/.test(req.starting_token) || Number(req.starting_token) > volumes.length) {
      throw aborted(`invalid starting token ${JSON.stringify(req.starting_token)}`);
    }
    start = Number(req.starting_token);
  }
  const end = max > 0 ? Math.min(volumes.length, start + max) : volumes.length;
  return {
    entries: volumes.slice(start, end).map((v) => ({ volume: csiVolume(c, v), status: volumeStatus(c, v) })),
    next_token: end < volumes.length ? String(end) : '',
  };
}

function getCapacity(c: HostpathConfig, req: any) {
  const none = { available_capacity: '0', maximum_volume_size: { value: '0' }, minimum_volume_size: { value: '0' } };
  if (req.accessible_topology && !topologyMatches(req.accessible_topology, c.topologyKey, c.nodeId)) return none;
  // external-provisioner's capacity controller asks with access mode UNKNOWN: only the access type matters then.
  for (const cap of req.volume_capabilities ?? []) {
    if (cap?.access_mode?.mode === 'UNKNOWN' || !cap?.access_mode?.mode) {
      if (cap?.block) return none;
      continue;
    }
    if (capabilityProblem(cap)) return none;
  }
  const available = Math.max(0, c.capacityBytes - c.state.usedBytes());
  return { available_capacity: String(available), maximum_volume_size: { value: String(available) }, minimum_volume_size: { value: '0' } };
}

function controllerExpand(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  if (!req.capacity_range) throw invalid('Capacity range not provided');
  if (req.volume_capability) requireCapability(req.volume_capability);
  const required = requestedBytes(req.capacity_range, 0);
  const v = c.state.get(req.volume_id);
  if (!v) throw volumeNotFound(req.volume_id);
  if (v.capacityBytes > limitBytes(req.capacity_range)) {
    throw outOfRange(`volume ${v.id} is already ${v.capacityBytes} bytes, more than the limit ${limitBytes(req.capacity_range)}`);
  }
  if (required > v.capacityBytes) {
    checkCapacity(c, required, required - v.capacityBytes);
    c.state.put({ ...v, capacityBytes: required });
  }
  return { capacity_bytes: String(Math.max(required, v.capacityBytes)), node_expansion_required: true };
}

function controllerGetVolume(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  const v = c.state.get(req.volume_id);
  if (!v) throw volumeNotFound(req.volume_id);
  return { volume: csiVolume(c, v), status: volumeStatus(c, v) };
}

export function controllerService(c: HostpathConfig): Record<string, CsiHandler> {
  return {
    CreateVolume: async (req) => createVolume(c, req),
    DeleteVolume: async (req) => deleteVolume(c, req),
    ControllerPublishVolume: async (req) => controllerPublish(c, req),
    ControllerUnpublishVolume: async (req) => controllerUnpublish(c, req),
    ValidateVolumeCapabilities: async (req) => validateVolumeCapabilities(c, req),
    ListVolumes: async (req) => listVolumes(c, req),
    GetCapacity: async (req) => getCapacity(c, req),
    ControllerGetCapabilities: async () => ({ capabilities: CONTROLLER_CAPABILITIES.map((type) => ({ rpc: { type } })) }),
    ControllerExpandVolume: async (req) => controllerExpand(c, req),
    ControllerGetVolume: async (req) => controllerGetVolume(c, req),
  };
}
