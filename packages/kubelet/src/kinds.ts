/**
 * The API kinds the kubelet reads and writes, as `@kubeling/api` describes
 * them. Pods reach the kubelet through its informer, so their metadata and
 * spec are always set. Where the API types keep a part open or opaque (volume
 * sources, container statuses, the host and pod IP lists, a condition's null
 * probe time), the narrow shapes the kubelet reads and writes are named here.
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';

export type PodSpec = corev1.PodSpec;
export type Pod = corev1.Pod & KubeObject & { spec: PodSpec };
export type Container = corev1.Container;
/** An ephemeral container: a container's fields and the container it targets. */
export type EphemeralContainer = NonNullable<PodSpec['ephemeralContainers']>[number];
export type ContainerPort = dsl.Static<typeof corev1.ContainerPort>;
export type Probe = dsl.Static<typeof corev1.Probe>;
export type LifecycleHandler = dsl.Static<typeof corev1.LifecycleHandler>;
export type EnvVar = dsl.Static<typeof corev1.EnvVar>;
export type EnvFromSource = dsl.Static<typeof corev1.EnvFromSource>;
export type ResourceFieldSelector = NonNullable<dsl.Static<typeof corev1.EnvVarSource>['resourceFieldRef']>;
export type VolumeMount = dsl.Static<typeof corev1.VolumeMount>;
export type ConfigMap = corev1.ConfigMap;
export type Secret = dsl.Static<typeof corev1.Secret>;
export type Taint = dsl.Static<typeof corev1.Taint>;

/** A pod as the informer hands it (any kind, to the informer). */
export const asPod = (o: KubeObject): Pod => o as Pod;

// ---- volume sources (the API's Volume names only `name`) ------------------------------

export interface KeyToPath {
  key: string;
  path?: string;
  mode?: number;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

/** A configMap volume or projection. */
export interface ConfigMapSource {
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
  defaultMode?: number;
}

/** A secret volume (`secretName`) or projection (`name`). */
export interface SecretSource {
  secretName?: string;
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
  defaultMode?: number;
}

export interface DownwardAPISource {
  items?: DownwardAPIVolumeFile[];
  defaultMode?: number;
}

export interface ServiceAccountTokenProjection {
  path: string;
  audience?: string;
  expirationSeconds?: number;
}

export interface VolumeProjection {
  configMap?: ConfigMapSource;
  secret?: SecretSource;
  downwardAPI?: DownwardAPISource;
  serviceAccountToken?: ServiceAccountTokenProjection;
}

export type Volume = dsl.Static<typeof corev1.Volume> & {
  hostPath?: { path: string; type?: string };
  emptyDir?: { medium?: string; sizeLimit?: string | number };
  configMap?: ConfigMapSource;
  secret?: SecretSource;
  downwardAPI?: DownwardAPISource;
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
};

export const podVolumes = (pod: Pod): Volume[] => (pod.spec.volumes ?? []) as Volume[];

// ---- the status the kubelet writes (container statuses are opaque in the API) ----------

export interface ContainerStateTerminated {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt?: string | undefined;
  finishedAt?: string | undefined;
  containerID: string;
}

export interface ContainerState {
  waiting?: { reason: string; message?: string };
  running?: { startedAt: string | undefined };
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  ready: boolean;
  restartCount: number;
  /** Left out for ephemeral containers, which no probe ever starts (upstream's prober sets it for the others only). */
  started?: boolean;
  containerID?: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

/** A pod condition; the kubelet writes `lastProbeTime: null`, as upstream serialises an unset time. */
export interface PodCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | undefined;
  reason?: string;
  message?: string;
}

export type PodStatus = Omit<NonNullable<corev1.Pod['status']>, 'conditions' | 'containerStatuses' | 'initContainerStatuses' | 'ephemeralContainerStatuses'> & {
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  hostIPs?: { ip: string }[];
  podIPs?: { ip: string }[];
};
