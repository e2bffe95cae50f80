/**
 * node-driver-registrar (kubernetes-csi/node-driver-registrar): serves the
 * kubelet plugin registration API (pluginregistration/v1 `Registration`) on
 * `<registration dir>/<driver with / as ->-reg.sock`. The kubelet's plugin
 * watcher finds the socket, calls GetInfo (type CSIPlugin, the driver's name,
 * the driver socket it should dial, supported versions 1.0.0) and reports
 * the outcome with NotifyRegistrationStatus, which is logged here; a refused
 * registration is an error in the log (upstream restarts the container; here
 * the kubelet retries when the socket is seen again).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { CSI_PLUGIN_TYPE, type PluginInfo, type RegistrationStatus } from '@kubeling/csi';

export type ServeRegistration = (info: PluginInfo, socketPath: string, onStatus: (s: RegistrationStatus) => void) => Promise<{ close(): Promise<void> }>;

/** The registration socket's file name: `hostpath.csi.kubeling.io` → `hostpath.csi.kubeling.io-reg.sock`. */
export const registrationSocketName = (driver: string): string => `${driver.replaceAll('/', '-')}-reg.sock`;

/** The socket path a `unix://` (or bare) endpoint names. */
export const socketPathOf = (endpoint: string): string => (endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint);

export interface RegistrarOptions {
  driverName: string;
  /** The driver's socket, as the kubelet should dial it. */
  driverSocket: string;
  registrationDir: string;
  log: Logger;
  serve: ServeRegistration;
}

/** Starts serving; resolves with the socket path and a close that removes it. */
export async function startRegistrar(o: RegistrarOptions): Promise<{ socketPath: string; close(): Promise<void>; statuses: RegistrationStatus[] }> {
  mkdirSync(o.registrationDir, { recursive: true });
  const socketPath = join(o.registrationDir, registrationSocketName(o.driverName));
  const statuses: RegistrationStatus[] = [];
  const info: PluginInfo = { type: CSI_PLUGIN_TYPE, name: o.driverName, endpoint: socketPathOf(o.driverSocket), supported_versions: ['1.0.0'] };
  const server = await o.serve(info, socketPath, (s) => {
    statuses.push(s);
    if (s.plugin_registered) o.log.info({ driver: o.driverName }, 'registered with the kubelet');
    else o.log.error({ driver: o.driverName, err: s.error }, 'registration process failed');
  });
  o.log.info({ socket: socketPath }, 'registration server started');
  return { socketPath, statuses, close: () => server.close() };
}
