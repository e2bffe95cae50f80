/**
 * The kubelet plugin registration API (pluginregistration/v1 `Registration`):
 * the server a plugin exposes in the kubelet's plugins_registry folder, as
 * node-driver-registrar's registrationServer does, and the client the
 * kubelet's plugin watcher uses (GetInfo, then NotifyRegistrationStatus).
 */
import * as grpc from '@grpc/grpc-js';
import { bindServer, type CallOptions, callUnary, grpcTarget, loadProto, unary } from './proto.js';

export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supported_versions: string[];
}

export interface RegistrationStatus {
  plugin_registered: boolean;
  error: string;
}

function registrationCtor(): grpc.ServiceClientConstructor {
  return (loadProto('pluginregistration.proto').pluginregistration as grpc.GrpcObject).Registration as grpc.ServiceClientConstructor;
}

/** Serves `Registration` on `socketPath`: GetInfo answers `info`, NotifyRegistrationStatus reports to `onStatus`. */
export async function serveRegistration(info: PluginInfo, socketPath: string, onStatus: (s: RegistrationStatus) => void): Promise<{ close(): Promise<void> }> {
  const server = new grpc.Server();
  server.addService(registrationCtor().service, {
    GetInfo: unary(async () => info),
    NotifyRegistrationStatus: unary(async (s: RegistrationStatus) => {
      onStatus({ plugin_registered: !!s.plugin_registered, error: s.error ?? '' });
      return {};
    }),
  });
  return bindServer(server, socketPath);
}

/** The kubelet side: a client of a plugin's registration socket. */
export class RegistrationClient {
  private readonly client: grpc.Client;

  constructor(
    readonly socketPath: string,
    private readonly options: CallOptions = { timeoutMs: 10_000 },
  ) {
    const Ctor = registrationCtor();
    this.client = new Ctor(grpcTarget(socketPath), grpc.credentials.createInsecure());
  }

  async getInfo(): Promise<PluginInfo> {
    const r = await callUnary<PluginInfo>(this.client, 'GetInfo', {}, this.options);
    return { type: r.type, name: r.name, endpoint: r.endpoint, supported_versions: r.supported_versions ?? [] };
  }

  async notifyRegistrationStatus(s: RegistrationStatus): Promise<void> {
    await callUnary(this.client, 'NotifyRegistrationStatus', s, this.options);
  }

  close(): void {
    this.client.close();
  }
}
