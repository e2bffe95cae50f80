/**
 * storage.k8s.io/v1 strategies (kubernetes pkg/registry/storage/storageclass,
 * csidriver, csinode, volumeattachment and csistoragecapacity strategy.go):
 * defaults and validation from @kubeling/api (storage-v1-validation.ts).
 *
 * - StorageClass: provisioner, parameters, reclaimPolicy and volumeBindingMode immutable.
 * - CSIDriver: generation follows the spec; attachRequired and volumeLifecycleModes immutable.
 * - CSINode: an existing driver's entry immutable; node IDs up to 256 characters.
 * - VolumeAttachment: status through /status only, reset on create; spec immutable.
 * - CSIStorageCapacity: nodeTopology and storageClassName immutable.
 */
import {
  defaultCSIDriver,
  defaultStorageClass,
  validateCSIDriver,
  validateCSIDriverUpdate,
  validateCSINode,
  validateCSINodeUpdate,
  validateCSIStorageCapacity,
  validateCSIStorageCapacityUpdate,
  validateStorageClass,
  validateStorageClassUpdate,
  validateVolumeAttachment,
  validateVolumeAttachmentUpdate,
} from '@kubeling/api';
import { nameIsDNSSubdomain } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type Obj = Record<string, unknown>;
const o = (x: unknown) => x as Obj;

export const storageClassStrategy: Strategy = {
  defaults: (obj) => defaultStorageClass(o(obj)),
  validate: (obj) => validateStorageClass(o(obj)),
  validateUpdate: (obj, old) => validateStorageClassUpdate(o(obj), o(old)),
};

export const csiDriverStrategy: Strategy = {
  generation: true,
  defaults: (obj) => defaultCSIDriver(o(obj)),
  validate: (obj) => validateCSIDriver(o(obj)),
  validateUpdate: (obj, old) => validateCSIDriverUpdate(o(obj), o(old)),
};

export const csiNodeStrategy: Strategy = {
  // ValidateNodeName: a CSINode is named after its node.
  nameValidation: nameIsDNSSubdomain,
  validate: (obj) => validateCSINode(o(obj)),
  validateUpdate: (obj, old) => validateCSINodeUpdate(o(obj), o(old)),
};

export const volumeAttachmentStrategy: Strategy = {
  statusSubresource: true,
  prepareForCreate(obj) {
    delete o(obj).status;
  },
  validate: (obj) => validateVolumeAttachment(o(obj)),
  validateUpdate: (obj, old) => validateVolumeAttachmentUpdate(o(obj), o(old)),
  // The status strategy validates the whole object as an update (the spec is the old one).
  validateStatusUpdate: (obj, old) => [...validateVolumeAttachment(o(obj)), ...validateVolumeAttachmentUpdate(o(obj), o(old))],
};

export const csiStorageCapacityStrategy: Strategy = {
  validate: (obj) => validateCSIStorageCapacity(o(obj)),
  validateUpdate: (obj, old) => validateCSIStorageCapacityUpdate(o(obj), o(old)),
};
