/**
 * Disruption controller (kubernetes pkg/controller/disruption): keeps each
 * PodDisruptionBudget's status — expected and healthy pods, the disruptions
 * allowed, the evictions it still waits to see (`disruptedPods`, pruned after
 * DELETION_TIMEOUT_MS) and the DisruptionAllowed condition — from the pods it
 * selects and, for percentages and maxUnavailable, the scale of their
 * controllers (ReplicaSet, Deployment, StatefulSet from informers; anything
 * else, ReplicationControllers included, through its /scale subresource).
 *
 * A sync that fails for any reason but a conflict writes the fail-safe status
 * (no disruption allowed, condition SyncFailed), so that the eviction
 * subresource refuses rather than guesses. Pods left with a DisruptionTarget
 * condition by an eviction that did not delete them get it set to False after
 * STALE_POD_DISRUPTION_TIMEOUT_MS. The decisions are status.ts's.
 */
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound, rfc3339 } from '@kubeling/apimachinery';
import { parseGroupVersion, resourcePath, restMapping, type Informer } from '@kubeling/client';
import { controllerRef, DISRUPTION_ALLOWED, pdbsForPod, setStatusCondition, SYNC_FAILED, type PDBLike, type PDBStatusLike } from '@kubeling/component-helpers';
import { DISCOVERY_PERIOD_MS, sharedDiscovery } from '../../discovery.js';
import { enqueueOn } from '../handlers.js';
import type { Deployment, Pod, ReplicaSet, StatefulSet } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import {
  buildDisruptedPodMap,
  countHealthyPods,
  expectedPodCount,
  nextStatus,
  podsForPdb,
  staleDisruptionIn,
  type ControllerScale,
  type OwnerRef,
  type ScaleFinder,
} from './status.js';

const POD_KEY = 'pod:';
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

export class DisruptionController extends QueueController {
  readonly name = 'disruption';
  private pdbs!: Informer<PDBLike>;
  private pods!: Informer<Pod>;
  private replicaSets!: Informer<ReplicaSet>;
  private deployments!: Informer<Deployment>;
  private statefulSets!: Informer<StatefulSet>;

  init(): void {
    const f = this.ctx.informers;
    this.pdbs = f.informer<PDBLike>({ path: '/apis/policy/v1/poddisruptionbudgets' });
    this.pods = f.informer<Pod>({ path: '/api/v1/pods' });
    this.replicaSets = f.informer<ReplicaSet>({ path: '/apis/apps/v1/replicasets' });
    this.deployments = f.informer<Deployment>({ path: '/apis/apps/v1/deployments' });
    this.statefulSets = f.informer<StatefulSet>({ path: '/apis/apps/v1/statefulsets' });
    enqueueOn(this.pdbs, this.queue);
    enqueueOn(this.pods, this.queue, {
      keys: (pod) =>
        pdbsForPod(this.pdbs.store.byIndex('namespace', pod.metadata.namespace ?? ''), pod, true).map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
      updateOld: true,
    });
    // A pod with a DisruptionTarget condition is looked at again when it may have gone stale.
    const stale = (pod: Pod) => {
      const after = staleDisruptionIn(pod, Date.now());
      if (after !== undefined) this.queue.addAfter(`${POD_KEY}${pod.metadata.namespace}/${pod.metadata.name}`, after);
    };
    this.pods.addEventHandler({ add: stale, update: (_, pod) => stale(pod) });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    if (key.startsWith(POD_KEY)) return this.clearStaleCondition(key.slice(POD_KEY.length));
    const pdb = this.pdbs.store.get(key);
    if (!pdb) return;
    try {
      return await this.sync(pdb);
    } catch (e) {
      // A lost race is retried as such; anything else leaves the budget allowing nothing.
      if (isConflict(e)) throw e;
      await this.failSafe(pdb, e);
    }
  }

  private event(pdb: PDBLike, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.ctx.recorder('controllermanager').event({ ...pdb, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, type, reason, message);
  }

  private async sync(pdb: PDBLike): Promise<{ requeueAfterMs?: number } | void> {
    const ns = pdb.metadata.namespace!;
    let pods: Pod[];
    try {
      pods = podsForPdb(pdb, this.pods.store.byIndex('namespace', ns));
    } catch (e) {
      this.event(pdb, 'Warning', 'NoPods', `Failed to get pods: ${(e as Error).message}`);
      throw e;
    }
    if (!pods.length) this.event(pdb, 'Normal', 'NoPods', 'No matching pods found');
    let counts: Awaited<ReturnType<typeof expectedPodCount>>;
    try {
      counts = await expectedPodCount(pdb, pods, this.findScale);
    } catch (e) {
      this.event(pdb, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${(e as Error).message}`);
      throw e;
    }
    if (counts.unmanaged.length) {
      this.event(
        pdb,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? null)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const now = Date.now();
    const { disrupted, recheckAt, notDeleted } = buildDisruptedPodMap(pods, pdb, now);
    for (const pod of notDeleted) {
      void this.ctx
        .recorder('controllermanager')
        .event(
          { ...pod, apiVersion: 'v1', kind: 'Pod' },
          'Warning',
          'NotDeleted',
          `Pod was expected by PDB ${ns}/${pdb.metadata.name} to be deleted but it wasn't`,
        );
    }
    const healthy = countHealthyPods(pods, disrupted, now);
    const status = nextStatus(pdb, healthy, counts.desiredHealthy, counts.expectedCount, disrupted);
    if (status) await this.writeStatus(pdb, status);
    if (recheckAt !== undefined) return { requeueAfterMs: Math.max(0, recheckAt - now) };
  }

  private async failSafe(pdb: PDBLike, err: unknown): Promise<void> {
    const status: PDBStatusLike = structuredClone(pdb.status ?? {});
    status.disruptionsAllowed = 0;
    status.currentHealthy ??= 0;
    status.desiredHealthy ??= 0;
    status.expectedPods ??= 0;
    setStatusCondition((status.conditions ??= []), {
      type: DISRUPTION_ALLOWED,
      status: 'False',
      reason: SYNC_FAILED,
      message: String((err as Error)?.message ?? err),
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    });
    this.ctx.log.warn(
      { controller: this.name, key: `${pdb.metadata.namespace}/${pdb.metadata.name}`, err: String((err as Error)?.message ?? err) },
      'pdb sync failed',
    );
    await this.writeStatus(pdb, status);
  }

  private async writeStatus(pdb: PDBLike, status: PDBStatusLike): Promise<void> {
    try {
      await this.ctx.client.put(`/apis/policy/v1/namespaces/${pdb.metadata.namespace}/poddisruptionbudgets/${pdb.metadata.name}/status`, { ...pdb, status });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** The finders of disruption.go in its order; a ReplicaSet a Deployment controls counts as the Deployment. */
  private findScale: ScaleFinder = async (ref, ns) => {
    const group = groupOf(ref.apiVersion);
    if (ref.kind === 'ReplicaSet' && (group === 'apps' || group === 'extensions')) {
      const rs = this.replicaSets.store.get(`${ns}/${ref.name}`);
      if (!rs || rs.metadata.uid !== ref.uid) return undefined;
      const owner = controllerRef(rs);
      if (owner?.kind === 'Deployment') {
        const d = this.deployments.store.get(`${ns}/${owner.name}`);
        if (!d || d.metadata.uid !== owner.uid || !['apps', 'extensions'].includes(groupOf(owner.apiVersion))) return undefined;
        return { uid: d.metadata.uid!, scale: d.spec?.replicas ?? 1 };
      }
      return { uid: rs.metadata.uid!, scale: rs.spec?.replicas ?? 1 };
    }
    if (ref.kind === 'StatefulSet' && group === 'apps') {
      const ss = this.statefulSets.store.get(`${ns}/${ref.name}`);
      if (!ss || ss.metadata.uid !== ref.uid) return undefined;
      return { uid: ss.metadata.uid!, scale: ss.spec?.replicas ?? 1 };
    }
    return this.scaleSubresource(ref, ns);
  };

  /**
   * getScaleController: the /scale of whatever kind the reference names, the
   * kind mapped to its resource through discovery (the RESTMapper) and the
   * scale subresource looked up there (the scale client's discovery kind
   * resolver), so a custom resource with a scale subresource counts too. A
   * kind discovery does not know sends it to the server again first.
   */
  private async scaleSubresource(ref: OwnerRef, ns: string): Promise<ControllerScale | undefined> {
    const { group, version } = parseGroupVersion(ref.apiVersion);
    const discovery = sharedDiscovery(this.ctx.client);
    const res =
      restMapping(await discovery.discover(DISCOVERY_PERIOD_MS), group, ref.kind, version) ??
      restMapping(await discovery.discover(1000), group, ref.kind, version);
    if (!res) throw new Error(`no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`);
    if (!res.subresources.includes('scale')) {
      throw new Error(`could not find scale subresource for ${res.group}/${res.version}, Resource=${res.resource} in discovery information`);
    }
    try {
      const scale = await this.ctx.client.get<KubeObject & { spec?: { replicas?: number } }>(`${resourcePath(res, ns)}/${ref.name}/scale`);
      if (scale.metadata.uid !== ref.uid) return undefined;
      return { uid: ref.uid, scale: scale.spec?.replicas ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Sets a stale DisruptionTarget condition to False (an eviction that never deleted its pod). */
  private async clearStaleCondition(podKey: string): Promise<{ requeueAfterMs?: number } | void> {
    const pod = this.pods.store.get(podKey);
    if (!pod) return;
    const after = staleDisruptionIn(pod, Date.now());
    if (after === undefined) return;
    if (after > 0) return { requeueAfterMs: after };
    const next = structuredClone(pod);
    const conditions = (next.status?.conditions ?? []) as { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }[];
    const i = conditions.findIndex((c) => c.type === 'DisruptionTarget');
    if (i < 0) return;
    conditions[i] = { type: 'DisruptionTarget', status: 'False', lastTransitionTime: rfc3339() };
    try {
      await this.ctx.client.put(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, next);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
