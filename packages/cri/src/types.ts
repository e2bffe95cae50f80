/**
 * CRI v1 messages as the kubelet and runtimes see them in TypeScript (field
 * names as in the proto, snake_case; int64 as decimal strings on the way in,
 * numbers or strings on the way out; enums as their names; bytes as Buffers).
 */

export type Int64 = string | number;

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface PortMapping {
  protocol?: Protocol;
  container_port: number;
  host_port?: number;
  host_ip?: string;
}

export interface Mount {
  container_path: string;
  host_path: string;
  readonly?: boolean;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  log_directory?: string;
  dns_config?: { servers?: string[]; searches?: string[]; options?: string[] };
  port_mappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: { cgroup_parent?: string };
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: Int64;
  network?: { ip: string; additional_ips?: { ip: string }[] };
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  runtime_handler?: string;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: Int64;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  runtime_handler?: string;
}

export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
}

export interface KeyValue {
  key: string;
  value: Buffer | string;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  working_dir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  log_path?: string;
  stdin?: boolean;
  stdin_once?: boolean;
  tty?: boolean;
  /** Resources as the kubelet computes them from requests and limits (shares 1024 a core, quota per period in µs). */
  linux?: { resources?: LinuxContainerResources; security_context?: LinuxContainerSecurityContext | null };
}

/** The part of CRI's LinuxContainerSecurityContext kubeling's kubelet sets and runtime reads. */
export interface LinuxContainerSecurityContext {
  capabilities?: { add_capabilities?: string[]; drop_capabilities?: string[] } | null;
  privileged?: boolean;
  run_as_user?: { value: Int64 } | null;
  run_as_group?: { value: Int64 } | null;
  run_as_username?: string;
  readonly_rootfs?: boolean;
  supplemental_groups?: Int64[];
  no_new_privs?: boolean;
}

export interface LinuxContainerResources {
  cpu_period?: Int64;
  cpu_quota?: Int64;
  cpu_shares?: Int64;
  memory_limit_in_bytes?: Int64;
  oom_score_adj?: Int64;
  cpuset_cpus?: string;
  cpuset_mems?: string;
}

export interface Container {
  id: string;
  pod_sandbox_id: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  image_ref: string;
  state: ContainerState;
  created_at: Int64;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  created_at: Int64;
  started_at: Int64;
  finished_at: Int64;
  exit_code: number;
  image: ImageSpec;
  image_ref: string;
  reason: string;
  message: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  mounts?: Mount[];
  log_path: string;
}

export interface Image {
  id: string;
  repo_tags: string[];
  repo_digests: string[];
  size: Int64;
  username?: string;
  spec?: ImageSpec;
  pinned?: boolean;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason?: string;
  message?: string;
}

export interface VersionResponse {
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  label_selector?: Record<string, string>;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  pod_sandbox_id?: string;
  label_selector?: Record<string, string>;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}

// ---- stats --------------------------------------------------------------------

/** CRI's wrapper of an optional uint64 (absent: not measured). Decoded values are decimal strings. */
export interface UInt64Value {
  value: Int64;
}

/** Cumulative CPU (core-nanoseconds) and, when the runtime computes it, the current rate (nanocores). */
export interface CpuUsage {
  /** Nanoseconds since the epoch when it was measured. */
  timestamp: Int64;
  usage_core_nano_seconds?: UInt64Value | null;
  usage_nano_cores?: UInt64Value | null;
}

export interface MemoryUsage {
  timestamp: Int64;
  working_set_bytes?: UInt64Value | null;
  available_bytes?: UInt64Value | null;
  usage_bytes?: UInt64Value | null;
  rss_bytes?: UInt64Value | null;
  page_faults?: UInt64Value | null;
  major_page_faults?: UInt64Value | null;
}

export interface FilesystemUsage {
  timestamp: Int64;
  fs_id?: { mountpoint: string } | null;
  used_bytes?: UInt64Value | null;
  inodes_used?: UInt64Value | null;
}

export interface ContainerAttributes {
  id: string;
  metadata: ContainerMetadata;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ContainerStats {
  attributes: ContainerAttributes;
  cpu?: CpuUsage | null;
  memory?: MemoryUsage | null;
  writable_layer?: FilesystemUsage | null;
}

export interface ContainerStatsFilter {
  id?: string;
  pod_sandbox_id?: string;
  label_selector?: Record<string, string>;
}

export interface NetworkInterfaceUsage {
  name: string;
  rx_bytes?: UInt64Value | null;
  rx_errors?: UInt64Value | null;
  tx_bytes?: UInt64Value | null;
  tx_errors?: UInt64Value | null;
}

export interface NetworkUsage {
  timestamp: Int64;
  default_interface?: NetworkInterfaceUsage | null;
  interfaces?: NetworkInterfaceUsage[];
}

export interface ProcessUsage {
  timestamp: Int64;
  process_count?: UInt64Value | null;
}

export interface PodSandboxAttributes {
  id: string;
  metadata: PodSandboxMetadata;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A pod's usage (its cgroup on containerd) and its containers'. */
export interface LinuxPodSandboxStats {
  cpu?: CpuUsage | null;
  memory?: MemoryUsage | null;
  network?: NetworkUsage | null;
  process?: ProcessUsage | null;
  containers?: ContainerStats[];
}

export interface PodSandboxStats {
  attributes: PodSandboxAttributes;
  linux?: LinuxPodSandboxStats | null;
}

export interface PodSandboxStatsFilter {
  id?: string;
  label_selector?: Record<string, string>;
}

/**
 * The runtime as the kubelet drives it: one method per CRI call it uses. The
 * gRPC client implements it against any CRI server; kubeling's runtime
 * implements it directly (and is served over gRPC by `serveCri`).
 */
export interface ExecRequest {
  container_id: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

export type AttachRequest = Omit<ExecRequest, 'cmd'>;

export interface CriRuntime {
  version(): Promise<VersionResponse>;
  status(): Promise<RuntimeCondition[]>;
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  stopPodSandbox(id: string): Promise<void>;
  removePodSandbox(id: string): Promise<void>;
  podSandboxStatus(id: string): Promise<PodSandboxStatus>;
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;
  createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(id: string): Promise<void>;
  /** Stops with SIGTERM, then SIGKILL after `timeoutSeconds`. */
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  containerStatus(id: string): Promise<ContainerStatus>;
  execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  /** A streaming exec: the URL of the runtime's streaming server that runs it once upgraded. */
  exec(req: ExecRequest): Promise<{ url: string }>;
  /** A streaming attach to the container's own stdio: the URL of the runtime's streaming server. */
  attach(req: AttachRequest): Promise<{ url: string }>;
  listImages(): Promise<Image[]>;
  /** The image if present, else undefined. */
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  pullImage(image: ImageSpec, sandboxConfig?: PodSandboxConfig): Promise<string>;
  removeImage(image: ImageSpec): Promise<void>;
  /** Stats of one container (NOT_FOUND if unknown). */
  containerStats(id: string): Promise<ContainerStats>;
  /** Stats of the running containers the filter selects. */
  listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]>;
  /** Stats of one pod sandbox and its containers (NOT_FOUND if unknown). */
  podSandboxStats(id: string): Promise<PodSandboxStats>;
  /** Stats of the pod sandboxes the filter selects. Runtimes older than CRI v1's stats may answer UNIMPLEMENTED. */
  listPodSandboxStats(filter?: PodSandboxStatsFilter): Promise<PodSandboxStats[]>;
  close?(): void;
}

/** A CRI error with its gRPC status code (5 NOT_FOUND, 12 UNIMPLEMENTED, ...). */
export class CriError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const GRPC_NOT_FOUND = 5;
export const GRPC_UNKNOWN = 2;
export const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_FAILED_PRECONDITION = 9;
export const GRPC_UNIMPLEMENTED = 12;

/** Nanoseconds since the epoch as a decimal string (CRI timestamps). */
export const nowNanos = (): string => (BigInt(Date.now()) * 1_000_000n).toString();
export const nanosToDate = (n: Int64): Date | undefined => {
  const v = typeof n === 'string' ? Number(BigInt(n) / 1_000_000n) : Math.floor(n / 1e6);
  return v > 0 ? new Date(v) : undefined;
};
