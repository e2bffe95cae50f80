/**
 * policy/v1: PodDisruptionBudget and Eviction (the `eviction` subresource of
 * pods), as upstream Kubernetes 1.32 (`k8s.io/api/policy/v1`).
 */
import { described, enumString, int32, int64, intOrString, list, map, object, time, type Static, type TSchema } from '../schema/dsl.js';
import { Condition, DeleteOptions, kindOf, LabelSelector } from '../schema/meta.js';

const P = 'io.k8s.api.policy.v1.';

/**
 * A struct-valued field with its own `x-kubernetes-patch-strategy` (upstream puts
 * the tag on the field, not on the referenced definition).
 */
const withPatchStrategy = <S extends TSchema>(schema: S, strategy: string): S => ({ ...schema, 'x-kubernetes-patch-strategy': strategy }) as S;

export const PodDisruptionBudgetSpec = object(P + 'PodDisruptionBudgetSpec', 'PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.', {
  minAvailable: intOrString('An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction.'),
  selector: withPatchStrategy(described(LabelSelector, 'Label query over pods whose evictions are managed by the disruption budget.'), 'replace'),
  maxUnavailable: intOrString('An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction.'),
  unhealthyPodEvictionPolicy: enumString(
    ['AlwaysAllow', 'IfHealthyBudget'],
    'UnhealthyPodEvictionPolicy defines the criteria for when unhealthy pods should be considered for eviction: IfHealthyBudget or AlwaysAllow.',
  ),
});

export const PodDisruptionBudgetStatus = object(
  P + 'PodDisruptionBudgetStatus',
  'PodDisruptionBudgetStatus represents information about the status of a PodDisruptionBudget.',
  {
    observedGeneration: int64('Most recent generation observed when updating this PDB status.'),
    disruptedPods: map(
      time(),
      'DisruptedPods maps the names of pods whose eviction was processed by the API server but not yet observed by the controller to the eviction time.',
    ),
    disruptionsAllowed: int32('Number of pod disruptions that are currently allowed.'),
    currentHealthy: int32('Current number of healthy pods.'),
    desiredHealthy: int32('Minimum desired number of healthy pods.'),
    expectedPods: int32('Total number of pods counted by this disruption budget.'),
    conditions: list(Condition, 'Conditions contain conditions for PDB, such as DisruptionAllowed.', {
      mergeKey: 'type',
      strategy: 'merge',
      listType: 'map',
      mapKeys: ['type'],
    }),
  },
  ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'],
);

export const PodDisruptionBudget = kindOf(
  P + 'PodDisruptionBudget',
  'PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods.',
  {
    spec: described(PodDisruptionBudgetSpec, 'Specification of the desired behavior of the PodDisruptionBudget.'),
    status: described(PodDisruptionBudgetStatus, 'Most recently observed status of the PodDisruptionBudget.'),
  },
);

export const Eviction = kindOf(P + 'Eviction', 'Eviction evicts a pod from its node subject to certain policies and safety constraints.', {
  deleteOptions: described(DeleteOptions, 'DeleteOptions may be provided.'),
});

export type PodDisruptionBudgetSpec = Static<typeof PodDisruptionBudgetSpec>;
export type PodDisruptionBudgetStatus = Static<typeof PodDisruptionBudgetStatus>;
export type PodDisruptionBudget = Static<typeof PodDisruptionBudget>;
export type Eviction = Static<typeof Eviction>;
