/**
 * The storage add-on of a kubeling cluster, as a CSI driver's deployment
 * manifests would install it: the CSIDriver object of `hostpath.csi.kubeling.io`,
 * the default StorageClass `standard`, and the RBAC of the driver's sidecars
 * (kubernetes-csi external-provisioner, external-attacher and external-resizer
 * in node-deployment mode) granted to the group every node's driver
 * certificate names. `npm run up`, compose and the tests install the same objects.
 */

export const CSI_DRIVER = 'hostpath.csi.kubeling.io';
/** The group of every node's CSI driver identity (`system:csi-driver:<node>`). */
export const CSI_DRIVER_GROUP = 'kubeling:csi-drivers';
export const csiDriverUser = (node: string): string => `system:csi-driver:${node}`;

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, unknown>;

const rbac = 'rbac.authorization.k8s.io/v1';
const rw = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const read = ['get', 'list', 'watch'];

/** The ClusterRole of the driver's sidecars: the union of upstream's external-provisioner, -attacher and -resizer roles. */
export const CSI_DRIVER_RULES = [
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: rw },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['update', 'patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['list', 'watch', 'create', 'update', 'patch'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list', 'watch', 'create', 'update', 'patch'] },
  { apiGroups: [''], resources: ['nodes'], verbs: read },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses', 'csinodes', 'csidrivers'], verbs: read },
  { apiGroups: ['storage.k8s.io'], resources: ['volumeattachments'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['volumeattachments/status'], verbs: ['update', 'patch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['csistoragecapacities'], verbs: rw },
];

export interface StorageAddonOptions {
  /** Make `standard` the default class (default true). */
  defaultClass?: boolean;
}

/** The CSIDriver, the `standard` StorageClass and the drivers' RBAC. */
export function storageObjects(o: StorageAddonOptions = {}): Obj[] {
  return [
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'kubeling:csi-hostpath' },
      rules: CSI_DRIVER_RULES,
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kubeling:csi-hostpath' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeling:csi-hostpath' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: CSI_DRIVER_GROUP }],
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: CSI_DRIVER },
      spec: {
        attachRequired: true,
        podInfoOnMount: false,
        storageCapacity: true,
        volumeLifecycleModes: ['Persistent'],
        requiresRepublish: false,
        fsGroupPolicy: 'File',
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: {
        name: 'standard',
        ...(o.defaultClass === false ? {} : { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }),
      },
      provisioner: CSI_DRIVER,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    },
  ];
}
