/**
 * Informer events to queue keys: the one way controllers subscribe. An event
 * enqueues the keys `keys` maps its object to (the object's own `ns/name` by
 * default, or, say, its controller's); an update maps the new object, and the
 * old one too with `updateOld` (a label change can move a pod from one Service
 * to another). Handlers only enqueue: all reading happens in reconcile.
 */
import type { KubeObject } from '@kubeling/api';
import { keyOf, type Informer } from '@kubeling/client';
import { controllerRef } from '@kubeling/component-helpers';

export type InformerEvent = 'add' | 'update' | 'delete';

/** The keys an object maps to: one, several, or none. */
export type KeysOf<T> = (obj: T) => string | readonly string[] | undefined;

export interface EnqueueOptions<T> {
  /** Default: the object's own key. */
  keys?: KeysOf<T>;
  /** The events that enqueue; default all three. */
  on?: readonly InformerEvent[];
  /** On update, the old object's keys as well as the new one's. */
  updateOld?: boolean;
  /** On update, whether the change matters; default every update does. */
  updateIf?: (oldObj: T, newObj: T) => boolean;
}

/** Anything with `add(key)`, as a WorkQueue. */
export interface KeyQueue {
  add(key: string): void;
}

export function enqueueOn<T extends KubeObject>(informer: Informer<T>, queue: KeyQueue, opts: EnqueueOptions<T> = {}): void {
  const keys = opts.keys ?? keyOf;
  const on = new Set<InformerEvent>(opts.on ?? ['add', 'update', 'delete']);
  const enqueue = (obj: T) => {
    const k = keys(obj);
    if (k === undefined) return;
    for (const key of typeof k === 'string' ? [k] : k) queue.add(key);
  };
  informer.addEventHandler({
    ...(on.has('add') ? { add: enqueue } : {}),
    ...(on.has('update')
      ? {
          update: (oldObj: T, obj: T) => {
            if (opts.updateIf && !opts.updateIf(oldObj, obj)) return;
            if (opts.updateOld) enqueue(oldObj);
            enqueue(obj);
          },
        }
      : {}),
    ...(on.has('delete') ? { delete: enqueue } : {}),
  });
}

/** The key of the object's controller when it is of `kind` (same namespace), else none. */
export const controllerKey =
  (kind: string): KeysOf<KubeObject> =>
  (obj) => {
    const ref = controllerRef(obj);
    return ref?.kind === kind ? `${obj.metadata.namespace}/${ref.name}` : undefined;
  };
