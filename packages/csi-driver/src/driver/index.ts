/**
 * The hostpath.csi.kubeling.io CSI driver's services: volumes are folders under
 * the driver's state folder on one node, published by symbolic links.
 * `hostpathServices(o)` gives the Identity, Controller and Node handler maps
 * that `serveCsi` of @kubeling/csi exposes on the driver socket.
 */
import type { CsiServices } from '@kubeling/csi';
import { hostpathConfig, type HostpathOptions } from './config.js';
import { controllerService, identityService } from './controller.js';
import { nodeService } from './node.js';

export { DEFAULT_DRIVER_NAME, type HostpathOptions, TOPOLOGY_KEY } from './config.js';
export { DEFAULT_VOLUME_BYTES } from './controller.js';

/** Loads the volume records of `o.stateDir` and returns the driver's services. */
export function hostpathServices(o: HostpathOptions): CsiServices {
  const c = hostpathConfig(o);
  return { Identity: identityService(c), Controller: controllerService(c), Node: nodeService(c) };
}
