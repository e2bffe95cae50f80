/**
 * core/v1 kinds. The pod spec's deeper structures are described by their merge
 * keys and main fields and left open (`additionalProperties`) where the full
 * description is not written yet, so real manifests are never refused for
 * fields this file does not name.
 */
import { Type } from '@sinclair/typebox';
import { boolean, bytes, int32, intOrString, list, map, object, opaque, string, time, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector } from '../schema/meta.js';
import { C, openObject, resourceMap, ObjectReference, LocalObjectReference, EventSource, Taint, PodSpec, PodStatus, PodTemplateSpec } from './core-v1-pod.js';

// The pod's structures live in core-v1-pod.ts; core/v1 exports them as its own.
export {
  ObjectReference,
  LocalObjectReference,
  EventSource,
  ResourceRequirements,
  ContainerPort,
  ExecAction,
  HTTPHeader,
  HTTPGetAction,
  TCPSocketAction,
  GRPCAction,
  SleepAction,
  Probe,
  LifecycleHandler,
  Lifecycle,
  EnvVarSource,
  EnvFromSource,
  EnvVar,
  VolumeMount,
  Container,
  Toleration,
  Taint,
  Volume,
  PodSpec,
  PodCondition,
  ContainerStatus,
  PodStatus,
  PodTemplateSpec,
} from './core-v1-pod.js';
export * from './core-v1-controllers.js';
export * from './core-v1-storage.js';

export const Pod = kindOf(C + 'Pod', 'Pod is a collection of containers that can run on a host.', { spec: PodSpec, status: PodStatus });
export const PodTemplate = kindOf(C + 'PodTemplate', 'PodTemplate describes a template for creating copies of a predefined pod.', {
  template: PodTemplateSpec,
});
export const Binding = kindOf(C + 'Binding', 'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.', {
  target: ObjectReference,
});

export const Namespace = kindOf(C + 'Namespace', 'Namespace provides a scope for Names.', {
  spec: object(C + 'NamespaceSpec', 'NamespaceSpec describes the attributes on a Namespace.', {
    finalizers: list(Type.String(), 'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.', {
      listType: 'atomic',
    }),
  }),
  status: openObject(
    object(C + 'NamespaceStatus', 'NamespaceStatus is information about the current status of a Namespace.', {
      phase: string('Phase is the current lifecycle phase of the namespace.'),
    }),
  ),
});

export const Node = kindOf(C + 'Node', 'Node is a worker node in Kubernetes.', {
  spec: openObject(
    object(C + 'NodeSpec', 'NodeSpec describes the attributes that a node is created with.', {
      podCIDR: string('PodCIDR represents the pod IP range assigned to the node.'),
      unschedulable: boolean('Unschedulable controls node schedulability of new pods.'),
      taints: list(Taint, "If specified, the node's taints.", { listType: 'atomic' }),
    }),
  ),
  status: opaque('NodeStatus is information about the current status of a node.'),
});

export const ServicePort = openObject(
  object(
    C + 'ServicePort',
    "ServicePort contains information on service's port.",
    {
      name: string('The name of this port within the service.'),
      protocol: string('The IP protocol for this port. Supports "TCP", "UDP", and "SCTP". Default is TCP.'),
      appProtocol: string('The application protocol for this port.'),
      port: int32('The port that will be exposed by this service.'),
      targetPort: intOrString('Number or name of the port to access on the pods targeted by the service.'),
      nodePort: int32('The port on each node on which this service is exposed when type is NodePort or LoadBalancer.'),
    },
    ['port'],
  ),
);

export const Service = kindOf(
  C + 'Service',
  'Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.',
  {
    spec: openObject(
      object(C + 'ServiceSpec', 'ServiceSpec describes the attributes that a user creates on a service.', {
        ports: list(ServicePort, 'The list of ports that are exposed by this service.', {
          mergeKey: 'port',
          strategy: 'merge',
          listType: 'map',
          mapKeys: ['port', 'protocol'],
        }),
        selector: map(Type.String(), 'Route service traffic to pods with label keys and values matching this selector.'),
        clusterIP: string('clusterIP is the IP address of the service.'),
        clusterIPs: list(Type.String(), 'ClusterIPs is a list of IP addresses assigned to this service.', { listType: 'atomic' }),
        type: string('type determines how the Service is exposed. Defaults to ClusterIP.'),
        externalIPs: list(Type.String(), 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.', {
          listType: 'atomic',
        }),
        sessionAffinity: string('Supports "ClientIP" and "None". Used to maintain session affinity.'),
        externalName: string('externalName is the external reference that discovery mechanisms will return as an alias for this service.'),
      }),
    ),
    status: opaque('ServiceStatus represents the current status of a service.'),
  },
);

export const EndpointAddress = openObject(
  object(
    C + 'EndpointAddress',
    'EndpointAddress is a tuple that describes single IP address.',
    {
      ip: string('The IP of this endpoint.'),
      hostname: string('The Hostname of this endpoint'),
      nodeName: string('Optional: Node hosting this endpoint.'),
      targetRef: ObjectReference,
    },
    ['ip'],
  ),
);
export const EndpointSubset = object(C + 'EndpointSubset', 'EndpointSubset is a group of addresses with a common set of ports.', {
  addresses: list(EndpointAddress, 'IP addresses which offer the related ports that are marked as ready.', { listType: 'atomic' }),
  notReadyAddresses: list(EndpointAddress, 'IP addresses which offer the related ports but are not currently marked as ready.', { listType: 'atomic' }),
  ports: list(opaque('EndpointPort is a tuple that describes a single port.'), 'Port numbers available on the related IP addresses.', { listType: 'atomic' }),
});
export const Endpoints = kindOf(C + 'Endpoints', 'Endpoints is a collection of endpoints that implement the actual service.', {
  subsets: list(EndpointSubset, 'The set of all endpoints is the union of all subsets.', { listType: 'atomic' }),
});

export const ConfigMap = kindOf(C + 'ConfigMap', 'ConfigMap holds configuration data for pods to consume.', {
  data: map(Type.String(), 'Data contains the configuration data.'),
  binaryData: map(bytes(), 'BinaryData contains the binary data.'),
  immutable: boolean('Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified).'),
});

export const Secret = kindOf(C + 'Secret', 'Secret holds secret data of a certain type.', {
  data: map(bytes(), "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'."),
  stringData: map(Type.String(), 'stringData allows specifying non-binary secret data in string form.'),
  type: string('Used to facilitate programmatic handling of secret data.'),
  immutable: boolean('Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).'),
});

export const ServiceAccount = kindOf(
  C + 'ServiceAccount',
  'ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets.',
  {
    secrets: list(ObjectReference, 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
    imagePullSecrets: list(
      LocalObjectReference,
      'ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.',
      { listType: 'atomic' },
    ),
    automountServiceAccountToken: boolean(
      'AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.',
    ),
  },
);

export const Event = kindOf(C + 'Event', 'Event is a report of an event somewhere in the cluster.', {
  involvedObject: ObjectReference,
  reason: string("This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  message: string('A human-readable description of the status of this operation.'),
  source: EventSource,
  firstTimestamp: time('The time at which the event was first recorded.'),
  lastTimestamp: time('The time at which the most recent occurrence of this event was recorded.'),
  count: int32('The number of times this event has occurred.'),
  type: string('Type of this event (Normal, Warning), new types could be added in the future'),
  eventTime: time('Time when this Event was first observed.'),
  series: opaque("Data about the Event series this event represents or nil if it's a singleton Event."),
  action: string('What action was taken/failed regarding to the Regarding object.'),
  related: ObjectReference,
  reportingComponent: string('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
  reportingInstance: string('ID of the controller instance, e.g. `kubelet-xyzf`.'),
});

export const LimitRangeItem = openObject(
  object(
    C + 'LimitRangeItem',
    'LimitRangeItem defines a min/max usage limit for any resource that matches on kind.',
    {
      type: string('Type of resource that this limit applies to.'),
      max: resourceMap('Max usage constraints on this kind by resource name.'),
      min: resourceMap('Min usage constraints on this kind by resource name.'),
      default: resourceMap('Default resource requirement limit value by resource name if resource limit is omitted.'),
      defaultRequest: resourceMap('DefaultRequest is the default resource requirement request value by resource name if resource request is omitted.'),
      maxLimitRequestRatio: resourceMap(
        'MaxLimitRequestRatio if specified, the named resource must have a request and limit that are both non-zero where limit divided by request is less than or equal to the enumerated value.',
      ),
    },
    ['type'],
  ),
);
export const LimitRange = kindOf(C + 'LimitRange', 'LimitRange sets resource usage limits for each kind of resource in a Namespace.', {
  spec: object(
    C + 'LimitRangeSpec',
    'LimitRangeSpec defines a min/max usage limit for resources that match on kind.',
    {
      limits: list(LimitRangeItem, 'Limits is the list of LimitRangeItem objects that are enforced.', { listType: 'atomic' }),
    },
    ['limits'],
  ),
});

export const ResourceQuota = kindOf(C + 'ResourceQuota', 'ResourceQuota sets aggregate quota restrictions enforced per namespace', {
  spec: openObject(
    object(C + 'ResourceQuotaSpec', 'ResourceQuotaSpec defines the desired hard limits to enforce for Quota.', {
      hard: resourceMap('hard is the set of desired hard limits for each named resource.'),
      scopes: list(Type.String(), 'A collection of filters that must match each object tracked by a quota.', { listType: 'atomic' }),
    }),
  ),
  status: object(C + 'ResourceQuotaStatus', 'ResourceQuotaStatus defines the enforced hard limits and observed use.', {
    hard: resourceMap('Hard is the set of enforced hard limits for each named resource.'),
    used: resourceMap('Used is the current observed total usage of the resource in the namespace.'),
  }),
});

export { LabelSelector };
export type Pod = Static<typeof Pod>;
export type Namespace = Static<typeof Namespace>;
export type ConfigMap = Static<typeof ConfigMap>;
export type Service = Static<typeof Service>;
export type Node = Static<typeof Node>;
export type Event = Static<typeof Event>;
