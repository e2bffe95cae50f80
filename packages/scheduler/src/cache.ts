/**
 * The scheduler cache (kubernetes pkg/scheduler/backend/cache): nodes with the
 * pods placed on them — bound pods from the informer and *assumed* pods the
 * scheduler has chosen a node for but whose binding has not come back through
 * the watch yet — so the next pod already sees the previous one's resources.
 * When the informer reports an assumed pod bound, the assumption becomes fact;
 * a failed binding forgets it.
 */
import { NodeInfo, PodInfo, podKey, type Node, type Pod } from './framework/types.js';

interface PodState {
  info: PodInfo;
  node: string;
  assumed: boolean;
}

export class SchedulerCache {
  private readonly nodeInfos = new Map<string, NodeInfo>();
  private readonly pods = new Map<string, PodState>();
  private nodeOrder: NodeInfo[] | undefined;

  /** Nodes that exist (not ones only remembered for their pods), in a stable order. */
  nodes(): NodeInfo[] {
    this.nodeOrder ??= [...this.nodeInfos.values()].filter((n) => n.node).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.nodeOrder;
  }

  node(name: string): NodeInfo | undefined {
    const n = this.nodeInfos.get(name);
    return n?.node ? n : undefined;
  }

  private infoFor(name: string): NodeInfo {
    let n = this.nodeInfos.get(name);
    if (!n) {
      n = new NodeInfo();
      this.nodeInfos.set(name, n);
    }
    return n;
  }

  addNode(node: Node): void {
    const n = this.infoFor(node.metadata.name!);
    const isNew = !n.node;
    n.setNode(node);
    if (isNew) this.nodeOrder = undefined;
  }

  updateNode(node: Node): void {
    this.addNode(node);
  }

  removeNode(node: Node): void {
    const n = this.nodeInfos.get(node.metadata.name!);
    if (!n) return;
    // Pods may still point at it (their deletion comes later); keep them counted.
    if (n.pods.size) n.node = undefined;
    else this.nodeInfos.delete(node.metadata.name!);
    this.nodeOrder = undefined;
  }

  isAssumed(key: string): boolean {
    return this.pods.get(key)?.assumed ?? false;
  }

  /** Places a pod on a node before its binding is confirmed. */
  assume(pod: Pod, node: string): PodInfo {
    const key = podKey(pod);
    if (this.pods.has(key)) throw new Error(`pod ${key} is in the cache, so can't be assumed`);
    const info = new PodInfo({ ...pod, spec: { ...(pod.spec ?? {}), nodeName: node } });
    this.infoFor(node).addPod(info);
    this.pods.set(key, { info, node, assumed: true });
    return info;
  }

  /** Drops an assumption whose binding failed. */
  forget(key: string): void {
    const st = this.pods.get(key);
    if (!st?.assumed) return;
    this.removeFromNode(key, st.node);
    this.pods.delete(key);
  }

  private removeFromNode(key: string, node: string): void {
    const n = this.nodeInfos.get(node);
    if (!n) return;
    n.removePod(key);
    if (!n.node && n.pods.size === 0) this.nodeInfos.delete(node);
  }

  /** A bound pod from the informer (confirms an assumption). */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const node = pod.spec!.nodeName!;
    const st = this.pods.get(key);
    if (st) this.removeFromNode(key, st.node);
    const info = new PodInfo(pod);
    this.infoFor(node).addPod(info);
    this.pods.set(key, { info, node, assumed: false });
  }

  updatePod(pod: Pod): void {
    this.addPod(pod);
  }

  removePod(pod: Pod): void {
    const key = podKey(pod);
    const st = this.pods.get(key);
    if (!st) return;
    this.removeFromNode(key, st.node);
    this.pods.delete(key);
  }

  get podCount(): number {
    return this.pods.size;
  }
}
