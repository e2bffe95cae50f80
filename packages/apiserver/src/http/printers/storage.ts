/**
 * Table printers of PersistentVolumes, PersistentVolumeClaims and
 * storage.k8s.io/v1 (StorageClass, CSIDriver, CSINode, VolumeAttachment,
 * CSIStorageCapacity), with the columns and cells of kubernetes
 * pkg/printers/internalversion/printers.go (printPersistentVolume,
 * printPersistentVolumeClaim, printStorageClass, ...): access modes as
 * RWO/ROX/RWX/RWOP, Terminating for objects being deleted, the default
 * class marked ` (default)`.
 */
import {
  accessModesAsString,
  canonicalQuantity,
  isDefaultStorageClass,
  persistentVolumeClaimClass,
  persistentVolumeClass,
  type corev1,
  type storagev1,
} from '@kubeling/api';
import { AGE, NAME, age, col, printer, wide, type Printer } from './columns.js';

/** Quantity.String() of a possibly missing quantity (the zero Quantity prints `0`). */
const quantity = (q: string | number | undefined) => (q === undefined ? '0' : canonicalQuantity(q));

const phaseOf = (o: { metadata?: { deletionTimestamp?: string }; status?: { phase?: string } }) =>
  o.metadata?.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '');

export const storagePrinters: Record<string, Printer> = {
  '/persistentvolumes': printer<corev1.PersistentVolume>(
    [
      NAME,
      col('Capacity', "capacity is the description of the persistent volume's resources and capacity."),
      col('Access Modes', 'accessModes contains all ways the volume can be mounted.'),
      col('Reclaim Policy', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.'),
      col('Status', 'phase indicates if a volume is available, bound to a claim, or released by a claim.'),
      col('Claim', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
      col('StorageClass', 'StorageClass of the pv'),
      col('VolumeAttributesClass', 'VolumeAttributesClass of the pv'),
      col('Reason', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.'),
      AGE,
      wide('VolumeMode', 'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.'),
    ],
    (pv, now) => {
      const ref = pv.spec?.claimRef;
      return [
        pv.metadata?.name,
        quantity(pv.spec?.capacity?.storage),
        accessModesAsString(pv.spec?.accessModes),
        pv.spec?.persistentVolumeReclaimPolicy ?? '',
        phaseOf(pv),
        ref ? `${ref.namespace ?? ''}/${ref.name ?? ''}` : '',
        persistentVolumeClass(pv),
        pv.spec?.volumeAttributesClassName ?? '<unset>',
        pv.status?.reason ?? '',
        age(pv, now),
        pv.spec?.volumeMode ?? '<unset>',
      ];
    },
  ),
  '/persistentvolumeclaims': printer<corev1.PersistentVolumeClaim>(
    [
      NAME,
      col('Status', 'phase represents the current phase of PersistentVolumeClaim.'),
      col('Volume', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
      col('Capacity', 'capacity represents the actual resources of the underlying volume.'),
      col('Access Modes', 'accessModes contains the actual access modes the volume backing the PVC has.'),
      col('StorageClass', 'StorageClass of the pvc'),
      col('VolumeAttributesClass', 'VolumeAttributesClass of the pvc'),
      AGE,
      wide('VolumeMode', 'volumeMode defines what type of volume is required by the claim.'),
    ],
    (pvc, now) => {
      const bound = !!pvc.spec?.volumeName;
      return [
        pvc.metadata?.name,
        phaseOf(pvc),
        pvc.spec?.volumeName ?? '',
        bound ? quantity(pvc.status?.capacity?.storage) : '',
        bound ? accessModesAsString(pvc.status?.accessModes) : '',
        persistentVolumeClaimClass(pvc),
        pvc.spec?.volumeAttributesClassName ?? '<unset>',
        age(pvc, now),
        pvc.spec?.volumeMode ?? '<unset>',
      ];
    },
  ),
  'storage.k8s.io/storageclasses': printer<storagev1.StorageClass>(
    [
      NAME,
      col('Provisioner', 'provisioner indicates the type of the provisioner.'),
      col('ReclaimPolicy', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.'),
      col('VolumeBindingMode', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.'),
      col('AllowVolumeExpansion', 'allowVolumeExpansion shows whether the storage class allow volume expand.'),
      AGE,
    ],
    (sc, now) => [
      `${sc.metadata?.name ?? ''}${isDefaultStorageClass(sc) ? ' (default)' : ''}`,
      sc.provisioner ?? '',
      sc.reclaimPolicy ?? 'Delete',
      sc.volumeBindingMode ?? 'Immediate',
      sc.allowVolumeExpansion ?? false,
      age(sc, now),
    ],
  ),
  'storage.k8s.io/csidrivers': printer<storagev1.CSIDriver>(
    [
      NAME,
      col('AttachRequired', 'attachRequired indicates this CSI volume driver requires an attach operation.', { type: 'boolean' }),
      col('PodInfoOnMount', 'podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations.', {
        type: 'boolean',
      }),
      col('StorageCapacity', 'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity.', {
        type: 'boolean',
      }),
      col('TokenRequests', "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for."),
      col('RequiresRepublish', 'requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called.', { type: 'boolean' }),
      col('Modes', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.'),
      AGE,
    ],
    (d, now) => {
      const tokens = d.spec?.tokenRequests ?? [];
      const modes = (d.spec?.volumeLifecycleModes ?? []).join(',');
      return [
        d.metadata?.name,
        d.spec?.attachRequired ?? true,
        d.spec?.podInfoOnMount ?? false,
        d.spec?.storageCapacity ?? false,
        tokens.length ? tokens.map((t) => t.audience).join(',') : '<unset>',
        d.spec?.requiresRepublish ?? false,
        modes || '<none>',
        age(d, now),
      ];
    },
  ),
  'storage.k8s.io/csinodes': printer<storagev1.CSINode>(
    [NAME, col('Drivers', 'Drivers indicates the number of CSI drivers registered on the node', { type: 'integer' }), AGE],
    (n, now) => [n.metadata?.name, (n.spec?.drivers ?? []).length, age(n, now)],
  ),
  'storage.k8s.io/volumeattachments': printer<storagev1.VolumeAttachment>(
    [
      NAME,
      col('Attacher', 'attacher indicates the name of the volume driver that MUST handle this request.', { format: 'name' }),
      col('PV', 'persistentVolumeName represents the name of the persistent volume to attach.'),
      col('Node', 'nodeName represents the node that the volume should be attached to.'),
      col('Attached', 'attached indicates the volume is successfully attached.', { type: 'boolean' }),
      AGE,
    ],
    (va, now) => [
      va.metadata?.name,
      va.spec?.attacher ?? '',
      va.spec?.source?.persistentVolumeName ?? '',
      va.spec?.nodeName ?? '',
      va.status?.attached ?? false,
      age(va, now),
    ],
  ),
  'storage.k8s.io/csistoragecapacities': printer<storagev1.CSIStorageCapacity>(
    [
      NAME,
      col('StorageClassName', 'storageClassName represents the name of the StorageClass that the reported capacity applies to.'),
      col('Capacity', 'capacity is the value reported by the CSI driver in its GetCapacityResponse.'),
    ],
    (c) => [c.metadata?.name, c.storageClassName ?? '', c.capacity === undefined ? '<unset>' : canonicalQuantity(c.capacity)],
  ),
};
