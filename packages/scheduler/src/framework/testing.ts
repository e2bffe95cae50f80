/** Builders for plugin unit tests: nodes and pods as plain objects. */
import type { Taint } from '@kubeling/component-helpers';
import { NodeInfo, PodInfo, type Node, type Pod, type PodSpec } from './types.js';

export function makeNode(
  name: string,
  o: {
    cpu?: string;
    memory?: string;
    pods?: number;
    labels?: Record<string, string>;
    taints?: Taint[];
    unschedulable?: boolean;
    extra?: Record<string, string>;
  } = {},
): Node {
  const alloc = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: String(o.pods ?? 110), ...(o.extra ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: { capacity: alloc, allocatable: alloc },
  };
}

export function makePod(
  name: string,
  o: {
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    spec?: PodSpec;
    priority?: number;
    namespace?: string;
    node?: string;
    extra?: Record<string, string>;
  } = {},
): Pod {
  const requests: Record<string, string> = { ...(o.cpu ? { cpu: o.cpu } : {}), ...(o.memory ? { memory: o.memory } : {}), ...(o.extra ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace ?? 'default', uid: `uid-${name}`, labels: o.labels ?? {}, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      containers: [{ name: 'c', image: 'nginx', ...(Object.keys(requests).length ? { resources: { requests } } : {}) }],
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.node ? { nodeName: o.node } : {}),
      ...(o.spec ?? {}),
    },
    status: {},
  };
}

export const podInfo = (name: string, o: Parameters<typeof makePod>[1] = {}) => new PodInfo(makePod(name, o));

export function nodeInfo(node: Node, pods: Pod[] = []): NodeInfo {
  const n = new NodeInfo(node);
  for (const p of pods) n.addPod(new PodInfo(p));
  return n;
}
