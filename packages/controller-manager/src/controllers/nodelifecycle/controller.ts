/**
 * Node lifecycle controller (kubernetes pkg/controller/nodelifecycle): a node
 * whose kubelet has not renewed its `kube-node-lease` Lease (nor posted status)
 * for the grace period (50 s upstream) gets its conditions set to Unknown
 * (`NodeStatusUnknown`) and the `node.kubernetes.io/unreachable` taints
 * (NoSchedule and NoExecute); a kubelet reporting Ready=False gets the
 * `not-ready` taints. Taints go again when the node is Ready.
 *
 * The NoSchedule taints follow every node add and update (upstream's
 * `nodeUpdateQueue` and `doNoScheduleTaintingPass`): a node's condition taints
 * (not-ready, unreachable, memory/disk/pid-pressure, network-unavailable) and
 * the unschedulable one change as soon as the informer sees the node, so a
 * node registered with TaintNodesByCondition's not-ready taint takes pods the
 * moment its kubelet posts Ready. The monitor pass, every 5 s, keeps the
 * NoExecute taints and computes the NoSchedule ones the same way.
 *
 * NoExecute taints evict pods (the taint manager): a pod without a matching
 * toleration is deleted at once, one with `tolerationSeconds` after that long
 * from the taint's `timeAdded`, one tolerating forever never.
 */
import { isConflict, isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import { runWorkers, WorkQueue, type Informer } from '@kubeling/client';
import { tolerates, type Taint } from '@kubeling/component-helpers';
import type { Controller, ControllerContext } from '../../context.js';
import { enqueueOn } from '../handlers.js';
import type { Lease, Node, NodeStatusView, Pod } from '../kinds.js';
import { runEvery } from '../periodic.js';
import { NOT_READY, UNREACHABLE, withAllTaints, withNoScheduleTaints } from './taints.js';

export { NOT_READY, UNREACHABLE } from './taints.js';

const statusOf = (node: Node): NodeStatusView => (node.status ?? {}) as NodeStatusView;

/** When a pod must leave a node with these NoExecute taints: ms from now, 0 at once, undefined never. */
export function evictionDelay(pod: Pod, taints: Taint[], now: number): number | undefined {
  let delay: number | undefined;
  const tolerations = pod.spec!.tolerations ?? [];
  for (const taint of taints.filter((x) => x.effect === 'NoExecute')) {
    const matching = tolerations.filter((t) => tolerates(t, taint));
    if (!matching.length) return 0;
    const secs = matching.map((t) => t.tolerationSeconds).filter((s): s is number => s !== undefined);
    if (!secs.length) continue; // tolerated forever
    const added = Date.parse(taint.timeAdded ?? '') || now;
    const d = Math.max(0, added + Math.min(...secs) * 1000 - now);
    delay = delay === undefined ? d : Math.min(delay, d);
  }
  return delay;
}

export class NodeLifecycleController implements Controller {
  readonly name = 'nodelifecycle';
  private nodes!: Informer<Node>;
  private leases!: Informer<Lease>;
  private pods!: Informer<Pod>;
  /** When each node's heartbeat was last seen to change (our clock, not the kubelet's). */
  private readonly lastChange = new Map<string, { beat: string; at: number }>();
  /** Node names whose NoSchedule taints are due a look (upstream's nodeUpdateQueue). */
  private readonly nodeUpdates = new WorkQueue<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly gracePeriodMs = 50_000,
    private readonly monitorPeriodMs = 5_000,
  ) {}

  init(): void {
    this.nodes = this.ctx.informers.informer<Node>({ path: '/api/v1/nodes' });
    this.leases = this.ctx.informers.informer<Lease>({ path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    enqueueOn(this.nodes, this.nodeUpdates, { on: ['add', 'update'] });
  }

  async run(signal: AbortSignal): Promise<void> {
    const log = this.ctx.log.child({ controller: this.name });
    signal.addEventListener('abort', () => this.nodeUpdates.shutdown(), { once: true });
    await Promise.all([
      runWorkers(
        this.nodeUpdates,
        this.ctx.workers,
        (name) => this.noScheduleTaintingPass(name),
        (name, e) => log.warn({ node: name, err: String((e as Error)?.message ?? e) }, 'failed to taint NoSchedule on node'),
      ),
      runEvery(
        signal,
        this.monitorPeriodMs,
        () => this.monitor(),
        (e) => log.warn({ err: String((e as Error).message ?? e) }, 'node monitoring failed'),
      ),
    ]);
  }

  /**
   * The node's NoSchedule taints made what its conditions and spec.unschedulable
   * say. A write that loses a race changes the node, and that update brings
   * the node back here, so a stale copy needs no retry of its own.
   */
  async noScheduleTaintingPass(name: string): Promise<void> {
    const node = this.nodes.store.get(name);
    if (!node) return;
    await this.patchTaints(node, withNoScheduleTaints(node, rfc3339()));
  }

  private heartbeat(node: Node): string {
    const lease = this.leases.store.get(`kube-node-lease/${node.metadata.name}`);
    const ready = statusOf(node).conditions?.find((c) => c.type === 'Ready');
    return `${lease?.spec?.renewTime ?? ''}|${ready?.lastHeartbeatTime ?? ''}`;
  }

  async monitor(): Promise<void> {
    const now = Date.now();
    for (const node of this.nodes.store.list()) {
      const name = node.metadata.name!;
      const beat = this.heartbeat(node);
      const seen = this.lastChange.get(name);
      if (!seen || seen.beat !== beat) this.lastChange.set(name, { beat, at: now });
      const silentFor = now - (this.lastChange.get(name)?.at ?? now);
      const ready = statusOf(node).conditions?.find((c) => c.type === 'Ready');
      let next = node;
      if (silentFor > this.gracePeriodMs && ready?.status !== 'Unknown') {
        next = await this.markUnknown(node);
      }
      next = await this.syncTaints(next);
      await this.evict(next, now);
    }
    for (const name of [...this.lastChange.keys()]) if (!this.nodes.store.get(name)) this.lastChange.delete(name);
  }

  private async markUnknown(node: Node): Promise<Node> {
    const now = rfc3339();
    const status = structuredClone(statusOf(node));
    const conds = status.conditions ?? [];
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      const c = conds.find((x) => x.type === type);
      const next = {
        type,
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        ...(c?.lastHeartbeatTime !== undefined ? { lastHeartbeatTime: c.lastHeartbeatTime } : {}),
        lastTransitionTime: now,
      };
      if (c) Object.assign(c, next);
      else conds.push(next);
    }
    status.conditions = conds;
    try {
      return await this.ctx.client.put<Node>(`/api/v1/nodes/${node.metadata.name}/status`, { ...node, status });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return node;
      throw e;
    }
  }

  /** The monitor pass's taints: the NoExecute ones of its Ready condition and, as the event-driven pass computes them, the NoSchedule ones. */
  private async syncTaints(node: Node): Promise<Node> {
    const taints = withAllTaints(node, rfc3339());
    const updated = await this.patchTaints(node, taints);
    const had = node.spec?.taints ?? [];
    const isNew = (t: Taint) =>
      t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE) && !had.some((o) => o.key === t.key && o.effect === t.effect);
    if (updated !== node && taints.some(isNew))
      void this.ctx
        .recorder('node-controller')
        .event({ ...node, kind: 'Node', apiVersion: 'v1' }, 'Normal', 'NodeNotReady', `Node ${node.metadata.name} status is now: NodeNotReady`);
    return updated;
  }

  /**
   * Writes `taints` as the node's taints when they differ, only over the
   * version read (a JSON patch testing resourceVersion). Returns the node as
   * written, or as it was when there was nothing to write or the node changed
   * or went meanwhile.
   */
  private async patchTaints(node: Node, taints: Taint[]): Promise<Node> {
    const had = node.spec?.taints;
    if (jsonEqual(taints, had ?? [])) return node;
    // An emptied list is dropped, as upstream's omitempty does.
    const op = taints.length ? { op: had ? 'replace' : 'add', path: '/spec/taints', value: taints } : { op: 'remove', path: '/spec/taints' };
    try {
      return await this.ctx.client.patch<Node>(
        `/api/v1/nodes/${node.metadata.name}`,
        [{ op: 'test', path: '/metadata/resourceVersion', value: node.metadata.resourceVersion }, op],
        'application/json-patch+json',
      );
    } catch (e) {
      if (isNotFound(e) || isConflict(e) || /test failed/.test(String((e as Error).message))) return node;
      throw e;
    }
  }

  private async evict(node: Node, now: number): Promise<void> {
    const taints = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
    if (!taints.length) return;
    for (const pod of this.pods.store.list()) {
      if (pod.spec!.nodeName !== node.metadata.name || pod.metadata.deletionTimestamp) continue;
      const delay = evictionDelay(pod, taints, now);
      if (delay !== 0) continue;
      try {
        await this.ctx.client.delete(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, { preconditions: { uid: pod.metadata.uid } });
        void this.ctx
          .recorder('taint-eviction-controller')
          .event(
            { ...pod, kind: 'Pod', apiVersion: 'v1' },
            'Normal',
            'TaintManagerEviction',
            `Marking for deletion Pod ${pod.metadata.namespace}/${pod.metadata.name}`,
          );
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    }
  }
}
