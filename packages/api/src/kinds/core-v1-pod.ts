/**
 * core/v1: the pod and the structures it is made of (containers, probes,
 * environment, volumes, tolerations, status), shared by every workload kind.
 */
import { Type } from '@sinclair/typebox';
import { boolean, int32, int64, intOrString, list, map, object, opaque, quantity, string, time, type Static, type TObject } from '../schema/dsl.js';
import { ObjectMeta } from '../schema/meta.js';

export const C = 'io.k8s.api.core.v1.';
export const openObject = <T extends TObject>(o: T): T => ({ ...o, additionalProperties: true }) as T;

export const ObjectReference = object(C + 'ObjectReference', 'ObjectReference contains enough information to let you inspect or modify the referred object.', {
  kind: string('Kind of the referent.'),
  namespace: string('Namespace of the referent.'),
  name: string('Name of the referent.'),
  uid: string('UID of the referent.'),
  apiVersion: string('API version of the referent.'),
  resourceVersion: string('Specific resourceVersion to which this reference is made, if any.'),
  fieldPath: string('If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.'),
});
export const LocalObjectReference = object(
  C + 'LocalObjectReference',
  'LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.',
  {
    name: string('Name of the referent.'),
  },
);
export const EventSource = object(C + 'EventSource', 'EventSource contains information for an event.', {
  component: string('Component from which the event is generated.'),
  host: string('Node name on which the event is generated.'),
});

export const resourceMap = (d: string) => map(quantity(), d);

export const ResourceRequirements = openObject(
  object(C + 'ResourceRequirements', 'ResourceRequirements describes the compute resource requirements.', {
    limits: resourceMap('Limits describes the maximum amount of compute resources allowed.'),
    requests: resourceMap('Requests describes the minimum amount of compute resources required.'),
  }),
);
export const ContainerPort = openObject(
  object(
    C + 'ContainerPort',
    'ContainerPort represents a network port in a single container.',
    {
      name: string('If specified, this must be an IANA_SVC_NAME and unique within the pod.'),
      hostPort: int32('Number of port to expose on the host.'),
      containerPort: int32("Number of port to expose on the pod's IP address."),
      protocol: string('Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".'),
      hostIP: string('What host IP to bind the external port to.'),
    },
    ['containerPort'],
  ),
);
export const ExecAction = object(C + 'ExecAction', 'ExecAction describes a "run in container" action.', {
  command: list(Type.String(), 'Command is the command line to execute inside the container.', { listType: 'atomic' }),
});
export const HTTPHeader = object(
  C + 'HTTPHeader',
  'HTTPHeader describes a custom header to be used in HTTP probes',
  {
    name: string('The header field name.'),
    value: string('The header field value'),
  },
  ['name', 'value'],
);
export const HTTPGetAction = object(
  C + 'HTTPGetAction',
  'HTTPGetAction describes an action based on HTTP Get requests.',
  {
    path: string('Path to access on the HTTP server.'),
    port: intOrString('Name or number of the port to access on the container.'),
    host: string('Host name to connect to, defaults to the pod IP.'),
    scheme: string('Scheme to use for connecting to the host. Defaults to HTTP.'),
    httpHeaders: list(HTTPHeader, 'Custom headers to set in the request. HTTP allows repeated headers.', { listType: 'atomic' }),
  },
  ['port'],
);
export const TCPSocketAction = object(
  C + 'TCPSocketAction',
  'TCPSocketAction describes an action based on opening a socket',
  {
    port: intOrString('Number or name of the port to access on the container.'),
    host: string('Optional: Host name to connect to, defaults to the pod IP.'),
  },
  ['port'],
);
export const GRPCAction = object(
  C + 'GRPCAction',
  'GRPCAction specifies an action involving a GRPC service.',
  {
    port: int32('Port number of the gRPC service.'),
    service: string('Service is the name of the service to place in the gRPC HealthCheckRequest.'),
  },
  ['port'],
);
export const SleepAction = object(
  C + 'SleepAction',
  'SleepAction describes a "sleep" action.',
  {
    seconds: int64('Seconds is the number of seconds to sleep.'),
  },
  ['seconds'],
);
export const Probe = object(
  C + 'Probe',
  'Probe describes a health check to be performed against a container to determine whether it is alive or ready to receive traffic.',
  {
    exec: ExecAction,
    httpGet: HTTPGetAction,
    tcpSocket: TCPSocketAction,
    grpc: GRPCAction,
    initialDelaySeconds: int32('Number of seconds after the container has started before liveness probes are initiated.'),
    timeoutSeconds: int32('Number of seconds after which the probe times out. Defaults to 1 second.'),
    periodSeconds: int32('How often (in seconds) to perform the probe. Default to 10 seconds.'),
    successThreshold: int32('Minimum consecutive successes for the probe to be considered successful after having failed.'),
    failureThreshold: int32('Minimum consecutive failures for the probe to be considered failed after having succeeded.'),
    terminationGracePeriodSeconds: int64('Optional duration in seconds the pod needs to terminate gracefully upon probe failure.'),
  },
);
export const LifecycleHandler = object(C + 'LifecycleHandler', 'LifecycleHandler defines a specific action that should be taken in a lifecycle hook.', {
  exec: ExecAction,
  httpGet: HTTPGetAction,
  tcpSocket: TCPSocketAction,
  sleep: SleepAction,
});
export const Lifecycle = object(
  C + 'Lifecycle',
  'Lifecycle describes actions that the management system should take in response to container lifecycle events.',
  {
    postStart: LifecycleHandler,
    preStop: LifecycleHandler,
    stopSignal: string('StopSignal defines which signal will be sent to a container when it is being stopped.'),
  },
);
const keySelector = (name: string, what: string) =>
  object(
    C + name,
    `Selects a key from a ${what}.`,
    {
      name: string('Name of the referent.'),
      key: string(`The key to select.`),
      optional: boolean(`Specify whether the ${what} or its key must be defined`),
    },
    ['key'],
  );
export const EnvVarSource = object(C + 'EnvVarSource', 'EnvVarSource represents a source for the value of an EnvVar.', {
  fieldRef: object(
    C + 'ObjectFieldSelector',
    'ObjectFieldSelector selects an APIVersioned field of an object.',
    {
      apiVersion: string('Version of the schema the FieldPath is written in terms of, defaults to "v1".'),
      fieldPath: string('Path of the field to select in the specified API version.'),
    },
    ['fieldPath'],
  ),
  resourceFieldRef: object(
    C + 'ResourceFieldSelector',
    'ResourceFieldSelector represents container resources (cpu, memory) and their output format',
    {
      containerName: string('Container name: required for volumes, optional for env vars'),
      resource: string('Required: resource to select'),
      divisor: quantity('Specifies the output format of the exposed resources, defaults to "1"'),
    },
    ['resource'],
  ),
  configMapKeyRef: keySelector('ConfigMapKeySelector', 'ConfigMap'),
  secretKeyRef: keySelector('SecretKeySelector', 'Secret'),
});
export const EnvFromSource = object(C + 'EnvFromSource', 'EnvFromSource represents the source of a set of ConfigMaps or Secrets', {
  prefix: string('Optional text to prepend to the name of each environment variable.'),
  configMapRef: object(C + 'ConfigMapEnvSource', 'ConfigMapEnvSource selects a ConfigMap to populate the environment variables with.', {
    name: string('Name of the referent.'),
    optional: boolean('Specify whether the ConfigMap must be defined'),
  }),
  secretRef: object(C + 'SecretEnvSource', 'SecretEnvSource selects a Secret to populate the environment variables with.', {
    name: string('Name of the referent.'),
    optional: boolean('Specify whether the Secret must be defined'),
  }),
});
export const EnvVar = openObject(
  object(
    C + 'EnvVar',
    'EnvVar represents an environment variable present in a Container.',
    {
      name: string('Name of the environment variable.'),
      value: string('Variable references $(VAR_NAME) are expanded using the previously defined environment variables in the container.'),
      valueFrom: EnvVarSource,
    },
    ['name'],
  ),
);
export const VolumeMount = openObject(
  object(
    C + 'VolumeMount',
    'VolumeMount describes a mounting of a Volume within a container.',
    {
      name: string('This must match the Name of a Volume.'),
      mountPath: string('Path within the container at which the volume should be mounted.'),
      readOnly: boolean('Mounted read-only if true, read-write otherwise (false or unspecified).'),
      subPath: string("Path within the volume from which the container's volume should be mounted."),
      subPathExpr: string(
        "Expanded path within the volume from which the container's volume should be mounted: $(VAR_NAME) references to the container's environment are expanded.",
      ),
      mountPropagation: string('Determines how mounts are propagated from the host to container and the other way around.'),
    },
    ['name', 'mountPath'],
  ),
);

export const Container = openObject(
  object(
    C + 'Container',
    'A single application container that you want to run within a pod.',
    {
      name: string('Name of the container specified as a DNS_LABEL.'),
      image: string('Container image name.'),
      command: list(Type.String(), 'Entrypoint array. Not executed within a shell.', { listType: 'atomic' }),
      args: list(Type.String(), 'Arguments to the entrypoint.', { listType: 'atomic' }),
      workingDir: string("Container's working directory."),
      ports: list(ContainerPort, 'List of ports to expose from the container.', {
        mergeKey: 'containerPort',
        strategy: 'merge',
        listType: 'map',
        mapKeys: ['containerPort', 'protocol'],
      }),
      env: list(EnvVar, 'List of environment variables to set in the container.', { mergeKey: 'name', strategy: 'merge', listType: 'map', mapKeys: ['name'] }),
      envFrom: list(EnvFromSource, 'List of sources to populate environment variables in the container.', { listType: 'atomic' }),
      resources: ResourceRequirements,
      volumeMounts: list(VolumeMount, "Pod volumes to mount into the container's filesystem.", {
        mergeKey: 'mountPath',
        strategy: 'merge',
        listType: 'map',
        mapKeys: ['mountPath'],
      }),
      livenessProbe: Probe,
      readinessProbe: Probe,
      startupProbe: Probe,
      lifecycle: Lifecycle,
      terminationMessagePath: string("Path at which the file to which the container's termination message will be written is mounted."),
      terminationMessagePolicy: string('Indicate how the termination message should be populated.'),
      imagePullPolicy: string('Image pull policy. One of Always, Never, IfNotPresent.'),
      securityContext: opaque('SecurityContext defines the security options the container should be run with.'),
      restartPolicy: string('RestartPolicy defines the restart behavior of individual containers in a pod.'),
      stdin: boolean('Whether this container should allocate a buffer for stdin in the container runtime.'),
      stdinOnce: boolean('Whether the container runtime should close the stdin channel after it has been opened by a single attach.'),
      tty: boolean('Whether this container should allocate a TTY for itself.'),
    },
    ['name'],
  ),
);

/**
 * EphemeralContainer: a container's fields (EphemeralContainerCommon) and the
 * container whose namespaces it targets. Which of them it may set is
 * validation's to say (core-v1-validation.ts), as upstream's types keep them all.
 */
export const EphemeralContainer = openObject(
  object(
    C + 'EphemeralContainer',
    'An EphemeralContainer is a temporary container that you may add to an existing Pod for user-initiated activities such as debugging.',
    {
      ...Container.properties,
      targetContainerName: string('If set, the name of the container from PodSpec that this ephemeral container targets.'),
    },
    ['name'],
  ),
);

export const Toleration = openObject(
  object(
    C + 'Toleration',
    'The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect> using the matching operator <operator>.',
    {
      key: string('Key is the taint key that the toleration applies to.'),
      operator: string("Operator represents a key's relationship to the value. Valid operators are Exists and Equal."),
      value: string('Value is the taint value the toleration matches to.'),
      effect: string('Effect indicates the taint effect to match.'),
      tolerationSeconds: int64('TolerationSeconds represents the period of time the toleration tolerates the taint.'),
    },
  ),
);
export const Taint = object(
  C + 'Taint',
  'The node this Taint is attached to has the "effect" on any pod that does not tolerate the Taint.',
  {
    key: string('Required. The taint key to be applied to a node.'),
    value: string('The taint value corresponding to the taint key.'),
    effect: string('Required. The effect of the taint on pods that do not tolerate the taint.'),
    timeAdded: time('TimeAdded represents the time at which the taint was added.'),
  },
  ['key', 'effect'],
);

export const Volume = openObject(
  object(
    C + 'Volume',
    'Volume represents a named volume in a pod that may be accessed by any container in the pod.',
    {
      name: string('name of the volume. Must be a DNS_LABEL and unique within the pod.'),
    },
    ['name'],
  ),
);

export const PodSpec = openObject(
  object(C + 'PodSpec', 'PodSpec is a description of a pod.', {
    volumes: list(Volume, 'List of volumes that can be mounted by containers belonging to the pod.', {
      mergeKey: 'name',
      strategy: 'merge,retainKeys',
      listType: 'map',
      mapKeys: ['name'],
    }),
    initContainers: list(Container, 'List of initialization containers belonging to the pod.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
    containers: list(Container, 'List of containers belonging to the pod.', { mergeKey: 'name', strategy: 'merge', listType: 'map', mapKeys: ['name'] }),
    ephemeralContainers: list(EphemeralContainer, 'List of ephemeral containers run in this pod.', {
      mergeKey: 'name',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['name'],
    }),
    restartPolicy: string('Restart policy for all containers within the pod. One of Always, OnFailure, Never.'),
    terminationGracePeriodSeconds: int64('Optional duration in seconds the pod needs to terminate gracefully.'),
    activeDeadlineSeconds: int64('Optional duration in seconds the pod may be active on the node relative to StartTime.'),
    dnsPolicy: string('Set DNS policy for the pod.'),
    nodeSelector: map(Type.String(), 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
    serviceAccountName: string('ServiceAccountName is the name of the ServiceAccount to use to run this pod.'),
    serviceAccount: string('DeprecatedServiceAccount is a deprecated alias for ServiceAccountName.'),
    automountServiceAccountToken: boolean('AutomountServiceAccountToken indicates whether a service account token should be automatically mounted.'),
    nodeName: string('NodeName indicates in which node this pod is scheduled.'),
    hostNetwork: boolean('Host networking requested for this pod.'),
    hostPID: boolean("Use the host's pid namespace."),
    hostIPC: boolean("Use the host's ipc namespace."),
    securityContext: opaque('SecurityContext holds pod-level security attributes and common container settings.'),
    imagePullSecrets: list(
      LocalObjectReference,
      'ImagePullSecrets is an optional list of references to secrets in the same namespace to use for pulling any of the images used by this PodSpec.',
      { mergeKey: 'name', strategy: 'merge', listType: 'map', mapKeys: ['name'] },
    ),
    hostname: string('Specifies the hostname of the Pod.'),
    subdomain: string('If specified, the fully qualified Pod hostname will be "<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>".'),
    affinity: opaque("If specified, the pod's scheduling constraints"),
    schedulerName: string('If specified, the pod will be dispatched by specified scheduler.'),
    tolerations: list(Toleration, "If specified, the pod's tolerations.", { listType: 'atomic' }),
    priorityClassName: string("If specified, indicates the pod's priority."),
    priority: int32('The priority value.'),
    topologySpreadConstraints: list(
      opaque('TopologySpreadConstraint specifies how to spread matching pods among the given topology.'),
      'TopologySpreadConstraints describes how a group of pods ought to spread across topology domains.',
      { mergeKey: 'topologyKey', strategy: 'merge', listType: 'map', mapKeys: ['topologyKey', 'whenUnsatisfiable'] },
    ),
    enableServiceLinks: boolean("EnableServiceLinks indicates whether information about services should be injected into pod's environment variables."),
    preemptionPolicy: string('PreemptionPolicy is the Policy for preempting pods with lower priority.'),
    runtimeClassName: string(
      'RuntimeClassName refers to a RuntimeClass object in the node.k8s.io group, which should be used to run this pod. If no RuntimeClass resource matches the named class, the pod will not be run.',
    ),
    overhead: resourceMap('Overhead represents the resource overhead associated with running a pod for a given RuntimeClass.'),
  }),
);

export const PodCondition = openObject(
  object(
    C + 'PodCondition',
    'PodCondition contains details for the current condition of this pod.',
    {
      type: string('Type is the type of the condition.'),
      status: string('Status is the status of the condition. Can be True, False, Unknown.'),
      lastProbeTime: time('Last time we probed the condition.'),
      lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
      reason: string("Unique, one-word, CamelCase reason for the condition's last transition."),
      message: string('Human-readable message indicating details about last transition.'),
    },
    ['type', 'status'],
  ),
);

export const ContainerStatus = opaque('ContainerStatus contains details for the current status of this container.');

export const PodStatus = openObject(
  object(C + 'PodStatus', 'PodStatus represents information about the status of a pod.', {
    phase: string('The phase of a Pod is a simple, high-level summary of where the Pod is in its lifecycle.'),
    conditions: list(PodCondition, 'Current service state of pod.', { mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'] }),
    message: string('A human readable message indicating details about why the pod is in this condition.'),
    reason: string('A brief CamelCase message indicating details about why the pod is in this state.'),
    nominatedNodeName: string('nominatedNodeName is set only when this pod preempts other pods on the node.'),
    hostIP: string('hostIP holds the IP address of the host to which the pod is assigned.'),
    podIP: string('podIP address allocated to the pod.'),
    startTime: time('RFC 3339 date and time at which the object was acknowledged by the Kubelet.'),
    containerStatuses: list(ContainerStatus, 'Statuses of containers in this pod.', { listType: 'atomic' }),
    initContainerStatuses: list(ContainerStatus, 'Statuses of init containers in this pod.', { listType: 'atomic' }),
    ephemeralContainerStatuses: list(ContainerStatus, 'Statuses for any ephemeral containers that have run in this pod.', { listType: 'atomic' }),
    qosClass: string('The Quality of Service (QOS) classification assigned to the pod based on resource requirements.'),
  }),
);

export const PodTemplateSpec = object(C + 'PodTemplateSpec', 'PodTemplateSpec describes the data a pod should have when created from a template', {
  metadata: ObjectMeta,
  spec: PodSpec,
});

export type PodSpec = Static<typeof PodSpec>;
export type Container = Static<typeof Container>;
export type EphemeralContainer = Static<typeof EphemeralContainer>;
export type ObjectReference = Static<typeof ObjectReference>;
export type PodTemplateSpec = Static<typeof PodTemplateSpec>;
