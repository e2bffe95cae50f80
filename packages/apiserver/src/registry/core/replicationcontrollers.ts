/**
 * core/v1 ReplicationControllers (pkg/registry/core/replicationcontroller):
 * defaults from the template's labels, the ReplicaSet's template rules, a
 * generation bumped on spec changes, status written through its subresource,
 * and `status.replicas` selectable. Unlike a ReplicaSet's, the selector may
 * change.
 */
import { defaultReplicationController, validateReplicationControllerSpec } from '@kubeling/api';
import type { Strategy } from '../strategy.js';

export const replicationControllerStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults: (obj) => defaultReplicationController(obj),
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate: (obj) => validateReplicationControllerSpec(obj.spec),
  fields: (obj) => ({ 'status.replicas': String(((obj.status ?? {}) as { replicas?: number }).replicas ?? 0) }),
};
