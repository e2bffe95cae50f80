/**
 * CSI v1 over gRPC: a client of a driver's Identity, Controller and Node
 * services on its unix socket (what kubelet's csiDriverClient and the
 * kubernetes-csi sidecars hold), and a server exposing handler maps as those
 * services (what a driver's main does with csi-lib-utils/rpc and
 * grpc.NewServer). A method without a handler answers UNIMPLEMENTED.
 */
import * as grpc from '@grpc/grpc-js';
import { bindServer, type CallOptions, CsiError, callUnary, grpcStatus, grpcTarget, type Handler, loadProto, unary } from './proto.js';

export type CsiService = 'Identity' | 'Controller' | 'Node';

/** A CSI handler: takes the request object, resolves with the response; throws CsiError for a gRPC error status. */
export type CsiHandler = Handler;

export interface CsiServices {
  Identity: Record<string, CsiHandler>;
  Controller?: Record<string, CsiHandler>;
  Node?: Record<string, CsiHandler>;
}

const SERVICES: readonly CsiService[] = ['Identity', 'Controller', 'Node'];

function serviceCtor(service: CsiService): grpc.ServiceClientConstructor {
  const v1 = (loadProto('csi.proto').csi as grpc.GrpcObject).v1 as grpc.GrpcObject;
  return v1[service] as grpc.ServiceClientConstructor;
}

/** The method names of a CSI service, from the proto. */
export function csiMethods(service: CsiService): string[] {
  return Object.keys(serviceCtor(service).service);
}

/** A client of one CSI driver endpoint (`unix:///path` or `/path`). */
export class CsiClient {
  private readonly clients = new Map<CsiService, grpc.Client>();
  private readonly target: string;

  constructor(readonly endpoint: string) {
    this.target = grpcTarget(endpoint);
  }

  private client(service: CsiService): grpc.Client {
    let c = this.clients.get(service);
    if (!c) {
      const Ctor = serviceCtor(service);
      c = new Ctor(this.target, grpc.credentials.createInsecure());
      this.clients.set(service, c);
    }
    return c;
  }

  /** One unary call, e.g. `call('Node', 'NodePublishVolume', {...})`; a non-OK status rejects with a CsiError. */
  call<T = any>(service: CsiService, method: string, req: object, o?: CallOptions): Promise<T> {
    if (!SERVICES.includes(service)) return Promise.reject(new CsiError(grpcStatus.UNIMPLEMENTED, `unknown service ${service}`));
    return callUnary<T>(this.client(service), method, req, o);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** Serves the given CSI services on `endpoint` (a unix socket); resolves once bound. */
export async function serveCsi(services: CsiServices, endpoint: string): Promise<{ close(): Promise<void> }> {
  const server = new grpc.Server();
  for (const name of SERVICES) {
    const handlers = services[name];
    if (!handlers) continue;
    const def = serviceCtor(name).service;
    const impl: grpc.UntypedServiceImplementation = {};
    for (const method of Object.keys(def)) {
      const h = handlers[method];
      impl[method] = unary(h ? h : async () => Promise.reject(new CsiError(grpcStatus.UNIMPLEMENTED, `${name}.${method} is not implemented`)));
    }
    server.addService(def, impl);
  }
  return bindServer(server, endpoint);
}
