/**
 * scheduling.k8s.io/v1: PriorityClass, as upstream Kubernetes 1.32
 * (`k8s.io/api/scheduling/v1`). It has no spec: its fields sit at the top level.
 */
import { boolean, enumString, int32, string, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

export const PriorityClass = kindOf(
  'io.k8s.api.scheduling.v1.PriorityClass',
  'PriorityClass defines mapping from a priority class name to the priority integer value.',
  {
    value: int32('value represents the integer value of this priority class; pods receive it as their priority.'),
    globalDefault: boolean(
      'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.',
    ),
    description: string('description is an arbitrary string that usually provides guidelines on when this priority class should be used.'),
    preemptionPolicy: enumString(
      ['Never', 'PreemptLowerPriority'],
      'preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority.',
    ),
  },
);

export type PriorityClass = Static<typeof PriorityClass>;
