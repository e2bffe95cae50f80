/**
 * The in-tree plugin registry and the default profile (kubernetes
 * pkg/scheduler/apis/config/v1 default_plugins.go): filters in upstream's order,
 * scores with upstream's weights. The in-tree EBS, GCE PD and Azure disk
 * limits are left out; VolumeBinding does not score (upstream's default).
 */
import type { Plugin } from '../framework/types.js';
import { InterPodAffinity } from './interpodaffinity/index.js';
import { NodeAffinity } from './nodeaffinity/index.js';
import { NodeName } from './nodename/index.js';
import { NodePorts } from './nodeports/index.js';
import { NodeResourcesBalancedAllocation, NodeResourcesFit } from './noderesources/index.js';
import { NodeUnschedulable } from './nodeunschedulable/index.js';
import { NodeVolumeLimits } from './nodevolumelimits/index.js';
import { PodTopologySpread } from './podtopologyspread/index.js';
import { TaintToleration } from './tainttoleration/index.js';
import { VolumeBinding, type VolumeBindingArgs } from './volumebinding/index.js';
import { VolumeRestrictions } from './volumerestrictions/index.js';
import { VolumeZone } from './volumezone/index.js';

/** A plugin's `args` from the profile's pluginConfig; each plugin reads the fields it knows. */
export type PluginArgs = Record<string, unknown>;

export type PluginFactory = (args: PluginArgs) => Plugin;

export const REGISTRY: Record<string, PluginFactory> = {
  NodeUnschedulable: () => new NodeUnschedulable(),
  NodeName: () => new NodeName(),
  TaintToleration: () => new TaintToleration(),
  NodeAffinity: () => new NodeAffinity(),
  NodePorts: () => new NodePorts(),
  NodeResourcesFit: (args) => new NodeResourcesFit(args),
  VolumeRestrictions: () => new VolumeRestrictions(),
  NodeVolumeLimits: () => new NodeVolumeLimits(),
  VolumeBinding: (args) => new VolumeBinding(args as VolumeBindingArgs),
  VolumeZone: () => new VolumeZone(),
  PodTopologySpread: () => new PodTopologySpread(),
  InterPodAffinity: () => new InterPodAffinity(),
  NodeResourcesBalancedAllocation: (args) => new NodeResourcesBalancedAllocation(args),
};

/** Plugins in the default profile with their score weights (0: filter only). */
export const DEFAULT_PLUGINS: { name: string; weight: number }[] = [
  { name: 'NodeUnschedulable', weight: 0 },
  { name: 'NodeName', weight: 0 },
  { name: 'TaintToleration', weight: 3 },
  { name: 'NodeAffinity', weight: 2 },
  { name: 'NodePorts', weight: 0 },
  { name: 'NodeResourcesFit', weight: 1 },
  { name: 'VolumeRestrictions', weight: 0 },
  { name: 'NodeVolumeLimits', weight: 0 },
  { name: 'VolumeBinding', weight: 0 },
  { name: 'VolumeZone', weight: 0 },
  { name: 'PodTopologySpread', weight: 2 },
  { name: 'InterPodAffinity', weight: 2 },
  { name: 'NodeResourcesBalancedAllocation', weight: 1 },
];
