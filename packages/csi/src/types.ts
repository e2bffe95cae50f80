/**
 * TypeScript shapes of the CSI v1 messages the kubeling components exchange,
 * as proto-loader presents them (snake_case fields, int64 as decimal strings,
 * enums as names, a oneof's member set and its name in the oneof field).
 * Requests may give int64 fields as numbers; responses carry strings.
 */

/** The kubelet plugin type of a CSI driver (pluginregistration PluginInfo.type). */
export const CSI_PLUGIN_TYPE = 'CSIPlugin';

export type AccessModeName =
  | 'UNKNOWN'
  | 'SINGLE_NODE_WRITER'
  | 'SINGLE_NODE_READER_ONLY'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER'
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 'SINGLE_NODE_MULTI_WRITER';

export interface VolumeCapability {
  mount?: { fs_type?: string; mount_flags?: string[]; volume_mount_group?: string } | null;
  block?: Record<string, never> | null;
  access_type?: 'mount' | 'block';
  access_mode?: { mode: AccessModeName } | null;
}

export interface CapacityRange {
  required_bytes?: string | number;
  limit_bytes?: string | number;
}

export interface Topology {
  segments: Record<string, string>;
}

export interface TopologyRequirement {
  requisite?: Topology[];
  preferred?: Topology[];
}

export interface Volume {
  capacity_bytes: string;
  volume_id: string;
  volume_context: Record<string, string>;
  content_source?: unknown;
  accessible_topology: Topology[];
}

export interface CreateVolumeRequest {
  name: string;
  capacity_range?: CapacityRange | null;
  volume_capabilities: VolumeCapability[];
  parameters?: Record<string, string>;
  secrets?: Record<string, string>;
  accessibility_requirements?: TopologyRequirement | null;
  mutable_parameters?: Record<string, string>;
}

export interface NodeGetInfoResponse {
  node_id: string;
  max_volumes_per_node: string;
  accessible_topology: Topology | null;
}

export interface VolumeUsage {
  available: string;
  total: string;
  used: string;
  unit: 'UNKNOWN' | 'BYTES' | 'INODES';
}
