/**
 * The storage part of the bootstrap RBAC policy (kubernetes
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy policy.go NodeRules and the
 * scheduler roles, controller_policy.go): the rules a kubelet, the scheduler
 * and the volume controllers need for PersistentVolumes, claims and
 * storage.k8s.io. bootstrap.ts builds the ClusterRoles and bindings from them.
 */
import type { PolicyRule } from './rbac.js';

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });
const READ = ['get', 'list', 'watch'];
const READ_UPDATE = ['get', 'list', 'watch', 'update', 'patch'];
const STORAGE = 'storage.k8s.io';
/** eventsRule(): controllers record events in both groups. */
const EVENTS = rule(['create', 'update', 'patch'], ['', 'events.k8s.io'], ['events']);

/**
 * The kubelet's storage rules in system:node. The Node authorizer narrows
 * claims, volumes, attachments and CSINodes to those of the node's pods.
 */
export const NODE_STORAGE_RULES: readonly PolicyRule[] = [
  rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get', 'update', 'patch'], [''], ['persistentvolumeclaims/status']),
  rule(['get'], [STORAGE], ['volumeattachments']),
  rule(['get', 'watch', 'list'], [STORAGE], ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], [STORAGE], ['csinodes']),
];

/** The scheduler's storage reads in system:kube-scheduler (volume limits, capacity, claims). */
export const SCHEDULER_STORAGE_RULES: readonly PolicyRule[] = [
  rule(READ, [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(READ, [STORAGE], ['csinodes']),
  rule(READ, [STORAGE], ['csidrivers']),
  rule(READ, [STORAGE], ['csistoragecapacities']),
];

/** system:volume-scheduler, bound to the scheduler: the VolumeBinding plugin binds claims and volumes. */
export const VOLUME_SCHEDULER_RULES: readonly PolicyRule[] = [
  rule(READ_UPDATE, [''], ['persistentvolumes']),
  rule(READ, [STORAGE], ['storageclasses']),
  rule(READ_UPDATE, [''], ['persistentvolumeclaims']),
];

/** system:persistent-volume-provisioner: what an external provisioner needs. */
export const PV_PROVISIONER_RULES: readonly PolicyRule[] = [
  rule(['get', 'list', 'watch', 'create', 'delete'], [''], ['persistentvolumes']),
  rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']),
  rule(READ, [STORAGE], ['storageclasses']),
  rule(['watch'], [''], ['events']),
  EVENTS,
];

/** The volume controllers' roles (system:controller:<name>), each bound to its ServiceAccount in kube-system. */
export const STORAGE_CONTROLLER_ROLES: readonly { name: string; rules: readonly PolicyRule[] }[] = [
  {
    name: 'attachdetach-controller',
    rules: [
      rule(['list', 'watch'], [''], ['persistentvolumes', 'persistentvolumeclaims']),
      rule(READ, [''], ['nodes']),
      rule(['patch', 'update'], [''], ['nodes/status']),
      rule(['list', 'watch'], [''], ['pods']),
      EVENTS,
      rule(['get', 'create', 'delete', 'list', 'watch'], [STORAGE], ['volumeattachments']),
      rule(['get', 'watch', 'list'], [STORAGE], ['csidrivers']),
      rule(['get', 'watch', 'list'], [STORAGE], ['csinodes']),
    ],
  },
  {
    name: 'ephemeral-volume-controller',
    rules: [
      rule(READ, [''], ['pods']),
      rule(['update'], [''], ['pods/finalizers']),
      rule(['get', 'list', 'watch', 'create'], [''], ['persistentvolumeclaims']),
      EVENTS,
    ],
  },
  {
    name: 'expand-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update', 'patch'], [''], ['persistentvolumes']),
      rule(['update', 'patch'], [''], ['persistentvolumeclaims/status']),
      rule(READ, [''], ['persistentvolumeclaims']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get'], [''], ['services', 'endpoints']),
      rule(['get'], [''], ['secrets']),
      EVENTS,
    ],
  },
  {
    name: 'persistent-volume-binder',
    rules: [
      rule(['get', 'list', 'watch', 'update', 'create', 'delete'], [''], ['persistentvolumes']),
      rule(['update'], [''], ['persistentvolumes/status']),
      rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']),
      rule(['update'], [''], ['persistentvolumeclaims/status']),
      rule(['list', 'watch', 'get', 'create', 'delete'], [''], ['pods']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get', 'create', 'update', 'delete'], [''], ['endpoints']),
      rule(['get', 'create', 'delete'], [''], ['services']),
      rule(['get'], [''], ['secrets']),
      rule(['get', 'list'], [''], ['nodes']),
      rule(['watch'], [''], ['events']),
      EVENTS,
    ],
  },
  {
    name: 'pv-protection-controller',
    rules: [rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumes']), EVENTS],
  },
  {
    name: 'pvc-protection-controller',
    rules: [rule(['get', 'list', 'watch', 'update'], [''], ['persistentvolumeclaims']), rule(['list', 'watch', 'get'], [''], ['pods']), EVENTS],
  },
];

/**
 * What the one controller-manager identity writes for the volume controllers
 * beyond its other rules (system:kube-controller-manager holds the union of
 * the controllers' roles).
 */
export const CONTROLLER_MANAGER_STORAGE_RULES: readonly PolicyRule[] = [
  rule(['create', 'delete', 'deletecollection', 'patch', 'update'], [''], ['persistentvolumes', 'persistentvolumes/status', 'persistentvolumeclaims/status']),
  rule(['create', 'delete', 'deletecollection', 'patch', 'update'], [STORAGE], ['volumeattachments']),
];
