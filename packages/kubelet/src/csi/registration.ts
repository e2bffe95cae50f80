/**
 * The CSI plugin handler of the kubelet's plugin manager (kubernetes
 * pkg/volume/csi/csi_plugin.go RegistrationHandler): a plugin of type
 * `CSIPlugin` is validated by its supported versions, registered under its
 * name with its endpoint, asked for its node information (NodeGetInfo), and
 * installed on the Node and the CSINode; if any step fails the driver is
 * unregistered again. A plugin whose socket went away is unregistered and
 * uninstalled.
 */
import type { Logger } from 'pino';
import { CSI_TIMEOUT_MS, type DriverRegistry } from './drivers.js';
import type { NodeInfoManager } from './nodeinfo.js';

/** What the plugin watcher asks of a handler of one plugin type (upstream's PluginHandler). */
export interface PluginHandler {
  validate(name: string, endpoint: string, versions: string[]): void;
  register(name: string, endpoint: string, versions: string[]): Promise<void>;
  deregister(name: string): Promise<void>;
}

export const CSI_PLUGIN_TYPE = 'CSIPlugin';

interface NodeGetInfoResponse {
  node_id?: string;
  max_volumes_per_node?: string | number;
  accessible_topology?: { segments?: Record<string, string> } | null;
}

export class CsiPluginHandler implements PluginHandler {
  constructor(
    private readonly drivers: DriverRegistry,
    private readonly nodeInfo: Pick<NodeInfoManager, 'installDriver' | 'uninstallDriver'>,
    private readonly log: Logger,
  ) {}

  validate(name: string, endpoint: string, versions: string[]): void {
    try {
      this.drivers.validate('ValidatePlugin', name, versions);
    } catch (e) {
      throw new Error(`validation failed for CSI Driver ${name} at endpoint ${endpoint}: ${(e as Error).message}`);
    }
  }

  async register(name: string, endpoint: string, versions: string[]): Promise<void> {
    this.log.info({ driver: name, endpoint }, 'registering CSI driver');
    const version = this.drivers.validate('RegisterPlugin', name, versions);
    this.drivers.set(name, endpoint, version);
    let info: NodeGetInfoResponse;
    try {
      info = await this.drivers.client(name).call<NodeGetInfoResponse>('Node', 'NodeGetInfo', {}, { timeoutMs: CSI_TIMEOUT_MS });
      await this.nodeInfo.installDriver(name, info.node_id ?? '', Number(info.max_volumes_per_node ?? 0), info.accessible_topology?.segments ?? {});
    } catch (e) {
      await this.unregister(name).catch((u) =>
        this.log.error({ driver: name, err: (u as Error).message }, 'failed to unregister CSI driver after a failed registration'),
      );
      throw e;
    }
    this.drivers.registered(name);
  }

  async deregister(name: string): Promise<void> {
    this.log.info({ driver: name }, 'deregistering CSI driver');
    await this.unregister(name);
  }

  private async unregister(name: string): Promise<void> {
    this.drivers.delete(name);
    try {
      await this.nodeInfo.uninstallDriver(name);
    } catch (e) {
      throw new Error(`kubernetes.io/csi: Error uninstalling CSI driver: ${(e as Error).message}`);
    }
  }
}
