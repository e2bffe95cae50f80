/**
 * Namespace controller (pkg/controller/namespace, deletion/namespaced_resources_deleter.go):
 * a namespace being deleted is emptied — every namespaced resource discovery
 * lists that supports delete, custom resources included — and then its
 * `kubernetes` finalizer is removed through the `finalize` subresource, which
 * lets the apiserver remove it.
 *
 * Each pass reads discovery (ServerPreferredNamespacedResources; shared, at
 * most `discoveryMaxAgeMs` old), deletes each resource's content with one
 * DELETE on the collection where it supports deletecollection (else item by
 * item), and lists what is left. What went wrong and what remains is written
 * to the namespace's conditions (NamespaceDeletionDiscoveryFailure when some
 * group could not be discovered, NamespaceContentRemaining, ...). A pass with
 * errors — a group that could not be discovered among them, as its content may
 * still be there — is retried with backoff and never finalizes; content that
 * is still going away (graceful pods, finalizers) is looked at again in a second.
 */
import type { KubeObject } from '@kubeling/api';
import { isNotFound, isStatusError } from '@kubeling/apimachinery';
import { discoveryError, resourcePath, type DiscoveredResource, type Informer } from '@kubeling/client';
import type { ControllerContext } from '../../context.js';
import { sharedDiscovery } from '../../discovery.js';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';
import { NamespaceConditionUpdater, type NamespaceCondition } from './conditions.js';

export interface NamespaceSettings {
  /** How old the discovery a pass uses may be (upstream reads it afresh every pass). */
  discoveryMaxAgeMs: number;
  /** When content is still going away, the next pass. */
  remainingRecheckMs: number;
}

export const NAMESPACE_DEFAULTS: NamespaceSettings = { discoveryMaxAgeMs: 1000, remainingRecheckMs: 1000 };

/** The namespaced resources whose content a namespace deletion removes (upstream filters on delete; list and deletecollection decide how). */
export const namespacedDeletable = (rs: readonly DiscoveredResource[]): DiscoveredResource[] => rs.filter((r) => r.namespaced && r.verbs.includes('delete'));

/** Whether the server says the verb is not there (the 405 and 404 deleteCollection and listCollection fall back on). */
const unsupported = (e: unknown) => isNotFound(e) || (isStatusError(e) && e.status.code === 405);

interface ContentLeft {
  remaining: number;
  /** Remaining items not even marked for deletion, nor held by a finalizer. */
  unexpected: number;
  finalizers: Map<string, number>;
}

export class NamespaceController extends QueueController {
  readonly name = 'namespace';
  private namespaces!: Informer;
  private readonly discovery;

  constructor(
    ctx: ControllerContext,
    private readonly o: NamespaceSettings = NAMESPACE_DEFAULTS,
  ) {
    super(ctx);
    this.discovery = sharedDiscovery(ctx.client);
  }

  init(): void {
    this.namespaces = this.ctx.informers.informer({ path: '/api/v1/namespaces' });
    enqueueOn(this.namespaces, this.queue, { on: ['add', 'update'], keys: (ns) => (ns.metadata.deletionTimestamp ? ns.metadata.name! : undefined) });
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const ns = this.namespaces.store.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    const spec = (ns.spec ?? {}) as { finalizers?: string[] };
    // Already finalized by us: nothing left to do here (finalized()).
    if (!(spec.finalizers ?? []).includes('kubernetes')) return;
    const { remaining, errors } = await this.deleteAllContent(ns);
    if (errors.length) throw new Error(errors.join('; '));
    if (remaining > 0) return { requeueAfterMs: this.o.remainingRecheckMs };
    const next = structuredClone(ns);
    next.spec = { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== 'kubernetes') };
    try {
      await this.ctx.client.put(`/api/v1/namespaces/${name}/finalize`, next);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** deleteAllContent: one pass over every discovered resource; the conditions are written when they changed. */
  private async deleteAllContent(ns: KubeObject): Promise<{ remaining: number; errors: string[] }> {
    const name = ns.metadata.name!;
    const errors: string[] = [];
    const updater = new NamespaceConditionUpdater();
    let resources: DiscoveredResource[] = [];
    try {
      const snap = await this.discovery.discover(this.o.discoveryMaxAgeMs);
      resources = namespacedDeletable(snap.preferred);
      const err = discoveryError(snap);
      if (err) {
        // Discovery errors are not fatal: what was discovered is still emptied.
        errors.push(err.message);
        updater.discoveryFailed(err.message, err.groups.size);
      }
    } catch (e) {
      errors.push(String((e as Error)?.message ?? e));
      updater.discoveryFailed(String((e as Error)?.message ?? e));
    }
    let remaining = 0;
    const byResource = new Map<string, number>();
    const finalizers = new Map<string, number>();
    for (const r of resources) {
      try {
        const left = await this.deleteContent(r, name);
        if (!left?.remaining) continue;
        remaining += left.remaining;
        byResource.set(`${r.resource}.${r.group}`, left.remaining);
        for (const [f, n] of left.finalizers) finalizers.set(f, (finalizers.get(f) ?? 0) + n);
        if (left.unexpected) throw new Error(`unexpected items still remain in namespace: ${name} for gvr: {${r.group} ${r.version} ${r.resource}}`);
      } catch (e) {
        const msg = String((e as Error)?.message ?? e);
        errors.push(msg);
        updater.deleteContentFailed(msg);
      }
    }
    updater.contentTotals(byResource, finalizers);
    const status = (ns.status ?? {}) as { conditions?: NamespaceCondition[] };
    const { conditions, changed } = updater.update(status.conditions ?? []);
    if (changed) {
      try {
        await this.ctx.client.put(`/api/v1/namespaces/${name}/status`, { ...structuredClone(ns), status: { ...status, conditions } });
      } catch (e) {
        // As upstream: a failed condition write is reported, not fatal (the next pass writes it again).
        this.ctx.log.debug({ controller: this.name, namespace: name, err: String(e) }, "couldn't update status condition for namespace");
      }
    }
    return { remaining, errors };
  }

  /**
   * deleteAllContentForGroupVersionResource: deletes a resource's objects in
   * the namespace (the collection at once when it supports deletecollection)
   * and answers what is left, or undefined when it cannot be listed. An empty
   * list first spares the delete (one request for the many empty resources).
   */
  private async deleteContent(r: DiscoveredResource, ns: string): Promise<ContentLeft | undefined> {
    const path = resourcePath(r, ns);
    const list = async () => {
      if (!r.verbs.includes('list')) return undefined;
      try {
        return (await this.ctx.client.get<{ items: KubeObject[] }>(path)).items;
      } catch (e) {
        if (unsupported(e)) return undefined;
        throw e;
      }
    };
    const before = await list();
    if (before?.length === 0) return { remaining: 0, unexpected: 0, finalizers: new Map() };
    // The garbage collector must not orphan what the namespace is removing: Background, as upstream.
    const opts = { propagationPolicy: 'Background' };
    let collection = r.verbs.includes('deletecollection');
    if (collection) {
      try {
        await this.ctx.client.delete(path, opts);
      } catch (e) {
        if (!unsupported(e)) throw e;
        collection = false;
      }
    }
    if (!collection) {
      for (const item of before ?? []) {
        if (item.metadata.deletionTimestamp) continue;
        try {
          await this.ctx.client.delete(`${path}/${item.metadata.name}`, opts);
        } catch (e) {
          if (!unsupported(e)) throw e;
        }
      }
    }
    const after = await list();
    if (!after) return undefined;
    const finalizers = new Map<string, number>();
    let unexpected = 0;
    for (const item of after) {
      for (const f of item.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
      if (!item.metadata.deletionTimestamp && !item.metadata.finalizers?.length) unexpected++;
    }
    return { remaining: after.length, unexpected, finalizers };
  }
}
