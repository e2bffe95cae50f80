/**
 * node.k8s.io/v1: RuntimeClass, as upstream Kubernetes 1.33
 * (`k8s.io/api/node/v1`). Like PriorityClass it has no spec: its fields sit at
 * the top level.
 */
import { Type } from '@sinclair/typebox';
import { described, list, map, object, quantity, string, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';
import { Toleration } from './core-v1.js';

const N = 'io.k8s.api.node.v1.';

export const Overhead = object(N + 'Overhead', 'Overhead structure represents the resource overhead associated with running a pod.', {
  podFixed: map(quantity(), 'podFixed represents the fixed resource overhead associated with running a pod.'),
});

export const Scheduling = object(N + 'Scheduling', 'Scheduling specifies the scheduling constraints for nodes supporting a RuntimeClass.', {
  nodeSelector: map(Type.String(), 'nodeSelector lists labels that must be present on nodes that support this RuntimeClass.'),
  tolerations: list(Toleration, 'tolerations are appended (excluding duplicates) to pods running with this RuntimeClass during admission.', {
    listType: 'atomic',
  }),
});

export const RuntimeClass = kindOf(
  N + 'RuntimeClass',
  'RuntimeClass defines a class of container runtime supported in the cluster. The RuntimeClass is used to determine which container runtime is used to run all containers in a pod.',
  {
    handler: string(
      'handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class. The handler must be a lowercase DNS label. Immutable.',
    ),
    overhead: described(Overhead, 'overhead represents the resource overhead associated with running a pod for a given RuntimeClass.'),
    scheduling: described(
      Scheduling,
      'scheduling holds the scheduling constraints to ensure that pods running with this RuntimeClass are scheduled to nodes that support it.',
    ),
  },
);

export type Overhead = Static<typeof Overhead>;
export type Scheduling = Static<typeof Scheduling>;
export type RuntimeClass = Static<typeof RuntimeClass>;
