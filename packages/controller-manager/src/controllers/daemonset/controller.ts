/**
 * DaemonSet controller (kubernetes pkg/controller/daemon): one pod per eligible
 * node. A node is eligible when it matches the template's nodeSelector and
 * required node affinity and every NoSchedule/NoExecute taint is tolerated (the
 * controller adds the tolerations upstream adds to daemon pods). Pods are pinned
 * with required node affinity on `metadata.name` (the scheduler binds them), carry
 * `controller-revision-hash`, and are replaced under RollingUpdate at most
 * `maxUnavailable` at a time when the template changes. Each template is a
 * ControllerRevision `<ds>-<hash>` (the history `rollout history|undo` reads).
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound, jsonEqual, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { podTemplateHash } from '../deployment/util.js';
import { doNotScheduleTaint, findUntoleratedTaint, requiredNodeAffinityMatches, type Taint } from '@kubeling/component-helpers';
import { controllerRef, isPodAvailable, isPodReady } from '@kubeling/component-helpers';
import { ensureRevision, pruneRevisions } from '../history.js';

type Obj = Record<string, any>;
const HASH = 'controller-revision-hash';

/** The tolerations upstream adds to every daemon pod. */
export const DAEMON_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** Whether a pod template may run on a node (nodeSelector, required affinity, taints). */
export function nodeEligible(podSpec: Obj, node: KubeObject): boolean {
  if (!requiredNodeAffinityMatches(podSpec, node)) return false;
  const tolerations = [...(podSpec.tolerations ?? []), ...DAEMON_TOLERATIONS];
  return findUntoleratedTaint(((node.spec as Obj | undefined)?.taints ?? []) as Taint[], tolerations, doNotScheduleTaint) === undefined;
}

/** The node a daemon pod is for: its nodeName, or the matchFields pin. */
function targetNode(pod: KubeObject): string | undefined {
  const spec = pod.spec as Obj;
  if (spec.nodeName) return spec.nodeName;
  for (const t of spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of t.matchFields ?? []) if (f.key === 'metadata.name' && f.operator === 'In') return f.values?.[0];
  }
  return undefined;
}

export class DaemonSetController extends QueueController {
  readonly name = 'daemonset';
  private dss!: Informer;
  private nodes!: Informer;
  private pods!: Informer;
  private revisions!: Informer;

  init(): void {
    this.dss = this.ctx.informers.informer({ path: '/apis/apps/v1/daemonsets' });
    this.revisions = this.ctx.informers.informer({ path: '/apis/apps/v1/controllerrevisions' });
    this.nodes = this.ctx.informers.informer({ path: '/api/v1/nodes' });
    this.pods = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.dss.addEventHandler({ add: (d) => this.queue.add(keyOf(d)), update: (_o, d) => this.queue.add(keyOf(d)) });
    const all = () => {
      for (const d of this.dss.store.list()) this.queue.add(keyOf(d));
    };
    this.nodes.addEventHandler({ add: all, update: (o, n) => !jsonEqual(o.metadata.labels, n.metadata.labels) || !jsonEqual(o.spec, n.spec) ? all() : undefined, delete: all });
    const podChanged = (p: KubeObject) => {
      const ref = controllerRef(p);
      if (ref?.kind === 'DaemonSet') this.queue.add(`${p.metadata.namespace}/${ref.name}`);
    };
    this.pods.addEventHandler({ add: podChanged, update: (_o, p) => podChanged(p), delete: podChanged });
  }

  async reconcile(key: string): Promise<void> {
    const ds = this.dss.store.get(key);
    if (!ds || ds.metadata.deletionTimestamp) return;
    const spec = ds.spec as Obj;
    const ns = ds.metadata.namespace!;
    const selector = selectorFromLabelSelector(spec.selector);
    const hash = podTemplateHash(spec.template);
    const revs = this.revisions.store.byIndex('namespace', ns).filter((r) => controllerRef(r)?.uid === ds.metadata.uid);
    const rev = await ensureRevision(this.ctx.client, ds, 'DaemonSet', spec.template ?? {}, revs, (_n, h) => h);
    const podSpec = (spec.template?.spec ?? {}) as Obj;
    const pods = this.pods.store.byIndex('namespace', ns).filter((p) => controllerRef(p)?.uid === ds.metadata.uid && selector.matches(p.metadata.labels));
    const live = pods.filter((p) => !p.metadata.deletionTimestamp);
    const byNode = new Map<string, KubeObject[]>();
    for (const p of live) {
      const n = targetNode(p) ?? '';
      byNode.set(n, [...(byNode.get(n) ?? []), p]);
    }
    const eligible = this.nodes.store.list().filter((n) => nodeEligible(podSpec, n));
    const eligibleNames = new Set(eligible.map((n) => n.metadata.name!));
    const toCreate: string[] = [];
    const toDelete: KubeObject[] = [];
    for (const n of eligible) {
      const here = byNode.get(n.metadata.name!) ?? [];
      if (!here.length) toCreate.push(n.metadata.name!);
      else if (here.length > 1) toDelete.push(...here.slice(1));
    }
    for (const [node, here] of byNode) if (!eligibleNames.has(node)) toDelete.push(...here);
    // RollingUpdate: replace outdated pods, at most maxUnavailable unavailable at once.
    if ((spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      const maxUnavailable = Number(spec.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1) || 1;
      const unavailable = eligible.filter((n) => !(byNode.get(n.metadata.name!) ?? []).some((p) => isPodAvailable(p, spec.minReadySeconds ?? 0, Date.now()))).length;
      let budget = maxUnavailable - unavailable;
      for (const n of eligible) {
        if (budget <= 0) break;
        const p = (byNode.get(n.metadata.name!) ?? [])[0];
        if (p && p.metadata.labels?.[HASH] !== hash && isPodAvailable(p, spec.minReadySeconds ?? 0, Date.now())) {
          toDelete.push(p);
          budget--;
        }
      }
    }
    const base = `/api/v1/namespaces/${ns}/pods`;
    for (const node of toCreate) {
      const tpl = structuredClone(spec.template ?? {}) as Obj;
      const s = (tpl.spec ?? {}) as Obj;
      s.affinity = {
        ...(s.affinity ?? {}),
        nodeAffinity: { ...(s.affinity?.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } },
      };
      const have = (s.tolerations ?? []) as Obj[];
      s.tolerations = [...have, ...DAEMON_TOLERATIONS.filter((t) => !have.some((h) => h.key === t.key && h.effect === t.effect))];
      await this.ctx.client.post(base, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          generateName: `${ds.metadata.name}-`,
          labels: { ...(tpl.metadata?.labels ?? {}), [HASH]: hash },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name!, uid: ds.metadata.uid!, controller: true, blockOwnerDeletion: true }],
        },
        spec: s,
      });
      void this.ctx.recorder('daemonset-controller').event({ ...ds, kind: 'DaemonSet', apiVersion: 'apps/v1' }, 'Normal', 'SuccessfulCreate', `Created pod for node ${node}`);
    }
    for (const p of toDelete) {
      await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).catch((e) => {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      });
    }
    await pruneRevisions(this.ctx.client, ns, revs, new Set([rev.name, ...live.map((p) => `${ds.metadata.name}-${p.metadata.labels?.[HASH] ?? ''}`)]), spec.revisionHistoryLimit ?? 10);
    const onEligible = eligible.filter((n) => (byNode.get(n.metadata.name!) ?? []).length > 0);
    const first = (n: KubeObject) => (byNode.get(n.metadata.name!) ?? [])[0]!;
    const status: Obj = {
      currentNumberScheduled: onEligible.length,
      numberMisscheduled: [...byNode.keys()].filter((n) => !eligibleNames.has(n)).length,
      desiredNumberScheduled: eligible.length,
      numberReady: onEligible.filter((n) => isPodReady(first(n))).length,
      observedGeneration: ds.metadata.generation ?? 1,
      updatedNumberScheduled: onEligible.filter((n) => first(n).metadata.labels?.[HASH] === hash).length,
      numberAvailable: onEligible.filter((n) => isPodAvailable(first(n), spec.minReadySeconds ?? 0, Date.now())).length,
    };
    status.numberUnavailable = Math.max(0, status.desiredNumberScheduled - status.numberAvailable);
    for (const k of ['numberAvailable', 'numberUnavailable', 'updatedNumberScheduled']) if (status[k] === 0) delete status[k];
    if (jsonEqual(status, ds.status ?? {})) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${ns}/daemonsets/${ds.metadata.name}/status`, { ...ds, status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.addAfter(key, 100);
    }
  }
}
