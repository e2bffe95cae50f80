/** Builders for plugin unit tests: nodes, pods, claims, volumes and classes as plain objects, and a framework handle over arrays. */
import type { Taint } from '@kubeling/component-helpers';
import type { CSIDriver, CSINode, CSIStorageCapacity, Handle, Lister, PersistentVolume, PersistentVolumeClaim, StorageClass } from './storage.js';
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

// ---- storage ---------------------------------------------------------------------

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? '');

/** A lister over a mutable array (tests change the objects between calls). */
export function arrayLister<T extends { metadata: { namespace?: string; name?: string } }>(items: T[]): Lister<T> {
  return { get: (k) => items.find((o) => keyOf(o) === k), list: () => [...items] };
}

export interface FakeCluster {
  pvcs?: PersistentVolumeClaim[];
  pvs?: PersistentVolume[];
  classes?: StorageClass[];
  csiNodes?: CSINode[];
  drivers?: CSIDriver[];
  capacities?: CSIStorageCapacity[];
  pods?: Pod[];
  nodes?: Node[];
  /** The PUTs made; each answers the object with its resourceVersion bumped, and lands in the arrays as a watch would deliver it. */
  puts?: { path: string; body: any }[];
}

function replaceIn<T extends { metadata: { namespace?: string; name?: string } }>(items: T[], obj: T): void {
  const i = items.findIndex((o) => keyOf(o) === keyOf(obj));
  if (i >= 0) items[i] = obj;
}

/** A Handle over plain arrays; `events()` runs the volume-event listeners as an informer would. */
export function fakeHandle(c: FakeCluster): Handle & { events(): void } {
  const listeners = new Set<() => void>();
  let rv = 1000;
  return {
    pvcs: arrayLister((c.pvcs ??= [])),
    pvs: arrayLister((c.pvs ??= [])),
    storageClasses: arrayLister((c.classes ??= [])),
    csiNodes: arrayLister((c.csiNodes ??= [])),
    csiDrivers: arrayLister((c.drivers ??= [])),
    capacities: arrayLister((c.capacities ??= [])),
    pod: (k) => (c.pods ?? []).find((p) => keyOf(p) === k),
    node: (n) => (c.nodes ?? []).find((x) => x.metadata.name === n),
    api: {
      put: async <T>(path: string, body: unknown) => {
        (c.puts ??= []).push({ path, body });
        const out = structuredClone(body) as PersistentVolume & PersistentVolumeClaim;
        out.metadata.resourceVersion = String(++rv);
        if (path.includes('/persistentvolumeclaims/')) replaceIn(c.pvcs!, structuredClone(out));
        else if (path.includes('/persistentvolumes/')) replaceIn(c.pvs!, structuredClone(out));
        return out as T;
      },
    },
    onVolumeEvent(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    events() {
      for (const l of [...listeners]) l();
    },
  };
}

export function makePVC(
  name: string,
  o: {
    size?: string;
    className?: string;
    volumeName?: string;
    bound?: boolean;
    accessModes?: string[];
    annotations?: Record<string, string>;
    namespace?: string;
  } = {},
): PersistentVolumeClaim {
  const annotations = { ...(o.bound ? { 'pv.kubernetes.io/bind-completed': 'yes' } : {}), ...(o.annotations ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: o.namespace ?? 'default', uid: `uid-${name}`, resourceVersion: '10', annotations },
    spec: {
      accessModes: o.accessModes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.size ?? '1Gi' } },
      ...(o.className !== undefined ? { storageClassName: o.className } : {}),
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
    },
    status: { phase: o.bound ? 'Bound' : 'Pending' },
  };
}

export function makePV(
  name: string,
  o: {
    size?: string;
    className?: string;
    node?: string;
    claim?: PersistentVolumeClaim;
    phase?: string;
    labels?: Record<string, string>;
    csi?: { driver: string; volumeHandle: string };
  } = {},
): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, resourceVersion: '20', labels: o.labels ?? {} },
    spec: {
      capacity: { storage: o.size ?? '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: o.className ?? '',
      ...(o.node
        ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.node] }] }] } } }
        : {}),
      ...(o.claim
        ? {
            claimRef: {
              kind: 'PersistentVolumeClaim',
              namespace: o.claim.metadata.namespace ?? '',
              name: o.claim.metadata.name ?? '',
              uid: o.claim.metadata.uid ?? '',
            },
          }
        : {}),
      ...(o.csi ? { csi: o.csi } : {}),
    },
    status: { phase: o.phase ?? (o.claim ? 'Bound' : 'Available') },
  };
}

export function makeClass(name: string, o: { mode?: string; provisioner?: string; allowedTopologies?: StorageClass['allowedTopologies'] } = {}): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: o.provisioner ?? 'hostpath.csi.kubeling.io',
    volumeBindingMode: o.mode ?? 'WaitForFirstConsumer',
    ...(o.allowedTopologies ? { allowedTopologies: o.allowedTopologies } : {}),
  };
}

/** A pod whose volumes are the named claims (`eph:<vol>` makes a generic ephemeral volume). */
export function podWithClaims(name: string, claims: string[], o: Parameters<typeof makePod>[1] = {}): Pod {
  const volumes = claims.map((c) =>
    c.startsWith('eph:')
      ? { name: c.slice(4), ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }
      : { name: `v-${c}`, persistentVolumeClaim: { claimName: c } },
  );
  return makePod(name, { ...o, spec: { containers: [{ name: 'c', image: 'nginx' }], volumes, ...(o.spec ?? {}) } });
}
