/**
 * The configuration objects of API Priority and Fairness every apiserver
 * makes (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go, v1):
 *
 * - mandatory: the `exempt` and `catch-all` priority levels and FlowSchemas.
 *   The system depends on them; the apiserver restores their spec whenever it
 *   changes (only `spec.exempt` of the exempt level is the operator's), and
 *   validation refuses any other spec for them.
 * - suggested: the rest (system, node-high, leader-election, workload-high,
 *   workload-low, global-default and their FlowSchemas). Created when absent;
 *   kept up to date only while `apf.kubernetes.io/autoupdate-spec` is "true".
 *
 * Every object carries that annotation set to "true". Specs are written in
 * their defaulted form, so that what is stored compares equal to them.
 */
import { flowcontrolv1, type ObjectMeta } from '@kubeling/api';

/** The kinds as the server holds them: with their metadata. */
export type FlowSchema = flowcontrolv1.FlowSchema & { metadata: ObjectMeta };
export type PriorityLevel = flowcontrolv1.PriorityLevelConfiguration & { metadata: ObjectMeta };
type Subject = flowcontrolv1.Subject;
type ResourceRule = flowcontrolv1.ResourcePolicyRule;
type NonResourceRule = flowcontrolv1.NonResourcePolicyRule;

const API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';
const meta = (name: string) => ({ name, annotations: { [flowcontrolv1.AUTO_UPDATE_ANNOTATION]: 'true' } });

function limited(name: string, shares: number, lendable: number, queuing?: { queues: number; handSize: number; queueLengthLimit: number }): PriorityLevel {
  return {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: meta(name),
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: shares,
        lendablePercent: lendable,
        limitResponse: queuing ? { type: 'Queue', queuing } : { type: 'Reject' },
      },
    },
  };
}

const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const kubeSystemSAs = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } }));
const rule = (verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): ResourceRule => ({
  verbs,
  apiGroups,
  resources,
  namespaces,
  clusterScope,
});
const nonResource = (verbs: string[], nonResourceURLs: string[]): NonResourceRule => ({ verbs, nonResourceURLs });

const ALL_RESOURCES = [rule(['*'], ['*'], ['*'], ['*'], true)];
const ALL_NON_RESOURCES = [nonResource(['*'], ['*'])];

function flowSchema(
  name: string,
  priorityLevel: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  subjects: Subject[],
  resourceRules: ResourceRule[] | undefined,
  nonResourceRules: NonResourceRule[] | undefined,
): FlowSchema {
  return {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: priorityLevel },
      matchingPrecedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules: [{ subjects, ...(resourceRules ? { resourceRules } : {}), ...(nonResourceRules ? { nonResourceRules } : {}) }],
    },
  };
}

/** A schema matching every request of its subjects. */
const everything = (name: string, pl: string, precedence: number, dm: 'ByUser' | 'ByNamespace' | undefined, subjects: Subject[]) =>
  flowSchema(name, pl, precedence, dm, subjects, ALL_RESOURCES, ALL_NON_RESOURCES);

export const MANDATORY_PRIORITY_LEVELS: readonly PriorityLevel[] = [
  limited('catch-all', 5, 0),
  {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: meta('exempt'),
    spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  },
];

export const MANDATORY_FLOW_SCHEMAS: readonly FlowSchema[] = [
  // Preventing priority inversion: system:masters is never held back.
  everything('exempt', 'exempt', 1, undefined, groups('system:masters')),
  // Only a minimal share: reached when global-default was deleted.
  everything('catch-all', 'catch-all', 10000, 'ByUser', groups('system:unauthenticated', 'system:authenticated')),
];

const QUEUES_64 = { queues: 64, handSize: 6, queueLengthLimit: 50 };
const QUEUES_128 = { queues: 128, handSize: 6, queueLengthLimit: 50 };

export const SUGGESTED_PRIORITY_LEVELS: readonly PriorityLevel[] = [
  limited('system', 30, 33, QUEUES_64),
  limited('node-high', 40, 25, QUEUES_64),
  limited('leader-election', 10, 0, { queues: 16, handSize: 4, queueLengthLimit: 50 }),
  limited('workload-high', 40, 50, QUEUES_128),
  limited('workload-low', 100, 90, QUEUES_128),
  limited('global-default', 20, 50, QUEUES_128),
];

const CONTROLLER_MANAGER = 'system:kube-controller-manager';
const SCHEDULER = 'system:kube-scheduler';
const GET_CREATE_UPDATE = ['get', 'create', 'update'];

export const SUGGESTED_FLOW_SCHEMAS: readonly FlowSchema[] = [
  everything('system-nodes', 'system', 500, 'ByUser', groups('system:nodes')),
  // Node heartbeats apart from the rest of the nodes' traffic.
  flowSchema(
    'system-node-high',
    'node-high',
    400,
    'ByUser',
    groups('system:nodes'),
    [rule(['*'], [''], ['nodes', 'nodes/status'], ['*'], true), rule(['*'], ['coordination.k8s.io'], ['leases'], ['*'], false)],
    undefined,
  ),
  flowSchema('probes', 'exempt', 2, undefined, groups('system:unauthenticated', 'system:authenticated'), undefined, [
    nonResource(['get'], ['/healthz', '/readyz', '/livez']),
  ]),
  flowSchema(
    'system-leader-election',
    'leader-election',
    100,
    'ByUser',
    [...users(CONTROLLER_MANAGER, SCHEDULER), ...kubeSystemSAs('*')],
    [rule(GET_CREATE_UPDATE, ['coordination.k8s.io'], ['leases'], ['*'], false)],
    undefined,
  ),
  flowSchema(
    'workload-leader-election',
    'leader-election',
    200,
    'ByUser',
    kubeSystemSAs('*'),
    [rule(GET_CREATE_UPDATE, [''], ['endpoints', 'configmaps'], ['*'], false), rule(GET_CREATE_UPDATE, ['coordination.k8s.io'], ['leases'], ['*'], false)],
    undefined,
  ),
  // Ahead of workload-leader-election, so that the endpoints controllers' writes are not taken for leader election.
  flowSchema(
    'endpoint-controller',
    'workload-high',
    150,
    'ByUser',
    [...users(CONTROLLER_MANAGER), ...kubeSystemSAs('endpoint-controller', 'endpointslicemirroring-controller')],
    [rule(GET_CREATE_UPDATE, [''], ['endpoints'], ['*'], false)],
    undefined,
  ),
  everything('kube-controller-manager', 'workload-high', 800, 'ByNamespace', users(CONTROLLER_MANAGER)),
  everything('kube-scheduler', 'workload-high', 800, 'ByNamespace', users(SCHEDULER)),
  everything('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', kubeSystemSAs('*')),
  everything('service-accounts', 'workload-low', 9000, 'ByUser', groups('system:serviceaccounts')),
  everything('global-default', 'global-default', 9900, 'ByUser', groups('system:unauthenticated', 'system:authenticated')),
];

export const mandatoryFlowSchema = (name: string | undefined) => MANDATORY_FLOW_SCHEMAS.find((f) => f.metadata.name === name);
export const mandatoryPriorityLevel = (name: string | undefined) => MANDATORY_PRIORITY_LEVELS.find((p) => p.metadata.name === name);
