/**
 * managedFields bookkeeping of the store's writes (kubernetes/apiserver
 * pkg/endpoints/handlers/fieldmanager, as the generic store sees it): every
 * create and update records which manager owns which fields; a server-side
 * apply arrives with its managedFields already computed and keeps them.
 */
import type { KubeObject, ResourceDef } from '@kubeling/api';
import { trackUpdate, type FieldContext } from '../fieldmanager/index.js';
import type { SchemaNode } from '../fieldmanager/fieldset.js';
import type { Strategy } from './strategy.js';

/** What field management needs to know about a write to a resource. */
export function fieldContextFor(
  def: ResourceDef,
  apiVersion: string,
  strategy: Strategy,
  manager: string | undefined,
  subresource: string | undefined,
): FieldContext {
  const sub = subresource === 'binding-internal' ? 'binding' : subresource;
  return {
    manager: manager ?? 'unknown',
    apiVersion,
    ...(sub ? { subresource: sub } : {}),
    schema: def.schema as SchemaNode,
    statusSubresource: !!strategy.statusSubresource,
  };
}

/** Records on `obj` the fields this write (over `old`; undefined on create) gives its manager. */
export function trackManagedFields(obj: KubeObject, old: KubeObject | undefined, fctx: FieldContext): void {
  const mf = trackUpdate(old, obj, fctx);
  if (mf) obj.metadata.managedFields = mf as never;
  else delete obj.metadata.managedFields;
}

/**
 * The managedFields of an update's result: an apply's own (a status apply's
 * taken from what it proposed, since the status rules rebuild the object from
 * the stored one), any other write's tracked against the stored object.
 */
export function managedFieldsOnUpdate(
  candidate: KubeObject,
  old: KubeObject,
  proposed: KubeObject,
  write: { applied: boolean; subresource: string | undefined; fieldContext: () => FieldContext },
): void {
  if (!write.applied) return trackManagedFields(candidate, old, write.fieldContext());
  if (write.subresource !== 'status') return;
  if (proposed.metadata.managedFields) candidate.metadata.managedFields = proposed.metadata.managedFields;
  else delete candidate.metadata.managedFields;
}
