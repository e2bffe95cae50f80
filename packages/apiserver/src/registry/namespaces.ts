/**
 * Namespace lifecycle as the store needs it: writes into a missing namespace are
 * 404, into a terminating one 403 (the NamespaceLifecycle admission plugin's
 * rule, enforced here so that no write path can skip it). The system namespaces
 * exist from first start.
 */
import type { GroupResource } from '@kubeling/apimachinery';
import { failure, isAlreadyExists, notFound } from '@kubeling/apimachinery';
import type { EtcdStorage } from '../storage/etcd.js';
import type { NamespaceGate, Store } from './store.js';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export class NamespaceLifecycle implements NamespaceGate {
  constructor(
    private readonly storage: EtcdStorage,
    private readonly namespaces: () => Store,
  ) {}

  async check(namespace: string, gr: GroupResource, name: string): Promise<void> {
    const store = this.namespaces();
    const key = store.key(undefined, namespace);
    // The cache may lag a namespace created a moment ago: ask etcd before saying no.
    const ns = store.cacher.get(key)?.obj ?? (await this.storage.get(key))?.obj;
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (ns.metadata.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') {
      throw failure(
        'Forbidden',
        `${name ? `${gr.group ? `${gr.resource}.${gr.group}` : gr.resource} "${name}" is forbidden: ` : ''}unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          name,
          ...(gr.group ? { group: gr.group } : {}),
          kind: gr.resource,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
        },
      );
    }
  }
}

export async function ensureSystemNamespaces(store: Store): Promise<void> {
  await Promise.all(
    SYSTEM_NAMESPACES.map(async (name) => {
      try {
        await store.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }),
  );
}
