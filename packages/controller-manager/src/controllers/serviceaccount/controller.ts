/** ServiceAccount controller: every active namespace has a `default` ServiceAccount. */
import { isAlreadyExists } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';

export class ServiceAccountController extends QueueController {
  readonly name = 'serviceaccount';
  private namespaces!: Informer;
  private accounts!: Informer;

  init(): void {
    this.namespaces = this.ctx.informers.informer({ path: '/api/v1/namespaces' });
    this.accounts = this.ctx.informers.informer({ path: '/api/v1/serviceaccounts' });
    enqueueOn(this.namespaces, this.queue, { on: ['add', 'update'], keys: (ns) => ns.metadata.name! });
    enqueueOn(this.accounts, this.queue, { on: ['delete'], keys: (sa) => (sa.metadata.name === 'default' ? sa.metadata.namespace! : undefined) });
  }

  async reconcile(ns: string): Promise<void> {
    const namespace = this.namespaces.store.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp) return;
    if (this.accounts.store.get(`${ns}/default`)) return;
    try {
      await this.ctx.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
}
