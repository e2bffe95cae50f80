/**
 * The hostpath driver's Node service: staging and publishing make the
 * staging and target paths symbolic links to the volume's folder, recorded
 * with their access mode and readonly flag; unstaging and unpublishing remove
 * only those links. Follows csi-driver-host-path pkg/hostpath/nodeserver.go
 * and the CSI spec's NodePublishVolume table (a second target path is OK
 * except for SINGLE_NODE_SINGLE_WRITER, as Kubernetes lets several pods of a
 * node share a ReadWriteOnce volume).
 */
import type { CsiHandler } from '@kubeling/csi';
import { alreadyExists, failedPrecondition, invalid, notFound, outOfRange, requestedBytes, requestPath, requireCapability, volumeNotFound } from './args.js';
import type { HostpathConfig } from './config.js';
import { volumeCondition } from './controller.js';
import { diskUsage, inspect, linkTo, unlinkIfTo } from './links.js';
import type { VolumeRecord } from './state.js';

const NODE_CAPABILITIES = ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME', 'VOLUME_CONDITION', 'SINGLE_NODE_MULTI_WRITER'];

function volume(c: HostpathConfig, id: string): VolumeRecord {
  const v = c.state.get(id);
  if (!v) throw volumeNotFound(id);
  return v;
}

function nodeStage(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  if (!req.staging_target_path) throw invalid('Staging target path missing in request');
  if (!req.volume_capability) throw invalid('Volume Capability missing in request');
  const mode = requireCapability(req.volume_capability);
  const path = requestPath(req.staging_target_path, 'Staging target path missing in request', c.state.stateDir);
  const v = volume(c, req.volume_id);
  if (!v.attached) throw failedPrecondition(`volume ${v.id} is not attached to node ${c.nodeId}: ControllerPublishVolume must succeed first`);
  const staged = v.staged[path];
  if (staged && staged.mode !== mode) {
    throw alreadyExists(`volume ${v.id} is already staged at ${path} with access mode ${staged.mode}, not ${mode}`);
  }
  linkTo(path, c.state.volumePath(v.id));
  if (!staged) c.state.put({ ...v, staged: { ...v.staged, [path]: { mode } } });
  return {};
}

function nodeUnstage(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  const path = requestPath(req.staging_target_path, 'Staging target path missing in request', c.state.stateDir);
  const v = volume(c, req.volume_id);
  unlinkIfTo(path, c.state.volumePath(v.id));
  if (v.staged[path]) {
    const { [path]: _, ...rest } = v.staged;
    c.state.put({ ...v, staged: rest });
  }
  return {};
}

function nodePublish(c: HostpathConfig, req: any) {
  if (!req.volume_capability) throw invalid('Volume capability missing in request');
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  if (!req.target_path) throw invalid('Target path missing in request');
  const mode = requireCapability(req.volume_capability);
  const target = requestPath(req.target_path, 'Target path missing in request', c.state.stateDir);
  if (!req.staging_target_path) throw failedPrecondition('Staging target path missing in request');
  const staging = requestPath(req.staging_target_path, 'Staging target path missing in request', c.state.stateDir);
  const v = volume(c, req.volume_id);
  if (!v.staged[staging]) throw failedPrecondition(`volume ${v.id} is not staged at ${staging}: NodeStageVolume must succeed first`);
  const readonly = !!req.readonly;

  const existing = v.published[target];
  if (existing && (existing.readonly !== readonly || existing.mode !== mode || existing.stagingPath !== staging)) {
    throw alreadyExists(
      `volume ${v.id} is already published at ${target} with different arguments (readonly: ${existing.readonly}, access mode: ${existing.mode})`,
    );
  }
  for (const other of c.state.list()) {
    if (other.id !== v.id && other.published[target]) throw alreadyExists(`target path ${target} is already used by volume ${other.id}`);
  }
  if (!existing) {
    const elsewhere = Object.entries(v.published).find(
      ([t, p]) => t !== target && (p.mode === 'SINGLE_NODE_SINGLE_WRITER' || mode === 'SINGLE_NODE_SINGLE_WRITER'),
    );
    if (elsewhere) throw failedPrecondition(`volume ${v.id} is already published at ${elsewhere[0]} and SINGLE_NODE_SINGLE_WRITER allows one`);
  }
  linkTo(target, c.state.volumePath(v.id));
  if (!existing) c.state.put({ ...v, published: { ...v.published, [target]: { readonly, mode, stagingPath: staging } } });
  return {};
}

function nodeUnpublish(c: HostpathConfig, req: any) {
  if (!req.volume_id) throw invalid('Volume ID missing in request');
  const target = requestPath(req.target_path, 'Target path missing in request', c.state.stateDir);
  const v = volume(c, req.volume_id);
  unlinkIfTo(target, c.state.volumePath(v.id));
  if (v.published[target]) {
    const { [target]: _, ...rest } = v.published;
    c.state.put({ ...v, published: rest });
  }
  return {};
}

/** The volume at `path`: it must be staged or published there and the link must exist. */
function volumeAt(c: HostpathConfig, id: string, rawPath: unknown, missing: string): { v: VolumeRecord; path: string } {
  if (!id) throw invalid('Volume ID not provided');
  const path = requestPath(rawPath, missing, c.state.stateDir);
  const v = volume(c, id);
  if (!v.published[path] && !v.staged[path]) throw notFound(`volume ${id} is not staged or published at ${path}`);
  const at = inspect(path);
  if (at.kind !== 'link' || at.to !== c.state.volumePath(v.id)) throw notFound(`Could not get file information from ${path}: no link to volume ${id}`);
  return { v, path };
}

async function nodeGetVolumeStats(c: HostpathConfig, req: any) {
  const { v } = volumeAt(c, req.volume_id, req.volume_path, 'Volume Path not provided');
  const total = v.nodeCapacityBytes;
  const { bytes } = await diskUsage(c.state.volumePath(v.id));
  return {
    usage: [{ unit: 'BYTES', total: String(total), used: String(bytes), available: String(Math.max(0, total - bytes)) }],
    volume_condition: volumeCondition(c.state, v),
  };
}

function nodeExpand(c: HostpathConfig, req: any) {
  if (req.volume_capability) requireCapability(req.volume_capability);
  const { v } = volumeAt(c, req.volume_id, req.volume_path, 'Volume path not provided');
  const required = requestedBytes(req.capacity_range, 0);
  if (required > v.capacityBytes) {
    throw outOfRange(`requested capacity ${required} exceeds the capacity ${v.capacityBytes} of volume ${v.id}: ControllerExpandVolume must grow it first`);
  }
  const size = required > 0 ? Math.max(required, v.nodeCapacityBytes) : v.capacityBytes;
  if (size !== v.nodeCapacityBytes) c.state.put({ ...v, nodeCapacityBytes: size });
  return { capacity_bytes: String(size) };
}

export function nodeService(c: HostpathConfig): Record<string, CsiHandler> {
  return {
    NodeStageVolume: async (req) => nodeStage(c, req),
    NodeUnstageVolume: async (req) => nodeUnstage(c, req),
    NodePublishVolume: async (req) => nodePublish(c, req),
    NodeUnpublishVolume: async (req) => nodeUnpublish(c, req),
    NodeGetVolumeStats: (req) => nodeGetVolumeStats(c, req),
    NodeExpandVolume: async (req) => nodeExpand(c, req),
    NodeGetCapabilities: async () => ({ capabilities: NODE_CAPABILITIES.map((type) => ({ rpc: { type } })) }),
    NodeGetInfo: async () => ({
      node_id: c.nodeId,
      max_volumes_per_node: String(c.maxVolumesPerNode),
      accessible_topology: { segments: { [c.topologyKey]: c.nodeId } },
    }),
  };
}
