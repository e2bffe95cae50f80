/**
 * The API kinds the controllers read and write, as `@kubeling/api` describes
 * them, with the metadata an informer store's objects always carry (the API
 * types leave it optional, as a request body may). Where the API keeps a part
 * opaque (container statuses, node status, affinity), the narrow shapes the
 * controllers read are named here too.
 */
import type { KubeObject, appsv1, batchv1, coordinationv1, corev1, discoveryv1, dsl } from '@kubeling/api';

type Stored<T> = T & KubeObject;

export type Pod = Stored<corev1.Pod>;
export type PodSpec = corev1.PodSpec;
export type PodTemplateSpec = corev1.PodTemplateSpec;
export type Node = Stored<corev1.Node>;
export type Service = Stored<corev1.Service>;
/** The Service spec, with the field the API types do not list yet. */
export type ServiceSpec = NonNullable<corev1.Service['spec']> & { publishNotReadyAddresses?: boolean };
export type Endpoints = Stored<dsl.Static<typeof corev1.Endpoints>>;
export type EndpointAddress = dsl.Static<typeof corev1.EndpointAddress>;
export type PersistentVolumeClaim = dsl.Static<typeof corev1.PersistentVolumeClaim>;
export type Lease = Stored<coordinationv1.Lease>;
export type Deployment = Stored<appsv1.Deployment>;
export type ReplicaSet = Stored<appsv1.ReplicaSet>;
export type StatefulSet = Stored<appsv1.StatefulSet>;
export type DaemonSet = Stored<appsv1.DaemonSet>;
export type ControllerRevision = Stored<appsv1.ControllerRevision>;
export type Job = Stored<batchv1.Job>;
export type CronJob = Stored<batchv1.CronJob>;
export type EndpointSlice = Stored<discoveryv1.EndpointSlice>;
export type EndpointPort = dsl.Static<typeof discoveryv1.EndpointPort>;

/** What the controllers read of a container status (opaque in the API types). */
export interface ContainerStatusView {
  restartCount?: number;
  state?: { terminated?: { finishedAt?: string } };
}

/** What the controllers read of a node's status (opaque in the API types). */
export interface NodeStatusView {
  conditions?: { type: string; status?: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string }[];
}

/** The node affinity of a pod spec (the API keeps `affinity` opaque). */
export interface NodeAffinityView {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: {
      nodeSelectorTerms?: { matchExpressions?: NodeSelectorRequirementView[]; matchFields?: NodeSelectorRequirementView[] }[];
    };
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

interface NodeSelectorRequirementView {
  key: string;
  operator: string;
  values?: string[];
}

export const containerStatuses = (p: Pod): ContainerStatusView[] => (p.status?.containerStatuses ?? []) as ContainerStatusView[];
export const podPhase = (p: Pod): string | undefined => p.status?.phase;
