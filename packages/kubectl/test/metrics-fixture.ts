/**
 * Canned API answers for `top`, `autoscale` and `describe hpa`: the groups a
 * cluster with a metrics server has, NodeMetrics / PodMetrics, Nodes, Pods,
 * workloads and HorizontalPodAutoscalers. Test data only.
 */
import { wire } from '@kubeling/api';
import type { CannedGroup, RecordedRequest, Route } from './canned-server.js';

export const CORE: CannedGroup = {
  group: '',
  versions: ['v1'],
  resources: [
    { resource: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'] },
    { resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'] },
    { resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
    { resource: 'replicationcontrollers', kind: 'ReplicationController', namespaced: true, shortNames: ['rc'], subresources: ['scale', 'status'] },
  ],
};

export const APPS: CannedGroup = {
  group: 'apps',
  versions: ['v1'],
  resources: [
    { resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], subresources: ['scale', 'status'] },
    { resource: 'replicasets', kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'], subresources: ['scale', 'status'] },
    { resource: 'statefulsets', kind: 'StatefulSet', namespaced: true, shortNames: ['sts'], subresources: ['scale', 'status'] },
    { resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'], subresources: ['status'] },
  ],
};

export const AUTOSCALING: CannedGroup = {
  group: 'autoscaling',
  versions: ['v2', 'v1'],
  resources: [{ resource: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', namespaced: true, shortNames: ['hpa'], subresources: ['status'] }],
};

export const METRICS: CannedGroup = {
  group: 'metrics.k8s.io',
  versions: ['v1beta1'],
  resources: [
    { resource: 'nodes', kind: 'NodeMetrics', namespaced: false, verbs: ['get', 'list'] },
    { resource: 'pods', kind: 'PodMetrics', namespaced: true, verbs: ['get', 'list'] },
  ],
};

const T = '2025-03-01T10:00:00Z';
const list = (kind: string, apiVersion: string, items: unknown[]) => ({ kind, apiVersion, metadata: {}, items });

export const nodeMetrics = (name: string, cpu: string, memory: string) => ({
  kind: 'NodeMetrics',
  apiVersion: 'metrics.k8s.io/v1beta1',
  metadata: { name, creationTimestamp: T },
  timestamp: T,
  window: '15s',
  usage: { cpu, memory },
});

export const node = (name: string, allocatable: Record<string, string>, capacity = allocatable) => ({
  kind: 'Node',
  apiVersion: 'v1',
  metadata: { name, creationTimestamp: T },
  status: { allocatable, capacity },
});

export const podMetrics = (namespace: string, name: string, containers: [string, string, string][]) => ({
  kind: 'PodMetrics',
  apiVersion: 'metrics.k8s.io/v1beta1',
  metadata: { name, namespace, creationTimestamp: T },
  timestamp: T,
  window: '15s',
  containers: containers.map(([n, cpu, memory]) => ({ name: n, usage: { cpu, memory } })),
});

const pod = (namespace: string, name: string, created: string) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name, namespace, creationTimestamp: created },
});

const NODE_METRICS = [nodeMetrics('worker-2', '1250m', '2000Mi'), nodeMetrics('worker-1', '250123u', '1234567Ki'), nodeMetrics('tiny', '0', '0')];
const NODES = [
  node('worker-1', { cpu: '4', memory: '8Gi', pods: '110' }, { cpu: '4', memory: '16Gi', pods: '110' }),
  node('worker-2', { cpu: '2', memory: '4Gi', pods: '110' }),
  node('tiny', { cpu: '0', memory: '1Gi' }),
  node('worker-3', { cpu: '2', memory: '4Gi' }),
];
const DEFAULT_PODS = [
  podMetrics('default', 'web-2', [
    ['sidecar', '5m', '10Mi'],
    ['app', '100m', '1Gi'],
  ]),
  podMetrics('default', 'web-1', [['app', '1', '100Ki']]),
  podMetrics('default', 'api', [
    ['a', '250123u', '3Mi'],
    ['b', '250123u', '3Mi'],
  ]),
];

/** The routes of a cluster with a metrics server; `young`/`old`/`empty` namespaces have pods without metrics. */
export function metricsRoutes(): Record<string, Route> {
  const m = '/apis/metrics.k8s.io/v1beta1';
  const now = new Date().toISOString();
  return {
    [`GET ${m}/nodes`]: list('NodeMetricsList', 'metrics.k8s.io/v1beta1', NODE_METRICS),
    [`GET ${m}/nodes/worker-1`]: NODE_METRICS[1],
    'GET /api/v1/nodes': list('NodeList', 'v1', NODES),
    'GET /api/v1/nodes/worker-1': NODES[0],
    [`GET ${m}/namespaces/default/pods`]: list('PodMetricsList', 'metrics.k8s.io/v1beta1', DEFAULT_PODS),
    [`GET ${m}/namespaces/default/pods/web-2`]: DEFAULT_PODS[0],
    [`GET ${m}/pods`]: list('PodMetricsList', 'metrics.k8s.io/v1beta1', [
      ...DEFAULT_PODS,
      podMetrics('kube-system', 'coredns', [['coredns', '3m', '20Mi']]),
      podMetrics('a-team', 'zeta', [['z', '7m', '30Mi']]),
    ]),
    [`GET ${m}/namespaces/young/pods`]: list('PodMetricsList', 'metrics.k8s.io/v1beta1', []),
    [`GET ${m}/namespaces/empty/pods`]: list('PodMetricsList', 'metrics.k8s.io/v1beta1', []),
    'GET /api/v1/namespaces/young/pods': list('PodList', 'v1', [pod('young', 'fresh', now)]),
    'GET /api/v1/namespaces/empty/pods': list('PodList', 'v1', []),
  };
}

const workload = (apiVersion: string, kind: string, namespace: string, name: string) => ({
  apiVersion,
  kind,
  metadata: { name, namespace, uid: `uid-${name}` },
  spec: {},
});

/** A created object as a server answers it: the body with its namespace, uid, resourceVersion and creation time. */
function created(namespace: string) {
  return (r: RecordedRequest) => {
    const o = decodeBody(r) as { metadata?: Record<string, unknown> };
    if (o.metadata?.name === 'taken')
      return {
        status: 409,
        body: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'horizontalpodautoscalers.autoscaling "taken" already exists',
          reason: 'AlreadyExists',
          details: { name: 'taken', group: 'autoscaling', kind: 'horizontalpodautoscalers' },
          code: 409,
        },
      };
    return { ...o, metadata: { ...o.metadata, namespace, uid: 'hpa-uid', resourceVersion: '7', creationTimestamp: T } };
  };
}

/**
 * A request's JSON body; kubectl sends typed objects as protobuf, read here with the
 * autoscaling/v2beta2 tables when autoscaling/v2 has none (the messages are field for field the same).
 */
export function decodeBody(r: RecordedRequest): unknown {
  if (!r.contentType.includes('protobuf')) return JSON.parse(r.body);
  const env = wire.decodeEnvelope(r.raw);
  const st = wire.kindStruct(env.apiVersion, env.kind) ?? wire.kindStruct('autoscaling/v2beta2', env.kind);
  if (!st) throw new Error(`no wire table for ${env.apiVersion} ${env.kind}`);
  return { apiVersion: env.apiVersion, kind: env.kind, ...wire.decodeMessage(env.raw, st) };
}

/** Workloads to autoscale in `default` and `legacy` (a namespace whose server side refuses autoscaling/v2 creates). */
export function autoscaleRoutes(): Record<string, Route> {
  const out: Record<string, Route> = {};
  for (const ns of ['default', 'legacy']) {
    out[`GET /apis/apps/v1/namespaces/${ns}/deployments/web`] = workload('apps/v1', 'Deployment', ns, 'web');
    out[`GET /apis/apps/v1/namespaces/${ns}/statefulsets/db`] = workload('apps/v1', 'StatefulSet', ns, 'db');
    out[`GET /apis/apps/v1/namespaces/${ns}/replicasets/rs1`] = workload('apps/v1', 'ReplicaSet', ns, 'rs1');
    out[`GET /apis/apps/v1/namespaces/${ns}/daemonsets/agent`] = workload('apps/v1', 'DaemonSet', ns, 'agent');
    out[`GET /api/v1/namespaces/${ns}/replicationcontrollers/rc1`] = workload('v1', 'ReplicationController', ns, 'rc1');
    out[`GET /api/v1/namespaces/${ns}/pods/solo`] = workload('v1', 'Pod', ns, 'solo');
    out[`POST /apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers`] = created(ns);
  }
  out['POST /apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers'] = created('default');
  return out;
}

const HPA = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'hpa-web',
    creationTimestamp: T,
    labels: { app: 'web', tier: 'front' },
    annotations: { note: 'hello', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
      { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, target: { type: 'AverageValue', averageValue: '1k' } } },
      {
        type: 'Object',
        object: {
          metric: { name: 'requests-per-second' },
          describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main-route' },
          target: { type: 'Value', value: '10k' },
        },
      },
      {
        type: 'Object',
        object: {
          metric: { name: 'hits' },
          describedObject: { apiVersion: 'v1', kind: 'Service', name: 'web' },
          target: { type: 'AverageValue', averageValue: '0.5' },
        },
      },
      { type: 'External', external: { metric: { name: 'queue_messages_ready' }, target: { type: 'AverageValue', averageValue: '30' } } },
      { type: 'External', external: { metric: { name: 'lag' }, target: { type: 'Value', value: '2000m' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 60 } } },
      { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'AverageValue', averageValue: '1Gi' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } },
    ],
    behavior: {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 4,
    lastScaleTime: T,
    currentMetrics: [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 120, averageValue: '120m' } } },
      { type: 'Resource', resource: { name: 'memory', current: { averageValue: '52428800' } } },
      { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, current: { averageValue: '500' } } },
      {
        type: 'Object',
        object: {
          metric: { name: 'requests-per-second' },
          describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main-route' },
          current: { value: '2500' },
        },
      },
      {
        type: 'Object',
        object: { metric: { name: 'hits' }, describedObject: { apiVersion: 'v1', kind: 'Service', name: 'web' }, current: { averageValue: '1500m' } },
      },
      { type: 'External', external: { metric: { name: 'queue_messages_ready' }, current: { averageValue: '1500m' } } },
    ],
    conditions: [
      {
        type: 'AbleToScale',
        status: 'True',
        lastTransitionTime: T,
        reason: 'SucceededRescale',
        message: 'the HPA controller was able to update the target scale to 4',
      },
      {
        type: 'ScalingActive',
        status: 'True',
        lastTransitionTime: T,
        reason: 'ValidMetricFound',
        message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      },
      {
        type: 'ScalingLimited',
        status: 'False',
        lastTransitionTime: T,
        reason: 'DesiredWithinRange',
        message: 'the desired count is within the acceptable range',
      },
    ],
  },
};

const BARE = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'bare', namespace: 'default', uid: 'hpa-bare', creationTimestamp: T },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' }, maxReplicas: 4, behavior: { scaleUp: { policies: [] } } },
  status: { currentReplicas: 0, desiredReplicas: 0 },
};

const RESCALE = {
  kind: 'Event',
  apiVersion: 'v1',
  metadata: { name: 'web.1', namespace: 'default', creationTimestamp: T },
  involvedObject: { kind: 'HorizontalPodAutoscaler', namespace: 'default', name: 'web', uid: 'hpa-web', apiVersion: 'autoscaling/v2' },
  reason: 'SuccessfulRescale',
  message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target',
  source: { component: 'horizontal-pod-autoscaler' },
  firstTimestamp: T,
  lastTimestamp: T,
  count: 1,
  type: 'Normal',
};

/** HPAs in `default` (autoscaling/v2 and v1 forms) and their events. */
export function hpaRoutes(): Record<string, Route> {
  const v2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
  const v1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
  const asV1 = {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'old', namespace: 'default', uid: 'hpa-old', creationTimestamp: T, labels: { app: 'old' } },
    spec: {
      scaleTargetRef: { apiVersion: 'v1', kind: 'ReplicationController', name: 'rc1' },
      minReplicas: 1,
      maxReplicas: 3,
      targetCPUUtilizationPercentage: 80,
    },
    status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 12 },
  };
  return {
    [`GET ${v2}/web`]: HPA,
    [`GET ${v2}/bare`]: BARE,
    [`GET ${v2}`]: list('HorizontalPodAutoscalerList', 'autoscaling/v2', [BARE, HPA]),
    [`GET ${v1}/old`]: asV1,
    'GET /api/v1/namespaces/default/events': (r: RecordedRequest) =>
      list('EventList', 'v1', (r.query.get('fieldSelector') ?? '').includes('involvedObject.name=web') ? [RESCALE] : []),
  };
}
