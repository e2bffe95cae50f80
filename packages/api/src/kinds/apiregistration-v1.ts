/**
 * apiregistration.k8s.io/v1: APIService, as upstream Kubernetes 1.33
 * (`k8s.io/kube-aggregator/pkg/apis/apiregistration/v1`): which server
 * answers one group-version — the kube-apiserver itself (no `service`) or an
 * extension server behind a Service, reached through the aggregation layer.
 */
import { boolean, bytes, described, int32, list, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const A = 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.';

export const ServiceReference = object(A + 'ServiceReference', 'ServiceReference holds a reference to Service.legacy.k8s.io', {
  namespace: string('Namespace is the namespace of the service'),
  name: string('Name is the name of the service'),
  port: int32(
    'If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. `port` should be a valid port number (1-65535, inclusive).',
  ),
});

export const APIServiceSpec = object(
  A + 'APIServiceSpec',
  'APIServiceSpec contains information for locating and communicating with a server. Only https is supported, though you are able to disable certificate verification.',
  {
    service: described(
      ServiceReference,
      'Service is a reference to the service for this API server.  It must communicate on port 443. If the Service is nil, that means the handling for the API groupversion is handled locally on this server. The call will simply delegate to the normal handler chain to be fulfilled.',
    ),
    group: string('Group is the API group name this server hosts'),
    version: string('Version is the API version this server hosts.  For example, "v1"'),
    insecureSkipTLSVerify: boolean(
      'InsecureSkipTLSVerify disables TLS certificate verification when communicating with this server. This is strongly discouraged.  You should use the CABundle instead.',
    ),
    caBundle: {
      ...bytes(
        "CABundle is a PEM encoded CA bundle which will be used to validate an API server's serving certificate. If unspecified, system trust roots on the apiserver are used.",
      ),
      'x-kubernetes-list-type': 'atomic',
    },
    groupPriorityMinimum: int32(
      "GroupPriorityMinimum is the priority this group should have at least. Higher priority means that the group is preferred by clients over lower priority ones. Note that other versions of this group might specify even higher GroupPriorityMinimum values such that the whole group gets a higher priority. The primary sort is based on GroupPriorityMinimum, ordered highest number to lowest (20 before 10). The secondary sort is based on the alphabetical comparison of the name of the object.  (v1.bar before v1.foo) We'd recommend something like: *.k8s.io (except extensions) at 18000 and PaaSes (OpenShift, Deis) are recommended to be in the 2000s",
    ),
    versionPriority: int32(
      'VersionPriority controls the ordering of this API version inside of its group.  Must be greater than zero. The primary sort is based on VersionPriority, ordered highest to lowest (20 before 10). Since it\'s inside of a group, the number can be small, probably in the 10s. In case of equal version priorities, the version string will be used to compute the order inside a group. If the version string is "kube-like", it will sort above non "kube-like" version strings, which are ordered lexicographically. "Kube-like" versions start with a "v", then are followed by a number (the major version), then optionally the string "alpha" or "beta" and another number (the minor version). These are sorted first by GA > beta > alpha (where GA is a version with no suffix such as beta or alpha), and then by comparing major version, then minor version. An example sorted list of versions: v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10.',
    ),
  },
  ['groupPriorityMinimum', 'versionPriority'],
);

export const APIServiceCondition = object(
  A + 'APIServiceCondition',
  'APIServiceCondition describes the state of an APIService at a particular point',
  {
    type: string('Type is the type of the condition.'),
    status: string('Status is the status of the condition. Can be True, False, Unknown.'),
    lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
    reason: string("Unique, one-word, CamelCase reason for the condition's last transition."),
    message: string('Human-readable message indicating details about last transition.'),
  },
  ['type', 'status'],
);

export const APIServiceStatus = object(A + 'APIServiceStatus', 'APIServiceStatus contains derived information about an API server', {
  conditions: list(APIServiceCondition, 'Current service state of apiService.', { mergeKey: 'type', strategy: 'merge', listType: 'map', mapKeys: ['type'] }),
});

export const APIService = kindOf(A + 'APIService', 'APIService represents a server for a particular GroupVersion. Name must be "version.group".', {
  spec: described(APIServiceSpec, 'Spec contains information for locating and communicating with a server'),
  status: described(APIServiceStatus, 'Status contains derived information about an API server'),
});

export type ServiceReference = Static<typeof ServiceReference>;
export type APIServiceSpec = Static<typeof APIServiceSpec>;
export type APIServiceCondition = Static<typeof APIServiceCondition>;
export type APIService = Static<typeof APIService>;
