/**
 * Namespace controller: a namespace being deleted is emptied — every namespaced
 * resource in it is deleted — and then its `kubernetes` finalizer is removed
 * through the `finalize` subresource, which lets the apiserver remove it.
 */
import { resources, type KubeObject } from '@kubeling/api';
import { isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';

const collections = resources.filter((r) => r.namespaced && !r.virtual && !r.storage && r.verbs.includes('list'));

export class NamespaceController extends QueueController {
  readonly name = 'namespace';
  private namespaces!: Informer;

  init(): void {
    this.namespaces = this.ctx.informers.informer({ path: '/api/v1/namespaces' });
    enqueueOn(this.namespaces, this.queue, { on: ['add', 'update'], keys: (ns) => (ns.metadata.deletionTimestamp ? ns.metadata.name! : undefined) });
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const ns = this.namespaces.store.get(name);
    if (!ns?.metadata.deletionTimestamp) return;
    let remaining = 0;
    for (const r of collections) {
      const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
      const path = `${base}/namespaces/${name}/${r.resource}`;
      const list = await this.ctx.client.get<{ items: KubeObject[] }>(path);
      if (!list.items.length) continue;
      remaining += list.items.length;
      for (const item of list.items) {
        if (item.metadata.deletionTimestamp) continue;
        try {
          await this.ctx.client.delete(`${path}/${item.metadata.name}`, { propagationPolicy: 'Background' });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
    if (remaining > 0) return { requeueAfterMs: 1000 };
    const spec = (ns.spec ?? {}) as { finalizers?: string[] };
    if (!(spec.finalizers ?? []).includes('kubernetes')) return;
    const next = structuredClone(ns);
    next.spec = { ...spec, finalizers: (spec.finalizers ?? []).filter((f) => f !== 'kubernetes') };
    try {
      await this.ctx.client.put(`/api/v1/namespaces/${name}/finalize`, next);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
