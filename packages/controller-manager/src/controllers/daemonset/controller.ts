/**
 * DaemonSet controller (kubernetes pkg/controller/daemon): one pod per eligible
 * node. A node is eligible when it matches the template's nodeSelector and
 * required node affinity and every NoSchedule/NoExecute taint is tolerated (the
 * controller adds the tolerations upstream adds to daemon pods). Pods are pinned
 * with required node affinity on `metadata.name` (the scheduler binds them), carry
 * `controller-revision-hash`, and are replaced under RollingUpdate at most
 * `maxUnavailable` at a time when the template changes. Each template is a
 * ControllerRevision `<ds>-<hash>` (the history `rollout history|undo` reads).
 *
 * The decisions are `reconcile.ts`'s; this class reads the listers and does the
 * I/O, in the plan's order.
 */
import { isConflict, isNotFound, jsonEqual } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';
import { controllerKey, enqueueOn } from '../handlers.js';
import { deleteRevisions, ensureRevision } from '../history.js';
import type { ControllerRevision, DaemonSet, Node, Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { reconcileDaemonSet, targetNode } from './reconcile.js';

const FAILED_BACKOFF_MS = 1000;
const FAILED_BACKOFF_MAX_MS = 15 * 60 * 1000;

export class DaemonSetController extends QueueController {
  readonly name = 'daemonset';
  /** Per DaemonSet and node: how long failed pods there wait before the next deletion. */
  private readonly failedBackoff = new Map<string, { delay: number; until: number }>();
  private dss!: Informer<DaemonSet>;
  private nodes!: Informer<Node>;
  private pods!: Informer<Pod>;
  private revisions!: Informer<ControllerRevision>;

  init(): void {
    this.dss = this.ctx.informers.informer<DaemonSet>({ path: '/apis/apps/v1/daemonsets' });
    this.revisions = this.ctx.informers.informer<ControllerRevision>({ path: '/apis/apps/v1/controllerrevisions' });
    this.nodes = this.ctx.informers.informer<Node>({ path: '/api/v1/nodes' });
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    enqueueOn(this.dss, this.queue, { on: ['add', 'update'] });
    // Any node change that can change eligibility concerns every DaemonSet.
    enqueueOn(this.nodes, this.queue, {
      keys: () => this.dss.store.list().map(keyOf),
      updateIf: (o, n) => !jsonEqual(o.metadata.labels, n.metadata.labels) || !jsonEqual(o.spec, n.spec),
    });
    enqueueOn(this.pods, this.queue, { keys: controllerKey('DaemonSet') });
  }

  async reconcile(key: string): Promise<void> {
    const ds = this.dss.store.get(key);
    if (!ds || ds.metadata.deletionTimestamp) return;
    const ns = ds.metadata.namespace!;
    const revisions = this.revisions.store.byIndex('namespace', ns).filter((r) => controllerRef(r)?.uid === ds.metadata.uid);
    await ensureRevision(this.ctx.client, ds, 'DaemonSet', ds.spec?.template ?? {}, revisions, (_n, h) => h);
    const pods = this.pods.store.byIndex('namespace', ns).filter((p) => controllerRef(p)?.uid === ds.metadata.uid);
    const now = Date.now();
    const backoffKey = (node: string) => `${ds.metadata.uid}/${node}`;
    const plan = reconcileDaemonSet({
      ds,
      pods,
      nodes: this.nodes.store.list(),
      revisions,
      now,
      inFailedBackoff: (node) => (this.failedBackoff.get(backoffKey(node))?.until ?? 0) > now,
    });
    for (const node of plan.failedOn) {
      // 1 s, doubling to 15 min, as upstream's failedPodsBackoff; the DaemonSet is looked at again when it ends.
      const prev = this.failedBackoff.get(backoffKey(node));
      const delay = prev && now - prev.until < 2 * FAILED_BACKOFF_MAX_MS ? Math.min(prev.delay * 2, FAILED_BACKOFF_MAX_MS) : FAILED_BACKOFF_MS;
      this.failedBackoff.set(backoffKey(node), { delay, until: now + delay });
      this.queue.addAfter(key, delay);
      void this.ctx
        .recorder('daemonset-controller')
        .event(
          { ...ds, kind: 'DaemonSet', apiVersion: 'apps/v1' },
          'Warning',
          'FailedDaemonPod',
          `Found failed daemon pod ${ns}/${plan.delete.find((p) => targetNode(p) === node)?.metadata.name ?? ''} on node ${node}, will try to kill it`,
        );
    }
    const base = `/api/v1/namespaces/${ns}/pods`;
    for (const { node, pod } of plan.create) {
      await this.ctx.client.post(base, pod);
      void this.ctx
        .recorder('daemonset-controller')
        .event({ ...ds, kind: 'DaemonSet', apiVersion: 'apps/v1' }, 'Normal', 'SuccessfulCreate', `Created pod for node ${node}`);
    }
    for (const p of plan.delete) {
      await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).catch((e) => {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      });
    }
    await deleteRevisions(this.ctx.client, ns, plan.pruneRevisions);
    if (!plan.status) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${ns}/daemonsets/${ds.metadata.name}/status`, { ...ds, status: plan.status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.addAfter(key, 100);
    }
  }
}
