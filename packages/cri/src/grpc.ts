/**
 * CRI over gRPC: a client of `runtime.v1.RuntimeService` / `ImageService` on a
 * unix socket (or any gRPC address), and a server that exposes a CriRuntime
 * implementation on one. The proto is loaded at start with keepCase names,
 * int64 as strings and enums as names.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  CriError,
  type Container,
  type ContainerStats,
  type ContainerStatsFilter,
  type ContainerStatus,
  type CriRuntime,
  type AttachRequest,
  type ExecRequest,
  type ExecSyncResponse,
  type Image,
  type ImageSpec,
  type PodSandbox,
  type PodSandboxStats,
  type PodSandboxStatsFilter,
  type PodSandboxStatus,
  type RuntimeCondition,
  type VersionResponse,
} from './types.js';

export type CriServer = grpc.Server;

const PROTO = fileURLToPath(new URL('../proto/api.proto', import.meta.url));

let cached: grpc.GrpcObject | undefined;
function loadProto(): grpc.GrpcObject {
  if (!cached) {
    const def = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    cached = grpc.loadPackageDefinition(def);
  }
  return cached;
}

type ServiceCtor = grpc.ServiceClientConstructor;
const services = () => {
  const v1 = (loadProto().runtime as grpc.GrpcObject).v1 as grpc.GrpcObject;
  return { Runtime: v1.RuntimeService as ServiceCtor, Image: v1.ImageService as ServiceCtor };
};

/** `unix:///path` or `/path` → a grpc-js target. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix:${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('/')) return `unix:${endpoint}`;
  return endpoint;
}

/** The CRI client the kubelet uses. */
export class GrpcRuntime implements CriRuntime {
  private readonly rt: grpc.Client;
  private readonly img: grpc.Client;

  constructor(
    endpoint: string,
    private readonly timeoutMs = 120_000,
  ) {
    const { Runtime, Image } = services();
    const target = grpcTarget(endpoint);
    this.rt = new Runtime(target, grpc.credentials.createInsecure());
    this.img = new Image(target, grpc.credentials.createInsecure());
  }

  private call<T>(client: grpc.Client, method: string, req: object): Promise<T> {
    return new Promise((resolve, reject) => {
      const fn = (client as unknown as Record<string, (r: object, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res: T) => void) => void>)[method]!;
      fn.call(client, req, { deadline: Date.now() + this.timeoutMs }, (err, res) => {
        if (err) reject(new CriError(err.code, err.details || err.message));
        else resolve(res);
      });
    });
  }

  async version(): Promise<VersionResponse> {
    return this.call<any>(this.rt, 'Version', { version: 'v1' });
  }
  async status(): Promise<RuntimeCondition[]> {
    return (await this.call<any>(this.rt, 'Status', {})).status?.conditions ?? [];
  }
  async runPodSandbox(config: object, runtimeHandler = ''): Promise<string> {
    return (await this.call<any>(this.rt, 'RunPodSandbox', { config, runtime_handler: runtimeHandler })).pod_sandbox_id;
  }
  async stopPodSandbox(id: string) {
    await this.call(this.rt, 'StopPodSandbox', { pod_sandbox_id: id });
  }
  async removePodSandbox(id: string) {
    await this.call(this.rt, 'RemovePodSandbox', { pod_sandbox_id: id });
  }
  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    return (await this.call<any>(this.rt, 'PodSandboxStatus', { pod_sandbox_id: id })).status;
  }
  async listPodSandbox(filter?: object): Promise<PodSandbox[]> {
    return (await this.call<any>(this.rt, 'ListPodSandbox', filter ? { filter } : {})).items ?? [];
  }
  async createContainer(sandboxId: string, config: object, sandboxConfig: object): Promise<string> {
    return (await this.call<any>(this.rt, 'CreateContainer', { pod_sandbox_id: sandboxId, config, sandbox_config: sandboxConfig })).container_id;
  }
  async startContainer(id: string) {
    await this.call(this.rt, 'StartContainer', { container_id: id });
  }
  async stopContainer(id: string, timeoutSeconds: number) {
    await this.call(this.rt, 'StopContainer', { container_id: id, timeout: timeoutSeconds });
  }
  async removeContainer(id: string) {
    await this.call(this.rt, 'RemoveContainer', { container_id: id });
  }
  async listContainers(filter?: object): Promise<Container[]> {
    return (await this.call<any>(this.rt, 'ListContainers', filter ? { filter } : {})).containers ?? [];
  }
  async containerStatus(id: string): Promise<ContainerStatus> {
    return (await this.call<any>(this.rt, 'ContainerStatus', { container_id: id })).status;
  }
  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    return this.call<any>(this.rt, 'ExecSync', { container_id: id, cmd, timeout: timeoutSeconds });
  }

  async exec(req: ExecRequest): Promise<{ url: string }> {
    return this.call<{ url: string }>(this.rt, 'Exec', req);
  }

  async attach(req: AttachRequest): Promise<{ url: string }> {
    return this.call<{ url: string }>(this.rt, 'Attach', req);
  }
  async listImages(): Promise<Image[]> {
    return (await this.call<any>(this.img, 'ListImages', {})).images ?? [];
  }
  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    const res = await this.call<any>(this.img, 'ImageStatus', { image });
    return res.image?.id ? res.image : undefined;
  }
  async pullImage(image: ImageSpec, sandboxConfig?: object): Promise<string> {
    return (await this.call<any>(this.img, 'PullImage', { image, ...(sandboxConfig ? { sandbox_config: sandboxConfig } : {}) })).image_ref;
  }
  async removeImage(image: ImageSpec) {
    await this.call(this.img, 'RemoveImage', { image });
  }
  async containerStats(id: string): Promise<ContainerStats> {
    return (await this.call<{ stats: ContainerStats }>(this.rt, 'ContainerStats', { container_id: id })).stats;
  }
  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    return (await this.call<{ stats?: ContainerStats[] }>(this.rt, 'ListContainerStats', filter ? { filter } : {})).stats ?? [];
  }
  async podSandboxStats(id: string): Promise<PodSandboxStats> {
    return (await this.call<{ stats: PodSandboxStats }>(this.rt, 'PodSandboxStats', { pod_sandbox_id: id })).stats;
  }
  async listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]> {
    return (await this.call<{ stats?: PodSandboxStats[] }>(this.rt, 'ListPodSandboxStats', filter ? { filter } : {})).stats ?? [];
  }
  close(): void {
    this.rt.close();
    this.img.close();
  }
}

/** Serves a CriRuntime on `endpoint` (unix socket); resolves with the server once bound. */
export async function serveCri(runtime: CriRuntime, endpoint: string): Promise<CriServer> {
  const { Runtime, Image } = services();
  const server = new grpc.Server();
  const wrap = (fn: (req: any) => Promise<unknown>) => (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
    fn(call.request).then(
      (res) => cb(null, res ?? {}),
      (e: unknown) => cb({ code: e instanceof CriError ? e.code : grpc.status.UNKNOWN, details: (e as Error).message } as grpc.ServiceError),
    );
  };
  const r = runtime;
  server.addService(Runtime.service, {
    Version: wrap(() => r.version()),
    Status: wrap(async () => ({ status: { conditions: await r.status() } })),
    RunPodSandbox: wrap(async (q) => ({ pod_sandbox_id: await r.runPodSandbox(q.config, q.runtime_handler) })),
    StopPodSandbox: wrap(async (q) => r.stopPodSandbox(q.pod_sandbox_id)),
    RemovePodSandbox: wrap(async (q) => r.removePodSandbox(q.pod_sandbox_id)),
    PodSandboxStatus: wrap(async (q) => ({ status: await r.podSandboxStatus(q.pod_sandbox_id) })),
    ListPodSandbox: wrap(async (q) => ({ items: await r.listPodSandbox(q.filter ?? undefined) })),
    CreateContainer: wrap(async (q) => ({ container_id: await r.createContainer(q.pod_sandbox_id, q.config, q.sandbox_config) })),
    StartContainer: wrap(async (q) => r.startContainer(q.container_id)),
    StopContainer: wrap(async (q) => r.stopContainer(q.container_id, Number(q.timeout))),
    RemoveContainer: wrap(async (q) => r.removeContainer(q.container_id)),
    ListContainers: wrap(async (q) => ({ containers: await r.listContainers(q.filter ?? undefined) })),
    ContainerStatus: wrap(async (q) => ({ status: await r.containerStatus(q.container_id) })),
    ExecSync: wrap(async (q) => r.execSync(q.container_id, q.cmd, Number(q.timeout))),
    Exec: wrap(async (q) => r.exec({ container_id: q.container_id, cmd: q.cmd ?? [], tty: !!q.tty, stdin: !!q.stdin, stdout: !!q.stdout, stderr: !!q.stderr })),
    Attach: wrap(async (q) => r.attach({ container_id: q.container_id, tty: !!q.tty, stdin: !!q.stdin, stdout: !!q.stdout, stderr: !!q.stderr })),
    ContainerStats: wrap(async (q) => ({ stats: await r.containerStats(q.container_id) })),
    ListContainerStats: wrap(async (q) => ({ stats: await r.listContainerStats(q.filter ?? undefined) })),
    PodSandboxStats: wrap(async (q) => ({ stats: await r.podSandboxStats(q.pod_sandbox_id) })),
    ListPodSandboxStats: wrap(async (q) => ({ stats: await r.listPodSandboxStats(q.filter ?? undefined) })),
  });
  server.addService(Image.service, {
    ListImages: wrap(async () => ({ images: await r.listImages() })),
    ImageStatus: wrap(async (q) => ({ image: (await r.imageStatus(q.image)) ?? null })),
    PullImage: wrap(async (q) => ({ image_ref: await r.pullImage(q.image, q.sandbox_config ?? undefined) })),
    RemoveImage: wrap(async (q) => r.removeImage(q.image)),
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(grpcTarget(endpoint), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return server;
}
