/**
 * The namespace admission plugins besides NamespaceLifecycle (which every
 * store enforces: registry/namespaces.ts), from kubernetes
 * plugin/pkg/admission/namespace:
 *
 * - NamespaceAutoProvision (autoprovision): a create in a namespace that does
 *   not exist creates the namespace first (mutating, so before the store's
 *   lifecycle check); dry runs create nothing. A failed create is Forbidden.
 * - NamespaceExists (exists): creates, updates and deletes in a namespace that
 *   does not exist are refused with the namespace's 404 NotFound.
 *
 * Both look in the watch cache first and ask etcd before concluding that a
 * namespace is missing, as upstream's lister-then-client lookups.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isNotFound, notFound } from '@kubeling/apimachinery';
import { admissionForbidden } from './attributes.js';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectCreator, ObjectGetter } from './lookups.js';

const isNamespaceRequest = (a: AdmissionAttributes) => !a.namespace || a.resource === '/namespaces';

/** The namespace from the cache, else from etcd; undefined when it does not exist. */
async function lookup(namespaces: ObjectGetter, name: string): Promise<KubeObject | undefined> {
  for (const rv of ['0', undefined]) {
    try {
      return await namespaces.get(undefined, name, rv);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return undefined;
}

/** The namespace, or its 404 (`namespaces "<name>" not found`), as the pod plugins read it. */
export async function namespaceOrNotFound(namespaces: ObjectGetter, name: string): Promise<KubeObject> {
  const ns = await lookup(namespaces, name);
  if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
  return ns;
}

export class NamespaceAutoProvision implements MutatingAdmission {
  readonly name = 'NamespaceAutoProvision';
  constructor(private readonly namespaces: () => ObjectGetter & ObjectCreator) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && !a.dryRun && !isNamespaceRequest(a);
  }

  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const ns = a.namespace!;
    const store = this.namespaces();
    if (await lookup(store, ns)) return;
    try {
      await store.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    } catch (e) {
      if (!isAlreadyExists(e)) throw admissionForbidden(a, obj, e as Error);
    }
  }
}

export class NamespaceExists implements ValidatingAdmission {
  readonly name = 'NamespaceExists';
  constructor(private readonly namespaces: () => ObjectGetter) {}

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE' || a.operation === 'DELETE') && !isNamespaceRequest(a);
  }

  async validate(_obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    await namespaceOrNotFound(this.namespaces(), a.namespace!);
  }
}
