/**
 * What the node tells the cluster about its CSI drivers (kubernetes
 * pkg/volume/csi/nodeinfomanager): the CSINode object named after the node,
 * owned by it, created at start with no drivers and the in-tree plugins
 * migrated to CSI in its `storage.alpha.kubernetes.io/migrated-plugins`
 * annotation; on a driver's registration its entry in `spec.drivers` (node ID,
 * sorted topology keys, `allocatable.count` when the driver gives a limit),
 * its node ID in the Node's `csi.volume.kubernetes.io/nodeid` annotation and
 * its topology segments as Node labels; on deregistration the entry and the
 * node ID go (the labels stay, as upstream leaves them). Writes carry the
 * resourceVersion they read and are retried on conflict, as upstream's
 * exponential backoff does.
 */
import { isAlreadyExists, isConflict, isNotFound } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';

export const ANNOTATION_NODE_ID = 'csi.volume.kubernetes.io/nodeid';
export const ANNOTATION_MIGRATED_PLUGINS = 'storage.alpha.kubernetes.io/migrated-plugins';
/** The in-tree plugins a 1.32 kubelet reports as migrated to CSI (all GA, Portworx on by default). */
export const MIGRATED_PLUGINS = [
  'kubernetes.io/aws-ebs',
  'kubernetes.io/azure-disk',
  'kubernetes.io/azure-file',
  'kubernetes.io/cinder',
  'kubernetes.io/gce-pd',
  'kubernetes.io/portworx-volume',
  'kubernetes.io/vsphere-volume',
].join(',');

const MAX_INT32 = 2 ** 31 - 1;

export interface CSINodeDriver {
  name: string;
  nodeID: string;
  topologyKeys: string[] | null;
  allocatable?: { count: number };
}

export interface CSINode {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  spec: { drivers: CSINodeDriver[] };
}

interface NodeMeta {
  metadata: { name: string; uid: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

const CSINODES = '/apis/storage.k8s.io/v1/csinodes';

/** Runs `fn` until it does not lose a race (409 Conflict or AlreadyExists), at most `steps` times (upstream's updateBackoff: 4 steps from 10 ms, ×5). */
async function retryConflicts<T>(fn: () => Promise<T>, steps = 4): Promise<T> {
  let delay = 10;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i >= steps || !(isConflict(e) || isAlreadyExists(e))) throw e;
      await new Promise((r) => setTimeout(r, delay));
      delay *= 5;
    }
  }
}

export class NodeInfoManager {
  constructor(
    private readonly client: RestClient,
    private readonly nodeName: string,
  ) {}

  /** CreateCSINode: the node's CSINode with no drivers, owned by the Node. */
  async createCSINode(): Promise<CSINode> {
    const node = await this.client.get<NodeMeta>(`/api/v1/nodes/${this.nodeName}`);
    return this.client.post<CSINode>(CSINODES, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: {
        name: this.nodeName,
        annotations: { [ANNOTATION_MIGRATED_PLUGINS]: MIGRATED_PLUGINS },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }],
      },
      spec: { drivers: [] },
    });
  }

  /** InitializeCSINodeWithAnnotation: the CSINode exists and names the migrated plugins. */
  async initialize(): Promise<void> {
    await retryConflicts(async () => {
      let cur: CSINode;
      try {
        cur = await this.client.get<CSINode>(`${CSINODES}/${this.nodeName}`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        await this.createCSINode();
        return;
      }
      if (cur.metadata.annotations?.[ANNOTATION_MIGRATED_PLUGINS] === MIGRATED_PLUGINS) return;
      cur.metadata.annotations = { ...cur.metadata.annotations, [ANNOTATION_MIGRATED_PLUGINS]: MIGRATED_PLUGINS };
      await this.client.put(`${CSINODES}/${this.nodeName}`, cur);
    });
  }

  /** InstallCSIDriver: the Node's annotation and labels, then the CSINode's entry. */
  async installDriver(driver: string, nodeID: string, maxVolumes: number, topology: Record<string, string>): Promise<void> {
    if (!nodeID) throw new Error('error adding CSI driver node info: driverNodeID must not be empty');
    try {
      await retryConflicts(() => this.updateNode((node) => withTopology(withNodeID(node, driver, nodeID), topology)));
    } catch (e) {
      throw new Error(`error updating Node object with CSI driver node info: ${(e as Error).message}`);
    }
    try {
      await retryConflicts(() => this.installInCSINode(driver, nodeID, maxVolumes, topology));
    } catch (e) {
      throw new Error(`error updating CSINode object with CSI driver node info: ${(e as Error).message}`);
    }
  }

  /** UninstallCSIDriver: the CSINode's entry, then the Node's annotation entry. */
  async uninstallDriver(driver: string): Promise<void> {
    try {
      await retryConflicts(async () => {
        let cur: CSINode;
        try {
          cur = await this.client.get<CSINode>(`${CSINODES}/${this.nodeName}`);
        } catch (e) {
          if (isNotFound(e)) return;
          throw e;
        }
        const drivers = cur.spec.drivers ?? [];
        if (!drivers.some((d) => d.name === driver)) return;
        cur.spec.drivers = drivers.filter((d) => d.name !== driver);
        await this.client.put(`${CSINODES}/${this.nodeName}`, cur);
      });
    } catch (e) {
      throw new Error(`error uninstalling CSI driver from CSINode object ${(e as Error).message}`);
    }
    try {
      await retryConflicts(() => this.updateNode((node) => withoutNodeID(node, driver)));
    } catch (e) {
      throw new Error(`error removing CSI driver node info from Node object ${(e as Error).message}`);
    }
  }

  private async installInCSINode(driver: string, nodeID: string, maxVolumes: number, topology: Record<string, string>): Promise<void> {
    let cur: CSINode;
    try {
      cur = await this.client.get<CSINode>(`${CSINODES}/${this.nodeName}`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      cur = await this.createCSINode();
    }
    const keys = Object.keys(topology).sort();
    const drivers = cur.spec.drivers ?? [];
    const same = drivers.find((d) => d.name === driver && d.nodeID === nodeID && sameKeys(d.topologyKeys ?? [], keys));
    const annotated = cur.metadata.annotations?.[ANNOTATION_MIGRATED_PLUGINS] === MIGRATED_PLUGINS;
    if (same && annotated) return;
    const entry: CSINodeDriver = { name: driver, nodeID, topologyKeys: keys.length ? keys : null };
    if (maxVolumes > 0) entry.allocatable = { count: Math.min(maxVolumes, MAX_INT32) };
    cur.metadata.annotations = { ...cur.metadata.annotations, [ANNOTATION_MIGRATED_PLUGINS]: MIGRATED_PLUGINS };
    cur.spec.drivers = [...drivers.filter((d) => d.name !== driver), entry];
    await this.client.put(`${CSINODES}/${this.nodeName}`, cur);
  }

  /** Reads the Node, applies `change` to its labels and annotations, and patches what changed (with the read resourceVersion). */
  private async updateNode(change: (n: NodeMeta) => NodeMeta | undefined): Promise<void> {
    const node = await this.client.get<NodeMeta>(`/api/v1/nodes/${this.nodeName}`);
    const next = change(structuredClone(node));
    if (!next) return;
    const patch: { metadata: Record<string, unknown> } = { metadata: { resourceVersion: node.metadata.resourceVersion } };
    const labels = diff(node.metadata.labels, next.metadata.labels);
    const annotations = diff(node.metadata.annotations, next.metadata.annotations);
    if (labels) patch.metadata.labels = labels;
    if (annotations) patch.metadata.annotations = annotations;
    if (!labels && !annotations) return;
    await this.client.patch(`/api/v1/nodes/${this.nodeName}`, patch, 'application/merge-patch+json');
  }
}

const sameKeys = (a: string[], b: string[]): boolean => a.length === b.length && [...a].sort().every((k, i) => k === b[i]);

/** A merge patch turning `a` into `b` (null removes a key); undefined when they are equal. */
function diff(a: Record<string, string> = {}, b: Record<string, string> = {}): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out[k] = v;
  for (const k of Object.keys(a)) if (!(k in b)) out[k] = null;
  return Object.keys(out).length ? out : undefined;
}

function nodeIDs(node: NodeMeta): Record<string, string> {
  const raw = node.metadata.annotations?.[ANNOTATION_NODE_ID];
  if (!raw) return {};
  try {
    const m = JSON.parse(raw) as unknown;
    if (m && typeof m === 'object' && !Array.isArray(m)) return m as Record<string, string>;
  } catch {
    // reported below
  }
  throw new Error(`failed to parse node's "${ANNOTATION_NODE_ID}" annotation value (${JSON.stringify(raw)})`);
}

/** updateNodeIDInNode */
function withNodeID(node: NodeMeta, driver: string, nodeID: string): NodeMeta {
  const ids = nodeIDs(node);
  if (ids[driver] === nodeID) return node;
  node.metadata.annotations = { ...node.metadata.annotations, [ANNOTATION_NODE_ID]: JSON.stringify(sortKeys({ ...ids, [driver]: nodeID })) };
  return node;
}

/** removeNodeIDFromNode */
function withoutNodeID(node: NodeMeta, driver: string): NodeMeta | undefined {
  const ids = nodeIDs(node);
  if (!(driver in ids)) return undefined;
  delete ids[driver];
  const annotations = { ...node.metadata.annotations };
  if (Object.keys(ids).length) annotations[ANNOTATION_NODE_ID] = JSON.stringify(sortKeys(ids));
  else delete annotations[ANNOTATION_NODE_ID];
  node.metadata.annotations = annotations;
  return node;
}

/** updateTopologyLabels: a segment may not change a label the node already has. */
function withTopology(node: NodeMeta, topology: Record<string, string>): NodeMeta {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(topology)) {
    if (k in labels && labels[k] !== v) {
      throw new Error(`detected topology value collision: driver reported "${k}":"${v}" but existing label is "${k}":"${labels[k]}"`);
    }
  }
  node.metadata.labels = { ...labels, ...topology };
  return node;
}

/** Go's json.Marshal of a map sorts its keys. */
const sortKeys = (m: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
