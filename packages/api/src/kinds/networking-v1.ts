/**
 * networking.k8s.io/v1: Ingress, IngressClass, NetworkPolicy, ServiceCIDR and
 * IPAddress, as upstream Kubernetes 1.33 (`k8s.io/api/networking/v1`).
 */
import { Type } from '@sinclair/typebox';
import { described, int32, intOrString, list, object, string, type Static } from '../schema/dsl.js';
import { Condition, kindOf, LabelSelector } from '../schema/meta.js';

const N = 'io.k8s.api.networking.v1.';

export const TypedLocalObjectReference = object(
  'io.k8s.api.core.v1.TypedLocalObjectReference',
  'TypedLocalObjectReference contains enough information to let you locate the typed referenced object inside the same namespace.',
  {
    apiGroup: string(
      'APIGroup is the group for the resource being referenced. If APIGroup is not specified, the specified Kind must be in the core API group.',
    ),
    kind: string('Kind is the type of resource being referenced'),
    name: string('Name is the name of resource being referenced'),
  },
  ['kind', 'name'],
);

export const ServiceBackendPort = object(N + 'ServiceBackendPort', 'ServiceBackendPort is the service port being referenced.', {
  name: string('name is the name of the port on the Service. This is a mutually exclusive setting with "Number".'),
  number: int32('number is the numerical port number (e.g. 80) on the Service. This is a mutually exclusive setting with "Name".'),
});

export const IngressServiceBackend = object(
  N + 'IngressServiceBackend',
  'IngressServiceBackend references a Kubernetes Service as a Backend.',
  {
    name: string('name is the referenced service. The service must exist in the same namespace as the Ingress object.'),
    port: described(ServiceBackendPort, 'port of the referenced service. A port name or port number is required for a IngressServiceBackend.'),
  },
  ['name'],
);

export const IngressBackend = object(N + 'IngressBackend', 'IngressBackend describes all endpoints for a given service and port.', {
  service: described(IngressServiceBackend, 'service references a service as a backend. This is a mutually exclusive setting with "Resource".'),
  resource: described(
    TypedLocalObjectReference,
    'resource is an ObjectRef to another Kubernetes resource in the namespace of the Ingress object. If resource is specified, a service.Name and service.Port must not be specified.',
  ),
});

export const HTTPIngressPath = object(
  N + 'HTTPIngressPath',
  'HTTPIngressPath associates a path with a backend. Incoming urls matching the path are forwarded to the backend.',
  {
    path: string(
      'path is matched against the path of an incoming request. Currently it can contain characters disallowed from the conventional "path" part of a URL as defined by RFC 3986.',
    ),
    pathType: string(
      'pathType determines the interpretation of the path matching. PathType can be one of the following values: Exact, Prefix, ImplementationSpecific.',
    ),
    backend: described(IngressBackend, 'backend defines the referenced service endpoint to which the traffic will be forwarded to.'),
  },
  ['pathType', 'backend'],
);

export const HTTPIngressRuleValue = object(
  N + 'HTTPIngressRuleValue',
  'HTTPIngressRuleValue is a list of http selectors pointing to backends.',
  { paths: list(HTTPIngressPath, 'paths is a collection of paths that map requests to backends.', { listType: 'atomic' }) },
  ['paths'],
);

export const IngressRule = object(
  N + 'IngressRule',
  'IngressRule represents the rules mapping the paths under a specified host to the related backend services.',
  {
    host: string('host is the fully qualified domain name of a network host, as defined by RFC 3986.'),
    http: HTTPIngressRuleValue,
  },
);

export const IngressTLS = object(N + 'IngressTLS', 'IngressTLS describes the transport layer security associated with an ingress.', {
  hosts: list(Type.String(), 'hosts is a list of hosts included in the TLS certificate.', { listType: 'atomic' }),
  secretName: string('secretName is the name of the secret used to terminate TLS traffic on port 443.'),
});

export const IngressSpec = object(N + 'IngressSpec', 'IngressSpec describes the Ingress the user wishes to exist.', {
  ingressClassName: string('ingressClassName is the name of an IngressClass cluster resource.'),
  defaultBackend: described(IngressBackend, "defaultBackend is the backend that should handle requests that don't match any rule."),
  tls: list(IngressTLS, 'tls represents the TLS configuration.', { listType: 'atomic' }),
  rules: list(IngressRule, 'rules is a list of host rules used to configure the Ingress.', { listType: 'atomic' }),
});

export const IngressPortStatus = object(
  N + 'IngressPortStatus',
  'IngressPortStatus represents the error condition of a service port',
  {
    port: int32('port is the port number of the ingress port.'),
    protocol: string('protocol is the protocol of the ingress port. The supported values are: "TCP", "UDP", "SCTP"'),
    error: string('error is to record the problem with the service port.'),
  },
  ['port', 'protocol'],
);

export const IngressLoadBalancerIngress = object(
  N + 'IngressLoadBalancerIngress',
  'IngressLoadBalancerIngress represents the status of a load-balancer ingress point.',
  {
    ip: string('ip is set for load-balancer ingress points that are IP based.'),
    hostname: string('hostname is set for load-balancer ingress points that are DNS based.'),
    ports: list(IngressPortStatus, 'ports provides information about the ports exposed by this LoadBalancer.', { listType: 'atomic' }),
  },
);

export const IngressLoadBalancerStatus = object(N + 'IngressLoadBalancerStatus', 'IngressLoadBalancerStatus represents the status of a load-balancer.', {
  ingress: list(IngressLoadBalancerIngress, 'ingress is a list containing ingress points for the load-balancer.', { listType: 'atomic' }),
});

export const IngressStatus = object(N + 'IngressStatus', 'IngressStatus describe the current state of the Ingress.', {
  loadBalancer: described(IngressLoadBalancerStatus, 'loadBalancer contains the current status of the load-balancer.'),
});

export const Ingress = kindOf(N + 'Ingress', 'Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.', {
  spec: described(IngressSpec, 'spec is the desired state of the Ingress.'),
  status: described(IngressStatus, 'status is the current state of the Ingress.'),
});

export const IngressClassParametersReference = object(
  N + 'IngressClassParametersReference',
  'IngressClassParametersReference identifies an API object. This can be used to specify a cluster or namespace-scoped resource.',
  {
    apiGroup: string('apiGroup is the group for the resource being referenced.'),
    kind: string('kind is the type of resource being referenced.'),
    name: string('name is the name of resource being referenced.'),
    scope: string('scope represents if this refers to a cluster or namespace scoped resource. This may be set to "Cluster" (default) or "Namespace".'),
    namespace: string('namespace is the namespace of the resource being referenced. This field is required when scope is set to "Namespace".'),
  },
  ['kind', 'name'],
);

export const IngressClassSpec = object(N + 'IngressClassSpec', 'IngressClassSpec provides information about the class of an Ingress.', {
  controller: string('controller refers to the name of the controller that should handle this class.'),
  parameters: described(IngressClassParametersReference, 'parameters is a link to a custom resource containing additional configuration for the controller.'),
});

export const IngressClass = kindOf(N + 'IngressClass', 'IngressClass represents the class of the Ingress, referenced by the Ingress Spec.', {
  spec: described(IngressClassSpec, 'spec is the desired state of the IngressClass.'),
});

export const NetworkPolicyPort = object(N + 'NetworkPolicyPort', 'NetworkPolicyPort describes a port to allow traffic on', {
  protocol: string('protocol represents the protocol (TCP, UDP, or SCTP) which traffic must match. If not specified, this field defaults to TCP.'),
  port: intOrString('port represents the port on the given protocol. This can either be a numerical or named port on a pod.'),
  endPort: int32('endPort indicates that the range of ports from port to endPort if set, inclusive, should be allowed by the policy.'),
});

export const IPBlock = object(
  N + 'IPBlock',
  'IPBlock describes a particular CIDR (Ex. "192.168.1.0/24","2001:db8::/64") that is allowed to the pods matched by a NetworkPolicySpec\'s podSelector.',
  {
    cidr: string('cidr is a string representing the IPBlock Valid examples are "192.168.1.0/24" or "2001:db8::/64"'),
    except: list(Type.String(), 'except is a slice of CIDRs that should not be included within an IPBlock', { listType: 'atomic' }),
  },
  ['cidr'],
);

export const NetworkPolicyPeer = object(
  N + 'NetworkPolicyPeer',
  'NetworkPolicyPeer describes a peer to allow traffic to/from. Only certain combinations of fields are allowed',
  {
    podSelector: described(LabelSelector, 'podSelector is a label selector which selects pods.'),
    namespaceSelector: described(LabelSelector, 'namespaceSelector selects namespaces using cluster-scoped labels.'),
    ipBlock: described(IPBlock, 'ipBlock defines policy on a particular IPBlock.'),
  },
);

export const NetworkPolicyIngressRule = object(
  N + 'NetworkPolicyIngressRule',
  "NetworkPolicyIngressRule describes a particular set of traffic that is allowed to the pods matched by a NetworkPolicySpec's podSelector.",
  {
    ports: list(NetworkPolicyPort, 'ports is a list of ports which should be made accessible on the pods selected for this rule.', { listType: 'atomic' }),
    from: list(NetworkPolicyPeer, 'from is a list of sources which should be able to access the pods selected for this rule.', { listType: 'atomic' }),
  },
);

export const NetworkPolicyEgressRule = object(
  N + 'NetworkPolicyEgressRule',
  "NetworkPolicyEgressRule describes a particular set of traffic that is allowed out of pods matched by a NetworkPolicySpec's podSelector.",
  {
    ports: list(NetworkPolicyPort, 'ports is a list of destination ports for outgoing traffic.', { listType: 'atomic' }),
    to: list(NetworkPolicyPeer, 'to is a list of destinations for outgoing traffic of pods selected for this rule.', { listType: 'atomic' }),
  },
);

export const NetworkPolicySpec = object(N + 'NetworkPolicySpec', 'NetworkPolicySpec provides the specification of a NetworkPolicy', {
  podSelector: described(LabelSelector, 'podSelector selects the pods to which this NetworkPolicy object applies.'),
  ingress: list(NetworkPolicyIngressRule, 'ingress is a list of ingress rules to be applied to the selected pods.', { listType: 'atomic' }),
  egress: list(NetworkPolicyEgressRule, 'egress is a list of egress rules to be applied to the selected pods.', { listType: 'atomic' }),
  policyTypes: list(
    Type.String(),
    'policyTypes is a list of rule types that the NetworkPolicy relates to. Valid options are ["Ingress"], ["Egress"], or ["Ingress", "Egress"].',
    {
      listType: 'atomic',
    },
  ),
});

export const NetworkPolicy = kindOf(N + 'NetworkPolicy', 'NetworkPolicy describes what network traffic is allowed for a set of Pods', {
  spec: described(NetworkPolicySpec, 'spec represents the specification of the desired behavior for this NetworkPolicy.'),
});

export const ServiceCIDRSpec = object(N + 'ServiceCIDRSpec', 'ServiceCIDRSpec define the CIDRs the user wants to use for allocating ClusterIPs for Services.', {
  cidrs: list(
    Type.String(),
    'CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or "2001:db8::/64") from which to assign service cluster IPs.',
    {
      listType: 'atomic',
    },
  ),
});

export const ServiceCIDRStatus = object(N + 'ServiceCIDRStatus', 'ServiceCIDRStatus describes the current state of the ServiceCIDR.', {
  conditions: list(Condition, 'conditions holds an array of metav1.Condition that describe the state of the ServiceCIDR.', {
    mergeKey: 'type',
    strategy: 'merge',
    listType: 'map',
    mapKeys: ['type'],
  }),
});

export const ServiceCIDR = kindOf(N + 'ServiceCIDR', 'ServiceCIDR defines a range of IP addresses using CIDR format (e.g. 192.168.0.0/24 or 2001:db2::/64).', {
  spec: described(ServiceCIDRSpec, 'spec is the desired state of the ServiceCIDR.'),
  status: described(ServiceCIDRStatus, 'status represents the current state of the ServiceCIDR.'),
});

export const ParentReference = object(N + 'ParentReference', 'ParentReference describes a reference to a parent object.', {
  group: string('Group is the group of the object being referenced.'),
  resource: string('Resource is the resource of the object being referenced.'),
  namespace: string('Namespace is the namespace of the object being referenced.'),
  name: string('Name is the name of the object being referenced.'),
});

export const IPAddressSpec = object(
  N + 'IPAddressSpec',
  'IPAddressSpec describe the attributes in an IP Address.',
  { parentRef: described(ParentReference, 'ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.') },
  ['parentRef'],
);

export const IPAddress = kindOf(
  N + 'IPAddress',
  'IPAddress represents a single IP of a single IP Family. The object is designed to be used by APIs that operate on IP addresses.',
  { spec: described(IPAddressSpec, 'spec is the desired state of the IPAddress.') },
);

export type IngressBackend = Static<typeof IngressBackend>;
export type IngressSpec = Static<typeof IngressSpec>;
export type Ingress = Static<typeof Ingress>;
export type IngressClass = Static<typeof IngressClass>;
export type NetworkPolicyPeer = Static<typeof NetworkPolicyPeer>;
export type NetworkPolicyPort = Static<typeof NetworkPolicyPort>;
export type NetworkPolicySpec = Static<typeof NetworkPolicySpec>;
export type NetworkPolicy = Static<typeof NetworkPolicy>;
export type ServiceCIDR = Static<typeof ServiceCIDR>;
export type IPAddress = Static<typeof IPAddress>;
