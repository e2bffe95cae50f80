/**
 * Namespaces: `spec.finalizers: [kubernetes]` and phase Active on create; deletion
 * makes them Terminating and they stay until the namespace controller has emptied
 * them and cleared `spec.finalizers` through the `finalize` subresource.
 */
import type { KubeObject } from '@kubeling/api';
import { field, isDNS1123Label, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type NsSpec = { finalizers?: string[] };
const specOf = (o: KubeObject) => (o.spec ?? {}) as NsSpec;

export const namespaceStrategy: Strategy = {
  statusSubresource: true,
  returnDeletedObject: true,
  prepareForCreate(obj) {
    obj.spec = { ...specOf(obj), finalizers: specOf(obj).finalizers ?? ['kubernetes'] };
    obj.status = { phase: 'Active' };
  },
  defaults(obj) {
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
  },
  prepareForUpdate(obj, old) {
    // spec.finalizers change only through the finalize subresource
    obj.spec = { ...specOf(obj), finalizers: specOf(old).finalizers ?? [] };
  },
  validate(obj): FieldError[] {
    const name = obj.metadata.name ?? '';
    return name ? isDNS1123Label(name).map((m) => field.invalid('metadata.name', name, m)) : [];
  },
  fields(obj) {
    return { 'status.phase': ((obj.status ?? {}) as { phase?: string }).phase ?? '' };
  },
  blocksDeletion(obj) {
    return (specOf(obj).finalizers ?? []).length > 0;
  },
  prepareForDelete(obj) {
    obj.status = { ...((obj.status ?? {}) as object), phase: 'Terminating' };
  },
  subresourceUpdate: {
    finalize(obj, old) {
      const next = structuredClone(old);
      next.spec = { ...specOf(old), finalizers: specOf(obj).finalizers ?? [] };
      return next;
    },
  },
};
