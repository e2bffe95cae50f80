/** ServiceAccount controller: every active namespace has a `default` ServiceAccount. */
import { isAlreadyExists } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';

export class ServiceAccountController extends QueueController {
  readonly name = 'serviceaccount';
  private namespaces!: Informer;
  private accounts!: Informer;

  init(): void {
    this.namespaces = this.ctx.informers.informer({ path: '/api/v1/namespaces' });
    this.accounts = this.ctx.informers.informer({ path: '/api/v1/serviceaccounts' });
    this.namespaces.addEventHandler({ add: (ns) => this.queue.add(ns.metadata.name!), update: (_o, ns) => this.queue.add(ns.metadata.name!) });
    this.accounts.addEventHandler({ delete: (sa) => sa.metadata.name === 'default' && this.queue.add(sa.metadata.namespace!) });
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
