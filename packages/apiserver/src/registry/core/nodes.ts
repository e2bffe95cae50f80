/** Nodes: cluster-scoped, status through the subresource, `spec.unschedulable` selectable. */
import type { Strategy } from '../strategy.js';

export const nodeStrategy: Strategy = {
  statusSubresource: true,
  returnDeletedObject: true,
  prepareForCreate(obj) {
    obj.spec ??= {};
  },
  fields: (obj) => ({ 'spec.unschedulable': String(((obj.spec ?? {}) as { unschedulable?: boolean }).unschedulable ?? false) }),
};
