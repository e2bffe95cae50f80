/**
 * Loading of the CSI v1 and kubelet plugin registration protos, and the gRPC
 * plumbing shared by the CSI and registration clients and servers: endpoint
 * parsing, unix socket binding, unary call and handler wrappers.
 *
 * Messages are plain objects with the protos' snake_case field names
 * (keepCase), int64 as decimal strings, enums as names, oneofs named by their
 * member (`oneofs: true`), as the CRI client in @kubeling/cri does.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The gRPC status codes (google.golang.org/grpc/codes), as @grpc/grpc-js numbers them. */
export const grpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusName = keyof typeof grpcStatus;

const statusNames = Object.fromEntries(Object.entries(grpcStatus).map(([k, v]) => [v, k])) as Record<number, GrpcStatusName>;

/** A gRPC error status from a CSI or registration call: `code` is the status number, `details` its message. */
export class CsiError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`rpc error: code = ${codeName(code)} desc = ${details}`);
    this.name = 'CsiError';
  }
}

/** `NotFound`, `InvalidArgument`...: the status name as grpc-go prints it in errors. */
export function codeName(code: number): string {
  const n = statusNames[code];
  if (!n) return `Code(${code})`;
  return n
    .toLowerCase()
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')
    .replace('Ok', 'OK');
}

const LOAD_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

const protoPath = (name: string) => fileURLToPath(new URL(`../proto/${name}`, import.meta.url));

const loaded = new Map<string, grpc.GrpcObject>();

/** The grpc object tree of a proto file of this package, loaded once. */
export function loadProto(name: 'csi.proto' | 'pluginregistration.proto'): grpc.GrpcObject {
  let obj = loaded.get(name);
  if (!obj) {
    obj = grpc.loadPackageDefinition(protoLoader.loadSync(protoPath(name), LOAD_OPTIONS));
    loaded.set(name, obj);
  }
  return obj;
}

/** `unix:///path` or `/path` → the grpc-js target `unix:/path`; anything else is passed through. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix:${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('/')) return `unix:${endpoint}`;
  return endpoint;
}

/** The socket path of a unix endpoint, or undefined for other endpoints. */
export function socketPath(endpoint: string): string | undefined {
  if (endpoint.startsWith('unix://')) return endpoint.slice('unix://'.length);
  if (endpoint.startsWith('unix:')) return endpoint.slice('unix:'.length);
  if (endpoint.startsWith('/')) return endpoint;
  return undefined;
}

export type Handler = (req: any) => Promise<any>;

/** Wraps an async handler as a grpc-js unary handler; a CsiError becomes its status, anything else INTERNAL. */
export function unary(fn: Handler): grpc.handleUnaryCall<any, any> {
  return (call, cb) => {
    let p: Promise<any>;
    try {
      p = Promise.resolve(fn(call.request));
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(
      (res) => cb(null, res ?? {}),
      (e: unknown) => {
        const err = e instanceof CsiError ? e : new CsiError(grpcStatus.INTERNAL, e instanceof Error ? e.message : String(e));
        cb({ code: err.code, details: err.details, message: err.details } as grpc.ServiceError);
      },
    );
  };
}

/** Starts a server on a unix socket endpoint: the parent folder is created and a stale socket removed. */
export async function bindServer(server: grpc.Server, endpoint: string): Promise<{ close(): Promise<void> }> {
  const path = socketPath(endpoint);
  if (path) {
    mkdirSync(dirname(path), { recursive: true });
    removeStaleSocket(path);
  }
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(grpcTarget(endpoint), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= new Promise<void>((resolve) => {
        // In-flight calls get a short grace period, then the server is forced down.
        const force = setTimeout(() => server.forceShutdown(), 2_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      return closed;
    },
  };
}

/** Removes `path` when it is a socket (never a regular file or a folder). */
function removeStaleSocket(path: string): void {
  try {
    if (statSync(path).isSocket()) rmSync(path, { force: true });
  } catch {
    // absent
  }
}

export interface CallOptions {
  /** Deadline of the call; 30 s when unset. */
  timeoutMs?: number | undefined;
  /** Wait for the socket to be ready (until the deadline) instead of failing at once with UNAVAILABLE. */
  waitForReady?: boolean | undefined;
}

/** One unary call on a grpc-js client; a non-OK status rejects with a CsiError. */
export function callUnary<T>(client: grpc.Client, method: string, req: object, o: CallOptions = {}): Promise<T> {
  const fn = (client as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function') return Promise.reject(new CsiError(grpcStatus.UNIMPLEMENTED, `unknown method ${method}`));
  const options: grpc.CallOptions = { deadline: Date.now() + (o.timeoutMs ?? 30_000) };
  const meta = new grpc.Metadata(o.waitForReady ? { waitForReady: true } : {});
  return new Promise<T>((resolve, reject) => {
    (fn as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res: T) => void) => void).call(
      client,
      req,
      meta,
      options,
      (err, res) => {
        if (err) reject(new CsiError(err.code, err.details || err.message));
        else resolve(res);
      },
    );
  });
}
