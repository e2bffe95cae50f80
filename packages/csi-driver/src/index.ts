/**
 * The hostpath.csi.kubeling.io CSI plugin: the process's parts, for its tests and
 * for tools that run a node's driver in-process. Components never import it.
 */
export { type CsiDriverOptions, DRIVER_NAME, type RunningCsiDriver, startCsiDriver } from './plugin.js';
export { Attacher } from './sidecars/attacher.js';
export { CapacityPublisher, managedBy } from './sidecars/capacity.js';
export type { CsiCall, DriverInfo, KubeApi, Lister, Recorder } from './sidecars/deps.js';
export { Provisioner } from './sidecars/provisioner.js';
export { registrationSocketName } from './sidecars/registrar.js';
export { Resizer } from './sidecars/resizer.js';
