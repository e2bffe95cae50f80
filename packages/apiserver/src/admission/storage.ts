/**
 * The storage admission plugins (kubernetes plugin/pkg/admission/storage):
 *
 * - DefaultStorageClass (storageclass/setdefault): a new claim that names no
 *   class, by field or by the beta annotation, gets the default
 *   StorageClass; with several defaults the newest, then the first by name
 *   (volumeutil.GetDefaultClass, 1.28+). An empty `storageClassName` is a
 *   class (none) and is left alone.
 * - StorageObjectInUseProtection (storageobjectinuseprotection): new claims
 *   get the `kubernetes.io/pvc-protection` finalizer, new volumes
 *   `kubernetes.io/pv-protection`, so neither goes while in use (the
 *   pvc-protection and pv-protection controllers lift them).
 * - PersistentVolumeClaimResize (persistentvolume/resize): a claim's storage
 *   request may grow only when it is bound and its StorageClass, unchanged,
 *   allows volume expansion.
 *
 * Refusals are 403 Forbidden in upstream's words.
 */
import { compareQuantities, isDefaultStorageClass, persistentVolumeClaimClass, type KubeObject, type corev1, type storagev1 } from '@kubeling/api';
import { forbidden, type GroupResource } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter, ObjectLister } from './lookups.js';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

const PVC_RESOURCE = '/persistentvolumeclaims';
const PV_RESOURCE = '/persistentvolumes';
const PVC_GR: GroupResource = { group: '', resource: 'persistentvolumeclaims' };

/** admission.NewForbidden's name: the object's, else its generateName, else "Unknown". */
const nameFor = (obj: KubeObject, a: AdmissionAttributes) => a.name || obj.metadata.name || obj.metadata.generateName || 'Unknown';

/** The newest default StorageClass (then the first by name), or undefined (GetDefaultClass). */
export function defaultClassOf(classes: readonly KubeObject[]): KubeObject | undefined {
  const defaults = classes
    .filter((c) => isDefaultStorageClass(c))
    .sort((a, b) => {
      const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
      const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
      return ta === tb ? (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '') : tb - ta;
    });
  return defaults[0];
}

export class DefaultStorageClass implements MutatingAdmission {
  readonly name = 'DefaultStorageClass';
  constructor(private readonly classes: () => ObjectLister) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === PVC_RESOURCE && !a.subresource;
  }

  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const pvc = obj as corev1.PersistentVolumeClaim;
    // PersistentVolumeClaimHasClass: the beta annotation or a (possibly empty) storageClassName.
    if (Object.hasOwn(pvc.metadata?.annotations ?? {}, 'volume.beta.kubernetes.io/storage-class')) return;
    if (typeof pvc.spec?.storageClassName === 'string') return;
    let items: KubeObject[];
    try {
      items = (await this.classes().list(undefined, { resourceVersion: '0' })).items;
    } catch (e) {
      throw forbidden(PVC_GR, nameFor(obj, a), (e as Error).message);
    }
    const def = defaultClassOf(items);
    if (def) (pvc.spec ??= {}).storageClassName = def.metadata.name!;
  }
}

export class StorageObjectInUseProtection implements MutatingAdmission {
  readonly name = 'StorageObjectInUseProtection';

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && !a.subresource && (a.resource === PVC_RESOURCE || a.resource === PV_RESOURCE);
  }

  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const finalizer = a.resource === PVC_RESOURCE ? PVC_PROTECTION_FINALIZER : PV_PROTECTION_FINALIZER;
    const finalizers = (obj.metadata.finalizers ??= []);
    if (!finalizers.includes(finalizer)) finalizers.push(finalizer);
  }
}

export class PersistentVolumeClaimResize implements ValidatingAdmission {
  readonly name = 'PersistentVolumeClaimResize';
  constructor(private readonly classes: () => ObjectGetter) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'UPDATE' && a.resource === PVC_RESOURCE && !a.subresource;
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const pvc = obj as corev1.PersistentVolumeClaim;
    const old = a.old as corev1.PersistentVolumeClaim | undefined;
    if (!old) return;
    const newSize = pvc.spec?.resources?.requests?.storage ?? '0';
    const oldSize = old.spec?.resources?.requests?.storage ?? '0';
    if ((compareQuantities(newSize, oldSize) ?? 0) <= 0) return;
    const name = nameFor(obj, a);
    if (old.status?.phase !== 'Bound') throw forbidden(PVC_GR, name, 'Only bound persistent volume claims can be expanded');
    if (!(await this.allowResize(pvc, old)))
      throw forbidden(PVC_GR, name, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
  }

  /** The claim's class, the same before and after, allows volume expansion. */
  private async allowResize(pvc: corev1.PersistentVolumeClaim, old: corev1.PersistentVolumeClaim): Promise<boolean> {
    const cls = persistentVolumeClaimClass(pvc);
    if (!cls || cls !== persistentVolumeClaimClass(old)) return false;
    try {
      const sc = (await this.classes().get(undefined, cls, '0')) as storagev1.StorageClass;
      return sc.allowVolumeExpansion === true;
    } catch {
      return false;
    }
  }
}
