/**
 * Wire facts of the storage types newer than the generator's source
 * (Kubernetes v1.20), from kubernetes/api core/v1 and storage/v1
 * `generated.proto` and `types.go`: the claim's VolumeResourceRequirements,
 * dataSourceRef and allocated resources, the volume's attributes class and
 * phase transition time, CSI's nodeExpandSecretRef, CSIDriver's seLinuxMount,
 * VolumeError's errorCode, and CSIStorageCapacity (storage.k8s.io/v1 since 1.24).
 * overlay.ts merges these into its tables.
 */
import type { WirePackage, WireRow } from './model.js';

const V = 'varint';
const B = 'bytes';

export const storageFields: Readonly<Record<string, readonly (readonly [after: string, row: WireRow])[]>> = {
  'core/v1.PersistentVolumeSpec': [['nodeAffinity', ['volumeAttributesClassName', '*string', 'o', 10, B]]],
  'core/v1.PersistentVolumeStatus': [['reason', ['lastPhaseTransitionTime', '*meta/v1.Time', 'o', 4, B]]],
  'core/v1.PersistentVolumeClaimSpec': [
    ['=', ['resources', 'core/v1.VolumeResourceRequirements', 'o', 2, B]],
    ['dataSource', ['dataSourceRef', '*core/v1.TypedObjectReference', 'o', 8, B]],
    ['dataSourceRef', ['volumeAttributesClassName', '*string', 'o', 9, B]],
  ],
  'core/v1.PersistentVolumeClaimStatus': [
    ['conditions', ['allocatedResources', 'map[string]resource.Quantity', 'o', 5, B]],
    ['allocatedResources', ['allocatedResourceStatuses', 'map[string]string', 'o', 7, B]],
    ['allocatedResourceStatuses', ['currentVolumeAttributesClassName', '*string', 'o', 8, B]],
    ['currentVolumeAttributesClassName', ['modifyVolumeStatus', '*core/v1.ModifyVolumeStatus', 'o', 9, B]],
  ],
  'core/v1.CSIPersistentVolumeSource': [['controllerExpandSecretRef', ['nodeExpandSecretRef', '*core/v1.SecretReference', 'o', 10, B]]],
  'storage/v1.CSIDriverSpec': [
    ['requiresRepublish', ['seLinuxMount', '*bool', 'o', 8, V]],
    ['seLinuxMount', ['nodeAllocatableUpdatePeriodSeconds', '*int64', 'o', 9, V]],
  ],
  'storage/v1.VolumeError': [['message', ['errorCode', '*int32', 'o', 3, V]]],
};

export const storagePackages: readonly WirePackage[] = [
  {
    key: 'core/v1',
    group: '',
    version: 'v1',
    kinds: [],
    structs: {
      VolumeResourceRequirements: [
        ['limits', 'map[string]resource.Quantity', 'o', 1, B],
        ['requests', 'map[string]resource.Quantity', 'o', 2, B],
      ],
      TypedObjectReference: [
        ['apiGroup', '*string', '', 1, B],
        ['kind', 'string', '', 2, B],
        ['name', 'string', '', 3, B],
        ['namespace', '*string', 'o', 4, B],
      ],
      ModifyVolumeStatus: [
        ['targetVolumeAttributesClassName', 'string', 'o', 1, B],
        ['status', 'string', '', 2, B],
      ],
    },
  },
  {
    key: 'storage/v1',
    group: 'storage.k8s.io',
    version: 'v1',
    kinds: ['CSIStorageCapacity', 'CSIStorageCapacityList'],
    structs: {
      CSIStorageCapacity: [
        ['', 'meta/v1.TypeMeta', 'i'],
        ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
        ['nodeTopology', '*meta/v1.LabelSelector', 'o', 2, B],
        ['storageClassName', 'string', '', 3, B],
        ['capacity', '*resource.Quantity', 'o', 4, B],
        ['maximumVolumeSize', '*resource.Quantity', 'o', 5, B],
      ],
      CSIStorageCapacityList: [
        ['', 'meta/v1.TypeMeta', 'i'],
        ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
        ['items', '[]storage/v1.CSIStorageCapacity', '', 2, B],
      ],
    },
  },
];
