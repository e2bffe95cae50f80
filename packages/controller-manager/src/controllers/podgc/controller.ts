/**
 * Pod garbage collector (kubernetes pkg/controller/podgc), every 20 s:
 * - terminated pods (Succeeded/Failed) beyond `--terminated-pod-gc-threshold`
 *   (12,500) go, oldest first;
 * - orphaned pods — bound to a node that no longer exists, still absent when
 *   asked again after a quarantine (40 s upstream) — are marked Failed with a
 *   `DisruptionTarget` condition (reason `DeletionByPodGC`) and deleted at once;
 * - terminating pods that were never scheduled are deleted at once.
 */
import { isConflict, isNotFound, rfc3339 } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { Controller, ControllerContext, PodGCSettings } from '../../context.js';
import { podPhase, type Node, type Pod } from '../kinds.js';
import { runEvery } from '../periodic.js';

export const PODGC_DEFAULTS: PodGCSettings = { periodMs: 20_000, terminatedThreshold: 12_500, quarantineMs: 40_000 };

const terminated = (p: Pod) => podPhase(p) === 'Succeeded' || podPhase(p) === 'Failed';
const key = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}`;

/** The terminated pods beyond the threshold, oldest first (by creation, then name). */
export function terminatedToDelete(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const done = pods.filter((p) => terminated(p) && !p.metadata.deletionTimestamp);
  if (done.length <= threshold) return [];
  return [...done]
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || key(a).localeCompare(key(b)))
    .slice(0, done.length - threshold);
}

/** Pods bound to a node the cache does not know (candidates: the API is asked before they go). */
export function orphanCandidates(pods: readonly Pod[], nodes: ReadonlySet<string>): Pod[] {
  return pods.filter((p) => {
    const node = p.spec?.nodeName;
    return !!node && !nodes.has(node);
  });
}

/** Terminating pods no scheduler ever placed: nothing will finish their deletion. */
export function unscheduledTerminating(pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.metadata.deletionTimestamp && !p.spec?.nodeName && !terminated(p));
}

export class PodGCController implements Controller {
  readonly name = 'podgc';
  private pods!: Informer<Pod>;
  private nodes!: Informer<Node>;
  /** Nodes seen missing, and since when (the quarantine). */
  private readonly missingSince = new Map<string, number>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: PodGCSettings = PODGC_DEFAULTS,
  ) {}

  init(): void {
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.nodes = this.ctx.informers.informer<Node>({ path: '/api/v1/nodes' });
  }

  async run(signal: AbortSignal): Promise<void> {
    const log = this.ctx.log.child({ controller: this.name });
    await runEvery(
      signal,
      this.o.periodMs,
      () => this.gc(Date.now()),
      (e) => log.warn({ err: String((e as Error).message ?? e) }, 'pod gc failed'),
    );
  }

  async gc(now: number): Promise<void> {
    const pods = this.pods.store.list();
    for (const p of terminatedToDelete(pods, this.o.terminatedThreshold)) await this.forceDelete(p, false);
    const known = new Set(this.nodes.store.list().map((n) => n.metadata.name!));
    const orphans = orphanCandidates(pods, known);
    const missing = new Set(orphans.map((p) => p.spec!.nodeName!));
    for (const n of this.missingSince.keys()) if (!missing.has(n)) this.missingSince.delete(n);
    for (const n of missing) if (!this.missingSince.has(n)) this.missingSince.set(n, now);
    for (const p of orphans) {
      const node = p.spec!.nodeName!;
      if (now - this.missingSince.get(node)! < this.o.quarantineMs) continue;
      // The cache may lag: the node must be missing from the API too.
      try {
        await this.ctx.client.get(`/api/v1/nodes/${node}`);
        this.missingSince.delete(node);
        continue;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      await this.markFailed(p);
      await this.forceDelete(p, true);
    }
    for (const p of unscheduledTerminating(pods)) await this.forceDelete(p, false);
  }

  /** Failed, with the DisruptionTarget condition saying why, before the pod goes. */
  private async markFailed(p: Pod): Promise<void> {
    const conditions = (p.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
    conditions.push({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByPodGC',
      message: 'PodGC: node no longer exists',
      lastTransitionTime: rfc3339(),
    });
    const patch = { status: { ...(terminated(p) ? {} : { phase: 'Failed' }), conditions } };
    try {
      await this.ctx.client.patch(`/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}/status`, patch, 'application/merge-patch+json', {
        fieldManager: 'PodGC',
      });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  private async forceDelete(p: Pod, orphan: boolean): Promise<void> {
    try {
      await this.ctx.client.delete(`/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid: p.metadata.uid },
      });
      this.ctx.log.info({ controller: this.name, pod: key(p), orphan }, 'deleted pod');
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
