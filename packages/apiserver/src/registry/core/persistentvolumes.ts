/**
 * PersistentVolumes and PersistentVolumeClaims (kubernetes
 * pkg/registry/core/persistentvolume/strategy.go and
 * persistentvolumeclaim/strategy.go): defaults and validation from
 * @kubeling/api (core-v1-storage-validation.ts, core-v1-claim-validation.ts);
 * the status is written through /status only.
 *
 * A new volume starts Pending with its lastPhaseTransitionTime set; a status
 * write that changes the phase without a time of its own gets a new one
 * (PersistentVolumeLastPhaseTransitionTime, GA since 1.31). A new claim
 * starts Pending; its data sources are normalized as upstream's.
 * VolumeAttributesClass is off, as in a default 1.33: the class name is
 * dropped unless the stored object already had one.
 */
import {
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  prepareClaimSpec,
  validatePersistentVolumeClaimSpec,
  validatePersistentVolumeClaimStatusUpdate,
  validatePersistentVolumeClaimUpdate,
  validatePersistentVolumeSpec,
  validatePersistentVolumeUpdate,
  validateResourceVersionSet,
  type KubeObject,
} from '@kubeling/api';
import { rfc3339 } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type Obj = Record<string, unknown>;
const specOf = (o: KubeObject): Obj => ((o as Obj).spec ??= {}) as Obj;
const statusOf = (o: KubeObject): Obj | undefined => (o as Obj).status as Obj | undefined;

/** DropDisabledSpecFields: the attributes class goes unless the stored volume had one. */
function dropVolumeAttributesClass(spec: Obj, old: Obj | undefined): void {
  if (typeof old?.volumeAttributesClassName !== 'string') delete spec.volumeAttributesClassName;
}

export const persistentVolumeStrategy: Strategy = {
  statusSubresource: true,
  prepareForCreate(obj) {
    (obj as Obj).status = { phase: 'Pending', lastPhaseTransitionTime: rfc3339() };
    dropVolumeAttributesClass(specOf(obj), undefined);
  },
  defaults: (obj) => defaultPersistentVolume(obj as Obj),
  prepareForUpdate(obj, old) {
    dropVolumeAttributesClass(specOf(obj), (old as Obj).spec as Obj | undefined);
  },
  validate: (obj) => validatePersistentVolumeSpec((obj as Obj).spec),
  validateUpdate: (obj, old) => validatePersistentVolumeUpdate(obj as Obj, old as Obj),
  prepareForStatusUpdate(obj, old) {
    const status = statusOf(obj) ?? {};
    const before = statusOf(old) ?? {};
    (obj as Obj).status = status;
    if (status.phase === before.phase) {
      if (!status.lastPhaseTransitionTime && before.lastPhaseTransitionTime) status.lastPhaseTransitionTime = before.lastPhaseTransitionTime;
    } else if (!status.lastPhaseTransitionTime || status.lastPhaseTransitionTime === before.lastPhaseTransitionTime) {
      status.lastPhaseTransitionTime = rfc3339();
    }
  },
  validateStatusUpdate: (obj) => validateResourceVersionSet(obj as Obj),
};

export const persistentVolumeClaimStrategy: Strategy = {
  statusSubresource: true,
  prepareForCreate(obj) {
    delete (obj as Obj).status;
    prepareClaimSpec(specOf(obj), undefined);
  },
  defaults: (obj) => defaultPersistentVolumeClaim(obj as Obj),
  prepareForUpdate(obj, old) {
    prepareClaimSpec(specOf(obj), (old as Obj).spec as Obj | undefined);
  },
  validate: (obj) => validatePersistentVolumeClaimSpec((obj as Obj).spec),
  validateUpdate: (obj, old) => validatePersistentVolumeClaimUpdate(obj as Obj, old as Obj),
  prepareForStatusUpdate(obj, old) {
    // DropDisabledFieldsFromStatus: the attributes class fields stay only where they were.
    const status = statusOf(obj);
    const before = statusOf(old) ?? {};
    if (!status) return;
    if (before.currentVolumeAttributesClassName === undefined) delete status.currentVolumeAttributesClassName;
    if (before.modifyVolumeStatus === undefined) delete status.modifyVolumeStatus;
  },
  validateStatusUpdate: (obj) => validatePersistentVolumeClaimStatusUpdate(obj as Obj),
};
