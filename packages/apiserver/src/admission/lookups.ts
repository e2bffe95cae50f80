/**
 * What admission plugins may do with the objects of other resources, as narrow
 * interfaces (upstream's plugins get listers and clients, never the registry).
 * The wiring passes the registry's stores, which satisfy them structurally, so
 * that no plugin depends on the store.
 */
import type { KubeList, KubeObject } from '@kubeling/api';

/** Reads one object; a 404 StatusError when it does not exist. resourceVersion "0" may be served from the watch cache. */
export interface ObjectGetter {
  get(namespace: string | undefined, name: string, resourceVersion?: string): Promise<KubeObject>;
}

/** Lists the objects of a namespace (of all namespaces when undefined). */
export interface ObjectLister {
  list(namespace: string | undefined, opts: { resourceVersion?: string }): Promise<KubeList>;
}

export interface ObjectReader extends ObjectGetter, ObjectLister {}

/** Follows every object of a resource: an ADDED per object, then its changes; returns the function that stops. */
export interface ObjectSubscriber {
  subscribe(handler: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => void): () => void;
}

/** Writes an object's status subresource; a 409 StatusError when `body`'s resourceVersion is not the stored one. */
export interface StatusWriter {
  update(namespace: string | undefined, name: string, body: KubeObject, subresource: 'status', ctx: { fieldManager: string }): Promise<unknown>;
}

/** Creates an object; a 409 AlreadyExists StatusError when it exists. */
export interface ObjectCreator {
  create(namespace: string | undefined, obj: KubeObject): Promise<KubeObject>;
}
