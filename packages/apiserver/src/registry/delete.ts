/**
 * What a DELETE does to an object, decided before anything is written
 * (kubernetes/apiserver pkg/registry/rest/delete.go BeforeDelete, and the
 * finalizer handling of generic/registry/store.go: deletionFinalizersForGarbageCollection).
 *
 * - Preconditions (uid, resourceVersion) that do not hold are 409 Conflict.
 * - The propagation policy becomes the `orphan` or `foregroundDeletion`
 *   finalizer.
 * - An object nothing holds (no finalizers, no grace period) is removed at once;
 *   otherwise it gets `deletionTimestamp` and `deletionGracePeriodSeconds`, and
 *   a second DELETE may only shorten the grace period or change finalizers.
 */
import type { KubeObject } from '@kubeling/api';
import { type GroupResource, conflict, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import type { StoredObject } from '../storage/etcd.js';
import type { Strategy } from './strategy.js';

export interface DeleteOptions {
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  propagationPolicy?: string | undefined;
  orphanDependents?: boolean | undefined;
  dryRun?: string[] | undefined;
}

/**
 * - `delete`: nothing holds the object; remove it now.
 * - `unchanged`: already being deleted as asked; nothing to write.
 * - `mark`: write `obj` (deletion recorded on it), or remove it when `removeNow`
 *   (its grace period came down to 0 with nothing else holding it).
 */
export type DeletePlan = { action: 'delete' } | { action: 'unchanged' } | { action: 'mark'; obj: KubeObject; removeNow: boolean };

/** 409 when the request's uid or resourceVersion precondition does not hold for `cur`. */
export function checkPreconditions(gr: GroupResource, name: string, pre: DeleteOptions['preconditions'], cur: StoredObject): void {
  if (pre?.uid && pre.uid !== cur.obj.metadata.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.obj.metadata.uid}`);
  }
  if (pre?.resourceVersion && pre.resourceVersion !== String(cur.rev)) {
    throw conflict(gr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.rev}`);
  }
}

/** Decides what deleting `current` means; `current` itself is not changed. */
export function beforeDelete(current: KubeObject, strategy: Strategy, opts: DeleteOptions): DeletePlan {
  const obj = structuredClone(current);
  const meta = obj.metadata;
  const grace = strategy.gracePeriod ? strategy.gracePeriod(obj, opts.gracePeriodSeconds) : 0;
  const finalizers = new Set(meta.finalizers ?? []);
  if (!meta.deletionTimestamp) for (const f of strategy.deletionFinalizers?.(obj) ?? []) finalizers.add(f);
  const policy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : undefined);
  if (policy === 'Orphan') {
    finalizers.add('orphan');
    finalizers.delete('foregroundDeletion');
  } else if (policy === 'Foreground') {
    finalizers.add('foregroundDeletion');
    finalizers.delete('orphan');
  }
  const pendingFinalizers = finalizers.size > 0 || !!strategy.blocksDeletion?.(obj);
  if (!pendingFinalizers && grace <= 0) return { action: 'delete' };
  // Graceful or finalizer-held deletion: record it on the object.
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds ?? 0;
    const shorten = grace < current;
    const sameFinalizers = jsonEqual([...finalizers].sort(), [...(meta.finalizers ?? [])].sort());
    if (!shorten && sameFinalizers) return { action: 'unchanged' };
    if (shorten) {
      meta.deletionGracePeriodSeconds = grace;
      meta.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
    }
  } else {
    meta.deletionTimestamp = rfc3339(new Date(Date.now() + Math.max(grace, 0) * 1000));
    meta.deletionGracePeriodSeconds = Math.max(grace, 0);
    strategy.prepareForDelete?.(obj);
  }
  if (finalizers.size) meta.finalizers = [...finalizers];
  else delete meta.finalizers;
  return { action: 'mark', obj, removeNow: !pendingFinalizers && meta.deletionGracePeriodSeconds === 0 };
}
