/**
 * The options of the hostpath.csi.kubeling.io driver services and the resolved
 * configuration its services share (with the loaded volume records).
 */
import { resolve } from 'node:path';
import { VolumeState } from './state.js';

export const DEFAULT_DRIVER_NAME = 'hostpath.csi.kubeling.io';
/** The topology key of the node a volume lives on; its value is the node name. */
export const TOPOLOGY_KEY = 'topology.hostpath.kubeling.io/node';

export interface HostpathOptions {
  /** The CSI node ID: the node name. */
  nodeId: string;
  /** Where the volumes (`volumes/<id>`) and their records (`volumes.json`) live. */
  stateDir: string;
  /** The bytes the volumes of this node may add up to. */
  capacityBytes: number;
  /** NodeGetInfo's max_volumes_per_node and the attach limit; 0 or unset for no limit. */
  maxVolumesPerNode?: number | undefined;
  driverName?: string | undefined;
  version?: string | undefined;
}

export interface HostpathConfig {
  nodeId: string;
  capacityBytes: number;
  maxVolumesPerNode: number;
  driverName: string;
  version: string;
  topologyKey: string;
  state: VolumeState;
}

export function hostpathConfig(o: HostpathOptions): HostpathConfig {
  if (!o.nodeId) throw new Error('hostpath driver: nodeId is required');
  if (!o.stateDir) throw new Error('hostpath driver: stateDir is required');
  if (!Number.isSafeInteger(o.capacityBytes) || o.capacityBytes < 0) throw new Error(`hostpath driver: bad capacityBytes ${o.capacityBytes}`);
  return {
    nodeId: o.nodeId,
    capacityBytes: o.capacityBytes,
    maxVolumesPerNode: o.maxVolumesPerNode ?? 0,
    driverName: o.driverName ?? DEFAULT_DRIVER_NAME,
    version: o.version ?? '0.1.0',
    topologyKey: TOPOLOGY_KEY,
    state: new VolumeState(resolve(o.stateDir)),
  };
}
